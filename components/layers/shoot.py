"""The Shoot component (`arbor:shoot:Shoot`): a cluster users get, in the order of Gardener's reconciliation.

Flow, each step depending only on what it needs: the Shoot record -> infrastructure (the shoot's network: VPC,
subnets, gateways; nothing on local) -> credentials (PKI) -> the control plane -> the shoot's API and nodes
(workers) -> system components in kube-system (the network plugin, kube-proxy, CoreDNS) -> health (ShootStatus
writes the record's status).

A hosted shoot's control plane runs in its seed namespace: etcd main and events, then kube-apiserver, then
kube-controller-manager and kube-scheduler, with their credentials as Secrets beside them; its
gardener-resource-manager serves the KUBERNETES_SERVICE_HOST webhook once the shoot's API serves. A self-hosted
shoot's control plane is the same pod specs as static pods, delivered with their credentials as files through
the control-plane pool's OperatingSystemConfig (concerns/control_plane.py wires both). On a seed with backups, the
shoot's BackupEntry record follows its Shoot record, and `etcd-backup` joins the control plane's Secrets.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi

from components import naming
from components.bundles import ClusterAccess, GardenAccess, NetworkAccess, SeedAccess
from components.concerns import first_machine
from components.concerns.access import register_client_ca
from components.concerns.control_plane import (
    NodeCas,
    Sources,
    control_plane_secrets,
    hosted_control_plane,
    node_cas,
    node_configuration,
    static_control_plane,
)
from components.concerns.encryption import EtcdEncryption, etcd_encryption, rewrite
from components.concerns.exposure import api_records, arbor_kubeconfig, service_address
from components.concerns.extensions import grant_shoot_records
from components.concerns.node_agent_access import node_agent_access
from components.concerns.objects import KubeObject, Record
from components.concerns.resource_manager import resource_manager
from components.concerns.shoot_pki import SecretTarget, ShootPki, issue_shoot_pki
from components.concerns.shoot_state import (
    StateKeeping,
    backup_reference,
    entry_secret,
    etcd_backup_data,
    persisted_secrets,
    shoot_state_backup,
    state_keeping,
)
from components.concerns.system import system_components
from components.concerns.workers import Workers, in_shoot_workers
from components.plan import network
from components.plan.bootstrap import secret_name
from components.plan.values import ShootValues
from components.providers.contract import InfrastructureProvider
from components.reconciler.gather import gathered
from components.reconciler.secret_places import DIRECTORY
from components.reconciler.shoot_status import ShootStatus
from components.render import api, backup, controlplane, nodeagent, pki


class Shoot(pulumi.ComponentResource):
    """One shoot, hosted on a seed or self-hosted, reconciled in the order of Gardener's shoot flow."""

    values: ShootValues
    access: ClusterAccess
    network: NetworkAccess
    network_table: str
    credentials: ShootPki
    encryption: EtcdEncryption
    status: ShootStatus
    # What writes each of a hosted control plane's Secrets that its certificates do not: the SecretSet.
    written: dict[str, pulumi.Resource]
    # Where the credentials write their Secrets (a seed namespace, a machine directory); None: nowhere.
    secret_target: SecretTarget | None

    def __init__(
        self,
        name: str,
        values: ShootValues,
        infra: InfrastructureProvider,
        garden: GardenAccess,
        seed: SeedAccess | None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("arbor:shoot:Shoot", name, None, opts)
        self.values, self.last_steps = values, list[pulumi.Resource]()
        record = self._record(name, garden)
        self.network = self._infrastructure(infra)
        target = self.secret_target = self._secret_target(infra, seed)
        self.encryption = etcd_encryption(name, values.encryption, parent=self, target=target)
        extra: dict[str, pulumi.Output[dict[str, str]]] = {}
        if seed is not None and seed.backup is not None:
            # etcd main's backup-restore reads the bucket's credentials and the entry's prefix from it.
            extra[backup.ETCD_BACKUP_SECRET] = etcd_backup_data(values, seed.backup, record)
        self.credentials = self._credentials(name, garden, seed, target, extra)
        sources = {**self._sources(self.credentials), **extra}
        backup_data = extra.get(backup.ETCD_BACKUP_SECRET)
        writer = [self.written[backup.ETCD_BACKUP_SECRET]] if backup_data is not None else []
        kept = state_keeping(name, values, record, seed, backup_data, infra, garden, self, after=writer)
        steps = self._hosted(name, infra, seed, sources, kept) if seed else self._self_hosted(name, infra, sources)
        entry = self._backup_entry(name, garden, record, seed)
        entry += self._snapshots(infra, seed, garden, record, extra, entry)
        # After the last steps (the machines, the webhook): they come after every other (a URN fewer per step).
        state = self._state(name, garden, record, seed, extra, kept, after=self.last_steps or steps)
        # An encryption rewrite waits for the snapshot taken right before it.
        rewritten = rewrite(name, self.encryption, self.access.reach, parent=self, depends_on=entry)
        # In kube-system: `shoot-info`, kube-apiserver's kubelet user, the network plugin, kube-proxy, CoreDNS.
        system = system_components(name, values, self.access, self.network, parent=self)
        grant_shoot_records(name, values, garden, record, self)
        converged = [record, *entry, *state, *system, rewritten, *([] if state else steps)]  # the state after steps
        self.status = self._health(name, garden, seed, converged)
        self.register_outputs(
            {"endpoint": self.access.endpoint, "state": self.status.state, "ranges": self.network.ranges}
        )

    def _record(self, name: str, garden: GardenAccess) -> Record:
        """The Shoot record in its project's garden namespace."""
        project = garden.project(self.values.project)
        opts = pulumi.ResourceOptions(parent=self, provider=garden.cluster.provider, depends_on=project)
        return Record(f"{name}-record", api.shoot_record(self.values), opts=opts)

    def _backup_entry(
        self, name: str, garden: GardenAccess, record: Record, seed: SeedAccess | None
    ) -> list[pulumi.Resource]:
        """The BackupEntry record `<technical id>--<uid>` of a shoot on a seed with backups, owned by its Shoot.

        The uid is the Shoot record's: a shoot made again under the same name never writes into the old entry.
        """
        planned = self.values.backup
        if seed is None or seed.backup is None or planned is None:
            return []
        entry = api.backup_entry_record(self.values, planned, "")
        # Its name and owner reference wait for the uid the garden's API server gave the Shoot record.
        metadata = record.metadata.apply(lambda m: api.backup_entry_record(self.values, planned, m["uid"])["metadata"])
        opts = pulumi.ResourceOptions(parent=self, provider=garden.cluster.provider, depends_on=[record])
        return [KubeObject(f"{name}-backup-entry", {**entry, "metadata": metadata}, opts)]

    def _snapshots(
        self,
        infra: InfrastructureProvider,
        seed: SeedAccess | None,
        garden: GardenAccess,
        record: Record,
        extra: dict[str, pulumi.Output[dict[str, str]]],
        entry: list[pulumi.Resource],
    ) -> list[pulumi.Resource]:
        """Full snapshots of etcd into the shoot's entry (local: taken by arbor), after the entry and `etcd-backup`."""
        if not entry or seed is None:
            return []
        tid = self.values.technical_id
        name = record.metadata.apply(lambda m: naming.backup_entry(tid, m["uid"]))
        data = backup_reference(seed, self.values, extra[backup.ETCD_BACKUP_SECRET])
        minor = ".".join(self.values.kubernetes_version.split(".")[:2])
        risky: list[pulumi.Input[str]] = [minor, self.encryption.config_hash]
        depends = [*entry, *self.access.ready, self.written[backup.ETCD_BACKUP_SECRET]]
        return list(infra.etcd_snapshots(self.values, seed, data, name, garden.cluster, risky, self, depends))

    def _state(
        self,
        name: str,
        garden: GardenAccess,
        record: Record,
        seed: SeedAccess | None,
        extra: Sources,
        kept: StateKeeping | None,
        after: Sequence[pulumi.Resource],
    ) -> list[pulumi.Resource]:
        """The shoot's state (persisted secrets, machines) sealed in its entry, after its control plane and machines."""
        if seed is None or kept is None:
            return []
        secrets = persisted_secrets(self.credentials, self.encryption.secret_data())
        data = extra[backup.ETCD_BACKUP_SECRET]
        return shoot_state_backup(name, self.values, record, garden.cluster, seed, secrets, data, kept, self, after)

    def _infrastructure(self, infra: InfrastructureProvider) -> NetworkAccess:
        """The shoot's network, first: the control plane and nodes need it; its table reaches the preview."""
        self.network_table = network.table(self.values.network_plan)
        # An info diagnostic on the shoot: reviewers read it in the preview (and its JSON).
        pulumi.log.info(network.PLAN_PREFIX + self.network_table, resource=self)
        return infra.network(self.values.network_plan, parent=self)

    def _secret_target(self, infra: InfrastructureProvider, seed: SeedAccess | None) -> SecretTarget | None:
        """Where the credentials and encryption keys write their Secrets: a seed namespace, a local machine or none."""
        if seed is None:
            return SecretTarget.on_machine(infra, self.values.cluster)
        namespace = self.values.seed_namespace
        after = [seed.namespaces[namespace]]
        return SecretTarget(seed.cluster.reach, namespace, after=after, cluster=seed.cluster.identifier)

    def _credentials(
        self, name: str, garden: GardenAccess, seed: SeedAccess | None, target: SecretTarget | None, extra: Sources
    ) -> ShootPki:
        """The shoot's PKI (writing its Secrets in the seed namespace when hosted); the client CA also in the garden.

        A hosted shoot's other Secrets (`extra` besides its CAs', keys', encryption's and entry's) are one SecretSet
        (none left on a seed with a bucket Secret), written before the leaves, which are issued from the CAs it
        writes. The garden's copy of the client CA is where the project's members cannot read it.
        """
        signers = None
        if seed is not None and target is not None:
            # `etcd-backup` is written from the seed's bucket Secret, where the seed holds one.
            copied = entry_secret(name, self.values, seed, extra.get(backup.ETCD_BACKUP_SECRET), parent=self)
            # The encryption configuration by its keys; the entry's credentials by the EntrySecret.
            own: dict[str, pulumi.Resource] = {controlplane.ENCRYPTION_SECRET: self.encryption.keys}
            own |= {backup.ETCD_BACKUP_SECRET: copied} if copied else {}

            def signers(issued: ShootPki) -> list[pulumi.Resource]:
                # The CAs, keys and token write their own Secrets; the SecretSet keeps the rest.
                writers = {*issued.writers, *own}
                kept = {n: data for n, data in {**self._sources(issued), **extra}.items() if n not in writers}
                secret_set = control_plane_secrets(name, self.values, seed, kept, sorted(writers), parent=self)
                self.written = dict.fromkeys(kept, secret_set) | own
                return [secret_set]

        credentials = issue_shoot_pki(name, self.values, parent=self, target=target, signers=signers)
        register_client_ca(
            f"{name}-ca-client",
            self.values,
            credentials[pki.CA_CLIENT],
            garden.cluster,
            pulumi.ResourceOptions(parent=self, depends_on=garden.project(self.values.project)),
            signer=None if target is None else target.place(),
        )
        return credentials

    def _shoot_api(
        self,
        infra: InfrastructureProvider,
        after: Sequence[pulumi.Resource],
        kubeconfig: pulumi.Output[str] | None,
        restore: pulumi.Output[dict[str, str]] | None = None,
        identity: pulumi.Input[dict[str, str]] | None = None,
    ) -> ClusterAccess:
        """The API the shoot's control plane serves, with its nodes (on local, the kwok nodes the plan holds).

        `kubeconfig` is arbor's own at the shoot's domain (`_arbor_kubeconfig`), None for a shoot without one.
        A provider serving it itself (local) uses the shoot's PKI (`identity`: where the seed holds it) and remakes
        a lost one from the `restore` entry.
        """
        return infra.shoot_api(
            self.values.cluster,
            self,
            after,
            encryption_config=self.encryption.source(),
            client_ca=self.credentials[pki.CA_CLIENT].cert,
            machines=self.values.local_nodes,
            kubeconfig=kubeconfig,
            pki=identity if identity is not None else self.credentials.api_identity(),
            restore=restore,
        )

    def _arbor_kubeconfig(self) -> pulumi.Output[str] | None:
        """How arbor reaches a shoot with domain names: there, with its own client certificate; None without."""
        if not self.values.dns:
            return None
        client = self.credentials[pki.ARBOR_CLIENT]
        ca = self.credentials[pki.CA].cert
        assert ca is not None and client.cert is not None  # a CA and a certificate always have theirs
        return arbor_kubeconfig(self.values, ca, client.cert, client.key)

    def _node_cas(self) -> NodeCas | None:
        """The CAs nodes trust where they join arbor's kube-apiserver (a shoot with domain names); else none."""
        ca, client_ca = self.credentials[pki.CA].cert, self.credentials[pki.CA_CLIENT].cert
        if not self.values.dns or ca is None or client_ca is None:
            return None
        return node_cas(ca, client_ca)

    def _self_hosted(self, name: str, infra: InfrastructureProvider, sources: Sources) -> list[pulumi.Resource]:
        """The API first (its nodes carry the control plane), then the static pods through the pools' OSCs.

        On a cloud, arbor makes the control-plane machine itself (first_machine.py) and waits for its API there.
        """
        machine = self.secret_target
        # What the credentials wrote on the machine, its static pods' OSC reads there (and keeps as references).
        held = {**self.credentials.layouts(), **self.encryption.layout()} if machine else None
        static = static_control_plane(self.values, sources, held, machine.place() if machine else None)
        cas = self._node_cas()
        after: list[pulumi.Resource] = list(self.network.ready)
        kubeconfig = self._arbor_kubeconfig()
        first = self.values.control_plane_machine
        if first is not None and cas is not None and kubeconfig is not None:
            bundle = first_machine.first_boot_bundle(self.values, static, self.credentials, cas)
            after = first_machine.control_plane_machine(
                name, self.values, infra, self.network, bundle, kubeconfig, parent=self
            )
        identity = None
        if machine is not None and machine.directory:
            # On a machine arbor writes to, the API server reads the PKI its CA and key wrote there first.
            identity = {DIRECTORY: machine.directory}
            after += [self.credentials.resources[pki.CA], self.credentials.resources[pki.SERVICE_ACCOUNT_KEY]]
        self.access = self._shoot_api(infra, after, kubeconfig, identity=identity)
        node_configs = node_configuration(name, self.values, self.access, static, parent=self, cas=cas)
        node_configs += self._join_rbac(name) + node_agent_access(name, self.access, parent=self)
        if first is not None:
            node_configs.append(first_machine.bootstrap_token(name, self.access, self.credentials, parent=self))
        published: list[pulumi.Resource] = []
        for pool in (p for p in self.values.workers if p.control_plane):
            published += infra.publish_static_pods(self.access, pool.name, static.manifests, self)
        key = self.credentials[pki.SERVICE_ACCOUNT_KEY].cert
        assert key is not None  # an rsa-key credential's `cert` is its public half, always made
        pools = [] if first is None or cas is None else in_shoot_workers(
            name, self.values, infra, self.network, self.access, cas, node_configs, parent=self, public_key=key
        )  # fmt: skip
        return [*published, *self.access.ready, *node_configs, *pools]

    def _hosted(
        self, name: str, infra: InfrastructureProvider, seed: SeedAccess, sources: Sources, kept: StateKeeping | None
    ) -> list[pulumi.Resource]:
        """The control plane in the seed, then the shoot's API and nodes, then the machines that join it."""
        # Each Secret by what writes it: a certificate its own, the SecretSet every other one.
        written = {**self.written, **self.credentials.writers}
        hosted = hosted_control_plane(name, self.values, seed, self.network, sources, written, parent=self)
        done = hosted.workloads
        control_plane = list(done.values())
        # The shoot's API waits for its control plane and, when it moved, for the source to let it go.
        serving = [done["kube-controller-manager"], done["kube-scheduler"], *(kept.moved if kept else [])]
        if hosted.load_balancer is not None:
            # The API is reached by name once both records point at its load balancer.
            balancer = hosted.load_balancer
            serving += api_records(name, self.values, service_address(balancer), parent=self, after=[balancer])
        # Its PKI is read in the seed namespace, where the SecretSet wrote it before the control plane started.
        identity = pulumi.Output.all(seedKubeconfig=seed.cluster.reach, namespace=self.values.seed_namespace)
        restore = backup_reference(seed, self.values, sources.get(backup.ETCD_BACKUP_SECRET))
        self.access = self._shoot_api(infra, serving, self._arbor_kubeconfig(), restore, identity)
        cas = self._node_cas()
        node_configs = node_configuration(name, self.values, self.access, None, parent=self, cas=cas)
        node_configs += self._join_rbac(name) + node_agent_access(name, self.access, parent=self)
        webhook = resource_manager(name, self.values, infra, seed, self.access, self.credentials, parent=self)
        # Machines join once the shoot's API serves (MCM works against it), and once node-agent's OSC Secret, the
        # join RBAC and its access token are in the shoot (Gardener's flow: OSC before Worker).
        workers = Workers(
            f"{name}-workers",
            self.values,
            infra,
            seed,
            self.network,
            self.access,
            sources,
            # A seed namespace that lost its machine objects gets them back first, so MCM adopts the machines.
            after=control_plane + ([kept.restore] if kept else []),
            opts=pulumi.ResourceOptions(parent=self),
            cas=cas,
            joinable=node_configs,
        ).deployments
        self.last_steps = [*webhook, *workers]
        return [*control_plane, *self.access.ready, *node_configs, *webhook, *workers]

    def _in_shoot(self) -> pulumi.ResourceOptions:
        """Options of an object in the shoot: through its provider, once its API serves."""
        return pulumi.ResourceOptions(parent=self, provider=self.access.provider, depends_on=list(self.access.ready))

    def _join_rbac(self, name: str) -> list[pulumi.Resource]:
        """The RBAC machines join arbor's kube-apiserver with (bootstrap token, CSRs, node-agent's OSC Secret).

        Only a shoot with domain names: kwok nodes on local are registered by arbor.
        """
        if not self.values.dns:
            return []
        keys = [secret_name(node) for node in self.values.node_settings.values()]
        in_shoot = self._in_shoot()
        return [
            KubeObject(f"{name}-join-{obj['kind'].lower()}-{obj['metadata']['name'].replace(':', '-')}", obj, in_shoot)
            for obj in nodeagent.join_rbac(keys)
        ]

    def _health(
        self, name: str, garden: GardenAccess, seed: SeedAccess | None, converged: Sequence[pulumi.Resource]
    ) -> ShootStatus:
        """The record's status, written once everything else converged, from what the clusters say."""
        values = self.values
        deployments = {d.name: f"{d.class_name}x{d.minimum}" for ds in values.deployments.values() for d in ds}
        return ShootStatus(
            f"{name}-status",
            namespace=values.project_namespace,
            shoot=values.name,
            seed_namespace=values.seed_namespace,
            expected_nodes=sum(p.minimum for p in values.workers),
            garden_kubeconfig=garden.cluster.reach,
            seed_kubeconfig=seed.cluster.reach if seed else None,
            shoot_kubeconfig=self.access.reach,
            kubernetes_version=values.kubernetes_version,
            machine_deployments=deployments if seed else None,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(converged)),
        )

    def _sources(self, credentials: ShootPki) -> dict[str, pulumi.Output[dict[str, str]]]:
        """The contents of every Secret the control plane mounts, by Secret name (credentials, encryption)."""
        secrets = credentials.secrets()
        # Secret, as the Secrets that carry them keep them in the state (a CA's certificate alone too).
        sources = {name: gathered(data, secret=True) for name, data in secrets.items()}
        sources[controlplane.ENCRYPTION_SECRET] = self.encryption.secret_data()
        return sources
