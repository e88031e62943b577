"""Encryption at rest of an API server's etcd, rendered pure: the EncryptionConfiguration and its Secret.

The configuration has two entries. Secrets and the configured resources are written by the first key (newest
first, one provider entry per run of keys of one provider) and read by every key or as plaintext. Every other
resource (`*.*`) is written in plaintext and read by every key too, so a resource just removed from the list stays
readable until it is rewritten: the text depends only on the resources and the keys, never on the previous update.
The changes allowed are checked in components/checks/previous.py; the wiring is components/concerns/encryption.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components import yaml_text

# The Secret a hosted kube-apiserver mounts its configuration from (Gardener's kube-apiserver mounts it the same way).
from components.render.controlplane import ENCRYPTION_KEY as SECRET_KEY
from components.render.controlplane import ENCRYPTION_SECRET as SECRET_NAME

# One key of an EncryptionConfiguration: name, provider and base64 secret (the EncryptionKeys resource makes them).
Key = dict[str, str]

# Always encrypted, whatever the spec lists.
ALWAYS = ("secrets",)


def _providers(keys: Sequence[Key]) -> list[dict[str, Any]]:
    """The provider entries of `keys` in order: consecutive keys of one provider share an entry."""
    entries: list[dict[str, Any]] = []
    for key in keys:
        item = {"name": key["name"], "secret": key["secret"]}
        if entries and key["provider"] in entries[-1]:
            entries[-1][key["provider"]]["keys"].append(item)
        else:
            entries.append({key["provider"]: {"keys": [item]}})
    return entries


def render_config(resources: Sequence[str], keys: Sequence[Key]) -> str:
    """The EncryptionConfiguration for `resources` (besides secrets), written by the first of `keys`."""
    # Each entry gets its own provider objects: shared ones would be written as YAML anchors.
    readers = _providers(keys)
    config = {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "EncryptionConfiguration",
        "resources": [
            {"resources": [*ALWAYS, *resources], "providers": [*readers, {"identity": {}}]},
            # Plaintext for the rest, still readable when a key wrote it (a resource removed from the list).
            {"resources": ["*.*"], "providers": [{"identity": {}}, *_providers(keys)]},
        ],
    }
    return yaml_text.dump(config, sort_keys=False)


def secret_manifest(config: str, namespace: str) -> dict[str, Any]:
    """The Secret holding `config` for a kube-apiserver in `namespace` to mount, as `encryption-configuration.yaml`."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SECRET_NAME, "namespace": namespace},
        "type": "Opaque",
        "stringData": {SECRET_KEY: config},
    }
