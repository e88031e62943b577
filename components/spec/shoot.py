"""The shoot spec: pydantic models of one entry of `landscape.shoots`, from its networks to its worker pools.

They are most of the spec's fields and rules, and change apart from the garden's and seeds' models
(components/spec/landscape.py, which also uses `EncryptionSpec` for the garden); the field rules they build on
are in components/spec/fields.py. No Pulumi import here.
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from components.kinds import (
    ADMIN_KUBECONFIG_DEFAULT_S,
    ADMIN_KUBECONFIG_MAX_S,
    ADMIN_KUBECONFIG_MIN_S,
    CLUSTER_MAX_NODES,
    COUNTER_MAX,
    VOLUME_MAX_GIB,
    CloudCredentials,
    EncryptionProvider,
    IPFamily,
    KeyRotation,
    NetworkType,
)
from components.pins import GARDENER_VERSION
from components.spec import cidrs
from components.spec.fields import (
    DnsLabel,
    KubernetesVersion,
    Labels,
    Model,
    Ranges,
    SecretKey,
    Zones,
    dns_label,
    duration_seconds,
    label_value,
    plain_networks,
    shown,
    unique,
)

# Who assigns IPv6 ranges on a cloud: the user gives only the IPv4 ones there.
CLOUD_IPV6 = {"gcp": "Google (each subnet's /64)", "aws": "Amazon (the VPC's /56)"}
# kubelet's reservations and hard eviction signals, as Gardener's KubeletConfig has them (other names break kubelet).
KUBE_RESERVED = ("cpu", "memory", "pid", "ephemeral-storage")
EVICTION_SIGNALS = (
    "imagefs.available",
    "imagefs.inodesFree",
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
)
QUANTITY = re.compile(r"[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?", re.ASCII)
PERCENT = re.compile(r"[0-9]+(\.[0-9]+)?%", re.ASCII)
SYSCTL = re.compile(r"[a-z0-9_]+([./][a-zA-Z0-9_-]+)+", re.ASCII)
# A registry host (and port) names a directory of containerd's; the mirror's URL is written into its TOML.
REGISTRY_HOST = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?(:[0-9]{1,5})?", re.ASCII)
MIRROR_URL = re.compile(r"https://[-A-Za-z0-9._~:/?#@!$&()*+,;=%]+", re.ASCII)
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


class KubernetesSpec(Model):
    """The Kubernetes of a shoot's control plane."""

    version: KubernetesVersion


class Networking(Model):
    """A shoot's networks: IPv4, IPv6 or both, with node, pod and service ranges per family.

    On gcp and aws the cloud assigns the IPv6 ranges (the subnets' /64s, the VPC's /56), so only IPv4 ranges
    are given there; on local every family needs its ranges.
    """

    ip_families: tuple[IPFamily, ...] = Field((IPFamily.IPV4,), alias="ipFamilies")
    # Calico by default, as Gardener's local setup runs its shoots.
    type: NetworkType = Field(NetworkType.CALICO, description="The network plugin: calico or cilium (overlay).")
    nodes: Ranges = ()
    pods: Ranges = ()
    services: Ranges = ()
    # A prefix length, 0 to 128, before the bounds per family are checked (an int past 4300 digits has no str).
    node_mask_sizes: dict[IPFamily, Annotated[int, Field(ge=0, le=128)]] = Field(
        default_factory=dict,
        alias="nodeMaskSizes",
        description="Prefix length of each node's pod range per family (default IPv4 24, IPv6 64).",
    )
    ipv6_ipam_pool: str | None = Field(
        None, alias="ipv6IpamPool", min_length=1, description="aws: take the VPC's IPv6 /56 from this IPAM pool."
    )

    def networks(self) -> cidrs.Networks:
        """The families and ranges as plain values for the CIDR rules."""
        return plain_networks(self.ip_families, nodes=self.nodes, pods=self.pods, services=self.services)

    def node_masks(self) -> dict[str, int]:
        """Every family's node mask size, the default where none is given."""
        given = {f.value: m for f, m in self.node_mask_sizes.items()}
        return {f.value: given.get(f.value, cidrs.NODE_MASK_DEFAULT[f.value]) for f in self.ip_families}


class MachineImage(Model):
    """The OS image of a worker pool."""

    # Gardener labels machine classes with the image (operatingSystemName, operatingSystemVersion with '+' as '_').
    name: Annotated[str, label_value("operatingSystemName")]
    version: Annotated[str, label_value("operatingSystemVersion", plus="_")]


class Machine(Model):
    """The machine of a worker pool."""

    type: Annotated[str, label_value("node.kubernetes.io/instance-type")]
    image: MachineImage


def _settings(known: tuple[str, ...], percent: bool) -> AfterValidator:
    """Kubelet's quantities by name: only the names kubelet takes here (Gardener's fields), each a quantity."""

    def check(value: dict[str, str]) -> dict[str, str]:
        for key, quantity in value.items():
            if key not in known:
                near = difflib.get_close_matches(key, known, n=1)
                hint = f"did you mean '{near[0]}'?" if near else f"kubelet takes {', '.join(known)}"
                raise ValueError(f"{shown(key)} is not one of kubelet's settings here; {hint}")
            if not QUANTITY.fullmatch(quantity) and not (percent and PERCENT.fullmatch(quantity)):
                example = "100m, 1Gi or 10%" if percent else "100m, 1Gi or 1000"
                raise ValueError(f"{key}: {shown(quantity)} is not a quantity like {example}")
        return value

    return AfterValidator(check)


def _sysctls(value: dict[str, str]) -> dict[str, str]:
    """Kernel parameters as `sysctl.d` lines: a dotted name and a one-line value (a line break would add a line)."""
    for key, setting in value.items():
        if not SYSCTL.fullmatch(key):
            raise ValueError(f"{shown(key)} is not a kernel parameter name like net.core.somaxconn")
        if not setting or not setting.isprintable() or len(setting) > 256:
            raise ValueError(f"{key}: {shown(setting)} is not a one-line value of at most 256 characters")
    return value


class KubeletSpec(Model):
    """The kubelet settings of a pool; reservations, eviction and the CPU manager policy roll the pool."""

    max_pods: int | None = Field(None, alias="maxPods", ge=8, le=1024)
    cpu_manager_policy: Literal["none", "static"] | None = Field(None, alias="cpuManagerPolicy")
    kube_reserved: Annotated[dict[str, str], _settings(KUBE_RESERVED, percent=False)] = Field(
        default_factory=dict, alias="kubeReserved"
    )
    eviction_hard: Annotated[dict[str, str], _settings(EVICTION_SIGNALS, percent=True)] = Field(
        default_factory=dict, alias="evictionHard"
    )


class CriSpec(Model):
    """The container runtime of a pool."""

    name: Literal["containerd"] = "containerd"
    registry_mirrors: dict[str, str] = Field(default_factory=dict, alias="registryMirrors")

    @model_validator(mode="after")
    def _mirrors(self) -> CriSpec:
        """Each mirror is an https URL for an upstream registry host (both land in containerd's files as written)."""
        for upstream, url in self.registry_mirrors.items():
            if not REGISTRY_HOST.fullmatch(upstream) or not MIRROR_URL.fullmatch(url):
                raise ValueError(
                    f"registryMirrors: {shown(upstream)}: {shown(url)} must map a registry host to an https URL"
                )
        return self


def _size(value: str) -> str:
    """A disk size in whole GiB, `50Gi`, up to the largest disk a cloud offers (digits bounded before int())."""
    if not re.fullmatch(r"[1-9][0-9]{0,5}Gi", value, re.ASCII) or int(value[:-2]) > VOLUME_MAX_GIB:
        raise ValueError(f"not a size in GiB from 1Gi to {VOLUME_MAX_GIB}Gi, like 50Gi")
    return value


class VolumeSpec(Model):
    """A pool's root disk (Gardener's `volume`); every field rolls the pool, since a disk comes with its machine."""

    size: Annotated[str, AfterValidator(_size)] = Field("50Gi", description="Size in GiB, e.g. 50Gi.")
    type: str | None = Field(None, min_length=1, description="The cloud's disk type (gp3, pd-balanced, ...).")
    encrypted: bool = True

    @property
    def size_gb(self) -> int:
        """The size in GiB."""
        return int(self.size.removesuffix("Gi"))


class WorkerPool(Model):
    """A worker pool of a shoot."""

    name: Annotated[str, Field(min_length=1, max_length=15), AfterValidator(dns_label)]
    machine: Machine
    minimum: int = Field(ge=0, le=CLUSTER_MAX_NODES)
    maximum: int = Field(ge=0, le=CLUSTER_MAX_NODES)
    zones: Zones = Field(default_factory=list)
    control_plane: bool = Field(False, alias="controlPlane")
    kubernetes_version: KubernetesVersion | None = Field(None, alias="kubernetesVersion")
    kubelet: KubeletSpec = KubeletSpec()
    cri: CriSpec = CriSpec()
    sysctls: Annotated[dict[str, str], AfterValidator(_sysctls)] = Field(default_factory=dict)
    volume: VolumeSpec = VolumeSpec()
    max_surge: int = Field(
        1, alias="maxSurge", ge=0, le=CLUSTER_MAX_NODES, description="Machines added above the size in a roll."
    )
    max_unavailable: int = Field(
        0, alias="maxUnavailable", ge=0, le=CLUSTER_MAX_NODES, description="Machines missing during a roll."
    )

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
                raise ValueError(f"{shown(resource)}: wildcards are not allowed")
            if resource != resource.lower() or not re.fullmatch(r"[a-z0-9]+(\.[a-z0-9-]+)*", resource, re.ASCII):
                raise ValueError(f"{shown(resource)} is not a lower-case <resource>[.<group>]")
            if resource in ENCRYPTION_REFUSED:
                raise ValueError(f"'{resource}': {ENCRYPTION_REFUSED[resource]}")
        unique(self.resources)
        return self


class NodeAgentSpec(Model):
    """The gardener-node-agent release the shoot's nodes run; by default gardenlet's, the release arbor pins."""

    version: str = Field(GARDENER_VERSION, pattern=r"^v[0-9]+\.[0-9]+\.[0-9]+$")


# A rotation counter: reaches node settings and the stack outputs, so bounded (int32, as Kubernetes' counters).
Counter = Annotated[int, Field(ge=0, le=COUNTER_MAX)]


class RotationSpec(Model):
    """A counter per credential group: changing one rotates the group (components/render/pki.py, docs/pki.md)."""

    ca: Counter = Field(0, description="Cluster and client CAs, with every certificate they signed.")
    etcd_ca: Counter = Field(0, alias="etcdCA", description="The etcd CA, etcd's and kube-apiserver's etcd certs.")
    front_proxy_ca: Counter = Field(0, alias="frontProxyCA", description="The front-proxy CA and client cert.")
    service_account_key: Counter = Field(0, alias="serviceAccountKey", description="The token signing key.")
    bootstrap_token: Counter = Field(0, alias="bootstrapToken", description="The node bootstrap token.")


class CredentialsSpec(Model):
    """A shoot's credentials: what to rotate."""

    rotation: RotationSpec = RotationSpec()


def _duration(value: str) -> str:
    """A duration like `1h`, `30m` or `1h30m`, from 10 minutes to 24 hours (Gardener's AdminKubeconfigRequest)."""
    seconds = duration_seconds(value)
    if seconds is None:
        raise ValueError(f"{shown(value)} is not a duration like 1h, 30m or 1h30m")
    if seconds < ADMIN_KUBECONFIG_MIN_S:
        raise ValueError(f"{shown(value)} is shorter than the minimum 10m")
    if seconds > ADMIN_KUBECONFIG_MAX_S:
        raise ValueError(f"{shown(value)} is longer than the maximum 24h")
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
    # References by name: an empty one is refused, never read as "no seed".
    project: DnsLabel
    seed: DnsLabel | None = None
    self_hosted: bool = Field(False, alias="selfHosted")
    kubernetes: KubernetesSpec
    networking: Networking
    workers: list[WorkerPool] = Field(min_length=1)
    encryption: EncryptionSpec = EncryptionSpec()
    node_agent: NodeAgentSpec = Field(NodeAgentSpec(), alias="nodeAgent")
    labels: Labels = Field(default_factory=dict)
    credentials: CredentialsSpec = CredentialsSpec()
    cloud_credentials: CloudCredentials | None = Field(
        None,
        alias="cloudCredentials",
        description="managed: arbor creates the machines' cloud identity with least privilege (aws IAM user and "
        "access key, gcp service account and key); secret: the JSON in cloudCredentialsSecret. Default: secret "
        "when cloudCredentialsSecret is given, else managed.",
    )
    cloud_credentials_secret: SecretKey | None = Field(
        None,
        alias="cloudCredentialsSecret",
        description="Name of a secret config key of this stack holding the cloud credentials the shoot's machines "
        "are created with, as JSON: aws {accessKeyID, secretAccessKey}, gcp {serviceaccount.json}.",
    )
    admin_kubeconfig: AdminKubeconfigSpec = Field(AdminKubeconfigSpec(), alias="adminKubeconfig")
