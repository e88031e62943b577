"""IPv4 -> dual-stack on a cloud replaces nothing: a table of the inputs that force replacement, checked per resource.

`REPLACES` lists, per Pulumi type, the inputs whose change replaces the resource (the bridged Terraform schema's
ForceNew, from docs/gardener/networking.md section 1; every aws resource also takes `region`, assumed to replace).
`CUSTOMIZE_DIFF` adds the rules the schema does not show, which replace only for some old and new values.
The program runs under mocks once per family set; resources are paired by type and name.
"""

from __future__ import annotations

import inspect
import ipaddress
from collections.abc import Callable
from typing import Any

import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest

from components.kinds import ProviderType
from components.spec.cidrs import IPV4, IPV6
from tests.unit.test_cloud_networks import IPAM_POOL, register

Inputs = dict[str, Any]
SG_RULE_REPLACES = ("security_group_id", "region")
REPLACES: dict[str, tuple[str, ...]] = {
    "aws:ec2/vpc:Vpc": ("cidr_block", "ipv4_ipam_pool_id", "ipv4_netmask_length", "instance_tenancy", "region"),
    "aws:ec2/subnet:Subnet": (
        "vpc_id",
        "availability_zone",
        "availability_zone_id",
        "cidr_block",
        "ipv6_native",
        "ipv4_ipam_pool_id",
        "ipv4_netmask_length",
        "ipv6_ipam_pool_id",
        "ipv6_netmask_length",
        "outpost_arn",
        "region",
    ),
    "aws:ec2/internetGateway:InternetGateway": ("region",),
    "aws:ec2/egressOnlyInternetGateway:EgressOnlyInternetGateway": ("vpc_id", "region"),
    "aws:ec2/natGateway:NatGateway": (
        "subnet_id",
        "allocation_id",
        "connectivity_type",
        "private_ip",
        "secondary_private_ip_address_count",
        "region",
    ),
    "aws:ec2/eip:Eip": ("address", "domain", "ipam_pool_id", "network_border_group", "public_ipv4_pool", "region"),
    "aws:ec2/routeTable:RouteTable": ("vpc_id", "region"),
    "aws:ec2/route:Route": (
        "route_table_id",
        "destination_cidr_block",
        "destination_ipv6_cidr_block",
        "destination_prefix_list_id",
        "region",
    ),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": ("subnet_id", "gateway_id", "region"),
    "aws:ec2/securityGroup:SecurityGroup": ("name", "name_prefix", "description", "vpc_id", "region"),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": SG_RULE_REPLACES,
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": SG_RULE_REPLACES,
    "aws:ec2/subnetCidrReservation:SubnetCidrReservation": (
        "cidr_block",
        "reservation_type",
        "subnet_id",
        "description",
        "region",
    ),
    "gcp:compute/network:Network": (
        "name",
        "auto_create_subnetworks",
        "description",
        "internal_ipv6_range",
        "network_profile",
        "params",
        "project",
    ),
    # external_ipv6_prefix: settable only at creation or on the first switch to dual-stack (the SDK's own words).
    "gcp:compute/subnetwork:Subnetwork": (
        "name",
        "network",
        "region",
        "purpose",
        "description",
        "project",
        "external_ipv6_prefix",
    ),
    "gcp:compute/router:Router": ("name", "network", "region", "project", "encrypted_interconnect_router"),
    "gcp:compute/routerNat:RouterNat": ("name", "router", "region", "project"),
    "gcp:compute/firewall:Firewall": ("name", "direction", "project", "params"),
    # The nodes' identity (the workers issue): only names and paths are fixed, policies change in place.
    "aws:iam/role:Role": ("name", "name_prefix", "path"),
    "aws:iam/rolePolicy:RolePolicy": ("name", "name_prefix", "role"),
    "aws:iam/instanceProfile:InstanceProfile": ("name", "name_prefix", "path"),
    "gcp:serviceaccount/account:Account": ("account_id", "project"),
}
SDK: dict[str, type] = {
    "aws:ec2/vpc:Vpc": aws.ec2.Vpc,
    "aws:ec2/subnet:Subnet": aws.ec2.Subnet,
    "aws:ec2/internetGateway:InternetGateway": aws.ec2.InternetGateway,
    "aws:ec2/egressOnlyInternetGateway:EgressOnlyInternetGateway": aws.ec2.EgressOnlyInternetGateway,
    "aws:ec2/natGateway:NatGateway": aws.ec2.NatGateway,
    "aws:ec2/eip:Eip": aws.ec2.Eip,
    "aws:ec2/routeTable:RouteTable": aws.ec2.RouteTable,
    "aws:ec2/route:Route": aws.ec2.Route,
    "aws:ec2/routeTableAssociation:RouteTableAssociation": aws.ec2.RouteTableAssociation,
    "aws:ec2/securityGroup:SecurityGroup": aws.ec2.SecurityGroup,
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": aws.vpc.SecurityGroupIngressRule,
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": aws.vpc.SecurityGroupEgressRule,
    "aws:ec2/subnetCidrReservation:SubnetCidrReservation": aws.ec2.SubnetCidrReservation,
    "gcp:compute/network:Network": gcp.compute.Network,
    "gcp:compute/subnetwork:Subnetwork": gcp.compute.Subnetwork,
    "gcp:compute/router:Router": gcp.compute.Router,
    "gcp:compute/routerNat:RouterNat": gcp.compute.RouterNat,
    "gcp:compute/firewall:Firewall": gcp.compute.Firewall,
    "aws:iam/role:Role": aws.iam.Role,
    "aws:iam/rolePolicy:RolePolicy": aws.iam.RolePolicy,
    "aws:iam/instanceProfile:InstanceProfile": aws.iam.InstanceProfile,
    "gcp:serviceaccount/account:Account": gcp.serviceaccount.Account,
}
SG_SOURCES = ("cidrIpv4", "cidrIpv6", "prefixListId", "referencedSecurityGroupId")


def _camel(name: str) -> str:
    """An SDK argument as the engine (and the mocks) spell it: `ipv6_cidr_block` -> `ipv6CidrBlock`."""
    head, *rest = name.split("_")
    return head + "".join(p.capitalize() for p in rest)


def _aws_subnet_ipv6(old: Inputs, new: Inputs) -> bool:
    """A new `ipv6_cidr_block` replaces a subnet that assigned IPv6 addresses on creation."""
    return bool(old.get("assignIpv6AddressOnCreation")) and old.get("ipv6CidrBlock") != new.get("ipv6CidrBlock")


def _gcp_range_not_expanded(old: Inputs, new: Inputs) -> bool:
    """A new `ip_cidr_range` replaces a subnetwork unless it contains the old one (an expansion)."""
    before, after = str(old.get("ipCidrRange", "")), str(new.get("ipCidrRange", ""))
    if before == after:
        return False
    if not (before and after):
        return True
    old_net, new_net = ipaddress.ip_network(before), ipaddress.ip_network(after)
    if old_net.version != new_net.version:
        return True
    # The version check above is what typeshed cannot see: both networks are of one family here.
    return not new_net.supernet_of(old_net)  # type: ignore[arg-type]


def _sg_source_kind(old: Inputs, new: Inputs) -> bool:
    """A rule whose kind of source changes (IPv4 CIDR, IPv6 CIDR, prefix list, group) is replaced."""
    return {k for k in SG_SOURCES if k in old} != {k for k in SG_SOURCES if k in new}


CUSTOMIZE_DIFF: dict[str, tuple[tuple[str, Callable[[Inputs, Inputs], bool]], ...]] = {
    "aws:ec2/subnet:Subnet": (("ipv6_cidr_block", _aws_subnet_ipv6),),
    "gcp:compute/subnetwork:Subnetwork": (("ip_cidr_range", _gcp_range_not_expanded),),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": (("source kind", _sg_source_kind),),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": (("source kind", _sg_source_kind),),
}


def replacements(typ: str, old: Inputs, new: Inputs) -> list[str]:
    """The inputs whose change from `old` to `new` replaces a resource of `typ`."""
    forced = [n for n in REPLACES[typ] if old.get(_camel(n)) != new.get(_camel(n))]
    return forced + [n for n, rule in CUSTOMIZE_DIFF.get(typ, ()) if rule(old, new)]


def registered(
    provider: ProviderType, families: tuple[str, ...], pool: str | None = None
) -> dict[tuple[str, str], Inputs]:
    """Every resource of the network by (type, name), with its inputs."""
    return {(t, n): i for n, (t, i) in register(provider, families, pool).resources.items()}


DUAL, ONLY_IPV4, ONLY_IPV6 = (IPV4, IPV6), (IPV4,), (IPV6,)
MIGRATIONS = [
    pytest.param(ProviderType.AWS, None, id="aws"),
    pytest.param(ProviderType.AWS, IPAM_POOL, id="aws-ipam-pool"),
    pytest.param(ProviderType.GCP, None, id="gcp"),
]


@pytest.mark.parametrize(("provider", "pool"), MIGRATIONS)
def test_ipv4_to_dual_stack_only_adds_and_replaces_nothing(provider: ProviderType, pool: str | None) -> None:
    """GIVEN an IPv4 network WHEN IPv6 is added THEN every resource stays, none is replaced, the rest is new."""
    before = registered(provider, ONLY_IPV4)
    after = registered(provider, DUAL, pool)
    assert set(before) <= set(after)
    assert set(after) - set(before), "dual-stack adds the IPv6 resources"
    replaced = {key: r for key in before if (r := replacements(key[0], before[key], after[key]))}
    assert replaced == {}


def test_gcp_dual_stack_back_to_ipv4_replaces_nothing_that_stays() -> None:
    """GIVEN a dual-stack gcp network WHEN IPv6 is dropped THEN only IPv6 parts go and nothing is replaced."""
    before = registered(ProviderType.GCP, DUAL)
    after = registered(ProviderType.GCP, ONLY_IPV4)
    assert set(after) <= set(before)
    assert {key: r for key in after if (r := replacements(key[0], before[key], after[key]))} == {}


def test_aws_dual_stack_back_to_ipv4_would_replace_every_subnet() -> None:
    """GIVEN a dual-stack aws network WHEN IPv6 were dropped THEN every subnet would be replaced: arbor refuses it."""
    before = registered(ProviderType.AWS, DUAL)
    after = registered(ProviderType.AWS, ONLY_IPV4)
    replaced = {key[1]: r for key in after if (r := replacements(key[0], before[key], after[key]))}
    subnets = {n for t, n in after if t == "aws:ec2/subnet:Subnet"}
    assert len(subnets) == 9
    assert replaced == {name: ["ipv6_cidr_block"] for name in subnets}


def test_replaces_table_covers_every_registered_type() -> None:
    """GIVEN every provider and family set WHEN registered THEN each resource type has a row in the table."""
    runs: list[tuple[ProviderType, tuple[str, ...], str | None]]
    runs = [(p, f, None) for p in (ProviderType.AWS, ProviderType.GCP) for f in (ONLY_IPV4, DUAL)]
    runs += [(ProviderType.AWS, ONLY_IPV6, None), (ProviderType.AWS, DUAL, IPAM_POOL)]
    types = {t for p, f, pool in runs for t, _ in registered(p, f, pool)}
    assert types - set(REPLACES) == set()
    assert set(REPLACES) == set(SDK)


@pytest.mark.parametrize("typ", sorted(REPLACES))
def test_replaces_table_names_real_sdk_inputs(typ: str) -> None:
    """GIVEN a row WHEN compared with the installed SDK THEN each input is an argument of that resource."""
    # Every generated resource class takes its arguments in `_internal_init`; `__init__` only has overloads.
    arguments = set(inspect.signature(SDK[typ]._internal_init).parameters)  # type: ignore[attr-defined]
    assert set(REPLACES[typ]) - arguments == set()


@pytest.mark.parametrize(
    ("typ", "old", "new", "expected"),
    [
        # aws Subnet: a /64 added to a subnet that did not assign IPv6 is in place; one that did is replaced.
        ("aws:ec2/subnet:Subnet", {}, {"ipv6CidrBlock": "2600::/64", "assignIpv6AddressOnCreation": True}, []),
        (
            "aws:ec2/subnet:Subnet",
            {"ipv6CidrBlock": "2600::/64", "assignIpv6AddressOnCreation": True},
            {},
            ["ipv6_cidr_block"],
        ),
        (
            "aws:ec2/subnet:Subnet",
            {"ipv6CidrBlock": "2600::/64", "assignIpv6AddressOnCreation": False},
            {"ipv6CidrBlock": "2600:0:0:1::/64"},
            [],
        ),
        ("aws:ec2/subnet:Subnet", {"cidrBlock": "10.0.0.0/19"}, {"cidrBlock": "10.0.32.0/19"}, ["cidr_block"]),
        ("aws:ec2/subnet:Subnet", {}, {"ipv6Native": True}, ["ipv6_native"]),
        # gcp Subnetwork: expanding the range is in place; shrinking or moving it replaces.
        ("gcp:compute/subnetwork:Subnetwork", {"ipCidrRange": "10.0.0.0/20"}, {"ipCidrRange": "10.0.0.0/16"}, []),
        (
            "gcp:compute/subnetwork:Subnetwork",
            {"ipCidrRange": "10.0.0.0/16"},
            {"ipCidrRange": "10.0.0.0/20"},
            ["ip_cidr_range"],
        ),
        (
            "gcp:compute/subnetwork:Subnetwork",
            {"ipCidrRange": "10.0.0.0/16"},
            {"ipCidrRange": "10.1.0.0/16"},
            ["ip_cidr_range"],
        ),
        (
            "gcp:compute/subnetwork:Subnetwork",
            {"ipCidrRange": "10.0.0.0/16"},
            {"ipCidrRange": "fd00::/64"},
            ["ip_cidr_range"],
        ),
        ("gcp:compute/subnetwork:Subnetwork", {"stackType": "IPV4_ONLY"}, {"stackType": "IPV4_IPV6"}, []),
        # aws rules: a new CIDR of the same family is in place; another kind of source replaces.
        (
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
            {"cidrIpv4": "10.0.0.0/16"},
            {"cidrIpv4": "10.1.0.0/16"},
            [],
        ),
        (
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
            {"cidrIpv4": "10.0.0.0/16"},
            {"cidrIpv6": "2600::/56"},
            ["source kind"],
        ),
        ("aws:ec2/vpc:Vpc", {}, {"assignGeneratedIpv6CidrBlock": True}, []),
        ("gcp:compute/network:Network", {}, {"enableUlaInternalIpv6": True}, []),
    ],
)
def test_replacement_rules(typ: str, old: Inputs, new: Inputs, expected: list[str]) -> None:
    """GIVEN old and new inputs WHEN compared THEN exactly the rules the providers apply say replace."""
    assert replacements(typ, old, new) == expected
