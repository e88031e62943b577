"""A shoot's nodes, derived once by the planner and held in its ShootValues.

Each pool's node settings and key, its machine deployments per zone with Gardener's class names, and on local
the kwok nodes standing for its machines, addressed from the shoot's ranges in one order (`node_slots`).
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Mapping

from components import naming
from components.kinds import ProviderType
from components.plan.bootstrap import pool_user_data, secret_name
from components.plan.network import NodeNetwork, kube_dns_ips, node_networks
from components.plan.values import (
    ControlPlaneMachine,
    LocalNode,
    NodeValues,
    PoolValues,
    ShootValues,
    VolumeValues,
    ZoneDeployment,
)

# Gardener's label of what belongs to a worker pool: OSC Secrets, machine objects, nodes.
POOL_LABEL = "worker.gardener.cloud/pool"
ZONE_LABEL = "topology.kubernetes.io/zone"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
VERSION_LABEL = "worker.gardener.cloud/kubernetes-version"
# Gardener's minReadySeconds of a MachineDeployment (500 s); a kwok node is Ready at once and carries no workload
# that needs to settle, so local rolls on after a few seconds and a roll is watched in minutes, not hours.
MIN_READY_SECONDS = 500
LOOPBACK = "127.0.0.1"
LOCAL_MIN_READY_SECONDS = 10
# Each local node's pool and planned network, in the one order addresses are given out.
Slots = tuple[tuple[str, NodeNetwork | None], ...]


def node_values(shoot: ShootValues, pool: PoolValues) -> NodeValues:
    """A pool's node values from the plan.

    The API address is the shoot's internal domain where it has one (Gardener's), else the kube-apiserver
    Service in the seed (hosted) or the first control-plane node's address (self-hosted).
    """
    return NodeValues(
        pool=pool.name,
        kubernetes_version=pool.kubernetes_version,
        machine_type=pool.machine_type,
        image=pool.image,
        image_version=pool.image_version,
        node_agent_version=shoot.node_agent_version,
        cri=pool.cri,
        kubelet=pool.kubelet,
        kube_reserved=pool.kube_reserved,
        eviction_hard=pool.eviction_hard,
        registry_mirrors=pool.registry_mirrors,
        sysctls=pool.sysctls,
        api_server=_api_server(shoot, pool),
        # Where a cloud assigns the IPv6 service range, the plan knows (and names) only the IPv4 kube-dns address.
        cluster_dns=tuple(kube_dns_ips(shoot.networking.services)),
        # A new cluster CA rolls every pool: kubelets trust the CA they were provisioned with.
        ca_rotation=shoot.credentials.rotation.get("ca", 0),
    )


def _api_server(shoot: ShootValues, pool: PoolValues) -> str:
    """Where the pool's kubelets reach kube-apiserver.

    A self-hosted cloud shoot's control-plane machine reaches its own on loopback: a network load balancer does not
    carry a target's connections back to that target (AWS's, with client addresses kept), and the API it serves
    must not depend on the balancer or DNS to start.
    """
    if shoot.dns and shoot.self_hosted and pool.control_plane:
        return f"https://{LOOPBACK}"
    if shoot.dns:
        return f"https://{shoot.dns.internal}"
    if not shoot.self_hosted:
        return f"https://kube-apiserver.{shoot.seed_namespace}.svc.cluster.local"
    if not shoot.control_plane_ips:
        # A cloud's control-plane machines get their addresses from the cloud (refused by the checks until then).
        return NodeValues.api_server
    address = ipaddress.ip_address(shoot.control_plane_ips[0])
    return f"https://{address}" if address.version == 4 else f"https://[{address}]"


def pool_zones(shoot: ShootValues, pool: PoolValues) -> tuple[str, ...]:
    """The zones a pool's machines run in: its own, else every zone of the shoot."""
    return pool.zones or shoot.networking.zones


def distribute(zone_index: int, total: int, zones: int) -> int:
    """A zone's share of `total` spread evenly over `zones`; the first zones take the remainder (Gardener's)."""
    return total // zones + (1 if zone_index < total % zones else 0)


def deployment_name(technical_id: str, pool: str, zone_index: int) -> str:
    """`<technical id>-<pool>-z<N>`, N counting zones from 1 (Gardener's)."""
    return f"{technical_id}-{pool}-z{zone_index + 1}"


def roll_hash(node: NodeValues, zone: str, volume: VolumeValues, families: tuple[str, ...] = ()) -> str:
    """Five hex digits over exactly what must replace machines (render/machines.py's docstring lists what).

    A node's addresses and pod ranges are set when it registers, so a second IP family (a migration to
    dual-stack, or back) replaces the machines too; a single-stack shoot's hash leaves the families out, as
    it always did, so that nothing rolls on upgrade.
    """
    data = [secret_name(node), zone, str(volume.size_gb), volume.type, str(volume.encrypted).lower()]
    if len(families) > 1:
        data.append(",".join(families))
    return naming.checksum(data)[:5]


def class_name(shoot: ShootValues, pool: PoolValues, zone_index: int, zone: str, node: NodeValues) -> str:
    """`<technical id>-<pool>-z<N>-<hash>`: a new name (so a new class, and a roll) exactly when machines must go."""
    rolls = roll_hash(node, zone, pool.volume, shoot.networking.ip_families)
    return f"{deployment_name(shoot.technical_id, pool.name, zone_index)}-{rolls}"


def zone_deployments(shoot: ShootValues, pool: PoolValues, node: NodeValues) -> tuple[ZoneDeployment, ...]:
    """A pool's MachineDeployments, one per zone, with minimum, maximum, maxSurge and maxUnavailable spread."""
    zones = pool_zones(shoot, pool)
    local = shoot.networking.provider is ProviderType.LOCAL
    return tuple(
        ZoneDeployment(
            name=deployment_name(shoot.technical_id, pool.name, i),
            class_name=class_name(shoot, pool, i, zone, node),
            pool=pool.name,
            zone=zone,
            zone_index=i,
            machine_type=pool.machine_type,
            image=(pool.image, pool.image_version),
            minimum=distribute(i, pool.minimum, len(zones)),
            maximum=distribute(i, pool.maximum, len(zones)),
            max_surge=distribute(i, pool.max_surge, len(zones)),
            max_unavailable=distribute(i, pool.max_unavailable, len(zones)),
            volume=pool.volume,
            labels=node_labels(pool.name, zone, pool.machine_type, pool.kubernetes_version),
            min_ready_seconds=LOCAL_MIN_READY_SECONDS if local else MIN_READY_SECONDS,
        )
        for i, zone in enumerate(zones)
    )


def node_labels(pool: str, zone: str, machine_type: str, kubernetes_version: str) -> dict[str, str]:
    """The labels a pool's node carries: its pool, zone, instance type and Kubernetes version.

    The version label is Gardener's (kubelet's `--node-labels`, node-agent keeps it current): each pool's
    kube-proxy of a version runs on that version's nodes only, so during an upgrade the old and the new one never
    compete for the same node's host ports. In a MachineDeployment's node template it changes nodes in place.
    """
    return {POOL_LABEL: pool, ZONE_LABEL: zone, INSTANCE_TYPE_LABEL: machine_type, VERSION_LABEL: kubernetes_version}


def node_slots(shoot: ShootValues) -> Slots:
    """Each local node's pool and planned network, pool by pool over its minimum: the one order addresses follow."""
    pools = [p.name for p in shoot.workers for _ in range(p.minimum)]
    networks = node_networks(shoot.networking, len(pools))
    return tuple((pool, networks[i] if i < len(networks) else None) for i, pool in enumerate(pools))


def local_nodes(
    shoot: ShootValues, deployments: Mapping[str, tuple[ZoneDeployment, ...]], slots: Slots
) -> tuple[LocalNode, ...]:
    """Each pool's minimum as kwok nodes, spread over its zones as its MachineDeployments are, with their addresses.

    Only self-hosted local shoots have them (no MCM runs before such a shoot has an API): a hosted shoot's machines
    are made by MCM, on local by arbor's kwok sidecar, and a cloud's are addressed by the cloud.
    """
    if shoot.networking.provider is not ProviderType.LOCAL or not shoot.self_hosted:
        return ()
    networks = iter(network for _, network in slots)
    return tuple(
        LocalNode(d.class_name, n, d.pool, d.zone, d.zone_index, dict(d.labels), next(networks))
        for pool in shoot.workers
        for d in deployments[pool.name]
        for n in range(d.minimum)
    )


def control_plane_ips(shoot: ShootValues, slots: Slots) -> tuple[str, ...]:
    """The primary addresses of a self-hosted shoot's control-plane nodes on local (none otherwise)."""
    if not shoot.self_hosted:
        return ()
    control_plane = {p.name for p in shoot.workers if p.control_plane}
    return tuple(n.addresses[0] for pool, n in slots if n and pool in control_plane)


def control_plane_machine(
    shoot: ShootValues, deployments: Mapping[str, tuple[ZoneDeployment, ...]]
) -> ControlPlaneMachine | None:
    """A self-hosted cloud shoot's control-plane machine: its pool's first zone, `<deployment>-0` (checked: one)."""
    if shoot.networking.provider is ProviderType.LOCAL or not shoot.self_hosted:
        return None
    pool = next((p for p in shoot.workers if p.control_plane), None)
    if pool is None:
        return None
    first = deployments[pool.name][0]
    return ControlPlaneMachine(f"{first.name}-0", first)


def with_nodes(shoot: ShootValues) -> ShootValues:
    """The shoot with what its nodes derive, computed once: node settings, deployments, user data, local nodes."""
    slots = node_slots(shoot)
    shoot = dataclasses.replace(shoot, control_plane_ips=control_plane_ips(shoot, slots))
    settings = {pool.name: node_values(shoot, pool) for pool in shoot.workers}
    deployments = {pool.name: zone_deployments(shoot, pool, settings[pool.name]) for pool in shoot.workers}
    return dataclasses.replace(
        shoot,
        node_settings=settings,
        deployments=deployments,
        user_data={pool: pool_user_data(node) for pool, node in settings.items()},
        local_nodes=local_nodes(shoot, deployments, slots),
        control_plane_machine=control_plane_machine(shoot, deployments),
    )
