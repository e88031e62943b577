"""A seed's backup bucket and what may use it, pure: its safety settings, the rights of its identity, `etcd-backup`.

Gardener's provider extensions make each seed's bucket private and encrypted, deny plain HTTP, abort stale
multipart uploads, and hand etcd-backup-restore a Secret `etcd-backup` in the shoot's seed namespace with the
bucket's credentials and name under the keys it reads. arbor keeps versioning on as well, and its identity may
read, write and delete objects of that one bucket only, never a version for good: a deleted or overwritten
snapshot stays a noncurrent version until the lifecycle expires it, whoever holds the key.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from components.kinds import ProviderType

# The Secret etcd-backup-restore reads in the shoot's seed namespace (Gardener's name), and its keys.
ETCD_BACKUP_SECRET = "etcd-backup"
KEY_BUCKET = "bucketName"
# arbor's key beside Gardener's: where in the bucket the shoot's entry is (its name holds the Shoot record's uid).
KEY_PREFIX = "storePrefix"
KEY_REGION = "region"
# etcd-backup-restore's keys for an S3-compatible store other than AWS (the local object store).
KEY_ENDPOINT = "endpoint"
KEY_PATH_STYLE = "s3ForcePathStyle"
KEY_TRUSTED_CA = "trustedCaCert"
# The region an S3-compatible store answers for when none is configured (MinIO's default).
STORE_REGION = "us-east-1"
# The partition of ARNs an S3-compatible store reads in policies.
STORE_PARTITION = "aws"
KEY_SERVICE_ACCOUNT = "serviceaccount.json"
# Workload identity (etcd-backup-restore's S3 store): the role to assume, and the file beside the Secret's keys
# holding the ServiceAccount token it assumes the role with (a projected token here, not a Secret key).
KEY_ROLE_ARN = "roleARN"
KEY_TOKEN = "token"
# The ServiceAccount whose tokens the bucket's role trusts: etcd main's in a shoot's seed namespace, and the one in
# the seed's `garden` namespace arbor's own reads of the seed's bucket Secret use.
SERVICE_ACCOUNT = "etcd-backup"
# A projected token's lifetime; the kubelet renews it at 80 %, and etcd-backup-restore reads the file again.
TOKEN_SECONDS = 3600
# gcp: where etcd-backup-restore reads the `etcd-backup` Secret (etcd-druid's directory); with workload identity its
# `serviceaccount.json` is an external account whose token is the file `token` there, and `projectID` beside it.
GCP_CREDENTIALS_DIR = "/var/.gcp"
KEY_PROJECT = "projectID"
GCP_TOKEN_FILE = f"{GCP_CREDENTIALS_DIR}/{KEY_TOKEN}"
# arbor's key beside them: the audience of the tokens the seed's pool accepts, which arbor's own reads ask for.
KEY_TOKEN_AUDIENCE = "tokenAudience"
GCP_STS = "https://sts.googleapis.com/v1/token"
GCP_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt"
GCP_WORKLOAD_IDENTITY_ROLE = "roles/iam.workloadIdentityUser"
# The local store (MinIO) names the role of an OpenID provider by the provider's client ID, the tokens' audience.
STORE_ROLE_PREFIX = "arn:minio:iam:::role/"
# Where a seed holds its bucket's credentials, as gardenlet does for a BackupBucket: `garden/bucket-<bucket>`.
SEED_GARDEN_NAMESPACE = "garden"
# Gardener's aws lifecycle aborts incomplete multipart uploads after 7 days; noncurrent versions (snapshots
# deleted by garbage collection, or by anyone) are kept this long before they expire.
ABORT_MULTIPART_DAYS = 7
NONCURRENT_DAYS = 30
# gcp: the role the backup identity gets on its bucket alone.
GCP_BUCKET_ROLE = "roles/storage.objectAdmin"
# gcp: how long a deleted generation stays soft-deleted. The role's `storage.objects.delete` also deletes noncurrent
# generations; soft delete keeps them restorable for this long, and only who may update the bucket can shorten it.
GCP_SOFT_DELETE_DAYS = 7
# The labels and tags every backup resource carries (the seed it belongs to).
OWNER_TAG = "arbor.dev/seed"


def service_account(namespace: str) -> dict[str, Any]:
    """The ServiceAccount `etcd-backup` of a namespace: an identity for the bucket's role alone, no API token."""
    return {"apiVersion": "v1", "kind": "ServiceAccount", "automountServiceAccountToken": False,
            "metadata": {"name": SERVICE_ACCOUNT, "namespace": namespace}}  # fmt: skip


def web_identity_subjects() -> list[str]:
    """The token subjects the bucket's role trusts: `etcd-backup` of every shoot's seed namespace and of `garden`."""
    return [f"system:serviceaccount:{ns}:{SERVICE_ACCOUNT}" for ns in ("shoot--*", SEED_GARDEN_NAMESPACE)]


def gcp_external_account(provider: str, account: str, token_file: str) -> dict[str, Any]:
    """Workload identity's credentials file: the pool provider `provider` (its resource name), acting as `account`.

    Google's external account credentials, as Gardener's provider-gcp writes them for etcd-backup-restore and the
    machines' sidecar: the token in `token_file` is exchanged at STS, then for the service account's access token.
    """
    impersonation = f"https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/{account}:generateAccessToken"
    return {
        "universe_domain": "googleapis.com", "type": "external_account", "audience": f"//iam.googleapis.com/{provider}",
        "subject_token_type": GCP_TOKEN_TYPE, "token_url": GCP_STS, "service_account_impersonation_url": impersonation,
        "credential_source": {"file": token_file, "format": {"type": "text"}},
    }  # fmt: skip


def bucket_secret(bucket: str) -> str:
    """The seed's Secret of a backup bucket's credentials (`garden/bucket-<bucket>`)."""
    return f"bucket-{bucket}"


def aws_bucket_arn(partition: str, bucket: str) -> str:
    """The ARN of an S3 bucket."""
    return f"arn:{partition}:s3:::{bucket}"


def aws_bucket_policy(partition: str, bucket: str) -> dict[str, Any]:
    """The bucket policy: no request over plain HTTP or TLS older than 1.2, as Gardener's aws buckets deny."""
    arn = aws_bucket_arn(partition, bucket)
    everything = [arn, f"{arn}/*"]
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
             "Resource": everything, "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
            {"Sid": "DenyOutdatedTLS", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
             "Resource": everything, "Condition": {"NumericLessThan": {"s3:TlsVersion": "1.2"}}},
        ],
    }  # fmt: skip


def store_bucket_policy(bucket: str) -> dict[str, Any]:
    """The local store's bucket policy: aws's, less the TLS version condition MinIO does not know.

    MinIO serves TLS 1.2 and later only, so the condition has nothing to refuse there.
    """
    policy = aws_bucket_policy(STORE_PARTITION, bucket)
    return {**policy, "Statement": [s for s in policy["Statement"] if s["Sid"] != "DenyOutdatedTLS"]}


def aws_identity_policy(partition: str, bucket: str) -> dict[str, Any]:
    """The backup identity's policy: objects of this bucket; no version deleted, no other bucket, no settings."""
    arn = aws_bucket_arn(partition, bucket)
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "ListBucket", "Effect": "Allow", "Resource": arn,
             "Action": ["s3:GetBucketLocation", "s3:ListBucket", "s3:ListBucketMultipartUploads"]},
            {"Sid": "Objects", "Effect": "Allow", "Resource": f"{arn}/*",
             "Action": ["s3:AbortMultipartUpload", "s3:DeleteObject", "s3:GetObject", "s3:ListMultipartUploadParts",
                        "s3:PutObject"]},
            # S3 needs s3:DeleteObjectVersion for a versioned delete, which is not granted; MinIO takes
            # s3:DeleteObject for it unless this is denied outright. Either way, no version is deleted for good.
            {"Sid": "NoVersionDeletion", "Effect": "Deny", "Resource": f"{arn}/*",
             "Action": ["s3:DeleteObjectVersion"]},
        ],
    }  # fmt: skip


def aws_lifecycle_rules() -> list[dict[str, Any]]:
    """The bucket's lifecycle: stale multipart uploads aborted, noncurrent versions expired (whole bucket)."""
    return [
        {"id": "abort-incomplete-multipart-uploads", "status": "Enabled", "filter": {},
         "abort_incomplete_multipart_upload": {"days_after_initiation": ABORT_MULTIPART_DAYS}},
        {"id": "expire-noncurrent-versions", "status": "Enabled", "filter": {},
         "noncurrent_version_expiration": {"noncurrent_days": NONCURRENT_DAYS}},
    ]  # fmt: skip


def store_lifecycle_rules() -> list[dict[str, Any]]:
    """The local store's lifecycle: aws's, less the multipart rule MinIO's lifecycle does not take.

    MinIO removes stale multipart uploads by itself (its `api stale_uploads_expiry`, 24 hours by default).
    """
    return [r for r in aws_lifecycle_rules() if "abort_incomplete_multipart_upload" not in r]


def gcp_lifecycle_rules() -> list[dict[str, Any]]:
    """The bucket's lifecycle: stale multipart uploads aborted, noncurrent versions deleted."""
    return [
        {"action": {"type": "AbortIncompleteMultipartUpload"}, "condition": {"age": ABORT_MULTIPART_DAYS}},
        {"action": {"type": "Delete"}, "condition": {"days_since_noncurrent_time": NONCURRENT_DAYS,
                                                      "with_state": "ARCHIVED"}},
    ]  # fmt: skip


def etcd_backup_data(provider: ProviderType, bucket: str, region: str, credentials: dict[str, str]) -> dict[str, str]:
    """The `etcd-backup` Secret's data: the identity's credentials, the bucket, and the region of an S3 store."""
    data = {**credentials, KEY_BUCKET: bucket}
    if provider in (ProviderType.AWS, ProviderType.LOCAL):
        data[KEY_REGION] = region
    return data


def store_credentials(access_key: str, secret_key: str, endpoint: str, ca_cert: str) -> dict[str, str]:
    """What etcd-backup-restore needs of the local store beside a bucket: the user's keys, where, and its CA."""
    return {
        "accessKeyID": access_key, "secretAccessKey": secret_key, KEY_ENDPOINT: endpoint, KEY_PATH_STYLE: "true",
        KEY_TRUSTED_CA: ca_cert,
    }  # fmt: skip


def store_role_credentials(role_arn: str, audience: str, endpoint: str, ca_cert: str) -> dict[str, str]:
    """The local store's bucket by workload identity: the role, the audience its tokens are asked for, where, the CA."""
    return {
        KEY_ROLE_ARN: role_arn, KEY_TOKEN_AUDIENCE: audience, KEY_ENDPOINT: endpoint, KEY_PATH_STYLE: "true",
        KEY_TRUSTED_CA: ca_cert,
    }  # fmt: skip


def store_bucket_data(bucket: str, credentials: dict[str, str]) -> dict[str, str]:
    """The `etcd-backup` data of a local store's bucket and its identity (the seed's `garden/bucket-<bucket>`)."""
    return etcd_backup_data(ProviderType.LOCAL, bucket, STORE_REGION, credentials)


def store_role_arn(audience: str) -> str:
    """The ARN MinIO gives the role of the OpenID provider whose client ID is `audience` (base64url of its SHA-1)."""
    digest = hashlib.sha1(audience.encode(), usedforsecurity=False).digest()
    return STORE_ROLE_PREFIX + base64.urlsafe_b64encode(digest).decode().rstrip("=")


def store_role_policy(bucket: str) -> dict[str, Any]:
    """The local role's policy: the identity's, each grant only to the `etcd-backup` subjects.

    MinIO checks a token's audience and signature but not its issuer, so the subject is pinned here too.
    """
    policy = aws_identity_policy(STORE_PARTITION, bucket)
    pinned = {"StringLike": {"jwt:sub": web_identity_subjects()}}
    statements = [s | {"Condition": pinned} if s["Effect"] == "Allow" else s for s in policy["Statement"]]
    return {**policy, "Statement": statements}
