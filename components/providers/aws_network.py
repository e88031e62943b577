"""A shoot's network on AWS, as Gardener's provider-aws lays it out: a VPC, three subnets per zone, gateways.

The plan (`components.network`) says which subnets exist and which IPv6 /64 each takes; this module only
registers them. IPv6 blocks are known once Amazon assigns the VPC's /56, so every `Carve` is resolved inside
an `apply` on the real block (skipped in a preview while the block is unknown).

Everything is shaped so that IPv4 -> dual-stack only adds resources or updates inputs that AWS changes in place:
routes and security group rules are separate resources (never inline lists), a subnet gains its /64 without
`ipv6_native`, and no IPv4 input (CIDR, zone) depends on the families.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pulumi
import pulumi_aws as aws

from components.bundles import NetworkAccess
from components.plan.network import Carve, NetworkPlan, Subnet
from components.providers.cloud import carved, resolve
from components.spec.cidrs import IPV4, IPV6, family

IPV4_ANY, IPV6_ANY = "0.0.0.0/0", "::/0"
# The well-known NAT64 prefix: IPv6-only nodes reach IPv4 hosts through the zone's NAT gateway (DNS64 answers).
NAT64_PREFIX = "64:ff9b::/96"
# The size an IPAM pool hands out, as Amazon's own assignment: three /64s per zone fit many zones.
IPAM_NETMASK = 56
NODE_PORTS = (30000, 32767)
ALL_PROTOCOLS = "-1"
ELB_ROLE = {"public": "kubernetes.io/role/elb", "internal": "kubernetes.io/role/internal-elb"}
SECURITY_GROUP_DESCRIPTION = "Nodes of a shoot"


def _opts(parent: pulumi.Resource) -> pulumi.ResourceOptions:
    """Every child sits under the shoot's component."""
    return pulumi.ResourceOptions(parent=parent)


def _tags(plan: NetworkPlan, thing: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Gardener's tags: a `Name` and the cluster ownership tag the cloud controller manager looks for."""
    name = f"{plan.technical_id}-{thing}" if thing else plan.technical_id
    return {"Name": name, f"kubernetes.io/cluster/{plan.technical_id}": "1", **(extra or {})}


def _vpc(plan: NetworkPlan, parent: pulumi.Resource) -> aws.ec2.Vpc:
    """The VPC: the IPv4 range always, a /56 from Amazon or the IPAM pool with IPv6 (updated in place)."""
    ipv6 = IPV6 in plan.ip_families
    pool = plan.ipv6_ipam_pool if ipv6 else None
    return aws.ec2.Vpc(
        f"{parent._name}-vpc",
        region=plan.region,
        cidr_block=plan.vpc_ipv4,
        assign_generated_ipv6_cidr_block=True if ipv6 and not pool else None,
        ipv6_ipam_pool_id=pool,
        ipv6_netmask_length=IPAM_NETMASK if pool else None,
        enable_dns_support=True,
        enable_dns_hostnames=True,
        tags=_tags(plan, "vpc"),
        opts=_opts(parent),
    )


def _subnet(plan: NetworkPlan, subnet: Subnet, vpc: aws.ec2.Vpc, parent: pulumi.Resource) -> aws.ec2.Subnet:
    """One subnet; an IPv6-only one is IPv6-native with DNS64, a dual-stack one only gains its /64."""
    carve = subnet.ipv6 if isinstance(subnet.ipv6, Carve) else None
    native = True if carve and subnet.ipv6_only else None
    role = {ELB_ROLE[subnet.role]: "1"} if subnet.role in ELB_ROLE else {}
    return aws.ec2.Subnet(
        f"{parent._name}-{subnet.name}",
        region=plan.region,
        vpc_id=vpc.id,
        availability_zone=subnet.zone,
        cidr_block=subnet.ipv4,
        ipv6_cidr_block=carved(vpc.ipv6_cidr_block, carve) if carve else None,
        assign_ipv6_address_on_creation=True if carve else None,
        ipv6_native=native,
        enable_dns64=native,
        enable_resource_name_dns_aaaa_record_on_launch=native,
        tags=_tags(plan, subnet.name, role),
        opts=_opts(parent),
    )


def _route(
    plan: NetworkPlan,
    name: str,
    table: aws.ec2.RouteTable,
    destination: str,
    parent: pulumi.Resource,
    **target: pulumi.Input[str],
) -> aws.ec2.Route:
    """A route of its own, so adding an IPv6 route never rewrites the table's other routes."""
    ipv6 = ":" in destination
    return aws.ec2.Route(
        name,
        region=plan.region,
        route_table_id=table.id,
        destination_cidr_block=None if ipv6 else destination,
        destination_ipv6_cidr_block=destination if ipv6 else None,
        opts=_opts(parent),
        **target,
    )


def _associate(
    plan: NetworkPlan,
    subnets: Mapping[str, aws.ec2.Subnet],
    names: list[str],
    table: aws.ec2.RouteTable,
    parent: pulumi.Resource,
) -> list[aws.ec2.RouteTableAssociation]:
    """The named subnets route through `table`."""
    return [
        aws.ec2.RouteTableAssociation(
            f"{parent._name}-{name}-rta",
            region=plan.region,
            subnet_id=subnets[name].id,
            route_table_id=table.id,
            opts=_opts(parent),
        )
        for name in names
    ]


def _zones(plan: NetworkPlan) -> list[str]:
    """The zones in the plan's order: zone i owns the subnets `*-z<i>`."""
    return list(dict.fromkeys(s.zone for s in plan.subnets))


def _zone_routing(
    plan: NetworkPlan,
    i: int,
    vpc: aws.ec2.Vpc,
    subnets: Mapping[str, aws.ec2.Subnet],
    eoigw: aws.ec2.EgressOnlyInternetGateway | None,
    parent: pulumi.Resource,
) -> list[pulumi.Resource]:
    """Zone i's NAT gateway and private route table, for its workers and private utility subnets."""
    prefix, zone = parent._name, _zones(plan)[i]
    eip = aws.ec2.Eip(
        f"{prefix}-eip-natgw-z{i}",
        region=plan.region,
        domain="vpc",
        tags=_tags(plan, f"eip-natgw-z{i}"),
        opts=_opts(parent),
    )
    nat = aws.ec2.NatGateway(
        f"{prefix}-natgw-z{i}",
        region=plan.region,
        allocation_id=eip.id,
        subnet_id=subnets[plan.subnet("public", zone).name].id,
        tags=_tags(plan, f"natgw-z{i}"),
        opts=_opts(parent),
    )
    table = aws.ec2.RouteTable(
        f"{prefix}-private-z{i}",
        region=plan.region,
        vpc_id=vpc.id,
        tags=_tags(plan, f"private-{zone}"),
        opts=_opts(parent),
    )
    out: list[pulumi.Resource] = [
        _route(plan, f"{prefix}-private-z{i}-default-ipv4", table, IPV4_ANY, parent, nat_gateway_id=nat.id)
    ]
    if eoigw is not None:
        out.append(
            _route(
                plan, f"{prefix}-private-z{i}-default-ipv6", table, IPV6_ANY, parent, egress_only_gateway_id=eoigw.id
            )
        )
        out.append(_route(plan, f"{prefix}-private-z{i}-nat64", table, NAT64_PREFIX, parent, nat_gateway_id=nat.id))
    private = [s.name for s in plan.subnets if s.zone == zone and s.role in ("nodes", "internal")]
    return out + _associate(plan, subnets, private, table, parent)


def _routing(
    plan: NetworkPlan, vpc: aws.ec2.Vpc, subnets: Mapping[str, aws.ec2.Subnet], parent: pulumi.Resource
) -> list[pulumi.Resource]:
    """Gateways and route tables: public subnets to the internet gateway, the others through their zone's NAT."""
    prefix = parent._name
    igw = aws.ec2.InternetGateway(
        f"{prefix}-igw", region=plan.region, vpc_id=vpc.id, tags=_tags(plan, "igw"), opts=_opts(parent)
    )
    # Gardener's main route table carries the bare technical ID as its name.
    public = aws.ec2.RouteTable(
        f"{prefix}-public", region=plan.region, vpc_id=vpc.id, tags=_tags(plan, ""), opts=_opts(parent)
    )
    out: list[pulumi.Resource] = [
        _route(plan, f"{prefix}-public-default-ipv4", public, IPV4_ANY, parent, gateway_id=igw.id)
    ]
    eoigw = None
    if IPV6 in plan.ip_families:
        out.append(_route(plan, f"{prefix}-public-default-ipv6", public, IPV6_ANY, parent, gateway_id=igw.id))
        eoigw = aws.ec2.EgressOnlyInternetGateway(
            f"{prefix}-eoigw",
            region=plan.region,
            vpc_id=vpc.id,
            tags=_tags(plan, "egress-only-igw"),
            opts=_opts(parent),
        )
    out += _associate(plan, subnets, [s.name for s in plan.subnets if s.role == "public"], public, parent)
    for i in range(len(_zones(plan))):
        out += _zone_routing(plan, i, vpc, subnets, eoigw, parent)
    return out


def _services_ipv6(plan: NetworkPlan) -> Carve | None:
    """The IPv6 services range, carved from a workers subnet's /64, if the network has IPv6."""
    return next((r for r in plan.services if isinstance(r, Carve)), None)


def _reservation(
    plan: NetworkPlan, subnets: Mapping[str, aws.ec2.Subnet], parent: pulumi.Resource
) -> aws.ec2.SubnetCidrReservation | None:
    """Keeps the IPv6 services /108 out of the addresses and prefixes EC2 hands to nodes and pods."""
    carve = _services_ipv6(plan)
    if carve is None:
        return None
    subnet = subnets[carve.parent]
    return aws.ec2.SubnetCidrReservation(
        f"{parent._name}-services-ipv6",
        region=plan.region,
        subnet_id=subnet.id,
        cidr_block=carved(subnet.ipv6_cidr_block, carve),
        reservation_type="explicit",
        opts=_opts(parent),
    )


def _security_group(
    plan: NetworkPlan, vpc: aws.ec2.Vpc, parent: pulumi.Resource
) -> tuple[aws.ec2.SecurityGroup, list[pulumi.Resource]]:
    """The nodes' group: each other freely, NodePorts from inside the VPC only, egress anywhere; rules per family."""
    prefix = parent._name
    group = aws.ec2.SecurityGroup(
        f"{prefix}-nodes-sg",
        region=plan.region,
        name=f"{plan.technical_id}-nodes",
        description=SECURITY_GROUP_DESCRIPTION,
        vpc_id=vpc.id,
        tags=_tags(plan, "nodes"),
        opts=_opts(parent),
    )
    rules: list[pulumi.Resource] = [
        aws.vpc.SecurityGroupIngressRule(
            f"{prefix}-nodes-self",
            region=plan.region,
            security_group_id=group.id,
            referenced_security_group_id=group.id,
            ip_protocol=ALL_PROTOCOLS,
            opts=_opts(parent),
        )
    ]
    # Pods outside the VPC's ranges (overlay or native routing of the IPv4 pods range) reach every node.
    for pods in (p for p in plan.pods if isinstance(p, str)):
        rules.append(
            aws.vpc.SecurityGroupIngressRule(
                f"{prefix}-nodes-pods-{family(pods).lower()}",
                region=plan.region,
                security_group_id=group.id,
                ip_protocol=ALL_PROTOCOLS,
                cidr_ipv4=pods if family(pods) == IPV4 else None,
                cidr_ipv6=pods if family(pods) == IPV6 else None,
                opts=_opts(parent),
            )
        )
    # Load balancers sit in the VPC's utility subnets: NodePorts never need to be open to the world.
    inside = {IPV4: pulumi.Output.from_input(plan.vpc_ipv4 or ""), IPV6: vpc.ipv6_cidr_block}
    for fam in plan.ip_families:
        rules += _family_rules(plan, group, fam, inside, parent)
    return group, rules


def _family_rules(
    plan: NetworkPlan,
    group: aws.ec2.SecurityGroup,
    fam: str,
    inside: Mapping[str, pulumi.Output[str]],
    parent: pulumi.Resource,
) -> list[pulumi.Resource]:
    """One family's rules of the nodes' group: NodePorts (TCP, UDP) from `inside` the VPC, egress anywhere."""
    prefix, suffix = parent._name, fam.lower()
    rules: list[pulumi.Resource] = [
        aws.vpc.SecurityGroupIngressRule(
            f"{prefix}-nodes-nodeports-{protocol}-{suffix}",
            region=plan.region,
            security_group_id=group.id,
            ip_protocol=protocol,
            from_port=NODE_PORTS[0],
            to_port=NODE_PORTS[1],
            cidr_ipv4=inside[fam] if fam == IPV4 else None,
            cidr_ipv6=inside[fam] if fam == IPV6 else None,
            opts=_opts(parent),
        )
        for protocol in ("tcp", "udp")
    ]
    rules.append(
        aws.vpc.SecurityGroupEgressRule(
            f"{prefix}-nodes-egress-{suffix}",
            region=plan.region,
            security_group_id=group.id,
            ip_protocol=ALL_PROTOCOLS,
            cidr_ipv4=IPV4_ANY if fam == IPV4 else None,
            cidr_ipv6=IPV6_ANY if fam == IPV6 else None,
            opts=_opts(parent),
        )
    )
    return rules


def trust_policy(service: str) -> str:
    """An IAM trust policy that lets an AWS service assume a role."""
    statement = {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def _nodes_profile(plan: NetworkPlan, parent: pulumi.Resource) -> aws.iam.InstanceProfile:
    """The nodes' role and instance profile `<technical id>-nodes` (Gardener's): they may describe instances only."""
    prefix, name = parent._name, f"{plan.technical_id}-nodes"
    role = aws.iam.Role(
        f"{prefix}-nodes-role",
        name=name,
        assume_role_policy=trust_policy("ec2.amazonaws.com"),
        tags=_tags(plan, "nodes"),
        opts=_opts(parent),
    )
    describe = {"Effect": "Allow", "Action": ["ec2:DescribeInstances"], "Resource": ["*"]}
    aws.iam.RolePolicy(
        f"{prefix}-nodes-policy",
        role=role.id,
        policy=json.dumps({"Version": "2012-10-17", "Statement": [describe]}),
        opts=_opts(parent),
    )
    return aws.iam.InstanceProfile(f"{prefix}-nodes-profile", name=name, role=role.name, opts=_opts(parent))


def _ranges(
    plan: NetworkPlan, vpc: aws.ec2.Vpc, subnets: Mapping[str, aws.ec2.Subnet]
) -> pulumi.Output[dict[str, list[str]]]:
    """Nodes, pods and services per family; the IPv6 nodes and pods ranges are the VPC's /56."""
    blocks = {"vpc": vpc.ipv6_cidr_block} | {name: s.ipv6_cidr_block for name, s in subnets.items()}
    nodes: list[str | Carve] = [plan.vpc_ipv4 or ""] if IPV4 in plan.ip_families else []
    if isinstance(plan.vpc_ipv6, Carve):
        nodes.append(plan.vpc_ipv6)
    kinds = {"nodes": nodes, "pods": list(plan.pods), "services": list(plan.services)}
    return pulumi.Output.all(**{k: pulumi.Output.all(*[resolve(v, blocks) for v in vs]) for k, vs in kinds.items()})


def network(plan: NetworkPlan, parent: pulumi.Resource) -> NetworkAccess:
    """The shoot's VPC, subnets, gateways, routes, the nodes' security group and instance profile, under `parent`."""
    vpc = _vpc(plan, parent)
    subnets = {s.name: _subnet(plan, s, vpc, parent) for s in plan.subnets}
    routing = _routing(plan, vpc, subnets, parent)
    reservation = _reservation(plan, subnets, parent)
    group, rules = _security_group(plan, vpc, parent)
    profile = _nodes_profile(plan, parent)
    ready: list[pulumi.Resource] = [*subnets.values(), *routing, group, *rules, profile]
    if reservation is not None:
        ready.append(reservation)
    ids = pulumi.Output.all(**{name: s.id for name, s in subnets.items()})
    nodes = pulumi.Output.all(securityGroupID=group.id, instanceProfile=profile.name)
    return NetworkAccess(ranges=_ranges(plan, vpc, subnets), subnets=ids, ready=ready, nodes=nodes, vpc=vpc.id)
