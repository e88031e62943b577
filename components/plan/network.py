"""Dual-stack CIDR planning: every subnet of a shoot's infrastructure, derived from its ranges; pure.

IPv4 subnets are carved from the shoot's `nodes` range. IPv6 ranges on a cloud are known only once the cloud
assigns them, so the plan holds them as `Carve`s (the n-th /prefix of a parent block) that the provider resolves
from the real block; on local every range is given and each node gets addresses of every family.

- aws (as Gardener's provider-aws): the VPC is the `nodes` range plus a /56 from Amazon (or an IPAM pool); per
  zone i a workers (`nodes-z<i>`), an internal (`private-utility-z<i>`) and a public (`public-utility-z<i>`)
  subnet with the /64s number 3i, 3i+1 and 3i+2 of the /56; the IPv6 services range is the second /108 of the
  first workers /64, reserved there so no node or pod takes an address from it. IPv6-only workers subnets are
  IPv6-native with DNS64; the utility subnets keep IPv4 (load balancers and the NAT gateway need it).
- gcp (as provider-gcp): a nodes subnet (IPv4 `nodes`, an external /64 from Google, pods as the secondary range
  `ipv4-pod-cidr`) and, with IPv6, a services subnet (IPv4 `services`, an internal /64 whose first /108 is the
  IPv6 services range: GCP cannot reserve an IPv6 range otherwise).
- local: no infrastructure; the ranges are recorded on the Shoot and the kwok nodes carry addresses.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass, field

from components.kinds import ProviderType
from components.spec.cidrs import IPV4, IPV6, family

# An AWS VPC always has an IPv4 block; an IPv6-only shoot's utility subnets (NAT64, load balancers) use this one.
AWS_IPV6_ONLY_VPC_IPV4 = "10.180.0.0/16"
# Per zone: subnet name and the position of its /64 among the zone's three (Gardener's numbering 3i + offset).
AWS_SUBNETS = {"nodes": ("nodes", 0), "internal": ("private-utility", 1), "public": ("public-utility", 2)}
SERVICES_IPV6_PREFIX = 108
GCP_PODS_RANGE = "ipv4-pod-cidr"
# How a network table starts where it is logged, so the preview summary finds it among the diagnostics.
PLAN_PREFIX = "network plan of "
# Node i's address is host 2 + i of the nodes range: the first hosts are the network's and its gateway's.
FIRST_NODE_HOST = 2
# Gardener's convention: kube-dns takes the 10th address of each service range; the kubelets' `clusterDNS`.
KUBE_DNS_INDEX = 10
# The cluster's DNS domain (Gardener's default): CoreDNS serves it, the kubelets' `clusterDomain`.
CLUSTER_DOMAIN = "cluster.local"


@dataclass(frozen=True)
class NetworkValues:
    """A shoot's networks: families, ranges per family (IPv6 ones omitted where a cloud assigns them), and where."""

    technical_id: str
    provider: ProviderType
    region: str
    zones: tuple[str, ...]
    ip_families: tuple[str, ...]
    nodes: tuple[str, ...]
    pods: tuple[str, ...]
    services: tuple[str, ...]
    node_masks: dict[str, int] = field(default_factory=dict)
    ipv6_ipam_pool: str | None = None


@dataclass(frozen=True)
class Carve:
    """An IPv6 range the cloud assigns, or one carved from it: the `index`-th /`prefix` of `parent`.

    `parent` is `vpc` (aws: the /56) or a subnet name (its /64).
    """

    parent: str
    prefix: int
    index: int = 0

    def of(self, block: str) -> str:
        """The concrete range, given the parent's real block."""
        network = ipaddress.IPv6Network(block)
        count = 2 ** (self.prefix - network.prefixlen)
        if not 0 <= self.index < count:
            raise ValueError(f"{block} has no /{self.prefix} number {self.index}")
        size = 2 ** (128 - self.prefix)
        return str(ipaddress.IPv6Network((int(network.network_address) + self.index * size, self.prefix)))

    def __str__(self) -> str:
        return f"/{self.prefix} #{self.index} of {self.parent}"


# Where a cloud assigns a block itself, the plan says so: the user never gives these ranges.
Ipv6 = str | Carve | None


@dataclass(frozen=True)
class Subnet:
    """One subnet of the shoot's network: its role (nodes, public, internal, services), zone and ranges."""

    name: str
    role: str
    zone: str
    ipv4: str | None
    ipv6: Ipv6

    @property
    def ipv6_only(self) -> bool:
        """A subnet without IPv4 (aws: IPv6-native, with DNS64)."""
        return self.ipv4 is None


@dataclass(frozen=True)
class NetworkPlan:
    """Every range of one shoot's network; `Carve`s are resolved by the provider at deployment."""

    technical_id: str
    provider: ProviderType
    region: str
    ip_families: tuple[str, ...]
    vpc_ipv4: str | None
    vpc_ipv6: Ipv6
    subnets: tuple[Subnet, ...]
    pods: tuple[str | Carve, ...]
    services: tuple[str | Carve, ...]
    ipv6_ipam_pool: str | None = None

    def subnet(self, role: str, zone: str = "") -> Subnet:
        """The subnet of a role (and zone: a regional subnet, as on gcp, serves every zone)."""
        return next(s for s in self.subnets if s.role == role and (not zone or s.zone in (zone, "")))


@dataclass(frozen=True)
class NodeNetwork:
    """A local node's InternalIP and pod range per family, in the order of the shoot's families."""

    addresses: tuple[str, ...]
    pod_cidrs: tuple[str, ...]


def kube_dns_ips(services: Sequence[str]) -> list[str]:
    """kube-dns's addresses: the 10th of each service range, in the order of the shoot's families."""
    return [str(ipaddress.ip_network(r)[KUBE_DNS_INDEX]) for r in services]


def _split(cidr: str, parts: int) -> list[str]:
    """`cidr` cut into the smallest power of two of equal parts that holds `parts`."""
    network = ipaddress.ip_network(cidr)
    bits = max(parts - 1, 0).bit_length()
    return [str(n) for n in network.subnets(prefixlen_diff=bits)][:parts]


def _by_family(ranges: tuple[str, ...], fam: str) -> str | None:
    """The range of one family, if given."""
    return next((c for c in ranges if family(c) == fam), None)


def _plan(
    values: NetworkValues,
    subnets: Sequence[Subnet],
    pods: Sequence[str | Carve],
    services: Sequence[str | Carve],
    vpc_ipv4: str | None = None,
    vpc_ipv6: Ipv6 = None,
) -> NetworkPlan:
    """A plan of `values`' shoot with these subnets and ranges."""
    return NetworkPlan(
        technical_id=values.technical_id,
        provider=values.provider,
        region=values.region,
        ip_families=values.ip_families,
        vpc_ipv4=vpc_ipv4,
        vpc_ipv6=vpc_ipv6,
        subnets=tuple(subnets),
        pods=tuple(pods),
        services=tuple(services),
        ipv6_ipam_pool=values.ipv6_ipam_pool,
    )


def _aws(values: NetworkValues) -> NetworkPlan:
    """VPC, and per zone a workers, a public and an internal subnet; IPv6 /64s carved from the VPC's /56."""
    ipv4 = IPV4 in values.ip_families
    ipv6 = IPV6 in values.ip_families
    vpc_ipv4 = _by_family(values.nodes, IPV4) if ipv4 else AWS_IPV6_ONLY_VPC_IPV4
    assert vpc_ipv4, "validated: an IPv4 network has an IPv4 nodes range"
    zones = values.zones
    # First half of the VPC for workers, second half split between internal and public utility subnets.
    workers_half, utility_half = _split(vpc_ipv4, 2)
    internal_quarter, public_quarter = _split(utility_half, 2)
    blocks = {
        "nodes": _split(workers_half, len(zones)),
        "internal": _split(internal_quarter, len(zones)),
        "public": _split(public_quarter, len(zones)),
    }
    subnets = []
    for z, zone in enumerate(zones):
        for role, cidrs in blocks.items():
            name, offset = AWS_SUBNETS[role]
            subnets.append(
                Subnet(
                    name=f"{name}-z{z}",
                    role=role,
                    zone=zone,
                    # IPv6-only workers are IPv6-native; utility subnets keep IPv4 for NAT64 and load balancers.
                    ipv4=cidrs[z] if ipv4 or role != "nodes" else None,
                    ipv6=Carve("vpc", 64, 3 * z + offset) if ipv6 else None,
                )
            )
    pods: list[str | Carve] = [c for c in values.pods if family(c) == IPV4]
    services: list[str | Carve] = [c for c in values.services if family(c) == IPV4]
    if ipv6:
        # Pods get /80 prefixes delegated from their node's subnet: the whole /56 is the pods range.
        pods.append(Carve("vpc", 56))
        services.append(Carve("nodes-z0", SERVICES_IPV6_PREFIX, 1))
    return _plan(values, subnets, pods, services, vpc_ipv4, Carve("vpc", 56) if ipv6 else None)


def _gcp(values: NetworkValues) -> NetworkPlan:
    """A nodes subnet with the pods secondary range, and a services subnet; Google assigns their /64s."""
    ipv6 = IPV6 in values.ip_families
    nodes = _by_family(values.nodes, IPV4)
    services = _by_family(values.services, IPV4)
    subnets = [Subnet("nodes", "nodes", "", nodes, Carve("nodes", 64) if ipv6 else None)]
    if ipv6:
        subnets.append(Subnet("services", "services", "", services, Carve("services", 64)))
    pods: list[str | Carve] = list(values.pods)
    service_ranges: list[str | Carve] = list(values.services)
    if ipv6:
        # Each VM gets a /96 of the nodes subnet's /64 for its pods; services take a /108 of their own subnet.
        pods.append(Carve("nodes", 64))
        service_ranges.append(Carve("services", SERVICES_IPV6_PREFIX))
    return _plan(values, subnets, pods, service_ranges)


def _local(values: NetworkValues) -> NetworkPlan:
    """No infrastructure: one nodes subnet with the shoot's own ranges."""
    nodes = Subnet("nodes", "nodes", "", _by_family(values.nodes, IPV4), _by_family(values.nodes, IPV6))
    return _plan(values, [nodes], values.pods, values.services)


def plan_network(values: NetworkValues) -> NetworkPlan:
    """Every subnet and range of a shoot's network on its provider."""
    planners = {ProviderType.AWS: _aws, ProviderType.GCP: _gcp, ProviderType.LOCAL: _local}
    return planners[values.provider](values)


def node_networks(values: NetworkValues, count: int) -> tuple[NodeNetwork, ...]:
    """Addresses and pod ranges of `count` local nodes: node i gets host 2+i and the i-th node pod range.

    Only local nodes are addressed by arbor; a cloud gives its machines their addresses.
    """
    if values.provider is not ProviderType.LOCAL:
        return ()
    nodes = []
    for i in range(count):
        addresses, pod_cidrs = [], []
        for fam in values.ip_families:
            node_range = ipaddress.ip_network(_by_family(values.nodes, fam) or "")
            pods = ipaddress.ip_network(_by_family(values.pods, fam) or "")
            mask = values.node_masks[fam]
            addresses.append(str(node_range.network_address + FIRST_NODE_HOST + i))
            size = 2 ** (node_range.max_prefixlen - mask)
            pod_cidrs.append(str(ipaddress.ip_network((int(pods.network_address) + i * size, mask))))
        nodes.append(NodeNetwork(tuple(addresses), tuple(pod_cidrs)))
    return tuple(nodes)


def local_node_ranges(values: NetworkValues) -> tuple[dict[str, str | int], ...]:
    """Per family, what a local machine's address and pod range are taken from (the kwok sidecar's class spec).

    The sidecar gives a new machine the lowest slot i no node holds: host FIRST_NODE_HOST + i of `nodes` and the
    i-th range of `podMaskSize` in `pods`, as node_networks numbers the nodes arbor makes itself.
    """
    return tuple(
        {
            "nodes": _by_family(values.nodes, fam) or "",
            "pods": _by_family(values.pods, fam) or "",
            "podMaskSize": values.node_masks[fam],
            "firstHost": FIRST_NODE_HOST,
        }
        for fam in values.ip_families
    )


def _cell(value: str | Carve | None, subnet: str = "") -> str:
    """A table cell: a range, a carve from an assigned block (a subnet's own block is Google's), or '-'."""
    if isinstance(value, Carve) and value.parent == subnet:
        return f"/{value.prefix} from Google"
    return "-" if value is None else str(value)


def table(plan: NetworkPlan) -> str:
    """The plan as a readable fixed-width table: the VPC, each subnet, then the pods and services ranges."""
    families = ", ".join(plan.ip_families)
    head = f"{plan.technical_id} on {plan.provider.value} ({plan.region}), ipFamilies [{families}]"
    rows = [("kind", "name", "zone", "IPv4", "IPv6")]
    if plan.vpc_ipv4 or plan.vpc_ipv6:
        vpc_ipv6 = f"/56 from IPAM pool {plan.ipv6_ipam_pool}" if plan.ipv6_ipam_pool else "/56 from Amazon"
        rows.append(("vpc", "vpc", "", _cell(plan.vpc_ipv4), vpc_ipv6 if plan.vpc_ipv6 else "-"))
    rows += [("subnet", s.name, s.zone, _cell(s.ipv4), _cell(s.ipv6, s.name)) for s in plan.subnets]
    for kind, ranges in (("pods", plan.pods), ("services", plan.services)):
        v4 = next((r for r in ranges if isinstance(r, str) and family(r) == IPV4), None)
        v6 = next((r for r in ranges if isinstance(r, Carve) or family(r) == IPV6), None)
        rows.append(("range", kind, "", _cell(v4), _cell(v6)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [head] + ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)
