"""The Seed component (`arbor:seed:Seed`): a cluster that hosts shoot control planes.

It records the seed in the garden, installs the machine CRDs (machine.sapcloud.io, components/render/machine_crds.py)
that every hosted shoot's machine-controller-manager works on and the ManagedResource CRD its resource manager
needs, and creates, per hosted shoot, the namespace `shoot--<project>--<shoot>` that holds the shoot's control plane
and worker machinery. A cloud seed holds the StorageClass its shoots' etcd volumes are claimed from
(components/render/storage.py). A seed with `backup` gets its bucket in that provider's object store (protected and
retained) and the BackupBucket record in the garden. Each extension installation gets its namespace and workloads,
and its own garden access (components/concerns/extensions.py).
"""

from __future__ import annotations

import dataclasses

import pulumi
import pulumi_kubernetes as k8s

from components import naming
from components.bundles import BackupAccess, ClusterAccess, GardenAccess, HeldSecret, SeedAccess
from components.concerns.extensions import install_extensions
from components.concerns.objects import KubeObject
from components.concerns.workers import machine_kinds
from components.plan.values import SeedValues
from components.providers.contract import InfrastructureProvider
from components.reconciler.secret_set import SecretSet
from components.render import api, backup, resource_manager, storage


class Seed(pulumi.ComponentResource):
    """One seed layer."""

    access: SeedAccess

    def __init__(
        self,
        name: str,
        values: SeedValues,
        infra: InfrastructureProvider,
        garden: GardenAccess,
        opts: pulumi.ResourceOptions | None = None,
        *,
        backups: InfrastructureProvider | None = None,
    ) -> None:
        super().__init__("arbor:seed:Seed", name, None, opts)
        cluster = infra.cluster(values.cluster, parent=self)
        record = api.seed_record(values)
        KubeObject(
            f"{name}-record",
            record,
            opts=pulumi.ResourceOptions(parent=self, provider=garden.cluster.provider, depends_on=garden.api),
        )
        namespaces = {
            ns: k8s.core.v1.Namespace(
                f"{name}-{ns}",
                metadata={"name": ns, "labels": {"gardener.cloud/role": "shoot", naming.label("seed"): values.name}},
                opts=pulumi.ResourceOptions(
                    parent=self, provider=cluster.provider, depends_on=list(cluster.ready), delete_before_replace=True
                ),
            )
            for ns in values.shoot_namespaces
        }
        on_cluster = pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=list(cluster.ready))
        crds = machine_kinds(name, on_cluster)
        # gardener-resource-manager's always-on controllers watch ManagedResources, though none is made.
        resource_crds = [
            KubeObject(f"{name}-crd-managedresources", resource_manager.managed_resource_crd(), on_cluster)
        ]
        etcd_storage = [
            KubeObject(f"{name}-storage-class", sc, on_cluster)
            for sc in storage.storage_classes(values.cluster.provider)
        ]
        install_extensions(name, values, cluster, garden, self)
        bucket = self._backup(name, values, backups, garden, cluster)
        accounts = {
            ns: KubeObject(f"{name}-{ns}-{backup.SERVICE_ACCOUNT}", backup.service_account(ns),
                           opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[made]))
            for ns, made in namespaces.items()
            if values.backup is not None and values.backup.audience is not None
        }  # fmt: skip
        self.access = SeedAccess(
            values.name,
            cluster,
            namespaces,
            backup_accounts=accounts,
            machine_crds=crds,
            resource_crds=resource_crds,
            etcd_storage=etcd_storage,
            backup=bucket,
        )
        self.register_outputs({"endpoint": cluster.endpoint, "shootNamespaces": sorted(namespaces)})

    def _backup(
        self,
        name: str,
        values: SeedValues,
        backups: InfrastructureProvider | None,
        garden: GardenAccess,
        cluster: ClusterAccess,
    ) -> BackupAccess | None:
        """The seed's backup bucket in its provider's object store, and its BackupBucket record once it exists.

        The seed holds the bucket's credentials as gardenlet does, in `garden/bucket-<bucket>`: a shoot's migration
        onto this seed reads them there before the shoot's own `etcd-backup` Secret exists, so it keeps no copy.
        The bucket's identity writes that Secret where it can (the local store's user); else the seed's set does.
        """
        if values.backup is None or backups is None:
            return None
        namespace = k8s.core.v1.Namespace(
            f"{name}-{backup.SEED_GARDEN_NAMESPACE}",
            metadata={"name": backup.SEED_GARDEN_NAMESPACE, "labels": {naming.label("seed"): values.name}},
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=list(cluster.ready)),
        )
        secret = backup.bucket_secret(values.backup.bucket)
        after: list[pulumi.Resource] = [namespace]
        if values.backup.audience is not None:
            # arbor's own reads of the bucket through this Secret assume its role as this ServiceAccount.
            account = backup.service_account(backup.SEED_GARDEN_NAMESPACE)
            on_namespace = pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[namespace])
            after.append(KubeObject(f"{name}-{backup.SEED_GARDEN_NAMESPACE}-{backup.SERVICE_ACCOUNT}", account,
                                    opts=on_namespace))  # fmt: skip
        holder = HeldSecret(cluster.reach, backup.SEED_GARDEN_NAMESPACE, secret, cluster.identifier, after)
        access = backups.backup_bucket(values.backup, cluster, holder, parent=self)
        KubeObject(
            f"{name}-backup-record",
            api.backup_bucket_record(values.backup),
            opts=pulumi.ResourceOptions(
                parent=self, provider=garden.cluster.provider, depends_on=[*garden.api, *access.ready]
            ),
        )
        # Written by the identity, the set stays, empty: its deletion would remove the Secret it handed over.
        written = access.held is not None
        held = SecretSet(
            f"{name}-bucket-secret",
            kubeconfig=cluster.reach,
            namespace=backup.SEED_GARDEN_NAMESPACE,
            secrets={} if written else access.data.apply(lambda data: {secret: data}),
            others=[secret] if written else [],
            cluster=cluster.identifier,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*after, *access.ready]),
        )
        return access if written else dataclasses.replace(access, held=holder.reference(held))
