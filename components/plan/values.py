"""The plan's values: per-component frozen dataclasses, derived from the spec once (components/plan/planner.py).

Components and renderers get only these, never the spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from components import naming
from components.kinds import CloudCredentials, ProviderType, Role, StackLayout
from components.plan.catalogue import ImageSource
from components.plan.network import NetworkPlan, NetworkValues, NodeNetwork
from components.plan.topology import Topology


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
    # An existing seed's token issuer its clouds trust (workload identity), and its IAM OIDC provider where named.
    issuer: str | None = None
    oidc_provider: str | None = None


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


# The audience of the ServiceAccount tokens an IAM role trusts through an OIDC provider (AssumeRoleWithWebIdentity).
STS_AUDIENCE = "sts.amazonaws.com"


def seed_audience(seed: str) -> str:
    """The audience of a seed's tokens its gcp pool or the local store trusts: that trust relationship's own."""
    return f"arbor-seed:{seed}"


def shoot_audience(technical_id: str) -> str:
    """The audience a self-hosted gcp shoot's pool trusts its machine-controller-manager's tokens for."""
    return f"arbor-shoot:{technical_id}"


@dataclass(frozen=True)
class BackupValues:
    """A seed's backup bucket: in which provider's object store and region, under which name."""

    provider: ProviderType
    region: str
    bucket: str
    seed: str
    # Workload identity: the audience of the seed's ServiceAccount tokens the bucket's role trusts, so no key
    # exists; None where the bucket's identity has a key.
    audience: str | None = None


@dataclass(frozen=True)
class ExtensionWorkloadValues:
    """A Deployment of an extension installation; `inject` mounts the generic garden kubeconfig into it."""

    name: str
    image: str
    replicas: int = 1
    inject: bool = True
    # The container's resources.requests (cpu, memory).
    requests: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ExtensionValues:
    """An extension installation on a seed: its seed namespace, and with garden access its garden identity."""

    name: str
    type: str
    seed: str
    namespace: str
    garden_namespace: str
    service_account: str
    zones: tuple[str, ...] = ()
    garden_access: bool = False
    workloads: tuple[ExtensionWorkloadValues, ...] = ()


def garden_accounts(extensions: tuple[ExtensionValues, ...]) -> tuple[tuple[str, str], ...]:
    """The garden ServiceAccounts (namespace, name) of the installations with garden access."""
    return tuple((e.garden_namespace, e.service_account) for e in extensions if e.garden_access)


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
    # Where its shoots' etcd backups and state are kept; None: no backups (refused once it hosts shoots).
    backup: BackupValues | None = None
    extensions: tuple[ExtensionValues, ...] = ()

    @property
    def garden_accounts(self) -> tuple[tuple[str, str], ...]:
        """The garden ServiceAccounts (namespace, name) of its installations with garden access."""
        return garden_accounts(self.extensions)


@dataclass(frozen=True)
class VolumeValues:
    """A pool's root disk: size, type (empty: the provider's default) and whether it is encrypted."""

    size_gb: int = 50
    type: str = ""
    encrypted: bool = True


@dataclass(frozen=True)
class EtcdVolume:
    """The persistent volume of one etcd (main or events): its claim template's name, StorageClass and size."""

    claim: str
    storage_class: str
    capacity: str


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
class DnsValues:
    """A shoot's API domain names (Gardener's external and internal domain) and the zone that records them."""

    provider: str  # aws-route53 or google-clouddns
    zone: str
    external: str  # api.<shoot>.<project>.<domain>: users and arbor
    internal: str  # api.<shoot>.<project>.internal.<domain>: nodes and node-agent


@dataclass(frozen=True)
class CredentialsValues:
    """A shoot's credential settings: the rotation counter of each group (render/pki.py) and admin kubeconfigs."""

    # Every group of RotationSpec by its stack-file name (`ca`, `etcdCA`, ...), 0 unless rotated.
    rotation: dict[str, int] = field(default_factory=dict)
    admin_kubeconfig_expiration_s: int = 3600
    # Credentials this update replaces by rotation (the checks compare the counters with the previous update's):
    # a protected CA or key is replaced only with its protection lifted for that update.
    replacing: tuple[str, ...] = ()


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
    node_agent_version: str
    labels: tuple[tuple[str, str], ...]
    cluster: ClusterValues
    credentials: CredentialsValues = field(default_factory=CredentialsValues)
    encryption: EncryptionValues = field(default_factory=EncryptionValues)
    # The secret config key with the cloud credentials of the shoot's machines (None on local: nothing to call).
    cloud_credentials_secret: str | None = None
    # `cloudCredentials` as written (None: arbor creates them on a cloud unless a secret config key is named).
    cloud_credentials: CloudCredentials | None = None
    # Workload identity of the machines' identity: the audience of MCM's ServiceAccount tokens its role trusts
    # through the seed's issuer (None: a key, pasted or made).
    machine_audience: str | None = None
    # The S3 bucket a self-hosted aws shoot publishes its service-account issuer in (render/service_account_issuer.py).
    issuer_bucket: str | None = None
    # The network plugin in the shoot (kinds.NetworkType's value).
    network_type: str = "calico"
    # Each cloud pool's image as its provider's profile offers it, by pool (components/plan/catalogue.py).
    images: dict[str, ImageSource] = field(default_factory=dict)
    # Where the shoot's API is recorded in DNS; None where arbor's kube-apiserver is not what clients reach (local).
    dns: DnsValues | None = None
    # Each etcd's persistent volume by role (main, events) on a cloud seed; empty: emptyDir (local seeds, static).
    etcd_volumes: dict[str, EtcdVolume] = field(default_factory=dict)
    # Its seed's backup bucket, where its backup entry `<technical id>--<uid>` is (None: self-hosted, no backups).
    backup: BackupValues | None = None
    # Derived once by the planner (components/plan/network.py, nodes.py); the layers and providers read them here.
    network_plan: NetworkPlan = field(kw_only=True)
    topology: Topology = field(kw_only=True)
    node_settings: dict[str, NodeValues] = field(default_factory=dict)
    deployments: dict[str, tuple[ZoneDeployment, ...]] = field(default_factory=dict)
    user_data: dict[str, str] = field(default_factory=dict)
    local_nodes: tuple[LocalNode, ...] = ()
    control_plane_ips: tuple[str, ...] = ()
    # A self-hosted cloud shoot's control-plane machine (plan/nodes.py); None elsewhere.
    control_plane_machine: ControlPlaneMachine | None = None
    # Its seed's extensions' garden ServiceAccounts (namespace, name), which may read and update its records.
    garden_accounts: tuple[tuple[str, str], ...] = ()
    # What gardener-resource-manager's webhook sets KUBERNETES_SERVICE_HOST to in its pods (None: self-hosted).
    service_host: str | None = None

    @property
    def self_hosted(self) -> bool:
        """Whether the shoot runs its own control plane (static pods) instead of a seed's."""
        return self.seed is None

    @property
    def seed_namespace(self) -> str:
        """The namespace of the shoot's control plane in its seed: its technical ID."""
        return self.technical_id

    @property
    def machine_namespace(self) -> str:
        """Where machine-controller-manager and the machine objects live: the seed namespace, or kube-system."""
        # A self-hosted shoot has no seed: Gardener runs its MCM inside the shoot, in kube-system.
        return "kube-system" if self.self_hosted else self.seed_namespace

    @property
    def ref(self) -> str:
        """`<project>/<name>`: how stack outputs, records and confirmations name the shoot."""
        return f"{self.project}/{self.name}"


@dataclass(frozen=True)
class DeletionValues:
    """What the spec confirms this update may delete: shoots by `<project>/<name>`, seeds by name."""

    shoots: tuple[str, ...] = ()
    seeds: tuple[str, ...] = ()


@dataclass(frozen=True)
class LandscapePlan:
    """Values of every component of a landscape, in flow order."""

    garden: GardenValues
    seeds: tuple[SeedValues, ...]
    shoots: tuple[ShootValues, ...] = ()
    deletions: DeletionValues = field(default_factory=DeletionValues)
    layout: StackLayout = StackLayout.ONE
    # Some seed keeps its backups in the local object store: the landscape runs one, in its garden's stack.
    object_store: bool = False


@dataclass(frozen=True)
class NodeValues:
    """Everything about a worker pool that reaches its nodes."""

    pool: str
    kubernetes_version: str
    machine_type: str
    image: str
    image_version: str
    node_agent_version: str
    cri: str = "containerd"
    # The cluster CA: node-agent's `apiServer.caBundle`, from which it writes kubelet's bootstrap kubeconfig.
    ca_bundle: str = ""
    # The CA kubelet authenticates clients by (`/var/lib/kubelet/ca.crt`): the one kube-apiserver's kubelet
    # client certificate is issued by (render/pki.py: the client CA).
    kubelet_ca: str = ""
    # Further roots the node trusts (containerd's pulls among them); Gardener's come from the CloudProfile.
    root_certs: str = ""
    ca_rotation: int = 0
    kubelet: Mapping[str, object] = field(default_factory=dict)  # KubeletConfiguration fields
    kube_reserved: Mapping[str, str] = field(default_factory=dict)
    eviction_hard: Mapping[str, str] = field(default_factory=dict)
    registry_mirrors: Mapping[str, str] = field(default_factory=dict)  # upstream -> mirror URL
    sysctls: Mapping[str, str] = field(default_factory=dict)
    journald: Mapping[str, str] = field(default_factory=dict)
    api_server: str = "https://api.internal"
    # kube-dns's addresses (the kubelets' `clusterDNS`), one per service range the plan knows, in family order.
    cluster_dns: tuple[str, ...] = ()


@dataclass(frozen=True)
class ZoneDeployment:
    """A pool's share of one zone: its MachineDeployment and class names, replicas and rollout budget."""

    name: str
    class_name: str
    pool: str
    zone: str
    zone_index: int
    machine_type: str
    image: tuple[str, str]
    minimum: int
    maximum: int
    max_surge: int
    max_unavailable: int
    volume: VolumeValues = field(default_factory=VolumeValues)
    labels: dict[str, str] = field(default_factory=dict)
    # How long a new machine's node is Ready before MCM counts it available and rolls on (plan/nodes.py).
    min_ready_seconds: int = 500


@dataclass(frozen=True)
class ControlPlaneMachine:
    """The machine a self-hosted cloud shoot's control plane runs on, made by arbor itself (no MCM runs yet).

    Its name is the node's (kubelet registers with it) and the instance's; it follows its pool's first zone.
    """

    name: str
    deployment: ZoneDeployment


@dataclass(frozen=True)
class LocalNode:
    """A kwok node standing for one machine of a pool's zone: its class, index there, pool, zone, labels, network."""

    machine_class: str
    index: int
    pool: str
    zone: str
    zone_index: int
    labels: dict[str, str]
    network: NodeNetwork | None = None

    @property
    def key(self) -> str:
        """A name for the node's resources that holds across rolls and stacks: `<pool>-z<N>-<index>`."""
        return f"{self.pool}-z{self.zone_index + 1}-{self.index}"

    @property
    def name(self) -> str:
        """The node's name, as MCM names a machine: its class (so a rolled class rolls it) and a suffix.

        The suffix covers its pod ranges too, which a node never changes: new ones (a new family) make a new node.
        """
        pod_cidrs = self.network.pod_cidrs if self.network else ()
        return f"{self.machine_class}-{naming.short_hash(str(self.index), *pod_cidrs, length=5)}"
