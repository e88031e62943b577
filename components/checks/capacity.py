"""Bounds across fields that size work, memory and address arithmetic, checked before the plan is built.

The plan enumerates a local shoot's nodes and carves their addresses and pod ranges from the shoot's ranges, and
splits an aws VPC per zone; these checks prove each of those fits first (as Gardener's validation does for pods
and the workers' maximum), so the plan never meets a count it cannot hold or an address past the range's end.
Each returns `landscape<path>: <reason>` lines; families, ranges and masks that other checks refuse are skipped.
"""

from __future__ import annotations

import ipaddress

from components.kinds import CLUSTER_MAX_NODES, LOCAL_CLUSTER_MAX_NODES, ProviderType
from components.plan.network import AWS_IPV6_ONLY_VPC_IPV4, FIRST_NODE_HOST
from components.spec.cidrs import IPV4, NODE_MASK_BOUNDS, NODE_MASK_DEFAULT
from components.spec.landscape import GardenSpec, LandscapeSpec, SeedSpec
from components.spec.shoot import ShootSpec

# kube-apiserver refuses a service range of fewer addresses.
SERVICES_MIN_ADDRESSES = 8
# The smallest subnet AWS creates; the VPC is split in halves, the second half in quarters, then per zone.
AWS_SMALLEST_SUBNET = 28


def _plural(count: int, what: str) -> str:
    """`1 node`, `2 nodes`, `no node`."""
    return f"no {what}" if count == 0 else f"{count} {what}" if count == 1 else f"{count} {what}s"


def _prefix_for(addresses: int, max_prefixlen: int) -> int:
    """The longest prefix whose range has `addresses` addresses or more."""
    return max_prefixlen - max(addresses - 1, 0).bit_length()


def _machines(at: str, shoot: ShootSpec, provider: ProviderType | None) -> list[str]:
    """A shoot's pools within Kubernetes' nodes per cluster, and a local shoot's within the local node limit."""
    lines = []
    maximums = sum(p.maximum for p in shoot.workers)
    if maximums > CLUSTER_MAX_NODES:
        lines.append(
            f"{at}.workers: the pools' maximums add up to {maximums} nodes, more than the {CLUSTER_MAX_NODES} "
            "Kubernetes runs in one cluster: lower their maximum"
        )
    minimums = sum(p.minimum for p in shoot.workers)
    if provider is ProviderType.LOCAL and minimums > LOCAL_CLUSTER_MAX_NODES:
        each = ", ".join(f"{p.name} {p.minimum}" for p in shoot.workers if p.minimum)
        lines.append(
            f"{at}.workers: the pools' minimums add up to {minimums} nodes ({each}), more than the "
            f"{LOCAL_CLUSTER_MAX_NODES} a local cluster runs: lower their minimum"
        )
    return lines


def _pods(at: str, shoot: ShootSpec, fam: str, cidr: str) -> list[str]:
    """The pods range holds a node range of the effective node mask (defaults included) per node of the maximums."""
    pods = ipaddress.ip_network(cidr)
    given = {f.value: m for f, m in shoot.networking.node_mask_sizes.items()}
    mask = given.get(fam, NODE_MASK_DEFAULT[fam])
    low, high = NODE_MASK_BOUNDS[fam]
    if fam in given and not (low <= mask <= high and mask >= pods.prefixlen):
        return []  # refused by the node mask checks (components/spec/cidrs.py)
    if mask < pods.prefixlen:
        return [
            f"{at}.pods: {cidr} is smaller than a node's pod range (/{mask}, the default of nodeMaskSizes.{fam}): "
            f"use a /{mask} or larger, or set nodeMaskSizes.{fam}"
        ]
    nodes = 2 ** (mask - pods.prefixlen)
    maximums = sum(p.maximum for p in shoot.workers)
    if maximums <= nodes:
        return []
    wanted = mask - max(maximums - 1, 0).bit_length()
    return [
        f"{at}.pods: {cidr} holds the pod ranges of {_plural(nodes, 'node')} (/{mask} each), not the {maximums} of "
        f"the pools' maximums: use a /{wanted} or larger, or lower their maximum"
    ]


def _nodes(at: str, shoot: ShootSpec, fam: str, cidr: str) -> list[str]:
    """The nodes range has an address for each machine of the maximums after its reserved first (and last) hosts."""
    network = ipaddress.ip_network(cidr)
    # The network's and the gateway's addresses come first; IPv4 keeps its last for broadcast.
    reserved = FIRST_NODE_HOST + (1 if fam == IPV4 else 0)
    room = max(network.num_addresses - reserved, 0)
    maximums = sum(p.maximum for p in shoot.workers)
    if maximums <= room:
        return []
    last = " and its last" if fam == IPV4 else ""
    wanted = _prefix_for(maximums + reserved, network.max_prefixlen)
    return [
        f"{at}.nodes: {cidr} has room for {_plural(room, 'machine')} (its first {FIRST_NODE_HOST} addresses{last} "
        f"are reserved), not the {maximums} of the pools' maximums: use a /{wanted} or larger, or lower their maximum"
    ]


def _aws_split(at: str, shoot: ShootSpec, zones: int) -> list[str]:
    """An aws VPC splits into a workers, an internal and a public subnet per zone, none smaller than AWS allows."""
    nodes = shoot.networking.networks().by_family("nodes")
    families = [f.value for f in shoot.networking.ip_families]
    vpc = nodes.get(IPV4) if IPV4 in families else AWS_IPV6_ONLY_VPC_IPV4
    if not vpc:
        return []  # refused by the range checks
    # Workers take half of the VPC, each utility role a quarter; each role's block is cut per zone.
    smallest = ipaddress.ip_network(vpc).prefixlen + 2 + max(zones - 1, 0).bit_length()
    if smallest <= AWS_SMALLEST_SUBNET:
        return []
    where = f"{at}.nodes: {vpc}" if IPV4 in families else f"{at}.ipFamilies: the IPv6-only VPC {vpc}"
    wanted = AWS_SMALLEST_SUBNET - 2 - max(zones - 1, 0).bit_length()
    return [
        f"{where} cannot be split into workers and utility subnets for {zones} zones on aws (each at least a "
        f"/{AWS_SMALLEST_SUBNET}, the smallest AWS subnet): use a /{wanted} or larger"
    ]


def _ranges(at: str, shoot: ShootSpec, provider: ProviderType | None, where: SeedSpec | GardenSpec) -> list[str]:
    """A shoot's given ranges hold what the plan carves from them; the IPv6 ranges a cloud assigns are its own."""
    net = shoot.networking.networks()
    lines = []
    families = net.ip_families
    for fam, cidr in net.by_family("pods").items():
        if fam in families:
            lines += _pods(at, shoot, fam, cidr)
    for fam, cidr in net.by_family("nodes").items():
        if fam in families:
            lines += _nodes(at, shoot, fam, cidr)
    for fam, cidr in net.by_family("services").items():
        size = ipaddress.ip_network(cidr).num_addresses
        if fam in families and size < SERVICES_MIN_ADDRESSES:
            wanted = _prefix_for(SERVICES_MIN_ADDRESSES, ipaddress.ip_network(cidr).max_prefixlen)
            lines.append(
                f"{at}.services: {cidr} has {size} addresses, kube-apiserver needs at least "
                f"{SERVICES_MIN_ADDRESSES}: use a /{wanted} or larger"
            )
    if provider is ProviderType.AWS:
        zones = len(dict.fromkeys(z for p in shoot.workers for z in p.zones)) or len(where.zones)
        lines += _aws_split(at, shoot, zones)
    return lines


def capacity(spec: LandscapeSpec) -> list[str]:
    """Every count and range the plan sizes its work by, proven to fit (checked before the plan is built)."""
    seeds = {s.name: s for s in spec.seeds}
    lines = []
    for i, shoot in enumerate(spec.shoots):
        at = f"landscape.shoots[{i}]"
        seed = seeds.get(shoot.seed or "")
        # Where the shoot runs; a shoot whose seed is unknown is refused by the cross-field checks.
        where: SeedSpec | GardenSpec | None = seed if seed else spec.garden if shoot.self_hosted else None
        provider = where.provider if where else None
        lines += _machines(at, shoot, provider)
        lines += _ranges(f"{at}.networking", shoot, provider, where or spec.garden)
    return lines
