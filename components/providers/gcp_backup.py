"""A seed's backup bucket on Cloud Storage, with Gardener's safety settings, and an account for that bucket alone.

Uniform bucket-level access (no object ACLs), public access prevention enforced, versioning on, soft delete for 7
days (Gardener turns it off; here it keeps what the bucket's own key deletes, noncurrent generations included), a
lifecycle that aborts stale multipart uploads and deletes noncurrent versions (components/render/backup.py). A
service account gets `roles/storage.objectAdmin` bound on this bucket only; its key is the `etcd-backup` Secret's
`serviceaccount.json`. The bucket is protected and retained: deleting the seed leaves it in the project.
"""

from __future__ import annotations

from typing import Any, cast

import pulumi
import pulumi_gcp as gcp

from components.bundles import BackupAccess
from components.naming import capped
from components.plan.values import BackupValues
from components.providers.gcp_credentials import SERVICE_ACCOUNT_ID_MAX, account_with_key, key_json
from components.render import backup

# GCP labels take lower-case keys without '/' or '.'.
OWNER_LABEL = "arbor-seed"


def backup_bucket(values: BackupValues, parent: pulumi.Resource) -> BackupAccess:
    """The bucket `values.bucket` in its region, and the service account `bk-<bucket>` (capped) with a key."""
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
    member, key = account_with_key(
        name,
        # An account ID starts with a letter and has 6 to 30 characters; a bucket's name may not.
        capped(f"bk-{values.bucket}", SERVICE_ACCOUNT_ID_MAX),
        f"etcd backups of the shoots on seed {values.seed} (arbor), in bucket {values.bucket} only.",
        parent,
    )
    binding = gcp.storage.BucketIAMMember(
        f"{name}-object-admin",
        bucket=bucket.name,
        role=backup.GCP_BUCKET_ROLE,
        member=member,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    data = key_json(key).apply(
        lambda text: backup.etcd_backup_data(
            values.provider, values.bucket, values.region, {backup.KEY_SERVICE_ACCOUNT: text}
        )
    )
    return BackupAccess(values.bucket, pulumi.Output.secret(data), ready=[bucket, key, binding])
