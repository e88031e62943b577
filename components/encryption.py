"""Encryption at rest of an API server's etcd: the EncryptionConfiguration, the changes allowed, and its wiring.

The configuration has two entries. Secrets and the configured resources are written by the first key (newest
first, one provider entry per run of keys of one provider) and read by every key or as plaintext. Every other
resource (`*.*`) is written in plaintext and read by every key too, so a resource just removed from the list stays
readable until it is rewritten: the text depends only on the resources and the keys, never on the previous update.

Changes are checked against the previous update's `encryption` output (`encryption_outputs`) before anything is
registered: resources and provider never change together, the provider changes only by starting a key rotation
(`keyRotation: prepare`, whose new key uses the new provider), resources stay during a rotation, and a garden's
encryption is never removed (its data would be unreadable). The keys come from the EncryptionKeys resource and
are secret wherever they go; EncryptionRewrite writes the affected objects again once the server runs the text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import yaml

from components.controlplane import ENCRYPTION_KEY as SECRET_KEY
from components.controlplane import ENCRYPTION_SECRET as SECRET_NAME
from components.plan import EncryptionValues, LandscapePlan
from components.reconciler.encryption import COMPLETE, PREPARE, EncryptionKeys, EncryptionRewrite, Key, config_hash

# The Secret a hosted kube-apiserver mounts its configuration from (Gardener's kube-apiserver mounts it the same way).
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
    return yaml.safe_dump(config, sort_keys=False)


def secret_manifest(config: str, namespace: str) -> dict[str, Any]:
    """The Secret holding `config` for a kube-apiserver in `namespace` to mount, as `encryption-configuration.yaml`."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SECRET_NAME, "namespace": namespace},
        "type": "Opaque",
        "stringData": {SECRET_KEY: config},
    }


def _targets(plan: LandscapePlan) -> list[tuple[str, str, EncryptionValues | None]]:
    """Each API server arbor encrypts: its spec path, cluster key and values (None: none for the garden)."""
    garden = [("landscape.garden.encryption", plan.garden.cluster.key, plan.garden.encryption)]
    shoots = [(f"landscape.shoots[{i}].encryption", s.cluster.key, s.encryption) for i, s in enumerate(plan.shoots)]
    return [*garden, *shoots]


def _output(values: EncryptionValues) -> dict[str, Any]:
    """One API server's encryption as recorded for the next update."""
    return {"resources": list(values.resources), "provider": values.provider, "keyRotation": values.key_rotation}


def encryption_outputs(plan: LandscapePlan) -> dict[str, dict[str, Any]]:
    """Each encrypted API server's resources, provider and rotation phase by cluster key (stack output `encryption`)."""
    return {key: _output(values) for _, key, values in _targets(plan) if values}


def change_problems(path: str, before: Mapping[str, Any], after: EncryptionValues) -> list[str]:
    """What a change from the previous update's `before` to `after` does not allow, one line each."""
    old_resources = list(before.get("resources") or [])
    old_provider = before.get("provider", after.provider)
    old_phase = before.get("keyRotation", COMPLETE)
    resources_changed = sorted(old_resources) != sorted(after.resources)
    provider_changed = old_provider != after.provider
    starts_rotation = old_phase == COMPLETE and after.key_rotation == PREPARE
    if resources_changed and provider_changed:
        return [f"{path}: resources and provider change in one update; change one, run `up`, then the other"]
    lines = []
    if provider_changed and not starts_rotation:
        lines.append(
            f"{path}.provider: {old_provider} -> {after.provider} only when a key rotation starts "
            "(keyRotation: prepare; its new key uses the new provider), then keyRotation: complete"
        )
    if resources_changed and PREPARE in (old_phase, after.key_rotation):
        lines.append(f"{path}.resources: cannot change during a key rotation; set keyRotation: complete first")
    return lines


def encryption_changes(plan: LandscapePlan, previous: Mapping[str, Any]) -> list[str]:
    """Encryption changes the previous update's outputs (`encryption_outputs`) do not allow, one line each."""
    lines = []
    for path, key, values in _targets(plan):
        before = previous.get(key)
        if not isinstance(before, Mapping):
            continue
        if values is None:
            lines.append(
                f"{path}: cannot be removed once set, the objects in etcd are encrypted; keep it "
                "(with resources: [] it encrypts secrets only)"
            )
            continue
        lines += change_problems(path, before, values)
    return lines


@dataclass(frozen=True)
class EtcdEncryption:
    """One API server's encryption: its keys, the configuration (secret), its hash and the encrypting key's name."""

    keys: EncryptionKeys
    config: pulumi.Output[str]
    config_hash: pulumi.Output[str]
    write_key: pulumi.Output[str]
    resources: tuple[str, ...]


def etcd_encryption(name: str, values: EncryptionValues, parent: pulumi.Resource) -> EtcdEncryption:
    """Registers the keys `<name>-encryption-keys` and renders the configuration from them (a secret Output)."""
    keys = EncryptionKeys(
        f"{name}-encryption-keys",
        provider=values.provider,
        key_rotation=values.key_rotation,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    config: pulumi.Output[str] = pulumi.Output.secret(keys.keys.apply(lambda k: render_config(values.resources, k)))
    return EtcdEncryption(
        keys=keys,
        config=config,
        # Neither reveals a key: the hash is of 256-bit random keys, the name is `key<n>`; the preview shows both.
        config_hash=pulumi.Output.unsecret(config.apply(config_hash)),
        write_key=pulumi.Output.unsecret(keys.keys.apply(lambda k: k[0]["name"])),
        resources=values.resources,
    )


def rewrite(
    name: str, encryption: EtcdEncryption, kubeconfig: pulumi.Input[str], parent: pulumi.Resource
) -> EncryptionRewrite:
    """Registers `<name>-encryption-rewrite`: the objects whose encryption changed, written again (after the server)."""
    return EncryptionRewrite(
        f"{name}-encryption-rewrite",
        kubeconfig=kubeconfig,
        config_hash=encryption.config_hash,
        resources=encryption.resources,
        write_key=encryption.write_key,
        opts=pulumi.ResourceOptions(parent=parent),
    )
