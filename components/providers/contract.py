"""The contract every infrastructure provider (local, gcp, aws) fulfils, and the data it hands back.

Layer components ask a provider for what they need and get plain data bundles back, never the provider
itself: the next layer depends on the bundle only (as pulumi-eks hands on its cluster outputs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import pulumi

from components.bundles import (
    BackupAccess,
    ClusterAccess,
    ExposedControlPlane,
    HeldSecret,
    Issuer,
    MachineCredentials,
    NetworkAccess,
    ResourceManagerServing,
    SeedAccess,
    ServingSecret,
)
from components.plan.network import NetworkPlan
from components.plan.values import BackupValues, ClusterValues, LocalNode, ShootValues, ZoneDeployment
from components.render.machines import Object, Sidecar


class InfrastructureProvider(Protocol):
    """What a cloud (or the local runtime) provides to the layers."""

    def cluster(
        self,
        values: ClusterValues,
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource] = (),
        *,
        encryption_config: pulumi.Input[str] | None = None,
    ) -> ClusterAccess:
        """Registers a garden or seed cluster (created or existing), and a Kubernetes provider for it.

        `encryption_config` is the EncryptionConfiguration its API server runs, where arbor runs that server.
        """
        ...

    def reference(
        self, values: ClusterValues, parent: pulumi.Resource, kubeconfig: pulumi.Output[str], reach: pulumi.Output[str]
    ) -> ClusterAccess:
        """A cluster another stack registered, reached by the kubeconfig (and file reference) that stack exports.

        Its Kubernetes provider has the name and settings `cluster` gives it, so resources moved here keep theirs.
        """
        ...

    def network(self, plan: NetworkPlan, parent: pulumi.Resource) -> NetworkAccess:
        """The shoot's infrastructure network (VPC, subnets, gateways, routes, firewall), in place on migration."""
        ...

    def publish_static_pods(
        self,
        access: ClusterAccess,
        pool: str,
        manifests: Mapping[str, pulumi.Output[dict[str, Any]]],
        parent: pulumi.Resource,
    ) -> list[pulumi.Resource]:
        """Makes a self-hosted shoot's static pods visible in its API as kubelet's mirror pods would be.

        Real machines' kubelets publish mirror pods themselves (nothing to do); on local, kwok nodes run no kubelet.
        """
        ...

    def machine_directory(self, values: ClusterValues) -> str | None:
        """Where a cluster's machine keeps the credentials and keys arbor writes as files, or None.

        Local: beside the cluster, on this machine (a self-hosted shoot's PKI and encryption keys, the garden's
        encryption keys). A cloud machine is not arbor's to write to: a self-hosted shoot's gets them at its first
        boot (concerns/first_machine.py).
        """
        ...

    def shoot_api(
        self,
        values: ClusterValues,
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource] = (),
        *,
        encryption_config: pulumi.Input[str | dict[str, str]] | None = None,
        client_ca: pulumi.Input[str] | None = None,
        machines: Sequence[LocalNode] = (),
        kubeconfig: pulumi.Input[str] | None = None,
        pki: pulumi.Input[dict[str, str]] | None = None,
        restore: pulumi.Input[dict[str, str]] | None = None,
    ) -> ClusterAccess:
        """Access to the API a shoot's control plane serves, with its nodes.

        `machines` are the nodes a provider that simulates machines makes itself (local: each pool's minimum, as
        the plan holds them, named and addressed). `kubeconfig` reaches arbor's own kube-apiserver at the shoot's
        domain, where that server is what clients reach (clouds); a provider that serves the API itself ignores it.
        Such a provider (local) serves it with `pki` (the shoot's CA and service-account key) and makes a lost API
        again from the newest snapshot in the backup entry `restore` names (the `etcd-backup` data); clouds ignore
        both: there etcd-backup-restore restores etcd, and the control plane's Secrets carry the PKI.
        """
        ...

    def machine_sidecar(self, namespace: str) -> Sidecar:
        """The provider's container beside the generic machine-controller-manager in a shoot's seed namespace."""
        ...

    def machine_class(self, shoot: ShootValues, d: ZoneDeployment, network: NetworkAccess) -> Object:
        """The MachineClass of one pool's zone, pointing at the shoot's infrastructure (subnet, nodes' identity).

        Metadata is plain (the preview names the class); the providerSpec may wait for the cloud's IDs.
        """
        ...

    def machine_credentials(
        self, shoot: ShootValues, network: NetworkAccess, seed: ClusterAccess, parent: pulumi.Resource
    ) -> MachineCredentials | None:
        """The identity the provider's sidecar creates machines with, made by arbor with least privilege.

        Where `shoot.machine_audience` is set, one MCM's ServiceAccount in `seed` uses with its tokens (workload
        identity: no key). None where machines need nothing of a cloud (local).
        """
        ...

    def shoot_issuer(
        self, shoot: ShootValues, public_key: pulumi.Output[str], parent: pulumi.Resource
    ) -> Issuer | None:
        """A self-hosted shoot's token issuer as its cloud trusts it, from its service-account key's public half.

        What its machines' identity trusts where `shoot.machine_audience` is set (render/service_account_issuer.py);
        None elsewhere (local, pasted credentials).
        """
        ...

    def machine_controller(
        self,
        shoot: ShootValues,
        seed: SeedAccess,
        shoot_api: ClusterAccess,
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> Sequence[pulumi.Resource]:
        """What runs machine-controller-manager for a hosted shoot where no seed runs its Deployment (local).

        Empty where the seed's kubelets run the Deployment (clouds).
        """
        ...

    def resource_manager(
        self,
        shoot: ShootValues,
        seed: SeedAccess,
        shoot_api: ClusterAccess,
        serving: ServingSecret,
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> ResourceManagerServing | None:
        """What runs a hosted shoot's gardener-resource-manager where no seed runs its Deployment (local).

        None where the seed's kubelets run the Deployment (clouds). `serving` is its serving certificate's Secret in
        the seed namespace (read there: the state keeps no copy of its key).
        """
        ...

    def control_plane_machine(
        self, shoot: ShootValues, network: NetworkAccess, bundle: pulumi.Output[str], parent: pulumi.Resource
    ) -> ExposedControlPlane:
        """A self-hosted shoot's control-plane machine made directly (no MCM runs before its API), and its balancer.

        `bundle` is its packed first boot (render/first_boot.py), kept where only that machine may read it. Local
        self-hosted shoots' nodes are kwok nodes arbor registers (`shoot_api`'s machines): not called there.
        """
        ...

    def backup_bucket(
        self, values: BackupValues, seed: ClusterAccess, holder: HeldSecret, parent: pulumi.Resource
    ) -> BackupAccess:
        """A seed's backup bucket in this provider's object store, and an identity that may use that bucket alone.

        The bucket is protected and outlives its seed in the cloud (retained): backups are never deleted with it.
        Where `values.audience` is set, the identity is a role the `etcd-backup` ServiceAccounts of `seed` assume
        through its issuer (workload identity), so no key exists. An identity that writes the seed's Secret of its
        credentials itself (`holder`) says so by `held`; for any other the seed writes it from `data`.
        """
        ...

    def control_plane_move(
        self,
        shoot: ShootValues,
        seed: SeedAccess,
        backup: pulumi.Output[dict[str, Any]],
        state: tuple[pulumi.Output[str], pulumi.Output[dict[str, Any]]],
        garden: ClusterAccess,
        parent: pulumi.Resource,
    ) -> Sequence[pulumi.Resource]:
        """What moves a hosted shoot's control plane to `seed` when its seed changes: Gardener's migrate half.

        The shoot's API, its machine restore and everything on the new seed wait for it. `state` is the shoot
        state's object and key. Empty where arbor cannot move a control plane yet (the checks refuse the change).
        """
        ...

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
        """A hosted shoot's full etcd snapshots into its entry that etcd-backup-restore does not take itself.

        Local: the daily ones too (no etcd-backup-restore runs there). Everywhere: one as a step of its own
        (providers/snapshot_step.py) whenever `risky` (what a step that risks data follows: the minor version, the
        encryption configuration) changes; what risks data waits for the returned resources. `backup` is the
        `etcd-backup` Secret's data (with the entry's prefix), `entry` the BackupEntry's name, whose status names
        the latest full snapshot.
        """
        ...
