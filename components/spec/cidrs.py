"""CIDR rules of shoot and seed networks, as Gardener validates them; pure functions over plain values.

Ranges are tuples with one CIDR per IP family, in the order of `ipFamilies` (the first family is the primary
one, as for kube-apiserver's `--service-cluster-ip-range`). Every check returns lines `<path>: <reason>`; an
empty list means valid. `spec.py` runs these once each field is valid; `check_change` compares a shoot's
networks with those of the stack's previous update. No Pulumi import here.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

IPV4, IPV6 = "IPv4", "IPv6"
RANGES = ("nodes", "pods", "services")
# The families a network can have: single-stack of either, or dual-stack with IPv4 primary.
ALLOWED_FAMILIES = ((IPV4,), (IPV6,), (IPV4, IPV6))
# Migrations arbor does in place: add IPv6 to an IPv4 network, or drop it again.
ALLOWED_MIGRATIONS = {((IPV4,), (IPV4, IPV6)), ((IPV4, IPV6), (IPV4,))}
# kube-controller-manager's per-node pod range (`--node-cidr-mask-size-ipv4/-ipv6`): default and bounds.
NODE_MASK_DEFAULT = {IPV4: 24, IPV6: 64}
NODE_MASK_BOUNDS = {IPV4: (16, 28), IPV6: (64, 124)}
# kube-apiserver refuses service ranges with more than 20 host bits.
SERVICES_MAX_HOST_BITS = 20
# Ranges no shoot or seed network may touch: Gardener's mapping ranges and what IP itself reserves.
RESERVED = {
    IPV4: (
        ("0.0.0.0/8", "'this network'"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/8", "Gardener's kube-apiserver mapping range"),
        ("241.0.0.0/8", "Gardener's shoot service mapping range"),
        ("242.0.0.0/8", "Gardener's shoot node mapping range"),
        ("243.0.0.0/8", "Gardener's shoot pod mapping range"),
        ("244.0.0.0/8", "Gardener's seed pod mapping range"),
    ),
    IPV6: (
        ("::/127", "unspecified and loopback"),
        ("::ffff:0:0/96", "IPv4-mapped"),
        ("64:ff9b::/96", "the NAT64 prefix"),
        ("fe80::/10", "link-local"),
        ("fd8f:6d53:b97a:1::/96", "Gardener's VPN range"),
        ("ff00::/8", "multicast"),
    ),
}


@dataclass(frozen=True)
class Networks:
    """A network's families and ranges by kind (`nodes`, `pods`, `services`), one CIDR per family each."""

    ip_families: tuple[str, ...]
    ranges: Mapping[str, tuple[str, ...]]

    def by_family(self, kind: str) -> dict[str, str]:
        """The ranges of one kind by family."""
        return {family(c): c for c in self.ranges.get(kind, ())}


def family(cidr: str) -> str:
    """`10.0.0.0/8` -> IPv4, `fd00::/8` -> IPv6."""
    return IPV4 if ipaddress.ip_network(cidr).version == 4 else IPV6


def prefix(cidr: str) -> int:
    """The prefix length of a CIDR."""
    return ipaddress.ip_network(cidr).prefixlen


def overlaps(a: str, b: str) -> bool:
    """Whether two CIDRs share an address (never across families)."""
    x, y = ipaddress.ip_network(a), ipaddress.ip_network(b)
    return x.version == y.version and x.overlaps(y)


def names(families: Sequence[str]) -> str:
    """`('IPv4', 'IPv6')` -> `[IPv4, IPv6]`, as the stack file spells it."""
    return "[" + ", ".join(families) + "]"


def check_families(at: str, families: tuple[str, ...]) -> list[str]:
    """Only single-stack or dual-stack with IPv4 first."""
    if families in ALLOWED_FAMILIES:
        return []
    allowed = ", ".join(names(f) for f in ALLOWED_FAMILIES)
    return [f"{at}.ipFamilies: {names(families)} is not one of {allowed}"]


def check_ranges(at: str, net: Networks, provider_assigned: str = "", optional: Sequence[str] = ()) -> list[str]:
    """Each range belongs to a family of the network, one per family, in the order of `ipFamilies`.

    `provider_assigned` names who assigns IPv6 ranges (a cloud does: the user gives none); empty on local.
    Kinds in `optional` may have no range at all.
    """
    lines = []
    for kind in RANGES:
        cidrs = net.ranges.get(kind, ())
        fams = tuple(family(c) for c in cidrs)
        stray = [c for c in cidrs if family(c) not in net.ip_families]
        if stray:
            lines.append(f"{at}.{kind}: {', '.join(stray)} is not of ipFamilies {names(net.ip_families)}")
        elif len(set(fams)) != len(fams):
            lines.append(f"{at}.{kind}: one range per family, got {', '.join(cidrs)}")
        elif fams != tuple(f for f in net.ip_families if f in fams):
            lines.append(f"{at}.{kind}: ranges must follow the order of ipFamilies {names(net.ip_families)}")
        for fam in net.ip_families:
            if fam == IPV6 and provider_assigned:
                if IPV6 in fams:
                    lines.append(f"{at}.{kind}: IPv6 ranges are assigned by {provider_assigned}; leave them out")
            elif fam not in fams and not (kind in optional and not cidrs):
                lines.append(f"{at}.{kind}: an {fam} range is required (ipFamilies has {fam})")
    return lines


def check_reserved(at: str, net: Networks) -> list[str]:
    """No range touches a reserved range; service ranges fit kube-apiserver's limit."""
    lines = []
    for kind in RANGES:
        for cidr in net.ranges.get(kind, ()):
            fam = family(cidr)
            for reserved, why in RESERVED[fam]:
                if overlaps(cidr, reserved):
                    lines.append(f"{at}.{kind}: {cidr} overlaps {reserved}, reserved ({why})")
            host_bits = (32 if fam == IPV4 else 128) - prefix(cidr)
            if kind == "services" and host_bits > SERVICES_MAX_HOST_BITS:
                smallest = (32 if fam == IPV4 else 128) - SERVICES_MAX_HOST_BITS
                lines.append(f"{at}.services: {cidr} is too large for kube-apiserver, use /{smallest} or smaller")
    return lines


def check_node_masks(
    at: str, net: Networks, masks: Mapping[str, int], max_pods: Sequence[tuple[str, int]]
) -> list[str]:
    """Per-node pod ranges: within bounds, inside the pods range, with room for every pool's max pods."""
    lines = []
    pods = net.by_family("pods")
    for fam, mask in masks.items():
        path = f"{at}.nodeMaskSizes.{fam}"
        low, high = NODE_MASK_BOUNDS[fam]
        if fam not in net.ip_families:
            lines.append(f"{path}: {fam} is not one of ipFamilies {names(net.ip_families)}")
        elif not low <= mask <= high:
            lines.append(f"{path}: /{mask} is not between /{low} and /{high}")
        elif fam in pods and mask < prefix(pods[fam]):
            lines.append(f"{path}: /{mask} is larger than the pods range {pods[fam]}")
    for fam in net.ip_families:
        mask = masks.get(fam, NODE_MASK_DEFAULT[fam])
        if not 0 <= mask <= (32 if fam == IPV4 else 128):
            continue  # refused above; no prefix length, so no node range to size (2 ** -mask might never end)
        # Like Gardener: a node's pod range must hold its max pods (the network and broadcast addresses aside).
        room = 2 ** ((32 if fam == IPV4 else 128) - mask) - 2
        for path, pods_per_node in max_pods:
            if pods_per_node > room:
                lines.append(
                    f"{path}: {pods_per_node} pods do not fit a /{mask} {fam} node range ({room} addresses): "
                    f"lower maxPods or nodeMaskSizes.{fam}"
                )
    return lines


def check_overlaps(at: str, net: Networks, others: Mapping[str, Networks]) -> list[str]:
    """The network's ranges are disjoint, and disjoint from each named other network (the seed's, say)."""
    lines = []
    own = [(kind, c) for kind in RANGES for c in net.ranges.get(kind, ())]
    for i, (kind, cidr) in enumerate(own):
        for other_kind, other in own[:i]:
            if other_kind != kind and overlaps(cidr, other):
                lines.append(f"{at}.{kind}: {cidr} overlaps the shoot's {other_kind} {other}")
    for name, theirs in others.items():
        for kind, cidr in own:
            for other_kind in RANGES:
                for other in theirs.ranges.get(other_kind, ()):
                    if overlaps(cidr, other):
                        lines.append(f"{at}.{kind}: {cidr} overlaps {name} {other_kind} {other}")
    return lines


def check_change(at: str, previous: Networks, current: Networks, provider: str = "local") -> list[str]:
    """Changes from the previous update: only IPv4 <-> dual-stack, and no set range of a family changes."""
    lines = []
    change = (previous.ip_families, current.ip_families)
    if previous.ip_families != current.ip_families and change not in ALLOWED_MIGRATIONS:
        lines.append(
            f"{at}.ipFamilies: cannot change from {names(previous.ip_families)} to {names(current.ip_families)}; "
            f"only {names((IPV4,))} -> {names((IPV4, IPV6))} and back run in place"
        )
    elif change == ((IPV4, IPV6), (IPV4,)) and provider == "aws":
        # AWS replaces a subnet whose IPv6 block goes away while it assigns IPv6 on creation: its nodes would go.
        lines.append(
            f"{at}.ipFamilies: cannot change from {names(previous.ip_families)} to {names(current.ip_families)} "
            "on aws: dropping the subnets' IPv6 /64s replaces them"
        )
    for kind in RANGES:
        before, now = previous.by_family(kind), current.by_family(kind)
        for fam, cidr in before.items():
            if fam in now and now[fam] != cidr:
                lines.append(f"{at}.{kind}: cannot change the {fam} range once set (it was {cidr}, now {now[fam]})")
    return lines
