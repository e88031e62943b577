"""An EKS seed's storage for etcd: the Amazon EBS CSI driver as the EKS add-on, with its IAM role (IRSA).

The add-on `aws-ebs-csi-driver` provisions the volumes of the seed's `gardener.cloud-fast` StorageClass
(components/render/storage.py). Its controller's service account `kube-system/ebs-csi-controller-sa` assumes a
role through the cluster's OIDC provider (IAM roles for service accounts), with AWS's managed
AmazonEBSCSIDriverPolicy only.
"""

from __future__ import annotations

import json
from typing import cast

import pulumi
import pulumi_aws as aws

from components.bundles import Issuer
from components.kinds import ProviderType
from components.plan.values import STS_AUDIENCE
from components.render import cloud_credentials

ADDON = "aws-ebs-csi-driver"
SERVICE_ACCOUNT = "system:serviceaccount:kube-system:ebs-csi-controller-sa"
POLICY = "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"


def web_identity_policy(provider_arn: str, issuer: str) -> str:
    """A trust policy that lets the EBS CSI controller's service account assume a role through `issuer`."""
    return json.dumps(cloud_credentials.aws_web_identity_trust(provider_arn, issuer, [SERVICE_ACCOUNT], STS_AUDIENCE))


def issuer(cluster: aws.eks.Cluster, parent: pulumi.Resource) -> Issuer:
    """The cluster's ServiceAccount token issuer, and the IAM OIDC provider by which roles trust its tokens (IRSA)."""
    url = cluster.identities.apply(lambda ids: ids[0].oidcs[0].issuer)  # type: ignore[index]
    return oidc_issuer(cast(pulumi.Output[str], url), parent)


def oidc_issuer(url: pulumi.Input[str], parent: pulumi.Resource, provider: str | None = None) -> Issuer:
    """The issuer at `url` and its IAM OIDC provider: `provider` where the account has one, else one made here."""
    if provider is not None:
        return Issuer(pulumi.Output.from_input(url), pulumi.Output.from_input(provider), ProviderType.AWS)
    oidc = aws.iam.OpenIdConnectProvider(
        f"{parent._name}-oidc", url=url, client_id_lists=[STS_AUDIENCE], opts=pulumi.ResourceOptions(parent=parent)
    )
    return Issuer(pulumi.Output.from_input(url), oidc.arn, ProviderType.AWS)


def ebs_csi_driver(
    cluster: aws.eks.Cluster, seed: Issuer, nodes: pulumi.Resource, region: str, parent: pulumi.Resource
) -> aws.eks.Addon:
    """The driver's role with AmazonEBSCSIDriverPolicy, trusted through the seed's issuer, and its add-on."""
    prefix = parent._name
    opts = pulumi.ResourceOptions(parent=parent)
    assert seed.provider is not None  # an EKS cluster's issuer has its IAM OIDC provider
    trust = pulumi.Output.all(seed.provider, seed.url).apply(lambda a: web_identity_policy(a[0], a[1]))
    role = aws.iam.Role(f"{prefix}-ebs-csi-role", assume_role_policy=trust, opts=opts)
    attached = aws.iam.RolePolicyAttachment(f"{prefix}-ebs-csi-policy", role=role.name, policy_arn=POLICY, opts=opts)
    # Its controller runs on the nodes and needs its permissions from the start: after both.
    return aws.eks.Addon(
        f"{prefix}-ebs-csi",
        cluster_name=cluster.name,
        region=region,
        addon_name=ADDON,
        service_account_role_arn=role.arn,
        resolve_conflicts_on_create="OVERWRITE",
        resolve_conflicts_on_update="PRESERVE",
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[nodes, attached]),
    )
