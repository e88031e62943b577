"""A hosted shoot's state in its backup entry, wired: the ShootState record and the sealed upload that describes it.

The persisted secrets are the shoot's CAs and key pairs whole (private keys included) and its encryption
configuration: the upload reads them from the Secrets the control plane's SecretSet wrote in the seed namespace (a
CA's signer Secret) and checks them against their digest here, so the state keeps no third copy of them. The
machine state is read from the seed too, when the state is uploaded (components/reconciler/shoot_state.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload

import pulumi

from components import naming
from components.bundles import BackupAccess, ClusterAccess, GardenAccess, SeedAccess
from components.concerns.access import internal_secret_name
from components.concerns.objects import KubeObject, Record
from components.concerns.shoot_pki import ShootPki
from components.plan.values import ShootValues
from components.providers.contract import InfrastructureProvider
from components.reconciler import entry_store
from components.reconciler.entry_secret import EntrySecret
from components.reconciler.gather import gathered
from components.reconciler.shoot_state import MachineRestore, ShootStateBackup, secrets_digest
from components.reconciler.state_key import ShootStateKey, reference
from components.render import api, backup, backup_restore, controlplane, objects, shoot_state

# The garden InternalSecret `<shoot>.shoot-state-key` holds the key a shoot's state is sealed under.
STATE_KEY = "shoot-state-key"


@dataclass(frozen=True)
class PersistedSecrets:
    """What the state upload knows of the persisted secrets: their digest, and their Secrets in the seed namespace."""

    digest: pulumi.Output[str]
    sources: dict[str, dict[str, Any]]


def persisted_secrets(credentials: ShootPki, encryption: pulumi.Output[dict[str, str]]) -> PersistedSecrets:
    """The persisted secrets' digest (the content stays in the seed's Secrets) and where the seed holds each.

    The digest is of each Secret's checksum, as its credential reports it: a CA whose Secret is written again keeps
    it known in that update's preview, where its key is not.
    """
    sources = shoot_state.seed_sources(
        (c.credential for c in credentials.credentials.values()), controlplane.ENCRYPTION_SECRET,
        controlplane.ENCRYPTION_KEY,
    )  # fmt: skip
    held = {c.credential.name: gathered(c.secret_data()[sources[c.credential.name]["secret"]], secret=True)
            for c in credentials.credentials.values() if c.credential.name in sources}  # fmt: skip
    held[controlplane.ENCRYPTION_SECRET] = encryption  # its text, or its checksum where its keys wrote it
    # A digest of checksums says nothing of the keys: kept in the clear, so the preview shows when the state changes.
    checksums = {name: pulumi.Output.unsecret(data.apply(objects.checksum)) for name, data in held.items()}
    return PersistedSecrets(gathered(checksums, secret=False).apply(secrets_digest), sources)


@dataclass(frozen=True)
class StateKeeping:
    """What of a hosted shoot's state comes before its workers: its key, where it is, the restore of its machines."""

    key: ShootStateKey
    # The key by reference (its copy in the garden, its digest): what reads the state is given this, not the key.
    key_reference: pulumi.Output[dict[str, Any]]
    object_key: pulumi.Output[str]
    restore: MachineRestore
    # What moves the control plane when the seed changes, which the shoot's API and restores wait for.
    moved: list[pulumi.Resource]


def state_keeping(
    name: str,
    values: ShootValues,
    record: Record,
    seed: SeedAccess | None,
    backup_data: pulumi.Output[dict[str, str]] | None,
    infra: InfrastructureProvider,
    garden: GardenAccess,
    parent: pulumi.Resource,
    after: Sequence[pulumi.Resource] = (),
) -> StateKeeping | None:
    """The shoot's state key (protected: the only one that opens the state) and the restore of its machines.

    `after`: what writes the seed namespace's `etcd-backup` Secret (the SecretSet), which the restore reads.

    The restore writes the machine objects of the latest state into a seed namespace that lost all of them (a seed
    rebuilt), so the MachineDeployments made next adopt the machines instead of making new ones. None for a shoot
    without an entry (self-hosted, or on a seed without backups).
    """
    if seed is None or backup_data is None or values.backup is None:
        return None
    tid = values.technical_id
    object_key = record.metadata.apply(lambda m: shoot_state.object_key(naming.backup_entry(tid, m["uid"])))
    # Its copy in the garden, beside the ShootState record, is what the upload, the restore and the migration read.
    where = {"namespace": values.project_namespace, "name": internal_secret_name(values.name, STATE_KEY)}
    copy = pulumi.Output.from_input(garden.cluster.reach).apply(lambda reach: {"kubeconfig": reach, **where})
    in_project = garden.project(values.project)
    key = ShootStateKey(
        f"{name}-shoot-state-key", copy, pulumi.ResourceOptions(parent=parent, protect=True, depends_on=in_project)
    )
    found = pulumi.Output.all(copy, key.digest).apply(lambda got: reference(got[0], got[1]))
    by_reference: pulumi.Output[dict[str, Any]] = pulumi.Output.secret(found)
    state = (object_key, by_reference)
    # The migration reads the bucket's credentials from the seed's Secret: it keeps no copy of the key.
    bucket = bucket_reference(seed, backup_data)
    moved = list(infra.control_plane_move(values, seed, bucket, state, garden.cluster, parent))
    restore = MachineRestore(
        f"{name}-machine-restore",
        seed_namespace=values.seed_namespace,
        deployments=sorted(d.name for pool in values.deployments.values() for d in pool),
        # By reference: the state keeps the seed's key once, in the SecretSet that writes the Secret first.
        backup_data=backup_reference(seed, values, backup_data),
        object_key=object_key,
        key=by_reference,
        seed=values.seed,
        seed_kubeconfig=seed.cluster.reach,
        opts=pulumi.ResourceOptions(
            parent=parent, depends_on=[seed.namespaces[values.seed_namespace], *seed.machine_crds, *moved, *after]
        ),
    )
    return StateKeeping(key, by_reference, object_key, restore, moved)


def etcd_backup_data(values: ShootValues, access: BackupAccess, record: Record) -> pulumi.Output[dict[str, str]]:
    """The `etcd-backup` Secret's data: the bucket's, and the prefix of the shoot's entry (its record's uid)."""
    tid = values.technical_id
    prefix = record.metadata.apply(lambda m: backup_restore.entry_prefix(naming.backup_entry(tid, m["uid"])))
    data = pulumi.Output.all(access.data, prefix).apply(lambda got: {**got[0], backup.KEY_PREFIX: got[1]})
    return pulumi.Output.secret(data)


def bucket_reference(seed: SeedAccess, data: pulumi.Output[dict[str, str]]) -> pulumi.Output[dict[str, Any]]:
    """The shoot's `etcd-backup` data by reference to its seed's bucket Secret and the entry's prefix (secret).

    For a migration onto the seed, which runs before the shoot's own `etcd-backup` Secret is written there.
    """
    held = seed.backup.held if seed.backup is not None else None
    if held is None:
        return data
    found = pulumi.Output.all(held, data).apply(
        lambda got: entry_store.reference(got[0]["kubeconfig"], got[0]["namespace"], got[1], got[0]["name"])
    )
    return pulumi.Output.secret(found)


def entry_secret(
    name: str,
    values: ShootValues,
    seed: SeedAccess,
    data: pulumi.Output[dict[str, str]] | None,
    parent: pulumi.Resource,
) -> EntrySecret | None:
    """The shoot's `etcd-backup` Secret written from its seed's bucket Secret (`<shoot>-etcd-backup`), where it has one.

    None without backups, or on a seed that holds no bucket Secret (its SecretSet writes it then).
    """
    if data is None or seed.backup is None or seed.backup.held is None:
        return None
    return EntrySecret(
        f"{name}-etcd-backup", source=bucket_reference(seed, data), kubeconfig=seed.cluster.reach,
        namespace=values.seed_namespace, cluster=seed.cluster.identifier,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=_namespace_ready(seed, values.seed_namespace)),
    )  # fmt: skip


def _namespace_ready(seed: SeedAccess, namespace: str) -> list[pulumi.Resource]:
    """The shoot's seed namespace and, where the bucket's role trusts its tokens, its `etcd-backup` ServiceAccount."""
    account = seed.backup_accounts.get(namespace)
    return [seed.namespaces[namespace], *([account] if account is not None else [])]


@overload
def backup_reference(
    seed: SeedAccess, values: ShootValues, data: pulumi.Output[dict[str, str]]
) -> pulumi.Output[dict[str, Any]]: ...
@overload
def backup_reference(seed: SeedAccess, values: ShootValues, data: None) -> None: ...
def backup_reference(
    seed: SeedAccess, values: ShootValues, data: pulumi.Output[dict[str, str]] | None
) -> pulumi.Output[dict[str, Any]] | None:
    """The shoot's `etcd-backup` Secret by reference (secret: the seed's kubeconfig may hold a token); None without.

    For what reaches the entry after the SecretSet wrote that Secret in the seed namespace, and reads it there: the
    state keeps the seed's key once (reconciler/entry_store.py).
    """
    if data is None:
        return None
    where = pulumi.Output.all(seed.cluster.reach, data)
    return pulumi.Output.secret(where.apply(lambda got: entry_store.reference(got[0], values.seed_namespace, got[1])))


def shoot_state_backup(
    name: str,
    values: ShootValues,
    record: Record,
    garden: ClusterAccess,
    seed: SeedAccess,
    secrets: PersistedSecrets,
    backup_data: pulumi.Output[dict[str, str]],
    kept: StateKeeping,
    parent: pulumi.Resource,
    after: Sequence[pulumi.Resource],
) -> list[pulumi.Resource]:
    """The ShootState record (owned by the Shoot record) and its upload, once the control plane and machines are."""
    planned = values.backup
    assert planned is not None  # only a shoot on a seed with backups has an entry
    state = api.shoot_state_record(values, planned, "")
    metadata = record.metadata.apply(lambda m: api.shoot_state_record(values, planned, m["uid"])["metadata"])
    spec = record.metadata.apply(lambda m: api.shoot_state_record(values, planned, m["uid"])["spec"])
    in_garden = pulumi.ResourceOptions(parent=parent, provider=garden.provider, depends_on=[record])
    described = KubeObject(f"{name}-shoot-state-record", {**state, "metadata": metadata, "spec": spec}, in_garden)
    upload = ShootStateBackup(
        f"{name}-shoot-state",
        shoot=values.name,
        namespace=values.project_namespace,
        seed_namespace=values.seed_namespace,
        secrets_digest=secrets.digest,
        sources=secrets.sources,
        backup_data=backup_reference(seed, values, backup_data),
        object_key=kept.object_key,
        key=kept.key_reference,
        seed_kubeconfig=seed.cluster.reach,
        garden_kubeconfig=garden.reach,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[described, kept.restore, *after]),
    )
    return [described, kept.key, kept.restore, upload]
