"""The plan's values: per-component frozen dataclasses, derived from the spec once (components/plan/planner.py).

Components and renderers get only these, never the spec.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from components.kinds import ProviderType, Role


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
    """A shoot's credential settings: the rotation counter of each group (render/pki.py) and admin kubeconfigs."""

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
