"""The landscape spec: pydantic models of the stack config key `arbor:landscape`, and all input validation.

Validation is complete before anything is registered: `parse_landscape` collects every problem and reports
them at once, one line each, as `<path>: <reason>` (for example `landscape.shoots[1].networking.pods:
10.0.0.0/16 overlaps seed 'local-1' pods 10.0.0.0/12`). Field checks come from the models; checks across
fields and objects (references, unique names, derived name lengths, version skew, CIDR overlaps) run only
on input whose fields are valid, so one mistake is reported once. No Pulumi import here.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from components.kinds import (
    ADMIN_KUBECONFIG_DEFAULT_S,
    ADMIN_KUBECONFIG_MAX_S,
    ADMIN_KUBECONFIG_MIN_S,
    SUPPORTED_MINORS,
    EncryptionProvider,
    IPFamily,
    KeyRotation,
    MemberKind,
    ProviderType,
    Role,
)
from components.spec import cidrs

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
# Who assigns IPv6 ranges on a cloud: the user gives only the IPv4 ones there.
CLOUD_IPV6 = {"gcp": "Google (each subnet's /64)", "aws": "Amazon (the VPC's /56)"}
# Resources kube-apiserver always encrypts (secrets) or that cannot be encrypted usefully, as Gardener refuses.
ENCRYPTION_REFUSED = {
    "secrets": "always encrypted, leave it out",
    "events": "events cannot be encrypted",
    "events.events.k8s.io": "events cannot be encrypted",
    # Review APIs answer a request and store nothing: kube-apiserver refuses them in its configuration.
    "tokenreviews.authentication.k8s.io": "not stored in etcd",
    "selfsubjectreviews.authentication.k8s.io": "not stored in etcd",
    "subjectaccessreviews.authorization.k8s.io": "not stored in etcd",
    "selfsubjectaccessreviews.authorization.k8s.io": "not stored in etcd",
    "selfsubjectrulesreviews.authorization.k8s.io": "not stored in etcd",
    "localsubjectaccessreviews.authorization.k8s.io": "not stored in etcd",
}
DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


class SpecError(ValueError):
    """A landscape spec that is invalid; `lines` holds one `<path>: <reason>` per problem."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def _dns_label(value: str) -> str:
    """A DNS-1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric."""
    if not DNS_LABEL.match(value):
        raise ValueError(f"'{value}' is not a DNS-1123 label (lower-case letters, digits and '-')")
    return value


def duration_seconds(value: str) -> int | None:
    """`1h30m` -> 5400; None when `value` is not hours, minutes and seconds in that order."""
    match = DURATION.match(value)
    if not value or not match:
        return None
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def _version(value: str) -> str:
    """A Kubernetes version `<major>.<minor>.<patch>` of a supported minor."""
    match = VERSION.match(value)
    if not match:
        raise ValueError(f"'{value}' is not a version <major>.<minor>.<patch>")
    if (int(match[1]), int(match[2])) not in SUPPORTED_MINORS:
        supported = ", ".join(f"{a}.{b}" for a, b in SUPPORTED_MINORS)
        raise ValueError(f"Kubernetes {value} is not supported (supported minors: {supported})")
    return value


def _cidr(value: str) -> str:
    """A canonical CIDR: the network address itself, as Kubernetes and the clouds expect."""
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise ValueError(f"'{value}' is not a CIDR") from None
    if str(network) != value:
        raise ValueError(f"'{value}' is not canonical, use {network}")
    return value


def _one_or_more(value: object) -> object:
    """A single CIDR is a range of one family: `pods: 10.0.0.0/12` reads as `pods: [10.0.0.0/12]`."""
    return [value] if isinstance(value, str) else value


def _cidrs(value: tuple[str, ...]) -> tuple[str, ...]:
    """Each entry a canonical CIDR, at most one per family."""
    if len(value) > len(IPFamily):
        raise ValueError(f"{len(value)} ranges, at most one per IP family")
    for cidr in value:
        _cidr(cidr)
    return value


def _labels(value: dict[str, str]) -> dict[str, str]:
    """Kubernetes label keys (optional DNS prefix, name up to 63) and values (up to 63)."""
    for key, val in value.items():
        name = key.rsplit("/", 1)[-1]
        if not LABEL_KEY.match(key) or len(name) > 63:
            raise ValueError(f"'{key}' is not a valid label key")
        if not LABEL_VALUE.match(val) or len(val) > 63:
            raise ValueError(f"'{val}' is not a valid label value (key '{key}')")
    return value


def _unique(values: list[str]) -> list[str]:
    """A list without duplicates."""
    dupes = sorted({v for v in values if values.count(v) > 1})
    if dupes:
        raise ValueError(f"duplicate {', '.join(repr(d) for d in dupes)}")
    return values


DnsLabel = Annotated[str, Field(min_length=1, max_length=63), AfterValidator(_dns_label)]
KubernetesVersion = Annotated[str, AfterValidator(_version)]
Cidr = Annotated[str, AfterValidator(_cidr)]
# One CIDR per IP family, in the order of ipFamilies; one CIDR alone may be written as a string.
Ranges = Annotated[tuple[str, ...], BeforeValidator(_one_or_more), AfterValidator(_cidrs)]
Labels = Annotated[dict[str, str], AfterValidator(_labels)]
Zones = Annotated[list[str], AfterValidator(_unique)]


class Model(BaseModel):
    """Base of every spec model: immutable, unknown fields refused, camelCase as in the stack file."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class ClusterSpec(Model):
    """A layer's cluster: created by arbor (`nodes`), or an existing one (`kubeconfigSecret`)."""

    nodes: int = Field(1, ge=0, le=50, description="Nodes of a created cluster (kwok nodes on local).")
    kubeconfig_secret: str | None = Field(
        None,
        alias="kubeconfigSecret",
        description="Name of a secret config key of this stack that holds the kubeconfig of an existing cluster.",
    )

    @property
    def existing(self) -> bool:
        """Whether the cluster exists already and arbor only connects to it."""
        return self.kubeconfig_secret is not None


class Member(Model):
    """A project member."""

    name: str = Field(min_length=1)
    kind: MemberKind = MemberKind.USER
    role: Role


class ProjectSpec(Model):
    """A project: a namespace `garden-<name>` in the garden, its members and their roles."""

    name: DnsLabel
    members: list[Member] = Field(default_factory=list)


class GardenSpec(Model):
    """The garden: the API where projects, seeds and shoots are recorded."""

    provider: ProviderType = ProviderType.LOCAL
    region: str = Field("local", min_length=1)
    zones: Zones = Field(default_factory=lambda: ["local-a"], min_length=1)
    cluster: ClusterSpec = ClusterSpec()
    projects: list[ProjectSpec] = Field(default_factory=list)
    encryption: EncryptionSpec | None = Field(
        None, description="Encryption at rest of the garden's own API server (local gardens; off when absent)."
    )


class SeedNetworks(Model):
    """The seed cluster's own ranges; shoots hosted on the seed must not overlap them."""

    ip_families: tuple[IPFamily, ...] = Field((IPFamily.IPV4,), alias="ipFamilies")
    nodes: Ranges = ()
    pods: Ranges
    services: Ranges

    def networks(self) -> cidrs.Networks:
        """The families and ranges as plain values for the CIDR rules."""
        return _networks(self.ip_families, nodes=self.nodes, pods=self.pods, services=self.services)


class BackupSpec(Model):
    """Where the seed keeps its shoots' etcd backups (a directory bucket on local)."""

    provider: ProviderType
    region: str | None = None


class SeedSpec(Model):
    """A seed: a cluster that hosts shoot control planes."""

    name: DnsLabel
    provider: ProviderType
    region: str = Field("local", min_length=1)
    zones: Zones = Field(default_factory=lambda: ["local-a"], min_length=1)
    cluster: ClusterSpec = ClusterSpec()
    networks: SeedNetworks = SeedNetworks(pods=("10.0.0.0/12",), services=("10.16.0.0/16",))
    backup: BackupSpec | None = None
    extensions: Annotated[list[str], AfterValidator(_unique)] = Field(default_factory=list)


class KubernetesSpec(Model):
    """The Kubernetes of a shoot's control plane."""

    version: KubernetesVersion


class Networking(Model):
    """A shoot's networks: IPv4, IPv6 or both, with node, pod and service ranges per family.

    On gcp and aws the cloud assigns the IPv6 ranges (the subnets' /64s, the VPC's /56), so only IPv4 ranges
    are given there; on local every family needs its ranges.
    """

    ip_families: tuple[IPFamily, ...] = Field((IPFamily.IPV4,), alias="ipFamilies")
    nodes: Ranges = ()
    pods: Ranges = ()
    services: Ranges = ()
    node_mask_sizes: dict[IPFamily, int] = Field(
        default_factory=dict,
        alias="nodeMaskSizes",
        description="Prefix length of each node's pod range per family (default IPv4 24, IPv6 64).",
    )
    ipv6_ipam_pool: str | None = Field(
        None, alias="ipv6IpamPool", min_length=1, description="aws: take the VPC's IPv6 /56 from this IPAM pool."
    )

    def networks(self) -> cidrs.Networks:
        """The families and ranges as plain values for the CIDR rules."""
        return _networks(self.ip_families, nodes=self.nodes, pods=self.pods, services=self.services)

    def node_masks(self) -> dict[str, int]:
        """Every family's node mask size, the default where none is given."""
        given = {f.value: m for f, m in self.node_mask_sizes.items()}
        return {f.value: given.get(f.value, cidrs.NODE_MASK_DEFAULT[f.value]) for f in self.ip_families}


def _networks(families: tuple[IPFamily, ...], **ranges: tuple[str, ...]) -> cidrs.Networks:
    """Plain values of a network for the CIDR rules."""
    return cidrs.Networks(tuple(f.value for f in families), ranges)


class MachineImage(Model):
    """The OS image of a worker pool."""

    name: str = Field(min_length=1)
    version: str = Field(min_length=1)


class Machine(Model):
    """The machine of a worker pool."""

    type: str = Field(min_length=1)
    image: MachineImage


class KubeletSpec(Model):
    """The kubelet settings of a pool; reservations, eviction and the CPU manager policy roll the pool."""

    max_pods: int | None = Field(None, alias="maxPods", ge=8, le=1024)
    cpu_manager_policy: Literal["none", "static"] | None = Field(None, alias="cpuManagerPolicy")
    kube_reserved: dict[str, str] = Field(default_factory=dict, alias="kubeReserved")
    eviction_hard: dict[str, str] = Field(default_factory=dict, alias="evictionHard")


class CriSpec(Model):
    """The container runtime of a pool."""

    name: Literal["containerd"] = "containerd"
    registry_mirrors: dict[str, str] = Field(default_factory=dict, alias="registryMirrors")

    @model_validator(mode="after")
    def _mirrors(self) -> CriSpec:
        """Each mirror is an https URL for an upstream registry host."""
        for upstream, url in self.registry_mirrors.items():
            if "/" in upstream or not url.startswith("https://"):
                raise ValueError(f"registryMirrors: '{upstream}: {url}' must map a registry host to an https URL")
        return self


class VolumeSpec(Model):
    """A pool's root disk (Gardener's `volume`); every field rolls the pool, since a disk comes with its machine."""

    size: str = Field("50Gi", pattern=r"^[1-9][0-9]*Gi$", description="Size in GiB, e.g. 50Gi.")
    type: str | None = Field(None, min_length=1, description="The cloud's disk type (gp3, pd-balanced, ...).")
    encrypted: bool = True

    @property
    def size_gb(self) -> int:
        """The size in GiB."""
        return int(self.size.removesuffix("Gi"))


class WorkerPool(Model):
    """A worker pool of a shoot."""

    name: Annotated[str, Field(min_length=1, max_length=15), AfterValidator(_dns_label)]
    machine: Machine
    minimum: int = Field(ge=0)
    maximum: int = Field(ge=0)
    zones: Zones = Field(default_factory=list)
    control_plane: bool = Field(False, alias="controlPlane")
    kubernetes_version: KubernetesVersion | None = Field(None, alias="kubernetesVersion")
    kubelet: KubeletSpec = KubeletSpec()
    cri: CriSpec = CriSpec()
    sysctls: dict[str, str] = Field(default_factory=dict)
    volume: VolumeSpec = VolumeSpec()
    max_surge: int = Field(1, alias="maxSurge", ge=0, description="Machines added above the size in a roll.")
    max_unavailable: int = Field(0, alias="maxUnavailable", ge=0, description="Machines missing during a roll.")

    @model_validator(mode="after")
    def _bounds(self) -> WorkerPool:
        """The pool never shrinks below its minimum; a roll moves; a control-plane pool rolls one node at a time."""
        if self.maximum < self.minimum:
            raise ValueError(f"maximum {self.maximum} is less than minimum {self.minimum}")
        if self.max_surge == 0 and self.max_unavailable == 0:
            raise ValueError("maxSurge and maxUnavailable are both 0: a roll could never replace a machine")
        if self.control_plane and (self.max_surge, self.max_unavailable) not in ((1, 0), (0, 1)):
            raise ValueError(
                "a control-plane pool rolls one node at a time to keep etcd's quorum: "
                "maxSurge 1 and maxUnavailable 0, or maxSurge 0 and maxUnavailable 1"
            )
        return self


class EncryptionSpec(Model):
    """Encryption at rest: resources encrypted besides secrets, the provider, and the key rotation phase."""

    resources: list[str] = Field(default_factory=list)
    provider: EncryptionProvider = EncryptionProvider.AESCBC
    key_rotation: KeyRotation = Field(
        KeyRotation.COMPLETE,
        alias="keyRotation",
        description="prepare: a new key encrypts and everything is rewritten; complete: the old key is dropped.",
    )

    @model_validator(mode="after")
    def _resources(self) -> EncryptionSpec:
        """Lower-case `<resource>[.<group>]`, no wildcards, no duplicates, none Gardener refuses."""
        for resource in self.resources:
            if "*" in resource:
                raise ValueError(f"'{resource}': wildcards are not allowed")
            if resource != resource.lower() or not re.match(r"^[a-z0-9]+(\.[a-z0-9-]+)*$", resource):
                raise ValueError(f"'{resource}' is not a lower-case <resource>[.<group>]")
            if resource in ENCRYPTION_REFUSED:
                raise ValueError(f"'{resource}': {ENCRYPTION_REFUSED[resource]}")
        _unique(self.resources)
        return self


class NodeAgentSpec(Model):
    """The gardener-node-agent release the shoot's nodes run."""

    version: str = Field("v1.120.0", pattern=r"^v\d+\.\d+\.\d+$")


class RotationSpec(Model):
    """A counter per credential group: changing one rotates the group (components/render/pki.py, docs/pki.md)."""

    ca: int = Field(0, ge=0, description="Cluster and client CAs, with every certificate they signed.")
    etcd_ca: int = Field(0, ge=0, alias="etcdCA", description="The etcd CA, etcd's and kube-apiserver's etcd certs.")
    front_proxy_ca: int = Field(0, ge=0, alias="frontProxyCA", description="The front-proxy CA and client cert.")
    service_account_key: int = Field(0, ge=0, alias="serviceAccountKey", description="The token signing key.")
    bootstrap_token: int = Field(0, ge=0, alias="bootstrapToken", description="The node bootstrap token.")


class CredentialsSpec(Model):
    """A shoot's credentials: what to rotate."""

    rotation: RotationSpec = RotationSpec()


def _duration(value: str) -> str:
    """A duration like `1h`, `30m` or `1h30m`, from 10 minutes to 24 hours (Gardener's AdminKubeconfigRequest)."""
    seconds = duration_seconds(value)
    if seconds is None:
        raise ValueError(f"'{value}' is not a duration like 1h, 30m or 1h30m")
    if seconds < ADMIN_KUBECONFIG_MIN_S:
        raise ValueError(f"'{value}' is shorter than the minimum 10m")
    if seconds > ADMIN_KUBECONFIG_MAX_S:
        raise ValueError(f"'{value}' is longer than the maximum 24h")
    return value


class AdminKubeconfigSpec(Model):
    """Admin kubeconfigs of a shoot: client certificates of its client CA, valid for `expiration`."""

    expiration: Annotated[str, AfterValidator(_duration)] = "1h"

    @property
    def expiration_seconds(self) -> int:
        """The validity of an issued admin kubeconfig in seconds."""
        return duration_seconds(self.expiration) or ADMIN_KUBECONFIG_DEFAULT_S


class ShootSpec(Model):
    """A shoot: a cluster users get, hosted on a seed or self-hosted (control plane as static pods)."""

    name: DnsLabel
    project: str
    seed: str | None = None
    self_hosted: bool = Field(False, alias="selfHosted")
    kubernetes: KubernetesSpec
    networking: Networking
    workers: list[WorkerPool] = Field(min_length=1)
    encryption: EncryptionSpec = EncryptionSpec()
    node_agent: NodeAgentSpec = Field(NodeAgentSpec(), alias="nodeAgent")
    labels: Labels = Field(default_factory=dict)
    credentials: CredentialsSpec = CredentialsSpec()
    cloud_credentials_secret: str | None = Field(
        None,
        alias="cloudCredentialsSecret",
        min_length=1,
        description="Name of a secret config key of this stack holding the cloud credentials the shoot's machines "
        "are created with, as JSON: aws {accessKeyID, secretAccessKey}, gcp {serviceaccount.json}.",
    )
    admin_kubeconfig: AdminKubeconfigSpec = Field(AdminKubeconfigSpec(), alias="adminKubeconfig")


class LandscapeSpec(Model):
    """A whole landscape: one garden, its seeds and its shoots."""

    garden: GardenSpec
    seeds: list[SeedSpec] = Field(default_factory=list)
    shoots: list[ShootSpec] = Field(default_factory=list)


def _path(loc: tuple[int | str, ...]) -> str:
    """`('seeds', 1, 'name')` -> `landscape.seeds[1].name`."""
    out = "landscape"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _reason(error: Any) -> str:
    """A pydantic error as a short reason, with the refused value where that helps."""
    kind, msg = error["type"], str(error["msg"])
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "required field is missing"
    if kind == "enum":
        return f"'{error['input']}' is not one of {error['ctx']['expected']}"
    return msg[0].lower() + msg[1:]


def parse_fields(raw: object) -> LandscapeSpec:
    """Validates every field of the raw config object; raises SpecError with every problem found.

    The checks across fields and objects run on the result (components/checks: `parse_landscape` does both).
    """
    if not isinstance(raw, dict):
        raise SpecError([f"landscape: expected an object, got {type(raw).__name__}"])
    try:
        spec = LandscapeSpec.model_validate(raw)
    except ValidationError as err:
        raise SpecError([f"{_path(e['loc'])}: {_reason(e)}" for e in err.errors()]) from None
    return spec
