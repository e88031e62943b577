"""Deterministic names: DNS-1123, length caps and short hashes, so every derived name is stable and valid."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

DNS_LABEL_MAX = 63


def short_hash(*parts: str, length: int = 8) -> str:
    """A stable hex digest of the parts, `length` characters long."""
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:length]


def json_hash(value: Any) -> str:
    """The first 16 hex digits of the SHA-256 of a value's JSON, keys sorted: 64 bits tell an edited value."""
    return short_hash(json.dumps(value, sort_keys=True), length=16)


def checksum(parts: Iterable[str | bytes]) -> str:
    """Gardener's checksum of ordered data: the SHA-256 hex of the parts' SHA-256 hex digests, concatenated."""
    digests = (hashlib.sha256(p.encode() if isinstance(p, str) else p).hexdigest() for p in parts)
    return hashlib.sha256("".join(digests).encode()).hexdigest()


def capped(name: str, limit: int = DNS_LABEL_MAX) -> str:
    """`name` itself when it fits `limit`; else a prefix and a hash of the whole name, so it stays unique."""
    if len(name) <= limit:
        return name
    digest = short_hash(name)
    return f"{name[: limit - len(digest) - 1].rstrip('-')}-{digest}"


def project_namespace(project: str) -> str:
    """The garden namespace of a project, as Gardener names it: `garden-<project>`."""
    return f"garden-{project}"


def shoot_namespace(project: str, shoot: str) -> str:
    """The seed namespace (and technical ID) of a hosted shoot, as Gardener names it: `shoot--<project>--<shoot>`."""
    return f"shoot--{project}--{shoot}"


def seed_namespace(seed: str) -> str:
    """A seed's namespace in the garden, as Gardener names it: `seed-<seed>` (its extensions' identities live there)."""
    return f"seed-{seed}"


def extension_name(installation: str) -> str:
    """An extension installation's seed namespace and its garden ServiceAccount: `extension-<installation>`."""
    return f"extension-{installation}"


def backup_bucket(seed: str, *owner: str) -> str:
    """A seed's default bucket name, `arbor-<seed>-<hash>`: the hash of its owner (domain, stack) keeps it unique."""
    suffix = short_hash(*owner, seed, length=10)
    return f"{capped(f'arbor-{seed}', DNS_LABEL_MAX - len(suffix) - 1)}-{suffix}"


def issuer_bucket(technical_id: str, *owner: str) -> str:
    """A self-hosted shoot's issuer bucket, `arbor-<technical id>-<hash>`, unique per owner as a backup bucket."""
    suffix = short_hash(*owner, technical_id, "issuer", length=10)
    return f"{capped(f'arbor-{technical_id}', DNS_LABEL_MAX - len(suffix) - 1)}-{suffix}"


def backup_entry(technical_id: str, uid: str) -> str:
    """A shoot's backup entry as Gardener names it, `<technical id>--<uid>`: a shoot made again gets a new one."""
    return f"{technical_id}--{uid}"


def cluster_key(layer: str, name: str = "") -> str:
    """The key of a cluster in the `kubeconfigs` output: `garden`, `seed/<seed>`, `shoot/<project>/<shoot>`."""
    return layer if not name else f"{layer}/{name}"


def cluster_identifier(provider: str, name: str) -> str:
    """The identity of a cluster for its Kubernetes provider, `<provider>:<name>`, e.g. `local:local-garden`.

    Stable across credentials and endpoints, so a new kubeconfig never replaces the objects in the cluster.
    """
    return f"{provider}:{name}"


def local_cluster_name(stack: str, key: str) -> str:
    """The kwokctl cluster name of a cluster key; the stack name keeps stacks of one clone apart."""
    return capped(f"{stack}-{key.replace('/', '-')}".lower())


# arbor's own API group and label prefix; Gardener's names are kept where arbor reuses Gardener's parts.
API_GROUP = "arbor.dev"
API_VERSION = "v1alpha1"


def label(name: str) -> str:
    """An arbor label key, e.g. `arbor.dev/cluster`."""
    return f"{API_GROUP}/{name}"
