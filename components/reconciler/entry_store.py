"""The object store of a seed's bucket, reached as etcd-backup-restore reaches it: with the `etcd-backup` data.

One S3 client for the local store (MinIO on loopback over TLS: `endpoint` and `trustedCaCert` name it) and aws (S3
in the bucket's region), with the seed's key, which can touch that bucket's objects and nothing else.
"""

from __future__ import annotations

from minio import Minio

from components.reconciler.store_bucket import trusting
from components.render import backup

AWS_S3 = "s3.amazonaws.com"


def entry_store(data: dict[str, str]) -> Minio:
    """The bucket's store as the seed's user; a local store is trusted by its own CA only."""
    keys = (data["accessKeyID"], data["secretAccessKey"])
    if endpoint := data.get(backup.KEY_ENDPOINT):
        # No total timeout: an upload takes as long as its size.
        http = trusting(data[backup.KEY_TRUSTED_CA])
        return Minio(endpoint.removeprefix("https://"), *keys, secure=True, http_client=http)
    return Minio(AWS_S3, *keys, region=data.get(backup.KEY_REGION), secure=True)
