"""Rules about shoot and seed networks, over resource properties as the policy engine hands them over.

Shoot records (arbor's Shoot objects in the garden) carry every network's families and ranges, so the
cross-resource rule reads those (a shoot whose families its seed lacks is refused by the program itself:
components/checks/landscape.py); the cloud rules read the security group rules, firewalls and subnets that the
gcp and aws providers register. Values unknown during a preview are skipped: they are checked at `up`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

SHOOT_RECORD = "kubernetes:arbor.dev/v1alpha1:Shoot"
AWS_INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
AWS_SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
AWS_SUBNET = "aws:ec2/subnet:Subnet"
GCP_FIREWALL = "gcp:compute/firewall:Firewall"
WORLD = ("0.0.0.0/0", "::/0")
# Rules open to the world on purpose say so first in their description.
WORLD_ALLOWED = ("health check", "load balancer")
RANGE_KINDS = ("nodes", "pods", "services")


def _name(record: Mapping[str, Any]) -> str:
    """`<namespace>/<name>` of a record, or its name."""
    meta = record.get("metadata") or {}
    return "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p)


def _ranges(record: Mapping[str, Any]) -> list[tuple[str, ipaddress.IPv4Network | ipaddress.IPv6Network]]:
    """(kind, network) of every range a Shoot record's networking gives."""
    net = (record.get("spec") or {}).get("networking") or {}
    out = []
    for kind in RANGE_KINDS:
        value = net.get(kind) or []
        for cidr in [value] if isinstance(value, str) else value:
            if isinstance(cidr, str):
                out.append((kind, ipaddress.ip_network(cidr)))
    return out


def overlapping_shoots(records: Iterable[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """Shoots of one seed keep disjoint ranges, so their nodes, pods and services can be told apart on it."""
    by_seed: dict[str, list[Mapping[str, Any]]] = {}
    for resource_type, props in records:
        seed = (props.get("spec") or {}).get("seedName")
        if resource_type == SHOOT_RECORD and seed:
            by_seed.setdefault(seed, []).append(props)
    problems = []
    for seed, shoots in sorted(by_seed.items()):
        shoots.sort(key=_name)  # the engine hands resources over in no fixed order
        for i, a in enumerate(shoots):
            for b in shoots[i + 1 :]:
                for kind_a, x in _ranges(a):
                    for kind_b, y in _ranges(b):
                        if x.version == y.version and x.overlaps(y):
                            problems.append(
                                f"shoots {_name(a)} and {_name(b)} on seed '{seed}' overlap: "
                                f"{kind_a} {x} and {kind_b} {y}"
                            )
    return problems


def _open_to_world(sources: Iterable[Any], description: str) -> list[str]:
    """The world ranges among `sources`, unless the description says the rule is for health checks or LBs."""
    if description.lower().startswith(WORLD_ALLOWED):
        return []
    return [s for s in sources if s in WORLD]


def world_ingress(resource_type: str, props: Mapping[str, Any]) -> str | None:
    """No ingress from 0.0.0.0/0 or ::/0, except rules described as health checks or load balancers."""
    description = str(props.get("description") or "")
    if resource_type == AWS_INGRESS_RULE:
        opened = _open_to_world([props.get("cidrIpv4"), props.get("cidrIpv6")], description)
    elif resource_type == AWS_SECURITY_GROUP:
        opened = [
            s
            for rule in props.get("ingress") or []
            for s in _open_to_world(
                [*(rule.get("cidrBlocks") or []), *(rule.get("ipv6CidrBlocks") or [])],
                str(rule.get("description") or ""),
            )
        ]
    elif resource_type == GCP_FIREWALL and (props.get("direction") or "INGRESS") == "INGRESS":
        opened = _open_to_world(props.get("sourceRanges") or [], description)
    else:
        return None
    if not opened:
        return None
    return (
        f"ingress from {', '.join(opened)}: open only what health checks and load balancers need, and say so in "
        "the rule's description ('health checks: ...' or 'load balancer: ...')"
    )


def ipv6_subnet_not_64(resource_type: str, props: Mapping[str, Any]) -> str | None:
    """IPv6 subnets are /64: SLAAC, prefix delegation and the clouds' own rules assume it."""
    cidr = props.get("ipv6CidrBlock")
    if resource_type != AWS_SUBNET or not isinstance(cidr, str) or not cidr:
        return None
    prefix = ipaddress.ip_network(cidr).prefixlen
    return None if prefix == 64 else f"IPv6 subnet {cidr} is a /{prefix}: IPv6 subnets are /64"
