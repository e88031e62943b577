"""Encryption at rest of an API server's etcd, wired: its keys, the configuration rendered from them, the rewrite.

The keys come from the EncryptionKeys resource and are secret wherever they go; the configuration is rendered by
components/render/encryption.py; EncryptionRewrite writes the affected objects again once the server runs the text.
A hosted shoot's keys write the configuration's Secret in its seed namespace themselves: what mounts or reads it is
given its checksum or where it is, never the text, so the state keeps the keys once. A self-hosted local shoot's
write it in its machine's directory, where its API server and its static pods' OSC read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from components.concerns.shoot_pki import SecretTarget
from components.plan.values import EncryptionValues
from components.reconciler.encryption import EncryptionKeys, EncryptionRewrite, config_hash
from components.reconciler.local_cluster import file_in_directory, file_in_seed
from components.render.controlplane import ENCRYPTION_KEY, ENCRYPTION_SECRET
from components.render.encryption import render_config
from components.render.objects import CHECKSUM_ONLY


@dataclass(frozen=True)
class EtcdEncryption:
    """One API server's encryption: its keys, the configuration (secret), its hash and the encrypting key's name."""

    keys: EncryptionKeys
    config: pulumi.Output[str]
    config_hash: pulumi.Output[str]
    write_key: pulumi.Output[str]
    resources: tuple[str, ...]
    # Where the keys wrote the configuration's Secret (a hosted shoot's seed namespace, a self-hosted shoot's
    # machine directory); None where they write none.
    target: SecretTarget | None = None

    def secret_data(self) -> pulumi.Output[dict[str, str]]:
        """The configuration's Secret as its mounts see it: the text, or its checksum where the keys wrote it."""
        if self.target is None:
            return pulumi.Output.secret(self.config.apply(lambda text: {ENCRYPTION_KEY: text}))
        return self.keys.checksums.apply(lambda sums: {CHECKSUM_ONLY: (sums or {}).get(ENCRYPTION_SECRET, "")})

    @staticmethod
    def layout() -> dict[str, tuple[str, ...]]:
        """The keys of the configuration's Secret, by its name."""
        return {ENCRYPTION_SECRET: (ENCRYPTION_KEY,)}

    def source(self) -> pulumi.Output[Any]:
        """What an API server arbor runs is given: the text, or where the keys wrote it with the file's digest."""
        target = self.target
        if target is None:
            return self.config
        if target.directory is not None:
            directory = target.directory
            return self.config_hash.apply(
                lambda sha: file_in_directory(directory, ENCRYPTION_SECRET, ENCRYPTION_KEY, sha)
            )
        return pulumi.Output.all(target.kubeconfig, self.config_hash).apply(
            lambda got: file_in_seed(got[0], target.namespace, ENCRYPTION_SECRET, ENCRYPTION_KEY, got[1])
        )


def etcd_encryption(
    name: str, values: EncryptionValues, parent: pulumi.Resource, target: SecretTarget | None = None
) -> EtcdEncryption:
    """Registers the keys `<name>-encryption-keys` and renders the configuration from them (a secret Output).

    With a `target` the keys write the configuration's Secret there (after what it needs first).
    """
    writes = None if target is None else target.place()
    keys = EncryptionKeys(
        f"{name}-encryption-keys",
        provider=values.provider,
        key_rotation=values.key_rotation,
        writes=writes,
        resources=values.resources,
        # Protected: without its keys, what etcd holds encrypted cannot be read again.
        opts=pulumi.ResourceOptions(parent=parent, protect=True, depends_on=list(target.after) if target else None),
    )
    config: pulumi.Output[str] = pulumi.Output.secret(keys.keys.apply(lambda k: render_config(values.resources, k)))
    # Neither reveals a key: the hash is of 256-bit random keys, the name is `key<n>`; the preview shows both.
    # Where the keys write the Secret they report both, known in an update's preview (reconciler/encryption.py).
    if target is None:
        hashed = pulumi.Output.unsecret(config.apply(config_hash))
        write_key = pulumi.Output.unsecret(keys.keys.apply(lambda k: k[0]["name"]))
    else:
        hashed, write_key = keys.configHash, keys.writeKey
    return EtcdEncryption(keys, config, hashed, write_key, values.resources, target)


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
