"""Local seeds' backup buckets: in the landscape's object store (MinIO on loopback, over TLS), with aws's settings.

One store per local stack, made with its first bucket, protected (it holds every snapshot; `make down` removes it
after every shoot and bucket is gone). Each seed's bucket gets the settings render/backup.py gives an S3 bucket on
aws (versioning, SSE-S3, the lifecycle, a policy refusing plain HTTP; less what MinIO does not know) and a user
whose policy is aws's backup identity's: that bucket's objects, nothing else.
"""

from __future__ import annotations

import json
import os

import pulumi

from components.bundles import BackupAccess
from components.kinds import ProviderType
from components.plan.values import BackupValues
from components.reconciler.object_store import ObjectStore as ObjectStore  # re-exported for the local provider
from components.reconciler.store_bucket import StoreBucket
from components.render import backup

STORE = "local-object-store"


def object_store(workdir: str, stack: str) -> ObjectStore:
    """The stack's object store: its process's files under `processes/`, its objects under `object-store/`."""
    return ObjectStore(
        STORE,
        workdir=workdir,
        directory=os.path.join(workdir, "processes", f"{stack}-minio"),
        data_dir=os.path.join(workdir, "object-store", stack),
        opts=pulumi.ResourceOptions(protect=True),
    )


def store_bucket(values: BackupValues, store: ObjectStore, parent: pulumi.Resource) -> BackupAccess:
    """The seed's bucket in the store, its settings and its user; the `etcd-backup` data for its shoots."""
    reach: dict[str, pulumi.Input[str]] = {
        "endpoint": store.endpoint, "caCert": store.caCert, "rootUser": store.rootUser,
        "rootPassword": store.rootPassword,
    }  # fmt: skip
    bucket = StoreBucket(
        f"{parent._name}-backup",
        store=reach,
        bucket=values.bucket,
        bucket_policy=json.dumps(backup.store_bucket_policy(values.bucket), sort_keys=True),
        identity_policy=json.dumps(backup.aws_identity_policy(backup.STORE_PARTITION, values.bucket), sort_keys=True),
        lifecycle=backup.store_lifecycle_rules(),
        # Protected as a cloud bucket is; its delete keeps the bucket and objects anyway.
        opts=pulumi.ResourceOptions(parent=parent, protect=True, depends_on=[store]),
    )
    data = pulumi.Output.all(bucket.accessKey, bucket.secretKey, store.endpoint, store.caCert).apply(
        lambda got: backup.etcd_backup_data(
            ProviderType.LOCAL, values.bucket, backup.STORE_REGION, backup.store_credentials(*got)
        )
    )
    return BackupAccess(values.bucket, pulumi.Output.secret(data), ready=[store, bucket])
