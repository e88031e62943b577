"""A shoot's machine credentials on AWS: an IAM role (or user and key) with an inline policy scoped to the shoot.

machine-controller-manager-provider-aws reads `accessKeyID` and `secretAccessKey` from the `cloudprovider` Secret,
or assumes `roleARN` with the web identity token in `workloadIdentityTokenFile` (Gardener's workload identity). On
an EKS seed arbor made (its IAM OIDC provider trusts the seed's issuer), the shoot's identity is such a role, which
MCM's ServiceAccount in the shoot's seed namespace assumes with the token its Deployment projects: no key exists; a
self-hosted shoot's MCM in its kube-system does the same through the issuer arbor publishes (aws_issuer.py).
Elsewhere it is an IAM user and its access key, whose secret stays a secret output from the provider into the
Secret. The policy (components/render/cloud_credentials.py) names the shoot's nodes subnets, security group and
nodes' role.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pulumi
import pulumi_aws as aws

from components.bundles import Issuer, MachineCredentials, NetworkAccess, trusted_issuer
from components.plan.values import ShootValues
from components.render import cloud_credentials, machines
from components.render.cloud_credentials import AwsScope


def user_with_key(
    name: str, user_name: str, policy: pulumi.Input[str], tags: Mapping[str, str], parent: pulumi.Resource
) -> MachineCredentials:
    """An IAM user with `policy` inline and an access key, as the data Gardener's aws Secrets carry."""
    opts = pulumi.ResourceOptions(parent=parent)
    user = aws.iam.User(f"{name}-user", name=user_name, tags=dict(tags), opts=opts)
    rights = aws.iam.UserPolicy(f"{name}-policy", user=user.name, policy=policy, opts=opts)
    # The key waits for its rights: a sidecar that starts with it can call at once.
    key = aws.iam.AccessKey(
        f"{name}-key", user=user.name, opts=pulumi.ResourceOptions(parent=parent, depends_on=[rights])
    )
    data = pulumi.Output.all(key.id, key.secret).apply(lambda k: {"accessKeyID": k[0], "secretAccessKey": k[1]})
    return MachineCredentials(data=pulumi.Output.secret(data), ready=[key])


def role_with_trust(
    name: str,
    role_name: str,
    trusted: tuple[Issuer, list[str], str],
    policy: pulumi.Input[str],
    tags: Mapping[str, str],
    parent: pulumi.Resource,
) -> tuple[pulumi.Output[str], list[pulumi.Resource]]:
    """An IAM role `policy` inline that `trusted` (issuer, subjects, audience) may assume; its ARN (workload identity).

    Beside `user_with_key`, the same identity without a key: tokens of those subjects assume it at STS.
    """
    issuer, subjects, audience = trusted
    assert issuer.provider is not None  # callers refuse an issuer without its IAM OIDC provider
    trust = pulumi.Output.all(issuer.provider, issuer.url).apply(
        lambda got: json.dumps(cloud_credentials.aws_web_identity_trust(got[0], got[1], subjects, audience),
                               sort_keys=True)
    )  # fmt: skip
    opts = pulumi.ResourceOptions(parent=parent)
    role = aws.iam.Role(f"{name}-role", name=role_name, assume_role_policy=trust, tags=dict(tags), opts=opts)
    # What assumes the role may use it at once: what names it is written after its rights.
    rights = aws.iam.RolePolicy(f"{name}-policy", role=role.name, policy=policy, opts=opts)
    return role.arn, [role, rights]


def machine_policy(shoot: ShootValues, network: NetworkAccess) -> pulumi.Output[str]:
    """The shoot's machine policy as JSON, once the account, subnets and security group are known."""
    if network.nodes is None:
        raise ValueError(f"{shoot.technical_id}: the network has no nodes' identity to scope machine rights by")
    nodes_subnets = [s.name for s in shoot.network_plan.subnets if s.role == "nodes"]
    identity = aws.get_caller_identity_output()
    partition = aws.get_partition_output()

    def scoped(got: list[object]) -> str:
        account, part, subnets, nodes = got
        assert isinstance(subnets, dict) and isinstance(nodes, dict)
        scope = AwsScope(
            technical_id=shoot.technical_id,
            partition=str(part),
            account=str(account),
            region=shoot.networking.region,
            subnet_ids=tuple(subnets[s] for s in nodes_subnets),
            security_group_id=nodes["securityGroupID"],
            # The nodes' instance profile and role share their name (components/providers/aws_network.py).
            nodes_role=nodes["instanceProfile"],
            ipv6="IPv6" in shoot.networking.ip_families,
        )
        return json.dumps(cloud_credentials.aws_machine_policy(scope), sort_keys=True)

    return pulumi.Output.all(identity.account_id, partition.partition, network.subnets, network.nodes).apply(scoped)


def machine_credentials(
    shoot: ShootValues, network: NetworkAccess, issuer: Issuer | None, parent: pulumi.Resource
) -> MachineCredentials:
    """The IAM role (or user and key) `<technical id>-machines` of a shoot and its policy, under `parent`."""
    tags = {cloud_credentials.aws_cluster_tag(shoot.technical_id): cloud_credentials.AWS_OWNED_VALUE}
    name = cloud_credentials.machines_name(shoot.technical_id)
    if shoot.machine_audience is None:
        return user_with_key(f"{parent._name}-machines", name, machine_policy(shoot, network), tags, parent)
    subject = f"system:serviceaccount:{shoot.machine_namespace}:{machines.MCM_NAME}"
    seed = trusted_issuer(issuer, f"{shoot.technical_id}: its machines' role", named=True)
    trusted = (seed, [subject], shoot.machine_audience)
    arn, ready = role_with_trust(
        f"{parent._name}-machines", name, trusted, machine_policy(shoot, network), tags, parent
    )
    data = arn.apply(lambda a: {"roleARN": a, "workloadIdentityTokenFile": machines.IDENTITY_TOKEN_FILE})
    return MachineCredentials(data=data, ready=[*ready, *seed.ready])
