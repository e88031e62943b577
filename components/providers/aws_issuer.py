"""A self-hosted aws shoot's service-account issuer, published in an S3 bucket and trusted by an IAM OIDC provider.

The bucket `issuer_bucket` (render/service_account_issuer.py names its URL) holds the two discovery documents,
computed from the shoot's service-account key, and nothing else: objects are owner-enforced (no ACLs), the public
access block still refuses ACLs, and its policy lets anyone read those two objects alone, over TLS 1.2 or later (as
kOps publishes a cluster's issuer). IAM's OIDC provider for that URL is what the machines' role trusts, so machine-
controller-manager inside the shoot assumes it with its ServiceAccount's tokens: no key exists.
"""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from components.bundles import Issuer
from components.plan.values import ShootValues
from components.providers.aws_backup import owner_enforced
from components.providers.aws_storage import oidc_issuer
from components.render import service_account_issuer


def published_issuer(shoot: ShootValues, public_key: pulumi.Output[str], parent: pulumi.Resource) -> Issuer:
    """The bucket, its settings and the documents, and the IAM OIDC provider for its URL."""
    bucket_name, region = shoot.issuer_bucket, shoot.networking.region
    assert bucket_name is not None  # the plan names the bucket of every shoot that publishes its issuer
    url = service_account_issuer.s3_issuer(bucket_name, region)
    name, opts = f"{parent._name}-issuer", pulumi.ResourceOptions(parent=parent)
    tags = {"arbor.dev/shoot": shoot.technical_id}
    # Its objects are the program's: they go before it when the shoot goes, so nothing is ever force-destroyed.
    bucket = aws.s3.Bucket(name, bucket=bucket_name, region=region, force_destroy=False, tags=tags, opts=opts)
    # ACLs stay refused; a policy may grant public reads (the one below, of two objects).
    settings = owner_enforced(name, bucket, region, opts, public_policy=True)
    partition = aws.get_partition_output().partition
    policy = partition.apply(
        lambda p: json.dumps(service_account_issuer.aws_bucket_policy_public_documents(p, bucket_name), sort_keys=True)
    )
    readable = aws.s3.BucketPolicy(
        f"{name}-policy", bucket=bucket.id, region=region, policy=policy,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=settings),
    )  # fmt: skip
    texts = public_key.apply(lambda pem: service_account_issuer.documents(url, pem))
    documents = [
        aws.s3.BucketObjectv2(
            f"{name}-{key.split('/')[-1]}",
            bucket=bucket.id,
            region=region,
            key=key,
            content=texts[key],
            content_type="application/json",
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[readable]),
        )
        for key in (service_account_issuer.DISCOVERY_PATH, service_account_issuer.JWKS_PATH)
    ]
    issuer = oidc_issuer(url, parent)
    return Issuer(issuer.url, issuer.provider, issuer.cloud, ready=documents)
