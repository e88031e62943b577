"""Pure planning: spec -> per-component values (frozen dataclasses) with derived names.

Components get only their values, never the whole spec; everything here is deterministic and tested as data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from components import cidrs, naming
from components.spec import (
    ClusterSpec,
    EncryptionSpec,
    GardenSpec,
    LandscapeSpec,
    ProviderType,
    Role,
    SeedSpec,
    ShootSpec,
)


@dataclass(frozen=True)
class ClusterValues:
    """What a provider needs to create (or connect to) one cluster."""

    key: str
    provider: ProviderType
    name: str
    nodes: int
    kubeconfig_secret: str | None = None
    region: str = "local"
    zones: tuple[str, ...] = ("local-a",)
    # A shoot's nodes: the worker pool of each (one node per pool minimum on local).
    node_pools: tuple[str, ...] = ()


@dataclass(frozen=True)
class MemberValues:
    """A project member as an RBAC subject with its role."""

    name: str
    kind: str
    role: Role


@dataclass(frozen=True)
class ProjectValues:
    """A project: its garden namespace and members."""

    name: str
    namespace: str
    members: tuple[MemberValues, ...]


@dataclass(frozen=True)
class EncryptionValues:
    """Encryption at rest of one API server: resources besides secrets, provider, key rotation phase."""

    resources: tuple[str, ...] = ()
    provider: str = "aescbc"
    key_rotation: str = "complete"


@dataclass(frozen=True)
class GardenValues:
    """Values of the Garden component; `encryption` is None when the garden's API server encrypts nothing."""

    cluster: ClusterValues
    projects: tuple[ProjectValues, ...] = ()
    encryption: EncryptionValues | None = None


@dataclass(frozen=True)
class SeedValues:
    """Values of one Seed component; `shoot_namespaces` are those of the shoots it hosts."""

    name: str
    cluster: ClusterValues
    region: str = "local"
    zones: tuple[str, ...] = ("local-a",)
    shoot_namespaces: tuple[str, ...] = ()
    # The seed's own families and ranges (`nodes`, `pods`, `services`), recorded for policies and reviewers.
    ip_families: tuple[str, ...] = ("IPv4",)
    networks: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class VolumeValues:
    """A pool's root disk: size, type (empty: the provider's default) and whether it is encrypted."""

    size_gb: int = 50
    type: str = ""
    encrypted: bool = True


@dataclass(frozen=True)
class PoolValues:
    """A worker pool of a shoot."""

    name: str
    machine_type: str
    image: str
    image_version: str
    minimum: int
    maximum: int
    zones: tuple[str, ...]
    control_plane: bool
    kubernetes_version: str
    kubelet: dict[str, object] = field(default_factory=dict)
    kube_reserved: dict[str, str] = field(default_factory=dict)
    eviction_hard: dict[str, str] = field(default_factory=dict)
    cri: str = "containerd"
    registry_mirrors: dict[str, str] = field(default_factory=dict)
    sysctls: dict[str, str] = field(default_factory=dict)
    max_surge: int = 1
    max_unavailable: int = 0
    volume: VolumeValues = field(default_factory=VolumeValues)


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
class CredentialsValues:
    """A shoot's credential settings: the rotation counter of each group (components/pki.py) and admin kubeconfigs."""

    # Every group of RotationSpec by its stack-file name (`ca`, `etcdCA`, ...), 0 unless rotated.
    rotation: dict[str, int] = field(default_factory=dict)
    admin_kubeconfig_expiration_s: int = 3600


@dataclass(frozen=True)
class ShootValues:
    """Values of one Shoot component."""

    name: str
    project: str
    project_namespace: str
    technical_id: str
    seed: str | None
    kubernetes_version: str
    networking: NetworkValues
    workers: tuple[PoolValues, ...]
    encrypted_resources: tuple[str, ...]
    node_agent_version: str
    labels: tuple[tuple[str, str], ...]
    cluster: ClusterValues
    credentials: CredentialsValues = field(default_factory=CredentialsValues)
    encryption: EncryptionValues = field(default_factory=EncryptionValues)
    # The secret config key with the cloud credentials of the shoot's machines (None on local: nothing to call).
    cloud_credentials_secret: str | None = None

    @property
    def self_hosted(self) -> bool:
        """Whether the shoot runs its own control plane (static pods) instead of a seed's."""
        return self.seed is None

    @property
    def seed_namespace(self) -> str:
        """The namespace of the shoot's control plane in its seed: its technical ID."""
        return self.technical_id


@dataclass(frozen=True)
class LandscapePlan:
    """Values of every component of a landscape, in flow order."""

    garden: GardenValues
    seeds: tuple[SeedValues, ...]
    shoots: tuple[ShootValues, ...] = ()


def _cluster(
    stack: str, key: str, provider: ProviderType, spec: ClusterSpec, region: str = "local", zones: tuple[str, ...] = ()
) -> ClusterValues:
    """Values of one cluster; the name is what the provider calls it."""
    return ClusterValues(
        key=key,
        provider=provider,
        name=naming.local_cluster_name(stack, key),
        nodes=spec.nodes,
        kubeconfig_secret=spec.kubeconfig_secret,
        region=region,
        zones=zones or ("local-a",),
    )


def _seed(stack: str, spec: SeedSpec, shoots: list[ShootSpec]) -> SeedValues:
    """Values of one seed, with the namespaces of the shoots it hosts."""
    hosted = tuple(naming.shoot_namespace(s.project, s.name) for s in shoots if s.seed == spec.name)
    return SeedValues(
        name=spec.name,
        cluster=_cluster(
            stack, naming.cluster_key("seed", spec.name), spec.provider, spec.cluster, spec.region, tuple(spec.zones)
        ),
        region=spec.region,
        zones=tuple(spec.zones),
        shoot_namespaces=hosted,
        ip_families=tuple(f.value for f in spec.networks.ip_families),
        networks={"nodes": spec.networks.nodes, "pods": spec.networks.pods, "services": spec.networks.services},
    )


def _zones(spec: ShootSpec, default: list[str]) -> tuple[str, ...]:
    """The shoot's zones: those its pools name, in order of first mention, else its seed's (or garden's)."""
    named = [z for p in spec.workers for z in p.zones]
    return tuple(dict.fromkeys(named)) or tuple(default)


def _shoot(stack: str, spec: ShootSpec, seed: SeedSpec | None, garden: GardenSpec) -> ShootValues:
    """Values of one shoot; its own cluster runs where its seed runs (or where the garden runs)."""
    key = naming.cluster_key("shoot", f"{spec.project}/{spec.name}")
    technical_id = naming.shoot_namespace(spec.project, spec.name)
    provider, region, zones = (seed.provider, seed.region, seed.zones) if seed else (
        garden.provider, garden.region, garden.zones)  # fmt: skip
    workers = tuple(
        PoolValues(
            name=p.name,
            machine_type=p.machine.type,
            image=p.machine.image.name,
            image_version=p.machine.image.version,
            minimum=p.minimum,
            maximum=p.maximum,
            zones=tuple(p.zones),
            control_plane=p.control_plane,
            kubernetes_version=p.kubernetes_version or spec.kubernetes.version,
            kubelet=p.kubelet.model_dump(by_alias=True, exclude_none=True, include={"max_pods", "cpu_manager_policy"}),
            kube_reserved=dict(p.kubelet.kube_reserved),
            eviction_hard=dict(p.kubelet.eviction_hard),
            cri=p.cri.name,
            registry_mirrors=dict(p.cri.registry_mirrors),
            sysctls=dict(p.sysctls),
            max_surge=p.max_surge,
            max_unavailable=p.max_unavailable,
            volume=VolumeValues(p.volume.size_gb, p.volume.type or "", p.volume.encrypted),
        )
        for p in spec.workers
    )
    node_pools = tuple(p.name for p in spec.workers for _ in range(p.minimum))
    net = spec.networking
    networking = NetworkValues(
        technical_id=technical_id,
        provider=provider,
        region=region,
        zones=_zones(spec, zones),
        ip_families=tuple(f.value for f in net.ip_families),
        nodes=net.nodes,
        pods=net.pods,
        services=net.services,
        node_masks=net.node_masks(),
        ipv6_ipam_pool=net.ipv6_ipam_pool,
    )
    return ShootValues(
        name=spec.name,
        project=spec.project,
        project_namespace=naming.project_namespace(spec.project),
        technical_id=technical_id,
        seed=None if spec.self_hosted else spec.seed,
        kubernetes_version=spec.kubernetes.version,
        networking=networking,
        workers=workers,
        encrypted_resources=tuple(spec.encryption.resources),
        node_agent_version=spec.node_agent.version,
        labels=tuple(sorted(spec.labels.items())),
        # On local the shoot's API is a cluster of its own, with a node per pool minimum (workers issue: pools).
        cluster=dataclasses.replace(
            _cluster(stack, key, provider, ClusterSpec(nodes=len(node_pools))), node_pools=node_pools
        ),
        credentials=CredentialsValues(
            rotation=spec.credentials.rotation.model_dump(by_alias=True),
            admin_kubeconfig_expiration_s=spec.admin_kubeconfig.expiration_seconds,
        ),
        encryption=_encryption(spec.encryption),
        cloud_credentials_secret=spec.cloud_credentials_secret,
    )


def _encryption(spec: EncryptionSpec) -> EncryptionValues:
    """Values of one API server's encryption at rest."""
    return EncryptionValues(tuple(spec.resources), spec.provider.value, spec.key_rotation.value)


def plan_landscape(spec: LandscapeSpec, stack: str) -> LandscapePlan:
    """The plan of a validated landscape for one stack."""
    garden = GardenValues(
        cluster=_cluster(
            stack,
            naming.cluster_key("garden"),
            spec.garden.provider,
            spec.garden.cluster,
            spec.garden.region,
            tuple(spec.garden.zones),
        ),
        projects=tuple(
            ProjectValues(
                name=p.name,
                namespace=naming.project_namespace(p.name),
                members=tuple(MemberValues(m.name, m.kind.value, m.role) for m in p.members),
            )
            for p in spec.garden.projects
        ),
        encryption=_encryption(spec.garden.encryption) if spec.garden.encryption else None,
    )
    seeds = tuple(_seed(stack, s, spec.shoots) for s in spec.seeds)
    by_name = {s.name: s for s in spec.seeds}
    shoots = tuple(_shoot(stack, s, by_name.get(s.seed or ""), spec.garden) for s in spec.shoots)
    return LandscapePlan(garden=garden, seeds=seeds, shoots=shoots)


def network_outputs(plan: LandscapePlan) -> dict[str, dict[str, list[str]]]:
    """Each shoot's families and given ranges by `<project>/<name>`: the stack output later updates check against."""
    return {
        f"{s.project}/{s.name}": {
            "ipFamilies": list(s.networking.ip_families),
            **{kind: list(getattr(s.networking, kind)) for kind in cidrs.RANGES},
        }
        for s in plan.shoots
    }


def credential_outputs(plan: LandscapePlan) -> dict[str, dict[str, int]]:
    """Each shoot's rotation counters by `<project>/<name>`: the stack output a rotation is planned against."""
    return {f"{s.project}/{s.name}": dict(s.credentials.rotation) for s in plan.shoots}


def network_changes(plan: LandscapePlan, previous: Mapping[str, Any]) -> list[str]:
    """Network changes the previous update's outputs (`network_outputs`) do not allow, one line each."""
    lines = []
    for i, shoot in enumerate(plan.shoots):
        before = previous.get(f"{shoot.project}/{shoot.name}")
        if not isinstance(before, Mapping):
            continue
        old = cidrs.Networks(tuple(before.get("ipFamilies", ())), {k: tuple(before.get(k, ())) for k in cidrs.RANGES})
        net = shoot.networking
        new = cidrs.Networks(net.ip_families, {"nodes": net.nodes, "pods": net.pods, "services": net.services})
        lines += cidrs.check_change(f"landscape.shoots[{i}].networking", old, new, net.provider.value)
    return lines


def unsupported(plan: LandscapePlan) -> list[str]:
    """What a valid landscape asks for that arbor does not run yet, one line each (checked before any change)."""
    lines = []
    layers = [("landscape.garden", plan.garden.cluster)] + [
        (f"landscape.seeds[{i}]", seed.cluster) for i, seed in enumerate(plan.seeds)
    ]
    for path, cluster in layers:
        if cluster.provider is ProviderType.LOCAL and cluster.kubeconfig_secret:
            lines.append(f"{path}.cluster.kubeconfigSecret: local clusters are created, not connected to")
    if plan.garden.encryption and plan.garden.cluster.provider is not ProviderType.LOCAL:
        # A cloud's managed API server encrypts at rest with the cloud's own keys, configured there.
        provider = plan.garden.cluster.provider.value
        lines.append(f"landscape.garden.encryption: only a local garden's API server is configured, not {provider}")
    for i, shoot in enumerate(plan.shoots):
        if shoot.self_hosted and shoot.cluster.provider is not ProviderType.LOCAL:
            lines.append(
                f"landscape.shoots[{i}].selfHosted: self-hosted shoots on {shoot.cluster.provider.value} are not "
                "supported yet (their control-plane machines need the workers issue)"
            )
        elif not shoot.self_hosted and shoot.cluster.provider is not ProviderType.LOCAL:
            lines.append(
                f"landscape.shoots[{i}].seed: shoots on {shoot.cluster.provider.value} seeds are not supported yet "
                "(they need the workers issue)"
            )
    return lines
