"""A seed's backup bucket on S3, with Gardener's safety settings, and an IAM identity that may use that bucket alone.

The bucket is private (owner-enforced: no ACLs), encrypted (SSE-S3), versioned, behind a public access block
and a policy that refuses plain HTTP and TLS before 1.2; its lifecycle aborts stale multipart uploads and expires
noncurrent versions (components/render/backup.py). It is protected and retained: deleting the seed removes it
from the stack but not from the account, so no shoot's backups go with a seed.

On a seed whose token issuer AWS can trust (an EKS seed arbor makes, an existing one that names its issuer, or a
GKE seed, whose issuer an IAM OIDC provider made for the bucket names), the identity is the role `<bucket>` that the
`etcd-backup` ServiceAccounts assume with their tokens (workload identity, as Gardener's BackupBucket credentials can
be): no key exists, and the `etcd-backup` Secret names the role. Elsewhere it is the user `<bucket>` and its key.
"""

from __future__ import annotations

import json
from typing import Any, cast

import pulumi
import pulumi_aws as aws

from components.bundles import BackupAccess, Issuer, trusted_issuer
from components.kinds import ProviderType
from components.plan.values import BackupValues
from components.providers.aws_credentials import role_with_trust, user_with_key
from components.providers.aws_storage import oidc_issuer
from components.render import backup


def owner_enforced(
    name: str, bucket: aws.s3.Bucket, region: str, opts: pulumi.ResourceOptions, *, public_policy: bool = False
) -> list[pulumi.Resource]:
    """A bucket's objects its account's (no ACLs) and ACLs blocked; public policies too unless `public_policy`."""
    return [
        aws.s3.BucketOwnershipControls(
            f"{name}-ownership", bucket=bucket.id, region=region, opts=opts,
            rule={"object_ownership": "BucketOwnerEnforced"},
        ),
        aws.s3.BucketPublicAccessBlock(
            f"{name}-public-access-block", bucket=bucket.id, region=region, opts=opts, block_public_acls=True,
            block_public_policy=not public_policy, ignore_public_acls=True, restrict_public_buckets=not public_policy,
        ),
    ]  # fmt: skip


def backup_bucket(values: BackupValues, issuer: Issuer | None, parent: pulumi.Resource) -> BackupAccess:
    """The bucket `values.bucket` in its region, its settings, and the role (or user) `<bucket>` that may use it."""
    name, region, tags = f"{parent._name}-backup", values.region, {backup.OWNER_TAG: values.seed}
    kept = pulumi.ResourceOptions(parent=parent, protect=True, retain_on_delete=True)
    bucket = aws.s3.Bucket(name, bucket=values.bucket, region=region, force_destroy=False, tags=tags, opts=kept)
    opts = pulumi.ResourceOptions(parent=parent)
    partition = aws.get_partition_output().partition
    settings: list[pulumi.Resource] = [
        *owner_enforced(name, bucket, region, opts),
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-encryption", bucket=bucket.id, region=region, opts=opts,
            rules=[{"apply_server_side_encryption_by_default": {"sse_algorithm": "AES256"}}],
        ),
        aws.s3.BucketVersioning(
            f"{name}-versioning", bucket=bucket.id, region=region, opts=opts,
            versioning_configuration={"status": "Enabled"},
        ),
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-lifecycle", bucket=bucket.id, region=region, opts=opts,
            rules=cast(Any, backup.aws_lifecycle_rules()),  # plain dicts of the Args' fields
        ),
        aws.s3.BucketPolicy(
            f"{name}-policy", bucket=bucket.id, region=region, opts=opts,
            policy=partition.apply(lambda p: json.dumps(backup.aws_bucket_policy(p, values.bucket), sort_keys=True)),
        ),
    ]  # fmt: skip
    rights = partition.apply(lambda p: json.dumps(backup.aws_identity_policy(p, values.bucket), sort_keys=True))
    if values.audience is not None:
        user = f"seed {values.seed}: its bucket's role"
        seeds = trusted_issuer(issuer, user)
        # Another cloud's seed: the account trusts its issuer through an IAM OIDC provider made for the bucket.
        seeds = seeds if seeds.cloud is ProviderType.AWS else oidc_issuer(seeds.url, parent)
        trusted = (trusted_issuer(seeds, user, named=True),
                   backup.web_identity_subjects(), values.audience)  # fmt: skip
        role, ready = role_with_trust(name, values.bucket, trusted, rights, tags, parent)
        data = role.apply(lambda arn: backup.etcd_backup_data(values.provider, values.bucket, region,
                                                              {backup.KEY_ROLE_ARN: arn}))  # fmt: skip
        return BackupAccess(values.bucket, data, ready=[bucket, *settings, *ready])
    identity = user_with_key(name, values.bucket, rights, tags, parent)
    data = identity.data.apply(lambda keys: backup.etcd_backup_data(values.provider, values.bucket, region, keys))
    return BackupAccess(values.bucket, pulumi.Output.secret(data), ready=[bucket, *settings, *identity.ready])
