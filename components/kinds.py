"""Kinds and limits every tier shares: enums of the spec's closed choices, and the bounds arbor enforces.

The lowest module of arbor (docs/ARCHITECTURE.md): it imports nothing of arbor's, so the spec, the plan, the
renderers, the reconciler and the components all take their enums and limits from here, not from each other.
"""

from __future__ import annotations

from enum import StrEnum

# Kubernetes minors arbor can run, oldest first; workers may trail the control plane by up to three minors.
SUPPORTED_MINORS = ((1, 32), (1, 33), (1, 34))
MAX_WORKER_SKEW = 3
# kubelet's default when a pool sets no maxPods.
KUBELET_MAX_PODS = 110
# Admin kubeconfigs are short-lived: Gardener's AdminKubeconfigRequest bounds, capped at a day.
ADMIN_KUBECONFIG_MIN_S = 600
ADMIN_KUBECONFIG_DEFAULT_S = 3600
ADMIN_KUBECONFIG_MAX_S = 86400
# Nodes of a cluster arbor creates on local (kwok nodes): a garden's or seed's `nodes`, a local shoot's pool minimums.
LOCAL_CLUSTER_MAX_NODES = 50
# Nodes Kubernetes runs in one cluster (its tested scale): the bound of a pool's sizes and of a shoot's maximums.
CLUSTER_MAX_NODES = 5000
# A pool's root disk in GiB: at most 64 TiB, the largest single disk gcp and aws offer.
VOLUME_MAX_GIB = 65536
# Rotation counters are int32, as Kubernetes' counters are, so they stay exact in the stack outputs.
COUNTER_MAX = 2**31 - 1


class ProviderType(StrEnum):
    """Where a cluster runs."""

    LOCAL = "local"
    GCP = "gcp"
    AWS = "aws"


class DnsProviderType(StrEnum):
    """Where the shoots' API records live: Gardener's DNS provider types."""

    AWS_ROUTE53 = "aws-route53"
    GOOGLE_CLOUDDNS = "google-clouddns"


class CloudCredentials(StrEnum):
    """Where a cloud shoot's machine credentials come from: made by arbor with least privilege, or pasted."""

    MANAGED = "managed"
    SECRET = "secret"


class StackLayout(StrEnum):
    """How a landscape is split into stacks: one stack, or a garden stack and a stack per seed (Gardener's shards)."""

    ONE = "one"
    PER_SEED = "perSeed"


class Role(StrEnum):
    """A project member's role: viewers read, admins manage shoots."""

    ADMIN = "admin"
    VIEWER = "viewer"


class MemberKind(StrEnum):
    """The kind of RBAC subject a member is."""

    USER = "User"
    GROUP = "Group"
    SERVICE_ACCOUNT = "ServiceAccount"


class IPFamily(StrEnum):
    """An IP family of a shoot network."""

    IPV4 = "IPv4"
    IPV6 = "IPv6"


class NetworkType(StrEnum):
    """A shoot's network plugin (Gardener's `networking.type`), run as an overlay."""

    CALICO = "calico"
    CILIUM = "cilium"


class EncryptionProvider(StrEnum):
    """kube-apiserver's local-key providers for encryption at rest."""

    AESCBC = "aescbc"
    AESGCM = "aesgcm"
    SECRETBOX = "secretbox"


class KeyRotation(StrEnum):
    """The encryption key rotation phase, as Gardener's: `prepare` adds a key and rewrites, `complete` drops the old."""

    PREPARE = "prepare"
    COMPLETE = "complete"
