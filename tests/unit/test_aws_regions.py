"""An AWS landscape away from the stack's `aws:region`, under Pulumi mocks: every regional resource names its region.

pulumi-aws puts a resource without `region` in the provider's default region (`aws:region`), so a seed in
eu-west-1 of a stack configured for eu-central-1 would get its cluster, and its shoots their networks, in the
wrong region. IAM and Route 53 are global: they take no region.
"""

from __future__ import annotations

import copy
from typing import Any

import pulumi

from components.checks import parse_landscape
from components.plan.planner import plan_landscape
from components.providers.registry import provider_for
from tests.unit.landscape_mocks import OUTPUTS, build
from tests.unit.spec_cases import CLOUD_PROFILES
from tests.unit.test_cloud_stacks import GARDEN_KUBECONFIG, CloudMocks, stack_landscape

STACK_REGION = "eu-central-1"
REGION = "eu-west-1"
ZONES = [f"{REGION}a", f"{REGION}b", f"{REGION}c"]
GLOBAL = ("aws:iam/", "aws:route53/")
# Invokes of no region: the caller's account and partition (STS).
GLOBAL_INVOKES = ("aws:index/getCallerIdentity:getCallerIdentity", "aws:index/getPartition:getPartition")
# Every regional type a seed and a dual-stack shoot's network register: the test fails if one goes missing.
REGIONAL = {
    "aws:eks/cluster:Cluster",
    "aws:eks/nodeGroup:NodeGroup",
    "aws:eks/addon:Addon",
    "aws:ec2/vpc:Vpc",
    "aws:ec2/subnet:Subnet",
    "aws:ec2/route:Route",
    "aws:ec2/routeTableAssociation:RouteTableAssociation",
    "aws:ec2/eip:Eip",
    "aws:ec2/natGateway:NatGateway",
    "aws:ec2/routeTable:RouteTable",
    "aws:ec2/internetGateway:InternetGateway",
    "aws:ec2/egressOnlyInternetGateway:EgressOnlyInternetGateway",
    "aws:ec2/subnetCidrReservation:SubnetCidrReservation",
    "aws:ec2/securityGroup:SecurityGroup",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
    # The seed's backup bucket and its settings (the seed's region unless backup.region says otherwise).
    "aws:s3/bucket:Bucket",
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    "aws:s3/bucketVersioning:BucketVersioning",
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
    "aws:s3/bucketPolicy:BucketPolicy",
}
REGIONAL_INVOKES = {"aws:ec2/getVpc:getVpc", "aws:ec2/getSubnets:getSubnets", "aws:ec2/getAmi:getAmi"}
VPC_IPV6 = "2a05:d018:abcd:ef00::/56"
LB_HOSTNAME = f"k8s-abc.elb.{REGION}.amazonaws.com"


class RegionMocks(CloudMocks):
    """The cloud mocks, keeping every resource's type, name and inputs (names repeat across Kubernetes types)."""

    def __init__(self) -> None:
        super().__init__()
        self.registered: list[tuple[str, str, dict[str, Any]]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.registered.append((args.typ, args.name, dict(args.inputs)))
        rid, outputs = super().new_resource(args)
        outputs |= OUTPUTS.get(args.typ, {})  # what the reconciler computes: keys, certificates, kubeconfigs
        # Amazon assigns a dual-stack VPC its /56, from which the subnets' /64s are carved.
        if args.typ == "aws:ec2/vpc:Vpc" and args.inputs.get("assignGeneratedIpv6CidrBlock"):
            outputs["ipv6CidrBlock"] = VPC_IPV6
        # kube-apiserver's balancer gets its address, so the Route 53 records of the API are registered too.
        if args.typ == "kubernetes:core/v1:Service" and args.inputs.get("spec", {}).get("type") == "LoadBalancer":
            outputs["status"] = {"loadBalancer": {"ingress": [{"hostname": LB_HOSTNAME}]}}
        return rid, outputs


def landscape() -> dict[str, Any]:
    """The aws example with its seed in eu-west-1 hosting a dual-stack shoot whose machine identity arbor makes."""
    raw = copy.deepcopy(stack_landscape("aws-example"))
    raw["cloudProfiles"] = copy.deepcopy(CLOUD_PROFILES)
    raw["garden"]["dns"] = {"provider": "aws-route53", "zone": "Z0123456789", "domain": "example.com"}
    seed = raw["seeds"][0]
    seed.update(name="aws-euw1", region=REGION, zones=list(ZONES))
    raw["seeds"] = [seed]  # an IPv4 seed hosts the dual-stack shoot, as Gardener's do
    pool = {"name": "pool-a", "minimum": 1, "maximum": 2, "zones": ZONES[:2]}
    pool["machine"] = {"type": "m5.large", "image": {"name": "gardenlinux", "version": "1877.0"}}
    net = {"ipFamilies": ["IPv4", "IPv6"], "nodes": "10.250.0.0/16", "pods": "100.64.0.0/12"}
    raw["shoots"] = [
        {
            "name": "web",
            "project": "platform",
            "seed": seed["name"],
            "kubernetes": {"version": "1.34.4"},
            "networking": {**net, "services": "100.104.0.0/13"},
            "workers": [pool],
        }
    ]
    return raw


def register() -> RegionMocks:
    """The landscape registered under mocks until settled, in a stack whose `aws:region` is eu-central-1."""
    mocks = RegionMocks()
    pulumi.runtime.set_mocks(mocks, project="arbor", stack="aws-example", preview=False)
    config = {"aws:region": STACK_REGION, "arbor:gardenKubeconfig": GARDEN_KUBECONFIG}
    pulumi.runtime.set_all_config(config, ["arbor:gardenKubeconfig"])
    plan = plan_landscape(parse_landscape(landscape()), "aws-example")
    assert plan.shoots[0].networking.region == REGION

    @pulumi.runtime.test
    def program() -> pulumi.Output[list[str]]:
        return build({}, plan, provider_for).settled()

    program()
    return mocks


def test_every_regional_aws_resource_and_lookup_names_the_seeds_region() -> None:
    """GIVEN a seed and its shoot in eu-west-1, `aws:region` eu-central-1 WHEN registered THEN each names eu-west-1."""
    mocks = register()
    aws = [(t, n, i) for t, n, i in mocks.registered if t.startswith("aws:")]
    regional = [(t, n, i) for t, n, i in aws if not t.startswith(GLOBAL)]
    assert {t for t, _, _ in regional} == REGIONAL
    assert [(n, i.get("region")) for _, n, i in regional if i.get("region") != REGION] == []
    # Global resources: the seed's, the shoot nodes' and the machines' IAM roles and policies, the API's records.
    assert {t for t, _, _ in aws if t.startswith(GLOBAL)} >= {
        "aws:iam/role:Role",
        "aws:iam/rolePolicy:RolePolicy",
        "aws:route53/record:Record",
    }
    assert [n for t, n, i in aws if t.startswith(GLOBAL) and "region" in i] == []
    invokes = [(token, args) for token, args in mocks.calls if token.startswith("aws:") and token not in GLOBAL_INVOKES]
    assert {token for token, _ in invokes} == REGIONAL_INVOKES
    assert [(token, args.get("region")) for token, args in invokes if args.get("region") != REGION] == []
