"""A shoot's machine credentials on AWS: an IAM user with an inline policy scoped to the shoot, and its access key.

machine-controller-manager-provider-aws reads `accessKeyID` and `secretAccessKey` from the `cloudprovider` Secret,
which needs nothing in MCM's pod. (It can also assume `roleARN` with a web identity token from
`workloadIdentityTokenFile`, Gardener's workload identity; that needs a projected token in MCM's Deployment and
an IAM OIDC provider trusting the seed's issuer, which arbor does not make yet.) The policy
(components/render/cloud_credentials.py) names the shoot's nodes subnets, security group and nodes' role; the key's
secret stays a secret output from the provider into the Secret.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pulumi
import pulumi_aws as aws

from components.bundles import MachineCredentials, NetworkAccess
from components.plan.values import ShootValues
from components.render import cloud_credentials
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


def machine_credentials(shoot: ShootValues, network: NetworkAccess, parent: pulumi.Resource) -> MachineCredentials:
    """The IAM user `<technical id>-machines` of a shoot, its policy and access key, under `parent`."""
    tags = {cloud_credentials.aws_cluster_tag(shoot.technical_id): cloud_credentials.AWS_OWNED_VALUE}
    name = cloud_credentials.machines_name(shoot.technical_id)
    return user_with_key(f"{parent._name}-machines", name, machine_policy(shoot, network), tags, parent)
