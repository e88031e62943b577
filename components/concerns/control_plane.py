"""A shoot's control plane and node configuration, wired: as seed workloads (hosted) or as static pods (self-hosted).

A hosted shoot's control plane runs in its seed namespace: etcd main and events, then kube-apiserver, then
kube-controller-manager and kube-scheduler, with their credentials as Secrets beside them. A self-hosted shoot's
control plane is the same pod specs as static pods (render/staticpods.py), delivered with their credentials as
files through the control-plane pool's OperatingSystemConfig. Every resource is the Shoot's child, named from it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from components.bundles import ClusterAccess, NetworkAccess, SeedAccess
from components.concerns.objects import LoadBalancerService
from components.plan import bootstrap, osc
from components.plan.values import NodeValues, ShootValues
from components.reconciler.gather import gathered
from components.reconciler.object_set import ObjectSet
from components.reconciler.osc_secret import OperatingSystemConfig
from components.reconciler.secret_set import SecretSet
from components.render import controlplane, machine_pools, nodeagent, staticpods

# The contents of every Secret the control plane mounts, by Secret name: secret Outputs (Shoot._sources).
Sources = Mapping[str, pulumi.Output[dict[str, str]]]


def control_plane_secrets(
    name: str, values: ShootValues, seed: SeedAccess, kept: Sources, others: Sequence[str], parent: pulumi.Resource
) -> SecretSet:
    """The Secrets the credentials do not write themselves (encryption, backup): one resource, once each.

    `others` are the Secrets of the namespace the credentials write: an older arbor's SecretSet hands them over.
    """
    return SecretSet(
        f"{name}-secrets",
        kubeconfig=seed.cluster.reach,
        namespace=values.seed_namespace,
        secrets=kept,
        others=others,
        cluster=seed.cluster.identifier,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[seed.namespaces[values.seed_namespace]]),
    )


# Components applied as one ObjectSet, as they start together: etcd main and events; kube-apiserver's two
# controllers. An older arbor kept one per component (hack/state_moves.py hands those over).
GROUPS = {"etcd-main": "etcd", "etcd-events": "etcd", "kube-controller-manager": "controllers",
          "kube-scheduler": "controllers"}  # fmt: skip


def _group_sets(
    name: str,
    seed: SeedAccess,
    parts: Mapping[str, Sequence[pulumi.Output[list[dict[str, Any]]]]],
    needs: Mapping[str, Sequence[pulumi.Resource | str]],
    parent: pulumi.Resource,
) -> dict[str, pulumi.Resource]:
    """One ObjectSet per group, in order, each after what its components need (a group named by its set)."""
    # A control plane that is not ready in five minutes will not be; fail the update rather than wait ten.
    wait = pulumi.CustomTimeouts(create="5m", update="5m")
    sets: dict[str, pulumi.Resource] = {}
    for group, manifests in parts.items():
        # A resource two components need is named twice: the SDK resolves `depends_on` to a set of URNs.
        after = [sets[n] if isinstance(n, str) else n for n in needs[group]]
        # One resource per group keeps its objects once (reconciler/object_set.py); objects unchanged in an update
        # are applied as they are, so a component restarts only when its own objects change.
        sets[group] = ObjectSet(
            f"{name}-{group}",
            kubeconfig=seed.cluster.reach,
            cluster=seed.cluster.identifier,
            manifests=pulumi.Output.all(*manifests).apply(lambda got: [o for objs in got for o in objs]),
            opts=pulumi.ResourceOptions(parent=parent, depends_on=after, custom_timeouts=wait),
        )
    return sets


def hosted_control_plane(
    name: str,
    values: ShootValues,
    seed: SeedAccess,
    network: NetworkAccess,
    sources: Sources,
    written: Mapping[str, pulumi.Resource],
    parent: pulumi.Resource,
) -> HostedControlPlane:
    """ConfigMaps and workloads in the seed namespace, each group of components after what they talk to and mount.

    `written` names the resource that writes each Secret in `sources` (the credentials' own, the SecretSet).
    kube-apiserver waits for the Secrets it mounts, its serving certificate's among them: a certificate with new
    names (domains) exists before the API server rolls to it.
    """
    namespace = seed.namespaces[values.seed_namespace]
    on_seed = pulumi.ResourceOptions(parent=parent, provider=seed.cluster.provider)
    in_namespace = pulumi.ResourceOptions.merge(on_seed, pulumi.ResourceOptions(depends_on=[namespace]))
    secrets: dict[str, pulumi.Resource] = dict(written)
    exposed: LoadBalancerService | None = None
    # Each group's objects (components in the order they start) and what they wait for.
    parts: dict[str, list[pulumi.Output[list[dict[str, Any]]]]] = {}
    needs: dict[str, list[pulumi.Resource | str]] = {}
    for workload in controlplane.control_plane(values):
        group = GROUPS.get(workload.component, workload.component)
        # A component waits for what it mounts and for what it talks to (a group, by name; etcd first: for the
        # network).
        mounts: list[pulumi.Resource | str] = [secrets[n] for n in controlplane.mounted(workload) if n in secrets]
        # etcd's volumes are claimed from the seed's StorageClass (with its CSI driver); none on local.
        talks_to: list[pulumi.Resource | str] = [GROUPS.get(d, d) for d in workload.depends_on]
        talks_to = talks_to or [namespace, *network.ready, *seed.etcd_storage]
        needs.setdefault(group, []).extend([*talks_to, *mounts])
        service = workload.service
        if service and service["spec"]["type"] == "LoadBalancer":
            # Its status carries the cloud's address, which the API's DNS records point at.
            exposed = LoadBalancerService(f"{name}-{service['metadata']['name']}", service, in_namespace)
            service = None
        # Checksums of what the pods mount: a rotated credential rolls exactly the components that use it.
        # Not protected: a rotation's preview cannot know the spec (new checksums). etcd's data outlives it: the
        # StatefulSet's volume claims stay when it is deleted (retained, on a Retain class), and on local the
        # shoot's cluster (protected) holds it. A claim's class or size never changes silently: checks/previous.py
        # refuses it.
        spec = spec_with_checksums(workload, {c["metadata"]["name"]: c["data"] for c in workload.config_maps}, sources)
        # Its ConfigMaps and Service, then the workload.
        first = [*workload.config_maps, *([service] if service else [])]
        parts.setdefault(group, []).append(spec.apply(functools.partial(_applied, first, workload.object)))
    sets = _group_sets(name, seed, parts, needs, parent)
    done = {w.component: sets[GROUPS.get(w.component, w.component)] for w in controlplane.control_plane(values)}
    return HostedControlPlane(workloads=done, load_balancer=exposed)


def static_control_plane(
    values: ShootValues,
    sources: Sources,
    held: Mapping[str, Sequence[str]] | None = None,
    secrets_from: Mapping[str, Any] | None = None,
) -> StaticControlPlane:
    """The control plane as static pods: their OSC part and each manifest, once every source is known.

    A Secret written on the machine (`held`: its keys, by name; given by its checksum) becomes file references, read
    `secrets_from` (the machine's place) when the OSC is written.
    """
    workloads = controlplane.control_plane(values)
    config_maps = {c["metadata"]["name"]: c["data"] for w in workloads for c in w.config_maps}
    everything = gathered(sources).apply(lambda got: {**config_maps, **got})
    pods = everything.apply(lambda got: staticpods.static_pods(workloads, got, held or {}))
    # A manifest holds no credential (those are files beside it, in the OSC part), only a hash of them: not secret,
    # so the preview shows it and the state keeps it as it is.
    manifests = {w.component: pulumi.Output.unsecret(pods.apply(functools.partial(_manifest, w.component)))
                 for w in workloads}  # fmt: skip
    return StaticControlPlane(part=pods.apply(staticpods.osc_part), manifests=manifests, secrets_from=secrets_from)


def node_configuration(
    name: str,
    values: ShootValues,
    access: ClusterAccess,
    static: StaticControlPlane | None,
    parent: pulumi.Resource,
    cas: NodeCas | None = None,
) -> list[pulumi.Resource]:
    """Per pool: the reconcile OSC (with the static pods on control-plane pools) and, self-hosted, the user data.

    A hosted shoot's user data is its machine classes' (concerns/workers.py); a self-hosted shoot's machines
    boot from the Secret in its own kube-system. `cas` reach nodes that join arbor's kube-apiserver.
    """
    made: list[pulumi.Resource] = []
    for pool in values.workers:
        node = values.node_settings[pool.name]
        if static:
            made.append(_user_data_set(f"{name}-user-data-{pool.name}", pool.name, user_data(values, pool.name, cas),
                                       access, parent))  # fmt: skip
        extra = [static.part] if static and pool.control_plane else []
        if cas is None:
            config = pulumi.Output.all(*extra).apply(functools.partial(nodeagent.reconcile_osc, node))
        else:
            config = pulumi.Output.all(cas, *extra).apply(functools.partial(_trusted_osc, node))
        made.append(
            OperatingSystemConfig(
                f"{name}-osc-{pool.name}",
                kubeconfig=access.reach,
                pool=pool.name,
                secret=config.apply(functools.partial(_osc_secret, pool.name)),
                secret_name=bootstrap.secret_name(node),
                unit_hashes=config.apply(osc.unit_hashes),
                file_hashes=config.apply(osc.file_hashes),
                stopped_units=config.apply(osc.stopped_units),
                secrets_from=static.secrets_from if static and pool.control_plane else None,
                opts=pulumi.ResourceOptions(parent=parent, depends_on=list(access.ready)),
            )
        )
    return made


def spec_with_checksums(
    workload: controlplane.Workload, plain: Mapping[str, Mapping[str, str]], sources: Sources
) -> pulumi.Output[dict[str, Any]]:
    """The workload's spec with checksums of what it mounts: `plain` contents, and those of `sources` it mounts.

    Not secret: hashes reveal nothing of the credentials, so the spec stays readable in the preview. One Output,
    as the spec is large and the SDK walks an Output's whole value each time it makes one.
    """
    mounted = gathered({n: sources[n] for n in controlplane.mounted(workload) if n in sources}, secret=False)
    return mounted.apply(lambda got: controlplane.with_checksums(workload, {**plain, **got})["spec"])


# The cluster CA and the client CA, as PEM, once issued: what a node that joins arbor's kube-apiserver trusts.
NodeCas = pulumi.Output[tuple[str, str]]


def node_cas(ca: pulumi.Output[str], client_ca: pulumi.Output[str]) -> NodeCas:
    """The CAs a joining node trusts: the cluster CA (the API's) and the client CA (kubelet's clients')."""
    return pulumi.Output.all(ca, client_ca).apply(lambda got: (got[0], got[1]))


def trusting(node: NodeValues, cas: tuple[str, str]) -> NodeValues:
    """A pool's node values with the CAs: node-agent's `apiServer.caBundle` and kubelet's `ca.crt`."""
    return dataclasses.replace(node, ca_bundle=cas[0], kubelet_ca=cas[1])


def _trusted_osc(node: NodeValues, got: list[Any]) -> osc.OperatingSystemConfig:
    """The reconcile OSC of a pool whose nodes trust the CAs (`got`: the CAs, then the extra parts)."""
    return nodeagent.reconcile_osc(trusting(node, got[0]), got[1:])


def user_data(values: ShootValues, pool: str, cas: NodeCas | None) -> str | pulumi.Output[str]:
    """A pool's user data: the plan's, or with the CAs where nodes join arbor's kube-apiserver (checked again)."""
    if cas is None:
        return values.user_data[pool]
    node, provider = values.node_settings[pool], values.networking.provider.value

    def render(got: tuple[str, str]) -> str:
        data = bootstrap.pool_user_data(trusting(node, got))
        bootstrap.check_user_data(provider, data, f"{values.ref} pool {pool}")
        return data

    return cas.apply(render)


def _user_data_set(
    name: str, pool: str, data: str | pulumi.Output[str], access: ClusterAccess, parent: pulumi.Resource
) -> ObjectSet:
    """A self-hosted pool's user-data Secret in the shoot, applied as an ObjectSet: its content secret and once."""
    secret = pulumi.Output.from_input(data).apply(lambda d: [machine_pools.self_hosted_user_data_secret(pool, d)])
    return ObjectSet(name, kubeconfig=access.reach, cluster=access.identifier, manifests=pulumi.Output.secret(secret),
                     opts=pulumi.ResourceOptions(parent=parent, depends_on=list(access.ready)))  # fmt: skip


def _applied(first: list[dict[str, Any]], obj: dict[str, Any], spec: dict[str, Any]) -> list[dict[str, Any]]:
    """A component's objects as applied: `first`, then its workload with `spec`."""
    return [*first, {**obj, "spec": spec}]


def _manifest(component: str, pods: Sequence[staticpods.StaticPod]) -> dict[str, Any]:
    """The manifest of one component among the static pods."""
    return next(p.manifest for p in pods if p.name == component)


def _osc_secret(pool: str, config: osc.OperatingSystemConfig) -> dict[str, object]:
    """node-agent's Secret of a pool's OSC (pool first, for partial application)."""
    return nodeagent.osc_secret(config, pool)


@dataclass(frozen=True)
class HostedControlPlane:
    """A hosted control plane: what applies each component (a group's share one), and kube-apiserver's balancer."""

    workloads: dict[str, pulumi.Resource]
    load_balancer: LoadBalancerService | None = None


@dataclass(frozen=True)
class StaticControlPlane:
    """A self-hosted control plane: the OSC part with every manifest and file, and each manifest by component."""

    part: pulumi.Output[osc.Part]
    manifests: dict[str, pulumi.Output[dict[str, Any]]]
    # Where the part's `secretRef` files are read when its OSC is written (a machine's `directory`); None: all inline.
    secrets_from: Mapping[str, Any] | None = None
