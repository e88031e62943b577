"""A shoot's network on GCP, as Gardener's provider-gcp lays it out: a VPC, a nodes subnet, NAT and firewalls.

With IPv6 the nodes subnet becomes dual-stack with an external /64 from Google (each VM gets a /96 of it for
its pods), and a services subnet exists only to own an internal /64 whose first /108 is the IPv6 services
range: GCP has no other way to keep an IPv6 range from being handed out. Both /64s are known once Google
assigns them, so every `Carve` is resolved inside an `apply` (skipped in a preview while they are unknown).

IPv4 -> dual-stack changes the network and the nodes subnet in place (`enable_ula_internal_ipv6`,
`stack_type`, `ipv6_access_type`) and otherwise only adds: the services subnet and the IPv6 firewall rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_gcp as gcp

from components.bundles import NetworkAccess
from components.naming import capped
from components.plan.network import GCP_PODS_RANGE, Carve, NetworkPlan, Subnet
from components.providers.cloud import carved, resolve
from components.spec.cidrs import IPV4, IPV6, family

# Google's load balancer health checkers, which reach the nodes' NodePorts from outside the VPC.
HEALTH_CHECK_IPV4 = ("35.191.0.0/16", "130.211.0.0/22", "209.85.152.0/22", "209.85.204.0/22")
HEALTH_CHECK_IPV6 = ("2600:2d00:1:b029::/64", "2600:2d00:1:1::/64", "2600:1901:8001::/48")
NODE_PORTS = "30000-32767"
ALL_PORTS = "1-65535"
# GCP firewalls spell ICMPv6 by its protocol number: `icmp` matches IPv4 only.
ICMPV6 = "58"
# Gardener's floor: the default of 64 ports per VM runs out with many pods talking to the same host.
NAT_MIN_PORTS_PER_VM = 2048
# Which subnet field holds the /64 Google assigned, by the subnet's IPv6 access type.
IPV6_ACCESS = {"nodes": "EXTERNAL", "services": "INTERNAL"}


def _opts(parent: pulumi.Resource) -> pulumi.ResourceOptions:
    """Every child sits under the shoot's component."""
    return pulumi.ResourceOptions(parent=parent)


def _name(plan: NetworkPlan, thing: str = "") -> str:
    """A cloud name like Gardener's, `<technical id>-<thing>`, within GCP's 63 characters."""
    return capped(f"{plan.technical_id}-{thing}" if thing else plan.technical_id)


def _ipv4(ranges: Sequence[str | Carve]) -> str:
    """The IPv4 range among a plan's ranges (GCP networks always have IPv4)."""
    return next(r for r in ranges if isinstance(r, str) and family(r) == IPV4)


def _subnet(
    plan: NetworkPlan, subnet: Subnet, network: gcp.compute.Network, parent: pulumi.Resource
) -> gcp.compute.Subnetwork:
    """The nodes subnet (pods as its secondary range) or the services subnet; dual-stack with a Google /64."""
    dual = subnet.ipv6 is not None
    pods = [gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=GCP_PODS_RANGE, ip_cidr_range=_ipv4(plan.pods))]
    return gcp.compute.Subnetwork(
        f"{parent._name}-{subnet.name}",
        name=_name(plan, subnet.name),
        network=network.id,
        region=plan.region,
        ip_cidr_range=subnet.ipv4,
        secondary_ip_ranges=pods if subnet.role == "nodes" else None,
        stack_type="IPV4_IPV6" if dual else "IPV4_ONLY",
        ipv6_access_type=IPV6_ACCESS[subnet.role] if dual else None,
        private_ip_google_access=True,
        opts=_opts(parent),
    )


def _ipv6_block(subnet: gcp.compute.Subnetwork, role: str) -> pulumi.Output[str]:
    """The /64 Google assigned to a subnet: external on the nodes subnet, internal on the services one."""
    return subnet.external_ipv6_prefix if IPV6_ACCESS[role] == "EXTERNAL" else subnet.internal_ipv6_prefix


def _nat(
    plan: NetworkPlan, network: gcp.compute.Network, nodes: gcp.compute.Subnetwork, parent: pulumi.Resource
) -> gcp.compute.RouterNat:
    """Cloud NAT for every range of the nodes subnet, so nodes without public addresses reach the internet."""
    router = gcp.compute.Router(
        f"{parent._name}-cloud-router",
        name=_name(plan, "cloud-router"),
        network=network.id,
        region=plan.region,
        opts=_opts(parent),
    )
    return gcp.compute.RouterNat(
        f"{parent._name}-cloud-nat",
        name=_name(plan, "cloud-nat"),
        router=router.name,
        region=plan.region,
        nat_ip_allocate_option="AUTO_ONLY",
        source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
        subnetworks=[gcp.compute.RouterNatSubnetworkArgs(name=nodes.id, source_ip_ranges_to_nats=["ALL_IP_RANGES"])],
        min_ports_per_vm=NAT_MIN_PORTS_PER_VM,
        opts=_opts(parent),
    )


def _firewall(
    plan: NetworkPlan,
    thing: str,
    network: gcp.compute.Network,
    sources: pulumi.Input[Sequence[pulumi.Input[str]]],
    allows: list[gcp.compute.FirewallAllowArgs],
    parent: pulumi.Resource,
) -> gcp.compute.Firewall:
    """A VPC-wide ingress rule; its sources are of one family, as GCP requires."""
    return gcp.compute.Firewall(
        f"{parent._name}-{thing}",
        name=_name(plan, thing),
        network=network.id,
        direction="INGRESS",
        source_ranges=sources,
        allows=allows,
        opts=_opts(parent),
    )


def _allow(protocol: str, *ports: str) -> gcp.compute.FirewallAllowArgs:
    """One allowed protocol, on some ports or all."""
    return gcp.compute.FirewallAllowArgs(protocol=protocol, ports=list(ports) or None)


def _firewalls(
    plan: NetworkPlan,
    network: gcp.compute.Network,
    ipv6_blocks: Sequence[pulumi.Output[str]],
    parent: pulumi.Resource,
) -> list[gcp.compute.Firewall]:
    """Internal traffic and health checks, one rule per family."""
    nodes = plan.subnet("nodes")
    internal = [nodes.ipv4 or "", _ipv4(plan.pods)]
    rules = [
        _firewall(
            plan,
            "allow-internal-access",
            network,
            internal,
            [_allow("icmp"), _allow("ipip"), _allow("tcp", ALL_PORTS), _allow("udp", ALL_PORTS)],
            parent,
        ),
        _firewall(plan, "allow-health-checks", network, list(HEALTH_CHECK_IPV4), [_allow("tcp", NODE_PORTS)], parent),
    ]
    if IPV6 in plan.ip_families:
        # Pods take /96s of the nodes /64, so the two subnets' /64s cover nodes, pods and services.
        ipv6_internal = [_allow(ICMPV6), _allow("tcp", ALL_PORTS), _allow("udp", ALL_PORTS)]
        rules.append(_firewall(plan, "allow-internal-access-ipv6", network, list(ipv6_blocks), ipv6_internal, parent))
        rules.append(
            _firewall(
                plan, "allow-health-checks-ipv6", network, list(HEALTH_CHECK_IPV6), [_allow("tcp", NODE_PORTS)], parent
            )
        )
    return rules


def _ranges(plan: NetworkPlan, blocks: Mapping[str, pulumi.Output[str]]) -> pulumi.Output[dict[str, list[str]]]:
    """Nodes, pods and services per family; the IPv6 nodes range is the nodes subnet's /64."""
    nodes = plan.subnet("nodes")
    node_ranges: list[str | Carve] = [nodes.ipv4 or ""]
    if isinstance(nodes.ipv6, Carve):
        node_ranges.append(nodes.ipv6)
    kinds = {"nodes": node_ranges, "pods": list(plan.pods), "services": list(plan.services)}
    return pulumi.Output.all(**{k: pulumi.Output.all(*[resolve(v, blocks) for v in vs]) for k, vs in kinds.items()})


# GCE service account IDs are 6 to 30 characters.
SERVICE_ACCOUNT_ID_MAX = 30


def _nodes_account(plan: NetworkPlan, parent: pulumi.Resource) -> gcp.serviceaccount.Account:
    """The nodes' service account, named after the shoot as Gardener's provider-gcp names it."""
    return gcp.serviceaccount.Account(
        f"{parent._name}-nodes-account",
        account_id=capped(plan.technical_id, SERVICE_ACCOUNT_ID_MAX),
        display_name=plan.technical_id,
        description="Service account of the shoot's machines (arbor).",
        opts=_opts(parent),
    )


def network(plan: NetworkPlan, parent: pulumi.Resource) -> NetworkAccess:
    """The shoot's VPC, subnets, Cloud NAT, firewall rules and the nodes' service account, all under `parent`."""
    net = gcp.compute.Network(
        f"{parent._name}-network",
        name=_name(plan),
        auto_create_subnetworks=False,
        routing_mode="REGIONAL",
        # The services subnet's internal /64 comes from the network's ULA range; switching it on is in place.
        enable_ula_internal_ipv6=True if IPV6 in plan.ip_families else None,
        opts=_opts(parent),
    )
    subnets = {s.name: _subnet(plan, s, net, parent) for s in plan.subnets}
    # Each /64 as Google assigned it, normalised by carving the whole /64 of itself.
    blocks = {
        s.name: carved(_ipv6_block(subnets[s.name], s.role), s.ipv6) for s in plan.subnets if isinstance(s.ipv6, Carve)
    }
    nat = _nat(plan, net, subnets[plan.subnet("nodes").name], parent)
    firewalls = _firewalls(plan, net, list(blocks.values()), parent)
    account = _nodes_account(plan, parent)
    ids = pulumi.Output.all(**{name: s.id for name, s in subnets.items()})
    return NetworkAccess(
        ranges=_ranges(plan, blocks),
        subnets=ids,
        ready=[*subnets.values(), nat, *firewalls, account],
        nodes=pulumi.Output.all(serviceAccount=account.email),
        vpc=net.id,
    )
