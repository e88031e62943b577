"""Encryption at rest of an API server's etcd, wired: its keys, the configuration rendered from them, the rewrite.

The keys come from the EncryptionKeys resource and are secret wherever they go; the configuration is rendered by
components/render/encryption.py; EncryptionRewrite writes the affected objects again once the server runs the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

from components.plan.values import EncryptionValues
from components.reconciler.encryption import EncryptionKeys, EncryptionRewrite, config_hash
from components.render.encryption import render_config


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
        # Protected: without its keys, what etcd holds encrypted cannot be read again.
        opts=pulumi.ResourceOptions(parent=parent, protect=True),
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
    name: str,
    encryption: EtcdEncryption,
    kubeconfig: pulumi.Input[str],
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource] = (),
) -> EncryptionRewrite:
    """Registers `<name>-encryption-rewrite`: the objects whose encryption changed, written again (after the server)."""
    return EncryptionRewrite(
        f"{name}-encryption-rewrite",
        kubeconfig=kubeconfig,
        config_hash=encryption.config_hash,
        resources=encryption.resources,
        write_key=encryption.write_key,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on)),
    )
