"""Local backups: seeds' buckets in the landscape's object store (MinIO on loopback, TLS), shoots' etcd snapshots.

One store per landscape, made by the landscape before its seeds' buckets and kept after the last, protected (it
holds every snapshot; `make down` removes it after every shoot and bucket is gone). A landscape sharded per seed
runs it in its garden stack; each seed stack makes its bucket there, reaching it by the garden stack's outputs. Each
seed's bucket gets the settings render/backup.py gives an S3 bucket on aws (versioning, SSE-S3, the lifecycle, a
policy refusing plain HTTP; less what MinIO does not know) and an identity whose policy is aws's backup identity's:
that bucket's objects, nothing else. On a seed arbor makes, that identity is a role its `etcd-backup` ServiceAccounts
assume with their tokens through MinIO's STS, as an EKS seed's do through AWS's (workload identity): the seed's API
server publishes its issuer's keys to anyone, as a cloud's issuer does, and the store trusts them for the seed's
audience. A seed given by kubeconfig keeps a user and its keys. kwok runs no etcd-backup-restore, so arbor snapshots
each hosted shoot's etcd into its entry itself (components/reconciler/etcd_snapshot.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import naming
from components.bundles import BackupAccess, ClusterAccess, HeldSecret, Issuer, SeedAccess
from components.plan.values import BackupValues, ShootValues
from components.providers.snapshot_step import snapshot_step
from components.reconciler.etcd_snapshot import EtcdSnapshot
from components.reconciler.object_store import ROOT_SECRET_NAMESPACE, ObjectStore, root_reference
from components.reconciler.shoot_migration import ShootMigration
from components.reconciler.store_bucket import StoreBucket, bucket_data
from components.render import backup
from components.render.backup import KEY_PREFIX

STORE = "local-object-store"
# The store's outputs a bucket is made with: where it listens, the CA it serves with, its root user, its directory
# (where it reads the CAs it trusts as a client). The root password a bucket reads in the garden (`rootSecret`).
STORE_REACH = ("endpoint", "caCert", "rootUser", "dir")
# What an older garden stack's export lacks: its buckets read as "" (a role's trust then names the cause).
OPTIONAL_REACH = ("dir",)
# Who may read a seed's issuer discovery document and keys: anyone, as from a cloud's issuer (Kubernetes' own role).
DISCOVERY_ROLE, DISCOVERY_GROUP = "system:service-account-issuer-discovery", "system:unauthenticated"


def object_store(workdir: str, stack: str, garden: ClusterAccess, parent: pulumi.Resource | None) -> ObjectStore:
    """The stack's object store: its process's files under `processes/`, its objects under `object-store/`.

    It writes its root credentials to the garden's `garden` namespace, made here with it.
    """
    namespace = k8s.core.v1.Namespace(
        f"{STORE}-namespace",
        # Gardener's `garden` namespace is its operators' project's, `garden`: the owner the policies ask for.
        metadata={"name": ROOT_SECRET_NAMESPACE, "labels": {naming.label("project"): ROOT_SECRET_NAMESPACE}},
        opts=pulumi.ResourceOptions(
            parent=parent, provider=garden.provider, depends_on=list(garden.ready), delete_before_replace=True
        ),
    )
    return ObjectStore(
        STORE,
        workdir=workdir,
        directory=os.path.join(workdir, "processes", f"{stack}-minio"),
        data_dir=os.path.join(workdir, "object-store", stack),
        writes={"kubeconfig": garden.reach, "cluster": garden.identifier},
        opts=pulumi.ResourceOptions(parent=parent, protect=True, depends_on=[namespace]),
    )


def root_secret(garden: ClusterAccess) -> pulumi.Output[dict[str, str]]:
    """Where buckets read the store's root credentials: the garden's Secret the store writes."""
    return garden.reach.apply(root_reference)


def exported_reach(store: ObjectStore) -> dict[str, pulumi.Output[str]]:
    """Where the store listens, its CA and root user: what a garden stack exports for its seed stacks' buckets."""
    return {key: getattr(store, key) for key in STORE_REACH}


def store_reach(store: ObjectStore, garden: ClusterAccess) -> dict[str, pulumi.Input[Any]]:
    """How a stack reaches its object store as its root user: a bucket's `store`."""
    return {**exported_reach(store), "rootSecret": root_secret(garden)}


def _field(key: str) -> Callable[[dict[str, str]], str]:
    """Reads one field of an exported map ("" for an optional one an older export has not)."""
    return lambda fields: str(fields.get(key, "") if key in OPTIONAL_REACH else fields[key])


def shared_reach(access: pulumi.Output[dict[str, str]], garden: ClusterAccess) -> dict[str, pulumi.Input[Any]]:
    """Another stack's store reach, exported whole (its garden stack's `objectStoreAccess`), key by key.

    Plain, as in the stack that runs the store, and the root credentials read in the same garden: a bucket moved into
    a seed stack is unchanged.
    """
    keys = {key: pulumi.Output.unsecret(access.apply(_field(key))) for key in STORE_REACH}
    return {**keys, "rootSecret": root_secret(garden)}


def store_bucket(
    values: BackupValues,
    reach: dict[str, pulumi.Input[Any]],
    holder: HeldSecret,
    after: list[pulumi.Resource],
    parent: pulumi.Resource,
    issuer: Issuer | None = None,
) -> BackupAccess:
    """The seed's bucket in the store `reach` names, its settings and identity; the `etcd-backup` data for its shoots.

    The bucket writes the seed's Secret of its identity (`holder`) itself: the state keeps a user's keys once.
    `after`: the store, when this stack runs it (a seed stack's is its garden stack's, there before it), and what
    the seed's issuer needs to be read; `issuer`: an existing seed's, as its spec names it.
    """
    aws_policy = partial(backup.aws_identity_policy, backup.STORE_PARTITION)
    policy = backup.store_role_policy if values.audience else aws_policy
    bucket = StoreBucket(
        f"{parent._name}-backup",
        store=reach,
        writes=holder.writes(),
        bucket=values.bucket,
        bucket_policy=json.dumps(backup.store_bucket_policy(values.bucket), sort_keys=True),
        identity_policy=json.dumps(policy(values.bucket), sort_keys=True),
        lifecycle=backup.store_lifecycle_rules(),
        audience=values.audience,
        issuer=issuer.url if issuer else None,
        # Protected as a cloud bucket is; its delete keeps the bucket and objects anyway.
        opts=pulumi.ResourceOptions(parent=parent, protect=True, depends_on=[*after, *holder.after]),
    )
    # A role's data is known from the plan and the store alone: a preview shows no change where there is none.
    keys = {} if values.audience else {"accessKey": bucket.accessKey, "secretKey": bucket.secretKey}
    fields = {"bucket": values.bucket, "audience": values.audience, "endpoint": reach["endpoint"],
              "caCert": reach["caCert"], **keys}  # fmt: skip
    data = pulumi.Output.all(**fields).apply(bucket_data)
    return BackupAccess(
        values.bucket, pulumi.Output.secret(data), ready=[*after, bucket], held=holder.reference(bucket)
    )


def issuer_discovery(seed: ClusterAccess, parent: pulumi.Resource) -> pulumi.Resource:
    """The seed's issuer discovery document and keys, readable without credentials: the store fetches them."""
    return k8s.rbac.v1.ClusterRoleBinding(
        f"{parent._name}-issuer-discovery",
        metadata={"name": f"{naming.API_GROUP}:service-account-issuer-discovery"},
        role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": DISCOVERY_ROLE},
        subjects=[{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": DISCOVERY_GROUP}],
        opts=pulumi.ResourceOptions(parent=parent, provider=seed.provider, depends_on=list(seed.ready)),
    )


class LocalBackups:
    """The local provider's backups: one object store per stack, a bucket per seed, snapshots per hosted shoot."""

    def __init__(self, workdir: str, backup_request: str) -> None:
        self.workdir, self.backup_request = workdir, backup_request
        self._reach: dict[str, pulumi.Input[Any]] | None = None
        self._after: list[pulumi.Resource] = []

    def object_store(self, garden: ClusterAccess, parent: pulumi.Resource) -> ObjectStore:
        """The stack's object store (under `parent`, the landscape), before any seed's bucket is made in it."""
        store = object_store(self.workdir, pulumi.get_stack(), garden, parent)
        self._reach, self._after = store_reach(store, garden), [store]
        return store

    def share_store(self, access: pulumi.Output[dict[str, str]], garden: ClusterAccess) -> None:
        """Seeds' buckets go into another stack's store: a sharded landscape's one store, run by its garden stack."""
        self._reach = shared_reach(access, garden)

    def backup_bucket(
        self, values: BackupValues, seed: ClusterAccess, holder: HeldSecret, parent: pulumi.Resource
    ) -> BackupAccess:
        """The seed's bucket in the landscape's object store: this stack's, or the garden stack's it was given."""
        assert self._reach is not None, "the landscape makes or shares the store before any seed's bucket"
        # A seed arbor made publishes its issuer here; an existing one's is published by whoever runs it.
        published = [issuer_discovery(seed, parent)] if values.audience and seed.issuer is None else []
        return store_bucket(values, self._reach, holder, [*self._after, *published], parent, seed.issuer)

    def control_plane_move(
        self,
        shoot: ShootValues,
        seed: SeedAccess,
        backup: pulumi.Output[dict[str, Any]],
        state: tuple[pulumi.Output[str], pulumi.Output[dict[str, Any]]],
        garden: ClusterAccess,
        parent: pulumi.Resource,
    ) -> Sequence[pulumi.Resource]:
        """The shoot's ShootMigration, recording its seed: a new one moves it (reconciler/shoot_migration.py)."""
        assert shoot.seed is not None  # only a hosted shoot has a seed to move from
        migration = ShootMigration(
            f"{parent._name}-migration", shoot=shoot.name, namespace=shoot.project_namespace, seed=shoot.seed,
            seed_namespace=shoot.seed_namespace, seed_kubeconfig=seed.cluster.reach, garden_kubeconfig=garden.reach,
            backup_data=backup, object_key=state[0], key=state[1], cluster=shoot.cluster.name, workdir=self.workdir,
            opts=pulumi.ResourceOptions(parent=parent),
        )  # fmt: skip
        return [migration]

    def etcd_snapshots(
        self,
        shoot: ShootValues,
        seed: SeedAccess,
        backup: pulumi.Output[dict[str, str]],
        entry: pulumi.Output[str],
        garden: ClusterAccess,
        risky: Sequence[pulumi.Input[str]],
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> Sequence[pulumi.Resource]:
        """Full snapshots of the shoot cluster's etcd (kwok runs no etcd-backup-restore) into its entry.

        The daily ones (EtcdSnapshot), and one as a command step whenever `risky` changes, which the preview lists.
        """
        opts = pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on))
        cluster, namespace, prefix = shoot.cluster.name, shoot.project_namespace, backup.apply(lambda d: d[KEY_PREFIX])
        daily = EtcdSnapshot(
            f"{parent._name}-etcd-snapshot", cluster=cluster, workdir=self.workdir, backup_data=backup, prefix=prefix,
            entry=entry, entry_namespace=namespace, garden_kubeconfig=garden.reach, request=self.backup_request,
            opts=opts,
        )  # fmt: skip
        request = pulumi.Output.all(backup, prefix, entry, garden.reach).apply(
            lambda got: {
                "cluster": cluster, "workdir": self.workdir, "entryNamespace": namespace, "backup": got[0],
                "prefix": got[1], "entry": got[2], "gardenKubeconfig": got[3],
            }
        )  # fmt: skip
        before = snapshot_step(
            parent._name, request, risky, pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[daily]))
        )
        return [daily, before]
