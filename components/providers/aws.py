"""The AWS provider: garden and seed clusters as EKS clusters, or existing clusters by kubeconfig.

Created clusters get their IAM roles (cluster and nodes, AWS managed policies only), a managed node group of
`nodes` across the seed's zones, and a private and public API endpoint; a seed also gets the EBS CSI driver add-on
for its etcd volumes (aws_storage.py). Subnets are those of the account's default VPC in the seed's zones; shoots
get VPCs of their own (aws_network.py). Every regional resource and lookup names its region (the cluster's, or the
shoot's for its network) rather than taking the stack's `aws:region`, so one landscape spans regions; IAM is global.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from components import naming
from components.bundles import (
    BackupAccess,
    ClusterAccess,
    ExposedControlPlane,
    HeldSecret,
    Issuer,
    MachineCredentials,
    NetworkAccess,
)
from components.kinds import SUPPORTED_MINORS
from components.plan.catalogue import ImageSource
from components.plan.network import NetworkPlan
from components.plan.values import BackupValues, ClusterValues, ControlPlaneMachine, ShootValues, ZoneDeployment
from components.providers import (
    aws_backup,
    aws_control_plane,
    aws_credentials,
    aws_issuer,
    aws_network,
    aws_storage,
    cloud,
)
from components.providers.kubeconfig import exec_kubeconfig
from components.render import machine_providers
from components.render.machines import Object, Sidecar

EKS_NAME_MAX = 100
INSTANCE_TYPE = "m5.large"
# The newest minor arbor supports; EKS upgrades one minor at a time, so a change here is a reviewed update.
EKS_VERSION = "{}.{}".format(*SUPPORTED_MINORS[-1])
CLUSTER_POLICIES = ["arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"]
# The architecture filter of an AMI lookup, by Gardener's architecture names.
AMI_ARCHITECTURES = {"amd64": "x86_64", "arm64": "arm64"}
NODE_POLICIES = [
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
]


def _role(name: str, service: str, policies: list[str], parent: pulumi.Resource) -> aws.iam.Role:
    """An IAM role that `service` assumes, with AWS managed policies attached."""
    role = aws.iam.Role(
        name, assume_role_policy=aws_network.trust_policy(service), opts=pulumi.ResourceOptions(parent=parent)
    )
    for i, policy in enumerate(policies):
        aws.iam.RolePolicyAttachment(
            f"{name}-{i}", role=role.name, policy_arn=policy, opts=pulumi.ResourceOptions(parent=parent)
        )
    return role


def _default_subnets(region: str, zones: Sequence[str]) -> pulumi.Output[list[str]]:
    """The default VPC's subnets in `zones` of `region`."""

    def in_vpc(vpc_id: str) -> pulumi.Output[list[str]]:
        filters = [
            aws.ec2.GetSubnetsFilterArgs(name="vpc-id", values=[vpc_id]),
            aws.ec2.GetSubnetsFilterArgs(name="availability-zone", values=list(zones)),
        ]
        return aws.ec2.get_subnets_output(filters=filters, region=region).ids

    return aws.ec2.get_vpc_output(default=True, region=region).id.apply(in_vpc)


class AwsProvider(cloud.CloudProvider):
    """InfrastructureProvider on AWS (credentials from the `aws:` config; each resource names its own region)."""

    class_provider = machine_providers.AWS_CLASS_PROVIDER

    def created(
        self, values: ClusterValues, parent: pulumi.Resource, depends_on: Sequence[pulumi.Resource]
    ) -> ClusterAccess:
        """An EKS cluster with its roles and node group, or an existing cluster."""
        name = naming.capped(values.name, EKS_NAME_MAX)
        prefix = parent._name
        subnets = _default_subnets(values.region, values.zones)
        cluster_role = _role(f"{prefix}-cluster-role", "eks.amazonaws.com", CLUSTER_POLICIES, parent)
        node_role = _role(f"{prefix}-node-role", "ec2.amazonaws.com", NODE_POLICIES, parent)
        cluster = aws.eks.Cluster(
            f"{prefix}-eks",
            name=name,
            region=values.region,
            role_arn=cluster_role.arn,
            version=EKS_VERSION,
            vpc_config=aws.eks.ClusterVpcConfigArgs(
                subnet_ids=subnets, endpoint_private_access=True, endpoint_public_access=True
            ),
            access_config=aws.eks.ClusterAccessConfigArgs(authentication_mode="API"),
            # Protected: it holds the cluster's etcd data.
            opts=pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on), protect=True),
        )
        nodes = aws.eks.NodeGroup(
            f"{prefix}-nodes",
            cluster_name=cluster.name,
            region=values.region,
            node_role_arn=node_role.arn,
            subnet_ids=subnets,
            instance_types=[INSTANCE_TYPE],
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                desired_size=values.nodes, min_size=values.nodes, max_size=max(values.nodes, 1) * 2
            ),
            opts=pulumi.ResourceOptions(parent=parent),
        )
        kubeconfig = cloud.secret(
            pulumi.Output.all(cluster.endpoint, cluster.certificate_authority.data).apply(
                lambda a: exec_kubeconfig(name, a[0], a[1] or "", "aws", ["eks", "get-token", "--cluster-name", name])
            )
        )
        if not values.key.startswith("seed/"):
            return cloud.access(values, parent, kubeconfig, cluster.endpoint, ready=[nodes])
        # A seed's etcd volumes need the EBS CSI driver: objects on the seed wait for it (a garden has no etcd volumes).
        # Its issuer is trusted by the driver's role and by the seed's backup bucket's (workload identity).
        issuer = aws_storage.issuer(cluster, parent)
        driver = aws_storage.ebs_csi_driver(cluster, issuer, nodes, values.region, parent)
        return cloud.access(values, parent, kubeconfig, cluster.endpoint, ready=[nodes, driver], issuer=issuer)

    def trusted(self, url: pulumi.Input[str], values: ClusterValues, parent: pulumi.Resource) -> Issuer:
        """An existing seed's issuer: the account's IAM OIDC provider the spec names, or one made for it."""
        return aws_storage.oidc_issuer(url, parent, values.oidc_provider)

    def build_network(self, plan: NetworkPlan, parent: pulumi.Resource) -> NetworkAccess:
        """The shoot's VPC, subnets, gateways, routes, nodes security group and instance profile."""
        return aws_network.network(plan, parent)

    def machine_sidecar(self, namespace: str) -> Sidecar:
        """machine-controller-manager-provider-aws."""
        return machine_providers.sidecar_aws(namespace)

    def looked_up(self, source: ImageSource, region: str) -> pulumi.Output[str]:
        """The newest AMI of the owner whose name matches, in the shoot's region (`aws.ec2.get_ami`)."""
        filters = [
            aws.ec2.GetAmiFilterArgs(name="name", values=[source.name]),
            aws.ec2.GetAmiFilterArgs(name="architecture", values=[AMI_ARCHITECTURES[source.architecture]]),
        ]
        return aws.ec2.get_ami_output(owners=[source.owner], filters=filters, most_recent=True, region=region).id

    def provider_spec(
        self, shoot: ShootValues, d: ZoneDeployment, subnet_id: str, nodes: dict[str, str], image: str
    ) -> Object:
        """An EC2 class in the zone's nodes subnet, with the nodes' security group and instance profile."""
        net = shoot.networking
        values = machine_providers.AwsMachineValues(
            shoot.technical_id, net.region, subnet_id, nodes["securityGroupID"], nodes["instanceProfile"],
            net.ip_families,
        )  # fmt: skip
        return machine_providers.aws_provider_spec(d, values, image)

    def shoot_issuer(
        self, shoot: ShootValues, public_key: pulumi.Output[str], parent: pulumi.Resource
    ) -> Issuer | None:
        """Published in the shoot's issuer bucket, trusted through an IAM OIDC provider made for its URL."""
        return aws_issuer.published_issuer(shoot, public_key, parent) if shoot.issuer_bucket else None

    def machine_credentials(
        self, shoot: ShootValues, network: NetworkAccess, seed: ClusterAccess, parent: pulumi.Resource
    ) -> MachineCredentials:
        """A role MCM assumes through the seed's issuer (or a user and key), scoped to the shoot's network and nodes."""
        return aws_credentials.machine_credentials(shoot, network, seed.issuer, parent)

    def backup_bucket(
        self, values: BackupValues, seed: ClusterAccess, holder: HeldSecret, parent: pulumi.Resource
    ) -> BackupAccess:
        """The seed's bucket with Gardener's safety settings and an identity for that bucket alone.

        A role the seed's `etcd-backup` ServiceAccounts assume (workload identity: no key), else a user's key, an
        output that writes no Secret: the seed writes `holder` from `data`.
        """
        return aws_backup.backup_bucket(values, seed.issuer, parent)

    def build_control_plane_machine(
        self,
        shoot: ShootValues,
        machine: ControlPlaneMachine,
        subnet: pulumi.Output[str],
        network: NetworkAccess,
        image: pulumi.Input[str],
        bundle: pulumi.Output[str],
        parent: pulumi.Resource,
    ) -> ExposedControlPlane:
        """An EC2 instance behind a network load balancer in the shoot's public subnets (aws_control_plane.py)."""
        assert network.vpc is not None and network.nodes is not None  # a cloud network has both
        public = [shoot.network_plan.subnet("public", zone).name for zone in shoot.networking.zones]
        public_ids = network.subnets.apply(lambda ids: [ids[name] for name in public])
        return aws_control_plane.control_plane_machine(
            shoot, machine, subnet, public_ids, network.vpc, network.nodes, image, bundle, parent
        )
