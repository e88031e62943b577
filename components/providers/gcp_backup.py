"""A seed's backup bucket on Cloud Storage, with Gardener's safety settings, and an account for that bucket alone.

Uniform bucket-level access (no object ACLs), public access prevention enforced, versioning on, soft delete for 7
days (Gardener turns it off; here it keeps what the bucket's own key deletes, noncurrent generations included), a
lifecycle that aborts stale multipart uploads and deletes noncurrent versions (components/render/backup.py). A
service account gets `roles/storage.objectAdmin` bound on this bucket only. On a GKE seed arbor makes, a workload
identity pool trusts the seed's ServiceAccount issuer and may act as that account, so no key exists: the
`etcd-backup` Secret's `serviceaccount.json` is an external account (as Gardener's WorkloadIdentity credentials
are). Elsewhere the account's key is. The bucket is protected and retained: deleting the seed leaves it in the
project.
"""

from __future__ import annotations

import json
from typing import Any, cast

import pulumi
import pulumi_gcp as gcp

from components.bundles import BackupAccess, Issuer
from components.naming import capped
from components.plan.values import BackupValues
from components.providers.gcp_credentials import SERVICE_ACCOUNT_ID_MAX, account_with_key, key_json
from components.render import backup

# GCP labels take lower-case keys without '/' or '.'.
OWNER_LABEL = "arbor-seed"
POOL_ID_MAX = 32


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
        account = gcp.serviceaccount.Account(
            f"{name}-account", account_id=account_id, display_name=description, description=description,
            opts=pulumi.ResourceOptions(parent=parent),
        )  # fmt: skip
        member: pulumi.Output[str] = account.email.apply(lambda e: f"serviceAccount:{e}")
        data, ready = workload_identity(name, values, issuer, account, parent)
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


def workload_identity(
    name: str, values: BackupValues, issuer: Issuer | None, account: gcp.serviceaccount.Account, parent: pulumi.Resource
) -> tuple[pulumi.Output[dict[str, str]], list[pulumi.Resource]]:
    """A pool trusting the seed's issuer for the `etcd-backup` accounts, allowed to act as `account`; the data.

    The pool's OIDC provider accepts the seed's tokens for the bucket's own audience whose subject is an
    `etcd-backup` ServiceAccount of a shoot's namespace or of `garden`; every identity of the pool may then act as
    the bucket's service account (`roles/iam.workloadIdentityUser`), and nothing else.
    """
    if issuer is None or values.audience is None:
        raise ValueError(f"seed {values.seed}: its bucket's pool needs the seed's token issuer, which it has not")
    opts = pulumi.ResourceOptions(parent=parent)
    # Pool and provider IDs have 4 to 32 characters.
    pool = gcp.iam.WorkloadIdentityPool(
        f"{name}-pool", workload_identity_pool_id=capped(f"bk-{values.bucket}", POOL_ID_MAX),
        display_name=capped(f"etcd backups {values.seed}", POOL_ID_MAX), opts=opts,
    )  # fmt: skip
    provider = gcp.iam.WorkloadIdentityPoolProvider(
        f"{name}-pool-provider",
        workload_identity_pool_id=pool.workload_identity_pool_id,
        workload_identity_pool_provider_id=backup.SERVICE_ACCOUNT,
        attribute_mapping={"google.subject": "assertion.sub"},
        attribute_condition=backup.gcp_attribute_condition(),
        oidc={"issuer_uri": issuer.url, "allowed_audiences": [values.audience]},
        opts=opts,
    )
    acting = gcp.serviceaccount.IAMMember(
        f"{name}-pool-acts-as",
        service_account_id=account.name,
        role=backup.GCP_WORKLOAD_IDENTITY_ROLE,
        member=pool.name.apply(lambda p: f"principalSet://iam.googleapis.com/{p}/*"),
        opts=opts,
    )
    project = gcp.organizations.get_client_config_output().project

    def data(got: list[Any]) -> dict[str, str]:
        provider_name, email, project_id = got
        config = json.dumps(backup.gcp_external_account(provider_name, email), sort_keys=True)
        credentials = {backup.KEY_SERVICE_ACCOUNT: config, backup.KEY_PROJECT: project_id}
        return backup.etcd_backup_data(values.provider, values.bucket, values.region, credentials)

    return pulumi.Output.all(provider.name, account.email, project).apply(data), [provider, acting]
