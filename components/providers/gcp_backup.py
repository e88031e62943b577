"""A seed's backup bucket on Cloud Storage, with Gardener's safety settings, and an account for that bucket alone.

Uniform bucket-level access (no object ACLs), public access prevention enforced, versioning on, soft delete for 7
days (Gardener turns it off; here it keeps what the bucket's own key deletes, noncurrent generations included), a
lifecycle that aborts stale multipart uploads and deletes noncurrent versions (components/render/backup.py). A
service account gets `roles/storage.objectAdmin` bound on this bucket only. On a GKE seed arbor makes (or an
existing one that names its issuer), the `etcd-backup` accounts the seed's workload identity pool accepts may act
as that account, as on an EKS seed through a pool made for the bucket, so no key exists: the
`etcd-backup` Secret's `serviceaccount.json` is an external account (as Gardener's WorkloadIdentity credentials
are). Elsewhere the account's key is. The bucket is protected and retained: deleting the seed leaves it in the
project.
"""

from __future__ import annotations

from typing import Any, cast

import pulumi
import pulumi_gcp as gcp

from components.bundles import BackupAccess, Issuer, trusted_issuer
from components.kinds import ProviderType
from components.naming import capped
from components.plan.values import BackupValues
from components.providers.gcp_credentials import (
    SERVICE_ACCOUNT_ID_MAX,
    account_with_key,
    acting_as,
    external_account,
    key_json,
    seed_pool,
    service_account,
)
from components.render import backup, cloud_credentials

# GCP labels take lower-case keys without '/' or '.'.
OWNER_LABEL = "arbor-seed"


def backup_bucket(values: BackupValues, issuer: Issuer | None, parent: pulumi.Resource) -> BackupAccess:
    """The bucket `values.bucket` in its region, and the service account `bk-<bucket>` (capped) that may use it."""
    name = f"{parent._name}-backup"
    kept = pulumi.ResourceOptions(parent=parent, protect=True, retain_on_delete=True)
    bucket = gcp.storage.Bucket(
        name,
        name=values.bucket,
        location=values.region,
        storage_class="STANDARD",
        uniform_bucket_level_access=True,
        public_access_prevention="enforced",
        versioning={"enabled": True},
        soft_delete_policy={"retention_duration_seconds": backup.GCP_SOFT_DELETE_DAYS * 24 * 3600},
        lifecycle_rules=cast(Any, backup.gcp_lifecycle_rules()),  # plain dicts of the Args' fields
        force_destroy=False,
        labels={OWNER_LABEL: values.seed},
        opts=kept,
    )
    # An account ID starts with a letter and has 6 to 30 characters; a bucket's name may not.
    account_id = capped(f"bk-{values.bucket}", SERVICE_ACCOUNT_ID_MAX)
    description = f"etcd backups of the shoots on seed {values.seed} (arbor), in bucket {values.bucket} only."
    if values.audience is not None:
        issuer = trusted_issuer(issuer, f"seed {values.seed}: its bucket's identity")
        if issuer.cloud is not ProviderType.GCP:
            # Another cloud's seed: a pool of the bucket's own trusts its issuer (an ID unique as the bucket's name).
            issuer = seed_pool(f"bk-{values.bucket}", issuer.url, values.audience, parent)
        account = service_account(name, account_id, description, parent)
        member: pulumi.Output[str] = account.email.apply(lambda e: f"serviceAccount:{e}")
        # Every `etcd-backup` account the seed's pool accepts (its shoots' and garden's) may act as it, no other.
        principal = f"{cloud_credentials.GCP_ACCOUNT_ATTRIBUTE}/{backup.SERVICE_ACCOUNT}"
        ready: list[pulumi.Resource] = [acting_as(name, account, issuer, principal, parent)]
        credentials = external_account(issuer, account, backup.GCP_TOKEN_FILE, backup.KEY_SERVICE_ACCOUNT,
                                       values.audience)  # fmt: skip
        data = credentials.apply(lambda c: backup.etcd_backup_data(values.provider, values.bucket, values.region, c))
    else:
        member, key = account_with_key(name, account_id, description, parent)
        data = pulumi.Output.secret(
            key_json(key).apply(
                lambda text: backup.etcd_backup_data(
                    values.provider, values.bucket, values.region, {backup.KEY_SERVICE_ACCOUNT: text}
                )
            )
        )
        ready = [key]
    binding = gcp.storage.BucketIAMMember(
        f"{name}-object-admin",
        bucket=bucket.name,
        role=backup.GCP_BUCKET_ROLE,
        member=member,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    return BackupAccess(values.bucket, data, ready=[bucket, *ready, binding])
