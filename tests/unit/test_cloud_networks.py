"""A shoot's cloud network under Pulumi mocks: what aws and gcp get for each IP family combination.

The mocks answer like the clouds: the VPC gets an Amazon /56 when it asks for IPv6, a dual-stack GCP subnet its
/64 (external or internal, written the long way as Google does); everything else echoes its inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pytest

from components.bundles import NetworkAccess
from components.kinds import ProviderType
from components.plan.network import GCP_PODS_RANGE, NetworkPlan, NetworkValues, plan_network
from components.providers import aws_network, gcp_network
from components.spec.cidrs import IPV4, IPV6

TECHNICAL_ID = "shoot--dev--web"
PARENT = "dev-web"
VPC_IPV6 = "2600:1f18:abcd:ef00::/56"
GCP_NODES_IPV6 = "2600:1900:4041:be7:0:0:0:0/64"
GCP_SERVICES_IPV6 = "fd20:c2a:5b3d:0:0:0:0:0/64"
IPAM_POOL = "ipam-pool-0123456789abcdef0"
ZONES = {
    ProviderType.AWS: ("eu-central-1a", "eu-central-1b", "eu-central-1c"),
    ProviderType.GCP: ("europe-west1-b", "europe-west1-c"),
}
REGIONS = {ProviderType.AWS: "eu-central-1", ProviderType.GCP: "europe-west1"}
RANGES_IPV4 = {"nodes": "10.250.0.0/16", "pods": "100.96.0.0/11", "services": "100.64.0.0/13"}
DUAL, ONLY_IPV4, ONLY_IPV6 = (IPV4, IPV6), (IPV4,), (IPV6,)
AWS_FAMILIES = [ONLY_IPV4, ONLY_IPV6, DUAL]
GCP_FAMILIES = [ONLY_IPV4, DUAL]
# The /64s Gardener's numbering gives with three zones: zone i's nodes, private and public utility are 3i, 3i+1, 3i+2.
AWS_SUBNET_IPV6 = {
    "nodes-z0": "2600:1f18:abcd:ef00::/64",
    "private-utility-z0": "2600:1f18:abcd:ef01::/64",
    "public-utility-z0": "2600:1f18:abcd:ef02::/64",
    "nodes-z1": "2600:1f18:abcd:ef03::/64",
    "private-utility-z1": "2600:1f18:abcd:ef04::/64",
    "public-utility-z1": "2600:1f18:abcd:ef05::/64",
    "nodes-z2": "2600:1f18:abcd:ef06::/64",
    "private-utility-z2": "2600:1f18:abcd:ef07::/64",
    "public-utility-z2": "2600:1f18:abcd:ef08::/64",
}
# The second /108 of nodes-z0's /64.
AWS_SERVICES_IPV6 = "2600:1f18:abcd:ef00::10:0/108"

VPC = "aws:ec2/vpc:Vpc"
SUBNET = "aws:ec2/subnet:Subnet"
ROUTE = "aws:ec2/route:Route"
ASSOCIATION = "aws:ec2/routeTableAssociation:RouteTableAssociation"
EOIGW = "aws:ec2/egressOnlyInternetGateway:EgressOnlyInternetGateway"
RESERVATION = "aws:ec2/subnetCidrReservation:SubnetCidrReservation"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
GCP_NETWORK = "gcp:compute/network:Network"
GCP_SUBNET = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"


GCP_PROJECT_NUMBER = "123456789012"


def cloud_computed(typ: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """What the cloud adds to a resource's inputs: the IPv6 blocks it assigns."""
    if typ == VPC and (inputs.get("assignGeneratedIpv6CidrBlock") or inputs.get("ipv6IpamPoolId")):
        return {"ipv6CidrBlock": VPC_IPV6}
    if typ == GCP_SUBNET and inputs.get("stackType") == "IPV4_IPV6":
        if inputs.get("ipv6AccessType") == "EXTERNAL":
            return {"externalIpv6Prefix": GCP_NODES_IPV6, "ipv6CidrRange": GCP_NODES_IPV6}
        return {"internalIpv6Prefix": GCP_SERVICES_IPV6, "ipv6CidrRange": GCP_SERVICES_IPV6}
    # A workload identity pool's and its provider's resource names (under the project's number).
    pools = f"projects/{GCP_PROJECT_NUMBER}/locations/global/workloadIdentityPools"
    if typ == "gcp:iam/workloadIdentityPool:WorkloadIdentityPool":
        return {"name": f"{pools}/{inputs['workloadIdentityPoolId']}"}
    if typ == "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider":
        return {
            "name": f"{pools}/{inputs['workloadIdentityPoolId']}/providers/{inputs['workloadIdentityPoolProviderId']}"
        }
    return {}


class NetworkMocks(pulumi.runtime.Mocks):
    """Records every cloud resource's inputs by name; outputs are the inputs plus what the cloud assigns."""

    def __init__(self) -> None:
        self.resources: dict[str, tuple[str, dict[str, Any]]] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.custom:
            # Names are unique across types here, so a test can look any resource up by its name alone.
            assert args.name not in self.resources, f"{args.name} registered twice"
            self.resources[args.name] = (args.typ, dict(args.inputs))
        return f"{args.name}-id", dict(args.inputs) | cloud_computed(args.typ, args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, []  # the SDK iterates the failures: None would crash it


@dataclass
class Run:
    """One network registered under mocks: the plan, every resource's type and inputs, and the outputs."""

    plan: NetworkPlan
    resources: dict[str, tuple[str, dict[str, Any]]]
    ranges: dict[str, list[str]] = field(default_factory=dict)
    subnets: dict[str, str] = field(default_factory=dict)
    ready: list[str] = field(default_factory=list)

    def of(self, typ: str) -> dict[str, dict[str, Any]]:
        """Inputs of every resource of a type, by name without the parent's prefix."""
        return {n.removeprefix(f"{PARENT}-"): i for n, (t, i) in self.resources.items() if t == typ}

    def one(self, typ: str, name: str) -> dict[str, Any]:
        """Inputs of one resource, by name without the parent's prefix."""
        return self.of(typ)[name]


NETWORKS: dict[ProviderType, Callable[[NetworkPlan, pulumi.Resource], NetworkAccess]] = {
    ProviderType.AWS: aws_network.network,
    ProviderType.GCP: gcp_network.network,
}


def values(
    provider: ProviderType, families: tuple[str, ...], pool: str | None = None, technical_id: str = TECHNICAL_ID
) -> NetworkValues:
    """A shoot's networks as a user gives them on a cloud: IPv4 ranges only, IPv6 assigned."""
    given = {k: (v,) if IPV4 in families else () for k, v in RANGES_IPV4.items()}
    return NetworkValues(
        technical_id=technical_id,
        provider=provider,
        region=REGIONS[provider],
        zones=ZONES[provider],
        ip_families=families,
        nodes=given["nodes"],
        pods=given["pods"],
        services=given["services"],
        ipv6_ipam_pool=pool,
    )


def register(
    provider: ProviderType, families: tuple[str, ...], pool: str | None = None, technical_id: str = TECHNICAL_ID
) -> Run:
    """The network of a shoot on `provider` with `families`, registered under fresh mocks until settled."""
    mocks = NetworkMocks()
    pulumi.runtime.set_mocks(mocks, project="arbor", stack="test", preview=False)
    run = Run(plan=plan_network(values(provider, families, pool, technical_id)), resources=mocks.resources)

    @pulumi.runtime.test
    def program() -> pulumi.Output[None]:
        parent = pulumi.ComponentResource("arbor:shoot:Shoot", PARENT)
        access = NETWORKS[provider](run.plan, parent)
        urns = pulumi.Output.all(*[r.urn for r in access.ready])

        def keep(args: list[Any]) -> None:
            run.ranges, run.subnets = args[0], args[1]
            run.ready = [u.rsplit("::", 1)[-1].removeprefix(f"{PARENT}-") for u in args[2]]

        return pulumi.Output.all(access.ranges, access.subnets, urns).apply(keep)

    program()
    return run


# --- aws ---


@pytest.mark.parametrize(
    ("families", "pool", "expected"),
    [
        (ONLY_IPV4, None, {}),
        (DUAL, None, {"assignGeneratedIpv6CidrBlock": True}),
        (ONLY_IPV6, None, {"assignGeneratedIpv6CidrBlock": True}),
        (DUAL, IPAM_POOL, {"ipv6IpamPoolId": IPAM_POOL, "ipv6NetmaskLength": 56}),
    ],
)
def test_aws_vpc_asks_for_a_56_only_with_ipv6(
    families: tuple[str, ...], pool: str | None, expected: dict[str, Any]
) -> None:
    """GIVEN families (and an IPAM pool) WHEN registered THEN the VPC asks for its /56 exactly with IPv6."""
    vpc = register(ProviderType.AWS, families, pool).one(VPC, "vpc")
    ipv6_inputs = ("assignGeneratedIpv6CidrBlock", "ipv6IpamPoolId", "ipv6NetmaskLength", "ipv6CidrBlock")
    assert {k: vpc[k] for k in ipv6_inputs if k in vpc} == expected
    assert vpc["cidrBlock"] == ("10.180.0.0/16" if families == ONLY_IPV6 else "10.250.0.0/16")
    assert vpc["enableDnsSupport"] is True and vpc["enableDnsHostnames"] is True
    assert vpc["tags"] == {"Name": f"{TECHNICAL_ID}-vpc", f"kubernetes.io/cluster/{TECHNICAL_ID}": "1"}


@pytest.mark.parametrize("families", AWS_FAMILIES)
def test_aws_subnets_take_their_carved_64s(families: tuple[str, ...]) -> None:
    """GIVEN families WHEN registered THEN each subnet has the plan's IPv4 and zone and, with IPv6, its /64."""
    run = register(ProviderType.AWS, families)
    subnets = run.of(SUBNET)
    assert sorted(subnets) == sorted(AWS_SUBNET_IPV6)
    for planned in run.plan.subnets:
        subnet = subnets[planned.name]
        assert subnet.get("cidrBlock") == planned.ipv4 and subnet["availabilityZone"] == planned.zone
        assert subnet.get("ipv6CidrBlock") == (AWS_SUBNET_IPV6[planned.name] if IPV6 in families else None)
        assert subnet.get("assignIpv6AddressOnCreation") is (True if IPV6 in families else None)
    assert subnets["nodes-z0"].get("cidrBlock") == (None if families == ONLY_IPV6 else "10.250.0.0/19")


@pytest.mark.parametrize("families", AWS_FAMILIES)
def test_aws_only_ipv6_only_workers_subnets_are_ipv6_native(families: tuple[str, ...]) -> None:
    """GIVEN families WHEN registered THEN IPv6-only workers subnets are native with DNS64; no other subnet is."""
    subnets = register(ProviderType.AWS, families).of(SUBNET)
    native = {"ipv6Native": True, "enableDns64": True, "enableResourceNameDnsAaaaRecordOnLaunch": True}
    for name, subnet in subnets.items():
        flags = {k: subnet[k] for k in native if k in subnet}
        assert flags == (native if families == ONLY_IPV6 and name.startswith("nodes-") else {}), name


def test_aws_subnets_carry_gardeners_tags() -> None:
    """GIVEN a network WHEN registered THEN subnets are tagged for the cluster, utility ones for load balancers."""
    subnets = register(ProviderType.AWS, DUAL).of(SUBNET)
    cluster = {f"kubernetes.io/cluster/{TECHNICAL_ID}": "1"}
    assert subnets["nodes-z1"]["tags"] == {"Name": f"{TECHNICAL_ID}-nodes-z1", **cluster}
    assert subnets["public-utility-z0"]["tags"] == {
        "Name": f"{TECHNICAL_ID}-public-utility-z0",
        "kubernetes.io/role/elb": "1",
        **cluster,
    }
    assert subnets["private-utility-z2"]["tags"]["kubernetes.io/role/internal-elb"] == "1"


def _routes(run: Run) -> set[tuple[str, str, str]]:
    """Every route as (table, destination, target)."""
    targets = ("gatewayId", "natGatewayId", "egressOnlyGatewayId")
    out = set()
    for route in run.of(ROUTE).values():
        table = route["routeTableId"].removeprefix(f"{PARENT}-").removesuffix("-id")
        destination = route.get("destinationCidrBlock") or route["destinationIpv6CidrBlock"]
        target = next(route[t] for t in targets if t in route).removeprefix(f"{PARENT}-").removesuffix("-id")
        out.add((table, destination, target))
    return out


@pytest.mark.parametrize("families", AWS_FAMILIES)
def test_aws_routes_add_egress_only_and_nat64_with_ipv6(families: tuple[str, ...]) -> None:
    """GIVEN families WHEN registered THEN IPv4 defaults always; ::/0 and NAT64 routes and the EOIGW with IPv6."""
    run = register(ProviderType.AWS, families)
    expected = {("public", "0.0.0.0/0", "igw")} | {(f"private-z{i}", "0.0.0.0/0", f"natgw-z{i}") for i in range(3)}
    if IPV6 in families:
        expected |= {("public", "::/0", "igw")}
        expected |= {(f"private-z{i}", "::/0", "eoigw") for i in range(3)}
        expected |= {(f"private-z{i}", "64:ff9b::/96", f"natgw-z{i}") for i in range(3)}
    assert _routes(run) == expected
    assert list(run.of(EOIGW)) == (["eoigw"] if IPV6 in families else [])


def test_aws_subnets_route_through_their_zone() -> None:
    """GIVEN three zones WHEN registered THEN public subnets use the public table, the others their zone's."""
    run = register(ProviderType.AWS, DUAL)
    tables = {
        a["subnetId"].removesuffix("-id"): a["routeTableId"].removesuffix("-id") for a in run.of(ASSOCIATION).values()
    }
    expected = {f"{PARENT}-{name}": f"{PARENT}-public" for name in AWS_SUBNET_IPV6 if name.startswith("public")}
    for i in range(3):
        expected |= {f"{PARENT}-{n}-z{i}": f"{PARENT}-private-z{i}" for n in ("nodes", "private-utility")}
    assert tables == expected
    nat = run.one("aws:ec2/natGateway:NatGateway", "natgw-z1")
    assert nat["subnetId"] == f"{PARENT}-public-utility-z1-id"
    assert nat["allocationId"] == f"{PARENT}-eip-natgw-z1-id"


@pytest.mark.parametrize("families", AWS_FAMILIES)
def test_aws_reserves_the_ipv6_services_range(families: tuple[str, ...]) -> None:
    """GIVEN families WHEN registered THEN with IPv6 the second /108 of nodes-z0 is reserved explicitly."""
    reservations = register(ProviderType.AWS, families).of(RESERVATION)
    if IPV6 not in families:
        assert reservations == {}
        return
    assert reservations == {
        "services-ipv6": {
            "subnetId": f"{PARENT}-nodes-z0-id",
            "cidrBlock": AWS_SERVICES_IPV6,
            "reservationType": "explicit",
            "region": REGIONS[ProviderType.AWS],
        }
    }


def _rule(rule: dict[str, Any]) -> tuple[str, str, str]:
    """A rule as (protocol and ports, source kind, source)."""
    # Numbers cross the mocks as protobuf doubles.
    ports = "-".join(str(int(rule[k])) if k in rule else "" for k in ("fromPort", "toPort"))
    ports = f"{rule['ipProtocol']}:{ports}"
    kind = next(k for k in ("cidrIpv4", "cidrIpv6", "referencedSecurityGroupId") if k in rule)
    return ports, kind, str(rule[kind]).removeprefix(f"{PARENT}-")


@pytest.mark.parametrize("families", AWS_FAMILIES)
def test_aws_security_group_rules_per_family_and_no_world_ingress(families: tuple[str, ...]) -> None:
    """GIVEN families WHEN registered THEN self, IPv4 pods, NodePorts from the VPC per family, egress per family."""
    run = register(ProviderType.AWS, families)
    ingress = {_rule(r) for r in run.of(INGRESS).values()}
    egress = {_rule(r) for r in run.of(EGRESS).values()}
    inside = {"cidrIpv4": "10.250.0.0/16", "cidrIpv6": VPC_IPV6}
    kinds = [k for fam, k in ((IPV4, "cidrIpv4"), (IPV6, "cidrIpv6")) if fam in families]
    pods = {("-1:-", "cidrIpv4", "100.96.0.0/11")} if IPV4 in families else set()
    assert ingress == {("-1:-", "referencedSecurityGroupId", "nodes-sg-id")} | pods | {
        (f"{p}:30000-32767", k, inside[k]) for p in ("tcp", "udp") for k in kinds
    }
    assert egress == {("-1:-", k, {"cidrIpv4": "0.0.0.0/0", "cidrIpv6": "::/0"}[k]) for k in kinds}
    assert not {source for *_, source in ingress} & {"0.0.0.0/0", "::/0"}
    group = run.one("aws:ec2/securityGroup:SecurityGroup", "nodes-sg")
    assert group["name"] == f"{TECHNICAL_ID}-nodes" and group["vpcId"] == f"{PARENT}-vpc-id"


@pytest.mark.parametrize(
    ("families", "expected"),
    [
        (ONLY_IPV4, {"nodes": ["10.250.0.0/16"], "pods": ["100.96.0.0/11"], "services": ["100.64.0.0/13"]}),
        (ONLY_IPV6, {"nodes": [VPC_IPV6], "pods": [VPC_IPV6], "services": [AWS_SERVICES_IPV6]}),
        (
            DUAL,
            {
                "nodes": ["10.250.0.0/16", VPC_IPV6],
                "pods": ["100.96.0.0/11", VPC_IPV6],
                "services": ["100.64.0.0/13", AWS_SERVICES_IPV6],
            },
        ),
    ],
)
def test_aws_hands_on_resolved_ranges_subnets_and_what_to_wait_for(
    families: tuple[str, ...], expected: dict[str, list[str]]
) -> None:
    """GIVEN families WHEN registered THEN ranges per family with the assigned IPv6, subnet IDs, ready resources."""
    run = register(ProviderType.AWS, families)
    assert run.ranges == expected
    assert run.subnets == {name: f"{PARENT}-{name}-id" for name in AWS_SUBNET_IPV6}
    assert {"nodes-z0", "nodes-sg", "private-z2-default-ipv4"} <= set(run.ready)
    assert ("services-ipv6" in run.ready) is (IPV6 in families)


@pytest.mark.parametrize(("families", "pool"), [(f, None) for f in AWS_FAMILIES] + [(DUAL, IPAM_POOL)])
def test_aws_every_resource_but_iam_names_the_shoots_region(families: tuple[str, ...], pool: str | None) -> None:
    """GIVEN families WHEN registered THEN each resource names the plan's region, not the stack's; IAM none (global)."""
    run = register(ProviderType.AWS, families, pool)
    regions = {n: i.get("region") for n, (t, i) in run.resources.items() if not t.startswith("aws:iam/")}
    assert set(regions.values()) == {run.plan.region}, [n for n, r in regions.items() if r != run.plan.region]
    iam = {n: i for n, (t, i) in run.resources.items() if t.startswith("aws:iam/")}
    assert iam and [n for n, i in iam.items() if "region" in i] == []


# --- gcp ---


@pytest.mark.parametrize("families", GCP_FAMILIES)
def test_gcp_network_and_subnets_per_family(families: tuple[str, ...]) -> None:
    """GIVEN families WHEN registered THEN the nodes subnet is dual-stack external with IPv6, plus a services one."""
    run = register(ProviderType.GCP, families)
    dual = IPV6 in families
    network = run.one(GCP_NETWORK, "network")
    assert network["name"] == TECHNICAL_ID and network["autoCreateSubnetworks"] is False
    assert network["routingMode"] == "REGIONAL"
    assert network.get("enableUlaInternalIpv6") is (True if dual else None)
    subnets = run.of(GCP_SUBNET)
    assert sorted(subnets) == (["nodes", "services"] if dual else ["nodes"])
    nodes = subnets["nodes"]
    assert nodes["name"] == f"{TECHNICAL_ID}-nodes" and nodes["region"] == "europe-west1"
    assert nodes["ipCidrRange"] == "10.250.0.0/16" and nodes["privateIpGoogleAccess"] is True
    assert nodes["secondaryIpRanges"] == [{"rangeName": GCP_PODS_RANGE, "ipCidrRange": "100.96.0.0/11"}]
    assert (nodes["stackType"], nodes.get("ipv6AccessType")) == (
        ("IPV4_IPV6", "EXTERNAL") if dual else ("IPV4_ONLY", None)
    )
    if dual:
        services = subnets["services"]
        assert services["name"] == f"{TECHNICAL_ID}-services" and services["ipCidrRange"] == "100.64.0.0/13"
        assert (services["stackType"], services["ipv6AccessType"]) == ("IPV4_IPV6", "INTERNAL")
        assert "secondaryIpRanges" not in services


def test_gcp_cloud_nat_covers_the_nodes_subnet() -> None:
    """GIVEN a network WHEN registered THEN Gardener's router and NAT serve every range of the nodes subnet."""
    run = register(ProviderType.GCP, DUAL)
    router = run.one("gcp:compute/router:Router", "cloud-router")
    assert router["name"] == f"{TECHNICAL_ID}-cloud-router" and router["network"] == f"{PARENT}-network-id"
    nat = run.one("gcp:compute/routerNat:RouterNat", "cloud-nat")
    assert nat["name"] == f"{TECHNICAL_ID}-cloud-nat" and nat["router"] == f"{TECHNICAL_ID}-cloud-router"
    assert nat["natIpAllocateOption"] == "AUTO_ONLY"
    assert nat["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS"
    assert nat["subnetworks"] == [{"name": f"{PARENT}-nodes-id", "sourceIpRangesToNats": ["ALL_IP_RANGES"]}]


def _firewall(rule: dict[str, Any]) -> tuple[list[str], list[str]]:
    """A firewall as (source ranges, allowed protocol:ports)."""
    allowed = [f"{a['protocol']}:{','.join(a.get('ports', []))}" for a in rule["allows"]]
    return rule["sourceRanges"], allowed


@pytest.mark.parametrize("families", GCP_FAMILIES)
def test_gcp_firewalls_one_family_each(families: tuple[str, ...]) -> None:
    """GIVEN families WHEN registered THEN internal and health-check rules per family, sources of one family each."""
    rules = register(ProviderType.GCP, families).of(FIREWALL)
    internal = ["icmp:", "ipip:", "tcp:1-65535", "udp:1-65535"]
    expected = {
        "allow-internal-access": (["10.250.0.0/16", "100.96.0.0/11"], internal),
        "allow-health-checks": (
            ["35.191.0.0/16", "130.211.0.0/22", "209.85.152.0/22", "209.85.204.0/22"],
            ["tcp:30000-32767"],
        ),
    }
    if IPV6 in families:
        expected["allow-internal-access-ipv6"] = (
            ["2600:1900:4041:be7::/64", "fd20:c2a:5b3d::/64"],
            ["58:", "tcp:1-65535", "udp:1-65535"],
        )
        expected["allow-health-checks-ipv6"] = (
            ["2600:2d00:1:b029::/64", "2600:2d00:1:1::/64", "2600:1901:8001::/48"],
            ["tcp:30000-32767"],
        )
    assert {name: _firewall(rule) for name, rule in rules.items()} == expected
    for name, rule in rules.items():
        assert rule["name"] == f"{TECHNICAL_ID}-{name}" and rule["direction"] == "INGRESS"
        assert len({":" in r for r in rule["sourceRanges"]}) == 1, name


@pytest.mark.parametrize(
    ("families", "expected"),
    [
        (ONLY_IPV4, {"nodes": ["10.250.0.0/16"], "pods": ["100.96.0.0/11"], "services": ["100.64.0.0/13"]}),
        (
            DUAL,
            {
                "nodes": ["10.250.0.0/16", "2600:1900:4041:be7::/64"],
                "pods": ["100.96.0.0/11", "2600:1900:4041:be7::/64"],
                "services": ["100.64.0.0/13", "fd20:c2a:5b3d::/108"],
            },
        ),
    ],
)
def test_gcp_hands_on_resolved_ranges(families: tuple[str, ...], expected: dict[str, list[str]]) -> None:
    """GIVEN families WHEN registered THEN the IPv6 ranges are the nodes /64 and the services subnet's first /108."""
    run = register(ProviderType.GCP, families)
    assert run.ranges == expected
    names = ["nodes", "services"] if IPV6 in families else ["nodes"]
    assert run.subnets == {name: f"{PARENT}-{name}-id" for name in names}
    assert {"cloud-nat", "allow-health-checks", *names} <= set(run.ready)


def test_gcp_names_stay_within_63_characters() -> None:
    """GIVEN a long technical ID WHEN registered THEN every GCP name fits 63 characters and stays unique."""
    long_id = "shoot--" + "p" * 20 + "--" + "s" * 30
    resources = register(ProviderType.GCP, DUAL, technical_id=long_id).resources
    names = {n.removeprefix(f"{PARENT}-"): i["name"] for n, (_, i) in resources.items() if "name" in i}
    assert names["network"] == long_id
    # Service account IDs are capped at 30 characters instead.
    account = resources[f"{PARENT}-nodes-account"][1]["accountId"]
    assert len(account) <= 30 and account.startswith("shoot--")
    assert all(len(n) <= 63 for n in names.values()) and len(set(names.values())) == len(names)
    assert names["allow-internal-access-ipv6"] != f"{long_id}-allow-internal-access-ipv6"
