"""The Workers component (`arbor:shoot:Workers`): a shoot's worker machinery, wired in flow order.

For a self-hosted cloud shoot the shoot is its own seed (`in_shoot_workers`): the same objects in its kube-system.

Rendering is pure and lives elsewhere: machine-controller-manager and the machine objects in
components/render/machines.py, each provider's sidecar and MachineClass behind the provider (components/providers/).
Here they become resources:

- the shoot's machine identity in the cloud (aws IAM user and access key, gcp service account and key, each with
  the least rights MCM's sidecar needs), unless the spec names pasted credentials (`cloudCredentialsSecret`);
- in the shoot's seed namespace, after its control plane: the `cloudprovider` Secret the classes reference,
  MCM's ServiceAccount, Role and RoleBinding, its target kubeconfig, its Deployment with the provider's sidecar
  (a checksum per mounted Secret or ConfigMap, so a rotated client certificate restarts it) and metrics Service,
  applied as one ObjectSet;
  on local, where kwok only simulates that Deployment, MCM and arbor's kwok sidecar as processes (LocalProcess);
- MachinesReleased between MCM and the objects it puts finalizers on, so that deletion stops MCM last;
- per pool and zone, one ObjectSet: the user-data Secret and the MachineClass (both named after the class: a
  rolling change makes new ones) and the MachineDeployment, whose template then points at the new class;
- in the shoot: MCM's ClusterRole, Role and their bindings, for its client-certificate user (one ObjectSet).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence

import pulumi

from components.bundles import ClusterAccess, MachineCredentials, NetworkAccess, SeedAccess
from components.concerns.control_plane import NodeCas, spec_with_checksums, user_data
from components.concerns.objects import KubeObject
from components.plan.values import ShootValues, ZoneDeployment
from components.providers.contract import InfrastructureProvider
from components.reconciler.machines_released import MachinesReleased
from components.reconciler.object_set import ObjectSet
from components.render import controlplane, machine_crds, machine_pools, machines
from components.render.machine_providers import credentials_data


def credentials_secret(shoot: ShootValues, managed: MachineCredentials | None = None) -> machines.Object:
    """The `cloudprovider` Secret: pasted credentials from secret config, those arbor made, or none (local)."""
    secret = machine_pools.credentials_secret(shoot.machine_namespace)
    if key := shoot.cloud_credentials_secret:
        raw = pulumi.Config("arbor").require_secret(key)
        provider = shoot.networking.provider.value
        secret["stringData"] = raw.apply(functools.partial(credentials_data, provider, where=f"arbor:{key}"))
    elif managed is not None:
        secret["stringData"] = managed.data
    return secret


class Workers(pulumi.ComponentResource):
    """machine-controller-manager and the machines of one shoot (in its seed, or inside a self-hosted cloud shoot)."""

    deployments: list[pulumi.Resource]

    def __init__(
        self,
        name: str,
        shoot: ShootValues,
        infra: InfrastructureProvider,
        seed: SeedAccess,
        network: NetworkAccess,
        shoot_api: ClusterAccess,
        sources: Mapping[str, pulumi.Output[dict[str, str]]],
        after: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
        cas: NodeCas | None = None,
        joinable: Sequence[pulumi.Resource] = (),
    ) -> None:
        super().__init__("arbor:shoot:Workers", name, None, opts)
        self._joinable = list(joinable)  # what a machine needs in the shoot first: the OSC Secret, the join RBAC
        # Each object waits for what it needs, no more: the engine orders the rest through these edges, and every
        # edge costs the SDK time at registration (bench/scale.py).
        in_seed = pulumi.ResourceOptions(
            parent=self, provider=seed.cluster.provider, depends_on=_namespace(seed, shoot)
        )
        # Pasted credentials when the spec names them; else those arbor makes (none on local), applied after them.
        managed = (
            None if shoot.cloud_credentials_secret else infra.machine_credentials(shoot, network, seed.cluster, self)
        )
        after_key = pulumi.ResourceOptions.merge(
            in_seed, pulumi.ResourceOptions(depends_on=list(managed.ready) if managed else [])
        )
        manager = self._manager(name, shoot, infra, seed, shoot_api, sources, after)
        # Every object MCM puts a finalizer on is deleted before this, and this before MCM (its delete waits).
        released = MachinesReleased(
            f"{name}-mcm-released",
            kubeconfig=seed.cluster.reach,
            namespace=shoot.machine_namespace,
            opts=pulumi.ResourceOptions(parent=self, depends_on=manager),
        )
        after_key = pulumi.ResourceOptions.merge(after_key, pulumi.ResourceOptions(depends_on=[released]))
        credentials = KubeObject(f"{name}-cloudprovider", credentials_secret(shoot, managed), after_key)
        # Machines are made in the network, by MCM, from classes that reference the credentials, once MCM runs and
        # what a machine needs in the shoot is there.
        first = [*_namespace(seed, shoot), released, credentials, *seed.machine_crds, *network.ready]
        machines_opts = pulumi.ResourceOptions(parent=self, depends_on=[*first, *manager, *self._joinable])
        self.deployments = []
        names = []
        # A self-hosted shoot's control-plane machine is arbor's own (concerns/first_machine.py), not MCM's.
        for pool in (p for p in shoot.workers if not p.control_plane):
            for d in shoot.deployments[pool.name]:
                names.append(d.name)
                objects = (
                    _user_data_secret(shoot, d, user_data(shoot, pool.name, cas)),
                    infra.machine_class(shoot, d, network),
                    machine_pools.machine_deployment(shoot.machine_namespace, d),
                )
                zone = f"{pool.name}-z{d.zone_index + 1}"
                self.deployments.append(_machines(f"{name}-{zone}", seed, objects, machines_opts))
        self.register_outputs({"machineDeployments": names})

    def _manager(
        self,
        name: str,
        shoot: ShootValues,
        infra: InfrastructureProvider,
        seed: SeedAccess,
        shoot_api: ClusterAccess,
        sources: Mapping[str, pulumi.Output[dict[str, str]]],
        after: Sequence[pulumi.Resource],
    ) -> list[pulumi.Resource]:
        """MCM in the seed namespace (after the control plane) and its rights in the shoot, each one ObjectSet."""
        # MCM watches the machine kinds and works against the shoot's API, which the control plane serves.
        objects = [
            _with_checksums(o, shoot, sources)
            for o in machines.seed_objects(shoot, infra.machine_sidecar(shoot.machine_namespace))
        ]
        manager = ObjectSet(
            f"{name}-mcm",
            kubeconfig=seed.cluster.reach,
            cluster=seed.cluster.identifier,
            manifests=objects,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*_namespace(seed, shoot), *seed.machine_crds, *after]),
        )
        return [manager, *self._in_shoot(name, shoot, infra, seed, shoot_api)]

    def _in_shoot(
        self, name: str, shoot: ShootValues, infra: InfrastructureProvider, seed: SeedAccess, shoot_api: ClusterAccess
    ) -> list[pulumi.Resource]:
        """MCM's rights in the shoot; where no kubelet runs its Deployment (local), MCM and its sidecar as processes."""
        processes = infra.machine_controller(
            shoot, seed, shoot_api, self, [*_namespace(seed, shoot), *seed.machine_crds, *shoot_api.ready]
        )
        rights = ObjectSet(
            f"{name}-mcm-shoot",
            kubeconfig=shoot_api.reach,
            cluster=shoot_api.identifier,
            manifests=list(machines.shoot_objects(shoot)),
            # After what objects in the shoot wait for (its provider waits for the same): its API, and its records.
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(shoot_api.ready)),
        )
        return [*processes, rights]


def machine_kinds(name: str, opts: pulumi.ResourceOptions) -> list[pulumi.Resource]:
    """MCM's CRDs (machine.sapcloud.io, the pinned module's) in the cluster MCM watches: a seed, or a shoot itself."""
    return [KubeObject(f"{name}-crd-{crd['spec']['names']['plural']}", crd, opts) for crd in machine_crds.crds()]


def in_shoot_workers(
    name: str,
    shoot: ShootValues,
    infra: InfrastructureProvider,
    network: NetworkAccess,
    shoot_api: ClusterAccess,
    cas: NodeCas,
    joinable: Sequence[pulumi.Resource],
    parent: pulumi.Resource,
    public_key: pulumi.Output[str],
) -> list[pulumi.Resource]:
    """A self-hosted cloud shoot's further pools: MCM and its machine kinds inside the shoot, as gardenadm runs it.

    `public_key` (the service-account key's) is what the cloud trusts MCM's tokens by (`shoot_issuer`).
    """
    if not any(not p.control_plane for p in shoot.workers):
        return []
    in_shoot = pulumi.ResourceOptions(parent=parent, provider=shoot_api.provider, depends_on=list(shoot_api.ready))
    crds = machine_kinds(name, in_shoot)
    # The shoot is its own seed: MCM works in its kube-system, against the API it runs behind, with its tokens.
    issued = dataclasses.replace(shoot_api, issuer=infra.shoot_issuer(shoot, public_key, parent))
    itself = SeedAccess(shoot.name, issued, namespaces={}, machine_crds=crds)
    opts = pulumi.ResourceOptions(parent=parent)
    after = list(shoot_api.ready)
    return Workers(
        f"{name}-workers", shoot, infra, itself, network, shoot_api, {}, after, opts, cas=cas, joinable=joinable
    ).deployments


def _namespace(seed: SeedAccess, shoot: ShootValues) -> list[pulumi.Resource]:
    """The seed namespace MCM lives in, to wait for; none in a self-hosted shoot (kube-system, which it always has)."""
    return [] if shoot.self_hosted else [seed.namespaces[shoot.machine_namespace]]


def _machines(
    name: str, seed: SeedAccess, objects: Sequence[machines.Object], opts: pulumi.ResourceOptions
) -> ObjectSet:
    """A zone's user-data Secret, MachineClass and MachineDeployment as one ObjectSet, applied in that order.

    A rolling change names a new class and Secret: the set applies them and the MachineDeployment that points at
    them, then deletes the old two without waiting (MCM holds them with a finalizer until its roll is done). Its
    content is secret (the user data); the hash of each object is not, so the preview names what changes.
    """
    manifests: pulumi.Output[list[machines.Object]] = pulumi.Output.secret(list(objects))
    return ObjectSet(
        name, kubeconfig=seed.cluster.reach, cluster=seed.cluster.identifier, manifests=manifests, opts=opts
    )


def _user_data_secret(shoot: ShootValues, d: ZoneDeployment, data: str | pulumi.Output[str]) -> machines.Object:
    """A zone's user-data Secret; its data once the user data is known (with the CAs, at apply time)."""
    if isinstance(data, str):
        return machine_pools.user_data_secret(shoot.machine_namespace, d, data)
    secret = machine_pools.user_data_secret(shoot.machine_namespace, d, "")
    return {**secret, "data": data.apply(
        lambda u: machine_pools.user_data_secret(shoot.machine_namespace, d, u)["data"])}  # fmt: skip


def _with_checksums(
    obj: machines.Object, shoot: ShootValues, sources: Mapping[str, pulumi.Output[dict[str, str]]]
) -> machines.Object:
    """The object; MCM's Deployment with a checksum of each Secret and ConfigMap it mounts (`sources` hold them)."""
    if obj["kind"] != "Deployment" or shoot.self_hosted:
        return obj
    workload = controlplane.Workload(component=machines.MCM_NAME, kind="Deployment", object=obj)
    kubeconfig = machines.target_kubeconfig(shoot)
    return {**obj, "spec": spec_with_checksums(workload, {kubeconfig["metadata"]["name"]: kubeconfig["data"]}, sources)}
