"""ShootMigration: a hosted shoot's control plane moved to another seed, as Gardener's migrate and restore flow does.

The resource records the seed a shoot's control plane is on, with that seed's kubeconfig and the shoot's entry in
that seed's bucket. Made with the shoot, it does nothing. When `shoots[].seed` changes, its update runs the migrate
half on the source (the previous inputs) before anything of the shoot reaches the target (the new ones):

1. stop machine-controller-manager and its sidecar on the source, so nothing acts on the machines meanwhile;
2. stop the shoot's API and take a final full snapshot of its etcd into the source entry; copy it into the target
   entry, where the restore finds it as the newest;
3. upload the shoot's state (persisted secrets and the source's live machines) into the target entry;
4. release the source namespace's machine objects from MCM's finalizers and delete them (the machines run on);
5. delete the shoot's cluster on the source: never two live etcds.

The restore half is the shoot's own resources, which wait for this one: its cluster is made again from the copied
snapshot with the shoot's PKI (reconciler/shoot_cluster.py), its machine objects are written into the target
namespace from the state before the MachineDeployments (MachineRestore), and MCM adopts the running machines. The
source namespace is deleted last, when the engine deletes what the source seed no longer hosts. The Shoot record's
last operation says Migrate, then Restore, then (ShootStatus) Reconcile.

Each step is safe to repeat, so a run killed anywhere is finished by the next `up` (the update runs again until it
is recorded): a cluster already gone is not snapshotted (its copy is in the target entry), a state is uploaded only
while the source still holds machine objects, a copy already there is not made again.

The engine stores the provider pickled by reference to this module: keep its path and class names.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.naming import API_GROUP, API_VERSION
from components.reconciler import kwokctl, local_process, machines_released, shoot_cluster, shoot_state, state_key
from components.reconciler.entry_store import StoreError, entry_store, given_whole_before
from components.reconciler.etcd_snapshot import LAYOUT, rfc3339
from components.reconciler.kube import Kube, KubeError
from components.reconciler.provider import Provider
from components.render import backup, machine_crds, machine_providers, machines
from components.render import shoot_state as rendered

PROVIDER_VERSION = "1"
# The supervised processes of a shoot that act on its machine objects.
MACHINE_PROCESSES = (machines.MCM_NAME, machine_providers.KWOK_SIDECAR)
# Inputs that say where the control plane is: a change is a migration.
PLACE = ("seed",)


class MigrationError(Exception):
    """A migration step that failed; the message names the step and the shoot, never a key."""


def _operation(props: dict[str, Any], kind: str, description: str) -> None:
    """Writes the Shoot record's last operation (Migrate or Restore, processing)."""
    path = f"/apis/{API_GROUP}/{API_VERSION}/namespaces/{props['namespace']}/shoots/{props['shoot']}/status"
    operation = {"type": kind, "state": "Processing", "progress": 0, "description": description,
                 "lastUpdateTime": rfc3339(datetime.now(UTC))}  # fmt: skip
    try:
        Kube.from_kubeconfig(props["gardenKubeconfig"]).merge_patch(path, {"status": {"lastOperation": operation}})
    except KubeError as error:
        raise MigrationError(f"shoot {props['namespace']}/{props['shoot']}: {error}") from None


def _copy_snapshot(source: dict[str, Any], target: dict[str, Any]) -> str | None:
    """Copies the source entry's newest full snapshot into the target entry unless it is there; its target key."""
    src, dst = source["backup"], target["backup"]
    try:
        latest = shoot_cluster.latest_snapshot(src)
        if latest is None:
            return None
        key: str = dst[backup.KEY_PREFIX] + latest.removeprefix(src[backup.KEY_PREFIX])
        # Listed, not asked with `present`: a store that cannot answer must stop the move, not pass for a copy.
        target_store = entry_store(dst)
        if key not in target_store.keys(f"{dst[backup.KEY_PREFIX]}/{LAYOUT}/"):
            target_store.put(key, *entry_store(src).get(latest))
    except (StoreError, shoot_cluster.RestoreError) as error:
        raise MigrationError(f"copying the final snapshot: {error}") from None
    return key


def _state(source: dict[str, Any], target: dict[str, Any]) -> None:
    """The shoot's state in the target entry: the secrets of its latest state, the source's live machines."""
    if not any(shoot_state.live_machines(source).values()) and entry_store(target["backup"]).present(target["object"]):
        return  # uploaded by a run that went on to delete the source's machines
    secrets = shoot_state.fetch(source)["secrets"]
    into = {**source, "backup": target["backup"], "object": target["object"], "checksum": None}
    shoot_state.upload(into, secrets)


def _remove_machines(source: dict[str, Any]) -> None:
    """Releases the source namespace from MCM's finalizers and deletes its machine objects (not the machines)."""
    seed, namespace = Kube.from_kubeconfig(source["seedKubeconfig"]), source["seedNamespace"]
    machines_released.release(seed, namespace)
    base = f"/apis/{machine_crds.GROUP}/{machine_crds.VERSION}/namespaces/{namespace}"
    for kind in rendered.MACHINE_KINDS:
        for item in (seed.find(f"{base}/{kind}") or {}).get("items") or []:
            seed.delete(f"{base}/{kind}/{item['metadata']['name']}")


def migrate(source: dict[str, Any], target: dict[str, Any]) -> dict[str, Any]:
    """The migrate half, from the source seed to the target's entry (see the module); what it did."""
    _operation(target, "Migrate", f"Migrating the control plane from seed {source['seed']} to {target['seed']}.")
    for program in MACHINE_PROCESSES:
        local_process.stop({"dir": local_process.process_dir(source["workdir"], source["cluster"], program)})
    cluster = kwokctl.Cluster(source["cluster"], source["workdir"])
    final = shoot_cluster.final_snapshot(cluster, source["backup"]) if cluster.exists() else None
    copied = _copy_snapshot(source, target)
    try:
        _state(source, target)
        _remove_machines(source)
    except (shoot_state.StateError, KubeError, StoreError) as error:
        raise MigrationError(f"moving the state of {source['seedNamespace']}: {error}") from None
    if cluster.exists() and (final is None or copied is None) and kwokctl.holds_data(cluster):
        raise MigrationError(f"cluster '{cluster.name}' is kept: its final snapshot is not in the target entry")
    kwokctl.delete(cluster)
    _operation(target, "Restore", f"Restoring the control plane on seed {target['seed']}.")
    return {"finalSnapshot": copied, "migratedFrom": source["seed"]}


class ShootMigrationProvider(Provider):
    """Where a hosted shoot's control plane is; moving it runs the migrate half."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Records the seed: a new shoot has nothing to move."""
        return CreateResult(id_=f"{props['namespace']}/{props['shoot']}", outs=props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """A new seed is a migration (an update); other inputs follow along with it or the logic version."""
        moved = [k for k in PLACE if olds.get(k) != news.get(k)]
        # The shoot state's key given by reference now: the update keeps that instead of the key.
        changed = bool(moved) or olds.get("version") != news.get("version") or state_key.by_reference_now(olds, news)
        # The `etcd-backup` data by reference to the seed's bucket Secret now: the update keeps no copy of the key.
        changed = changed or given_whole_before(olds.get("backup"), news.get("backup"))
        return DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Migrates when the seed changed; else records the new inputs."""
        if olds.get("seed") == news.get("seed"):
            return UpdateResult(outs={**olds, **news})
        return UpdateResult(outs={**news, **migrate(olds, news)})

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """As recorded: where the control plane is changes only by an update."""
        return ReadResult(id_=id_, outs=props)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Nothing: the shoot's deletion deletes its parts."""


class ShootMigration(Resource, module="arbor", name="ShootMigration"):
    """The seed a hosted shoot's control plane is on; `backup` (the entry's `etcd-backup` data) and `key` are secret."""

    if TYPE_CHECKING:
        seed: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        shoot: str,
        namespace: str,
        seed: str,
        seed_namespace: str,
        seed_kubeconfig: pulumi.Input[str],
        garden_kubeconfig: pulumi.Input[str],
        backup_data: pulumi.Input[dict[str, str]],
        object_key: pulumi.Input[str],
        key: pulumi.Input[dict[str, Any]],
        cluster: str,
        workdir: str,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "shoot": shoot, "namespace": namespace, "seed": seed, "seedNamespace": seed_namespace,
            "seedKubeconfig": seed_kubeconfig, "gardenKubeconfig": garden_kubeconfig, "backup": backup_data,
            "object": object_key, "key": key, "cluster": cluster, "workdir": workdir, "version": PROVIDER_VERSION,
            "finalSnapshot": None, "migratedFrom": None,
        }  # fmt: skip
        secret = pulumi.ResourceOptions(additional_secret_outputs=["backup", "key"])
        super().__init__(ShootMigrationProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret))
