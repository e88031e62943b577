"""Rules about cloud machines and managed clusters: the MachineClasses arbor renders, EKS and GKE clusters."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from arbor_policies.resource import Resource, items, mapping

MACHINE_CLASS = "kubernetes:machine.sapcloud.io/v1alpha1:MachineClass"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
WORLD = ("0.0.0.0/0", "::/0")
GCS_BUCKET = "gcp:storage/bucket:Bucket"
S3_BUCKET = "aws:s3/bucket:Bucket"
S3_PUBLIC_ACCESS_BLOCK = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
S3_VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"
S3_BLOCKS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
S3_BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
# A self-hosted aws shoot's issuer bucket (components/providers/aws_issuer.py): a policy may make its two discovery
# documents public, nothing else; ACLs stay blocked there too.
ISSUER_BLOCK_SUFFIX = "-issuer-public-access-block"
ISSUER_DOCUMENTS = ("/.well-known/openid-configuration", "/openid/v1/jwks")
POLICY_BLOCKS = ("blockPublicPolicy", "restrictPublicBuckets")


def _class_spec(r: Resource, provider: str) -> Mapping[str, Any] | None:
    """The providerSpec of a MachineClass of `provider` (AWS, GCP); None for anything else."""
    if r.type != MACHINE_CLASS or r.props.get("provider") != provider:
        return None
    return mapping(r.props.get("providerSpec"))


def aws_metadata_v2(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """AWS machines require IMDSv2 tokens and keep the hop limit at `maxHopLimit`, so pods cannot steal node roles."""
    spec = _class_spec(r, "AWS")
    if spec is None:
        return []
    options = mapping(spec.get("instanceMetadataOptions"))
    limit = int(config.get("maxHopLimit") or 2)
    problems = []
    if options.get("httpTokens") != "required":
        problems.append(f"{r.label()} allows IMDSv1: set instanceMetadataOptions.httpTokens to required")
    hops = options.get("httpPutResponseHopLimit")
    if isinstance(hops, int) and hops > limit:
        problems.append(
            f"{r.label()} lets the metadata answer travel {hops} hops: set httpPutResponseHopLimit to {limit} or less"
        )
    return problems


def aws_disks_encrypted(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """AWS machines' volumes are encrypted (EBS encryption): a node's disk holds secrets and pod data."""
    spec = _class_spec(r, "AWS")
    if spec is None:
        return []
    devices = [mapping(mapping(d).get("ebs")) for d in items(spec.get("blockDevices"))]
    plain = [i for i, ebs in enumerate(devices) if ebs.get("encrypted") is not True]
    return [f"{r.label()} block device {i} is not encrypted: leave the pool's volume.encrypted at true" for i in plain]


def gcp_no_external_ip(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """GCP machines have no external IPv4 address: they reach out through Cloud NAT and are not reachable."""
    spec = _class_spec(r, "GCP")
    if spec is None:
        return []
    return [
        f"{r.label()} network interface {i} gets an external IP: set disableExternalIP to true"
        for i, n in enumerate(items(spec.get("networkInterfaces")))
        if mapping(n).get("disableExternalIP") is not True
    ]


def gcp_project_ssh_keys_blocked(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """GCP machines refuse project-wide SSH keys: a key added to the project must not open every node."""
    spec = _class_spec(r, "GCP")
    if spec is None:
        return []
    metadata = {str(mapping(m).get("key")): str(mapping(m).get("value")) for m in items(spec.get("metadata"))}
    if metadata.get("block-project-ssh-keys", "").upper() == "TRUE":
        return []
    return [f"{r.label()} accepts project-wide SSH keys: set metadata block-project-ssh-keys to TRUE"]


def eks_public_endpoint(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """An EKS API endpoint open to the internet limits who may reach it (publicAccessCidrs)."""
    if r.type != EKS_CLUSTER:
        return []
    vpc = mapping(r.props.get("vpcConfig"))
    if vpc.get("endpointPublicAccess") is False:
        return []
    cidrs = [str(c) for c in items(vpc.get("publicAccessCidrs"))]
    if cidrs and not any(c in WORLD for c in cidrs):
        return []
    return [
        f"EKS cluster {r.name} serves its API to the whole internet: set vpcConfig.publicAccessCidrs to the "
        "operators' ranges, or endpointPublicAccess to false"
    ]


def gke_deletion_protection(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """A GKE cluster keeps deletion protection on: deleting it deletes every workload and volume in it."""
    if r.type != GKE_CLUSTER or r.props.get("deletionProtection") is not False:
        return []
    return [f"GKE cluster {r.name} has deletion protection off: set deletion_protection=True"]


def _public_grants(policy: Any) -> list[str]:
    """What a bucket policy lets anyone do beyond reading an issuer's two documents (unknown in a preview: nothing)."""
    try:
        document = json.loads(policy) if isinstance(policy, str) else policy
    except json.JSONDecodeError:
        return []
    problems = []
    for statement in (mapping(s) for s in items(mapping(document).get("Statement"))):
        principal = statement.get("Principal")
        if statement.get("Effect") != "Allow" or principal not in ("*", {"AWS": "*"}):
            continue
        actions = (
            [statement.get("Action")] if isinstance(statement.get("Action"), str) else items(statement.get("Action"))
        )
        resources = (
            [statement.get("Resource")]
            if isinstance(statement.get("Resource"), str)
            else items(statement.get("Resource"))
        )
        if actions != ["s3:GetObject"] or not all(str(x).endswith(ISSUER_DOCUMENTS) for x in resources):
            problems.append(f"anyone may {', '.join(map(str, actions))} on {', '.join(map(str, resources))}: "
                            "only an issuer's discovery documents may be public")  # fmt: skip
    return problems


def backup_bucket_safety(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """Backup buckets are never public, keep old versions, and are never destroyed with their objects.

    The one public object a bucket may hold is a self-hosted shoot's issuer document, which anyone may read.
    """
    problems = []
    if r.type in (GCS_BUCKET, S3_BUCKET) and r.props.get("forceDestroy") is True:
        problems.append("forceDestroy deletes every backup with the bucket: set force_destroy=False")
    if r.type == GCS_BUCKET:
        if r.props.get("uniformBucketLevelAccess") is False:
            problems.append("object ACLs are allowed: set uniform_bucket_level_access=True")
        if r.props.get("publicAccessPrevention") not in (None, "enforced"):
            problems.append("public access is not prevented: set public_access_prevention='enforced'")
        if mapping(r.props.get("versioning")).get("enabled") is not True and r.props.get("versioning") is not None:
            problems.append("versioning is off: a deleted or overwritten snapshot is gone at once")
    if r.type == S3_PUBLIC_ACCESS_BLOCK:
        # An issuer bucket's policy may grant public reads; it is checked itself (`_public_grants`).
        lifted = POLICY_BLOCKS if r.name.endswith(ISSUER_BLOCK_SUFFIX) else ()
        unset = [k for k in S3_BLOCKS if r.props.get(k) is False and k not in lifted]
        problems += [f"{k} is not set: public access is not blocked" for k in unset]
    if r.type == S3_BUCKET_POLICY:
        problems += _public_grants(r.props.get("policy"))
    if r.type == S3_VERSIONING and mapping(r.props.get("versioningConfiguration")).get("status") not in (
        None,
        "Enabled",
    ):
        problems.append("versioning is not enabled: a deleted or overwritten snapshot is gone at once")
    return [f"{r.kind} {r.name}: {p}" for p in problems]
