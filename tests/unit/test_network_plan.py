"""The pure network planner: golden tables per provider and family, carving, node addresses, allowed changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from components.checks import parse_landscape
from components.checks.previous import network_changes, network_outputs
from components.kinds import ProviderType
from components.plan import network
from components.plan.network import Carve, NetworkValues, plan_network
from components.plan.planner import plan_landscape
from tests.unit.spec_cases import base, dual_stack_seed

V4 = {"nodes": ("10.250.0.0/16",), "pods": ("100.64.0.0/12",), "services": ("100.104.0.0/13",)}
V6 = {"nodes": ("fd00:10:250::/56",), "pods": ("fd00:10:64::/56",), "services": ("fd00:10:104::/108",)}
FAMILIES = {"ipv4": ("IPv4",), "ipv6": ("IPv6",), "dual": ("IPv4", "IPv6")}
ZONES = {
    ProviderType.AWS: ("eu-west-1a", "eu-west-1b", "eu-west-1c"),
    ProviderType.GCP: ("europe-west1-b", "europe-west1-c"),
    ProviderType.LOCAL: ("local-a",),
}
REGIONS = {ProviderType.AWS: "eu-west-1", ProviderType.GCP: "europe-west1", ProviderType.LOCAL: "local"}


def values(provider: ProviderType, families: tuple[str, ...], **extra: Any) -> NetworkValues:
    """A shoot's network values; on a cloud only IPv4 ranges are given, on local every family's."""
    ranges: dict[str, tuple[str, ...]] = {k: () for k in V4}
    for kind in ranges:
        if "IPv4" in families:
            ranges[kind] += V4[kind]
        if "IPv6" in families and provider is ProviderType.LOCAL:
            ranges[kind] += V6[kind]
    masks = {"IPv4": 24, "IPv6": 64}
    return NetworkValues(
        technical_id="shoot--dev--web",
        provider=provider,
        region=REGIONS[provider],
        zones=ZONES[provider],
        ip_families=families,
        nodes=ranges["nodes"],
        pods=ranges["pods"],
        services=ranges["services"],
        node_masks={f: masks[f] for f in families},
        **extra,
    )


CASES = [
    (provider, name)
    for provider in (ProviderType.AWS, ProviderType.GCP, ProviderType.LOCAL)
    for name in FAMILIES
    if not (provider is ProviderType.GCP and name == "ipv6")
]


def test_planner_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN every provider and family combination WHEN planned THEN the tables equal the golden file."""
    tables = [network.table(plan_network(values(p, FAMILIES[f]))) for p, f in CASES]
    ipam = values(ProviderType.AWS, FAMILIES["dual"], ipv6_ipam_pool="ipam-pool-0123456789abcdef0")
    tables.append(network.table(plan_network(ipam)))
    golden("network-plans.txt", "\n\n".join(tables) + "\n")


def test_aws_subnets_follow_gardeners_numbering() -> None:
    """GIVEN a dual-stack aws shoot WHEN planned THEN zone i's /64s are 3i, 3i+1, 3i+2 of the /56."""
    plan = plan_network(values(ProviderType.AWS, FAMILIES["dual"]))
    block = "2600:1f18:abcd:ef00::/56"
    got = {s.name: s.ipv6.of(block) for s in plan.subnets if isinstance(s.ipv6, Carve)}
    assert got["nodes-z0"] == "2600:1f18:abcd:ef00::/64"
    assert got["private-utility-z0"] == "2600:1f18:abcd:ef01::/64"
    assert got["public-utility-z0"] == "2600:1f18:abcd:ef02::/64"
    assert got["nodes-z2"] == "2600:1f18:abcd:ef06::/64"
    services = next(s for s in plan.services if isinstance(s, Carve))
    assert services.of(got["nodes-z0"]) == "2600:1f18:abcd:ef00::10:0/108"


def test_aws_ipv6_only_workers_are_ipv6_native_and_utility_subnets_keep_ipv4() -> None:
    """GIVEN an IPv6-only aws shoot WHEN planned THEN workers have no IPv4, the utility subnets do."""
    plan = plan_network(values(ProviderType.AWS, FAMILIES["ipv6"]))
    assert plan.vpc_ipv4 == network.AWS_IPV6_ONLY_VPC_IPV4
    assert {s.name for s in plan.subnets if s.ipv6_only} == {"nodes-z0", "nodes-z1", "nodes-z2"}
    assert all(s.ipv4 for s in plan.subnets if s.role != "nodes")


def test_ipv4_subnets_are_disjoint_and_inside_the_vpc() -> None:
    """GIVEN an aws shoot in three zones WHEN planned THEN no two IPv4 subnets overlap, all inside the VPC."""
    import ipaddress

    plan = plan_network(values(ProviderType.AWS, FAMILIES["ipv4"]))
    subnets = [ipaddress.ip_network(s.ipv4) for s in plan.subnets if s.ipv4]
    vpc = ipaddress.ip_network(plan.vpc_ipv4 or "")
    assert len(subnets) == 9 and all(s.subnet_of(vpc) for s in subnets)  # type: ignore[arg-type]
    assert not any(a.overlaps(b) for i, a in enumerate(subnets) for b in subnets[i + 1 :])


def test_carve_refuses_a_number_outside_the_block() -> None:
    """GIVEN a /56 WHEN its 256th /64 is asked for THEN it is an error, not a wrap-around."""
    with pytest.raises(ValueError, match="has no /64 number 256"):
        Carve("vpc", 64, 256).of("2600:1f18:abcd:ef00::/56")


def test_local_nodes_get_an_address_and_a_pod_range_of_each_family() -> None:
    """GIVEN a dual-stack local shoot WHEN two nodes are addressed THEN each has one IPv4 and one IPv6 of its own."""
    nodes = network.node_networks(values(ProviderType.LOCAL, FAMILIES["dual"]), 2)
    assert nodes[0].addresses == ("10.250.0.2", "fd00:10:250::2")
    assert nodes[1].addresses == ("10.250.0.3", "fd00:10:250::3")
    assert nodes[0].pod_cidrs == ("100.64.0.0/24", "fd00:10:64::/64")
    assert nodes[1].pod_cidrs == ("100.64.1.0/24", "fd00:10:64:1::/64")


def test_cloud_nodes_are_addressed_by_the_cloud() -> None:
    """GIVEN an aws shoot WHEN nodes are addressed THEN arbor plans none (the cloud assigns them)."""
    assert network.node_networks(values(ProviderType.AWS, FAMILIES["dual"]), 3) == ()


DUAL = {
    "ipFamilies": ["IPv4", "IPv6"],
    "nodes": ["10.250.0.0/16", "fd00:10:250::/56"],
    "pods": ["100.64.0.0/12", "fd00:10:64::/56"],
    "services": ["100.104.0.0/13", "fd00:10:104::/108"],
}
AT = "landscape.shoots[0].networking"


def landscape(net: dict[str, Any] | None = None, provider: str = "local") -> dict[str, Any]:
    """The base landscape with shoot 0's networking replaced (when given) on a dual-stack seed of `provider`."""
    doc = base()
    if net is not None:
        doc["shoots"][0]["networking"] = net
    return dual_stack_seed(doc, provider)


def outputs(doc: dict[str, Any]) -> dict[str, Any]:
    """The `networks` stack output an update of `doc` leaves behind."""
    return network_outputs(plan_landscape(parse_landscape(doc), "test"))


V4_DOC = base()["shoots"][0]["networking"]
CHANGES: list[tuple[str, dict[str, Any], dict[str, Any], list[str]]] = [
    ("IPv4 to dual-stack", landscape(), landscape(DUAL), []),
    ("dual-stack back to IPv4", landscape(DUAL), landscape(), []),
    ("unchanged", landscape(DUAL), landscape(DUAL), []),
    ("IPv4 to IPv6", landscape(), landscape({**DUAL, "ipFamilies": ["IPv6"], **{k: v[1] for k, v in DUAL.items()
                                                                                if k != "ipFamilies"}}),
     [f"{AT}.ipFamilies: cannot change from [IPv4] to [IPv6]; only [IPv4] -> [IPv4, IPv6] and back run in place"]),
    ("dual-stack to IPv6", landscape(DUAL), landscape({"ipFamilies": ["IPv6"], **{k: v[1] for k, v in DUAL.items()
                                                                                 if k != "ipFamilies"}}),
     [f"{AT}.ipFamilies: cannot change from [IPv4, IPv6] to [IPv6]; only [IPv4] -> [IPv4, IPv6] and back run in "
      "place"]),
    ("pods changed", landscape(), landscape({**V4_DOC, "pods": "100.80.0.0/12"}),
     [f"{AT}.pods: cannot change the IPv4 range once set (it was 100.64.0.0/12, now 100.80.0.0/12)"]),
    ("services changed", landscape(), landscape({**V4_DOC, "services": "100.112.0.0/13"}),
     [f"{AT}.services: cannot change the IPv4 range once set (it was 100.104.0.0/13, now 100.112.0.0/13)"]),
    ("nodes changed", landscape(), landscape({**V4_DOC, "nodes": "10.251.0.0/16"}),
     [f"{AT}.nodes: cannot change the IPv4 range once set (it was 10.250.0.0/16, now 10.251.0.0/16)"]),
    ("IPv6 pods changed while dual", landscape(DUAL), landscape({**DUAL, "pods": ["100.64.0.0/12", "fd00:10:65::/56"]}),
     [f"{AT}.pods: cannot change the IPv6 range once set (it was fd00:10:64::/56, now fd00:10:65::/56)"]),
    ("aws dual-stack back to IPv4", landscape({**V4_DOC, "ipFamilies": ["IPv4", "IPv6"]}, "aws"),
     landscape(V4_DOC, "aws"),
     [f"{AT}.ipFamilies: cannot change from [IPv4, IPv6] to [IPv4] on aws: dropping the subnets' IPv6 /64s "
      "replaces them"]),
    ("aws IPv4 to dual-stack", landscape(V4_DOC, "aws"), landscape({**V4_DOC, "ipFamilies": ["IPv4", "IPv6"]}, "aws"),
     []),
]  # fmt: skip


@pytest.mark.parametrize(("case", "before", "after", "lines"), CHANGES, ids=[c[0] for c in CHANGES])
def test_network_changes_against_the_previous_update(
    case: str, before: dict[str, Any], after: dict[str, Any], lines: list[str]
) -> None:
    """GIVEN the outputs of a previous update WHEN the network changes THEN only the allowed changes pass."""
    plan = plan_landscape(parse_landscape(after), "test")
    assert network_changes(plan, outputs(before)) == lines


def test_a_new_shoot_has_nothing_to_compare() -> None:
    """GIVEN no previous outputs WHEN any network is planned THEN nothing is refused."""
    assert network_changes(plan_landscape(parse_landscape(landscape(DUAL)), "test"), {}) == []
