"""An EKS seed's storage for etcd: the Amazon EBS CSI driver as the EKS add-on, with its IAM role (IRSA).

The add-on `aws-ebs-csi-driver` provisions the volumes of the seed's `gardener.cloud-fast` StorageClass
(components/render/storage.py). Its controller's service account `kube-system/ebs-csi-controller-sa` assumes a
role through the cluster's OIDC provider (IAM roles for service accounts), with AWS's managed
AmazonEBSCSIDriverPolicy only.
"""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

ADDON = "aws-ebs-csi-driver"
SERVICE_ACCOUNT = "system:serviceaccount:kube-system:ebs-csi-controller-sa"
POLICY = "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"
AUDIENCE = "sts.amazonaws.com"


def web_identity_policy(provider_arn: str, issuer: str) -> str:
    """A trust policy that lets the EBS CSI controller's service account assume a role through `issuer`."""
    host = issuer.removeprefix("https://")
    statement = {
        "Effect": "Allow",
        "Principal": {"Federated": provider_arn},
        "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {"StringEquals": {f"{host}:sub": SERVICE_ACCOUNT, f"{host}:aud": AUDIENCE}},
    }
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def ebs_csi_driver(
    cluster: aws.eks.Cluster, nodes: pulumi.Resource, region: str, parent: pulumi.Resource
) -> aws.eks.Addon:
    """The cluster's OIDC provider, the driver's role with AmazonEBSCSIDriverPolicy, and the add-on on the nodes."""
    prefix = parent._name
    opts = pulumi.ResourceOptions(parent=parent)
    issuer = cluster.identities.apply(lambda ids: ids[0].oidcs[0].issuer)  # type: ignore[index]
    oidc = aws.iam.OpenIdConnectProvider(f"{prefix}-oidc", url=issuer, client_id_lists=[AUDIENCE], opts=opts)
    trust = pulumi.Output.all(oidc.arn, issuer).apply(lambda a: web_identity_policy(a[0], a[1]))
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
