"""A shoot's control plane and node configuration, wired: as seed workloads (hosted) or as static pods (self-hosted).

A hosted shoot's control plane runs in its seed namespace: etcd main and events, then kube-apiserver, then
kube-controller-manager and kube-scheduler, with their credentials as Secrets beside them. A self-hosted shoot's
control plane is the same pod specs as static pods (render/staticpods.py), delivered with their credentials as
files through the control-plane pool's OperatingSystemConfig. Every resource is the Shoot's child, named from it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from components.bundles import ClusterAccess, NetworkAccess, SeedAccess
from components.concerns.gather import gathered
from components.concerns.objects import SECRET_FIELDS, KubeObject, secret_object
from components.plan import osc
from components.plan.nodes import POOL_LABEL
from components.plan.values import ShootValues
from components.reconciler.osc_secret import OperatingSystemConfig
from components.render import controlplane, nodeagent, staticpods

# The contents of every Secret the control plane mounts, by Secret name: secret Outputs (Shoot._sources).
Sources = Mapping[str, pulumi.Output[dict[str, str]]]


def hosted_control_plane(
    name: str, values: ShootValues, seed: SeedAccess, network: NetworkAccess, sources: Sources, parent: pulumi.Resource
) -> dict[str, pulumi.Resource]:
    """Secrets, ConfigMaps and workloads in the seed namespace, each component after what it talks to."""
    namespace = seed.namespaces[values.seed_namespace]
    on_seed = pulumi.ResourceOptions(parent=parent, provider=seed.cluster.provider)
    in_namespace = pulumi.ResourceOptions.merge(on_seed, pulumi.ResourceOptions(depends_on=[namespace]))
    # `sources` are secret already: the typed Secret's wrapping again would only lift them into more Outputs.
    sealed = pulumi.ResourceOptions.merge(in_namespace, pulumi.ResourceOptions(additional_secret_outputs=SECRET_FIELDS))
    secrets = {
        secret: KubeObject(f"{name}-secret-{secret}", _secret(secret, values.seed_namespace, data), sealed)
        for secret, data in sources.items()
    }
    # A control plane that is not ready in five minutes will not be; fail the update rather than wait ten.
    wait = pulumi.CustomTimeouts(create="5m", update="5m")
    done: dict[str, pulumi.Resource] = {}
    for workload in controlplane.control_plane(values):
        configs = [KubeObject(f"{name}-{c['metadata']['name']}", c, in_namespace) for c in workload.config_maps]
        # A component waits for what it mounts and for what it talks to (etcd first: for the network).
        mounts = [secrets[n] for n in controlplane.mounted(workload) if n in secrets]
        talks_to = [done[d] for d in workload.depends_on] or [namespace, *network.ready]
        after = [*talks_to, *mounts, *configs]
        opts = pulumi.ResourceOptions.merge(on_seed, pulumi.ResourceOptions(depends_on=after, custom_timeouts=wait))
        if service := workload.service:
            KubeObject(f"{name}-{service['metadata']['name']}", service, in_namespace)
        # Checksums of what the pods mount: a rotated credential rolls exactly the components that use it.
        rendered = with_checksums(workload, {c["metadata"]["name"]: c["data"] for c in workload.config_maps}, sources)
        # Not protected: a rotation's preview cannot know the spec (new checksums), which the engine counts as a
        # possible replacement, and a protected one would fail it. etcd's data outlives it: the StatefulSet's
        # volume claims stay when it is deleted, and on local the shoot's cluster (protected) holds it.
        # Hashes reveal nothing of the credentials: the spec stays readable in the preview.
        spec = pulumi.Output.unsecret(rendered.apply(lambda o: o["spec"]))
        done[workload.component] = KubeObject(f"{name}-{workload.component}", {**workload.object, "spec": spec}, opts)
    return done


def static_control_plane(values: ShootValues, sources: Sources) -> StaticControlPlane:
    """The control plane as static pods: their OSC part and each manifest, once every source is known."""
    workloads = controlplane.control_plane(values)
    config_maps = {c["metadata"]["name"]: c["data"] for w in workloads for c in w.config_maps}
    everything = gathered(sources).apply(lambda got: {**config_maps, **got})
    pods = everything.apply(lambda got: staticpods.static_pods(workloads, got))
    manifests = {w.component: pods.apply(functools.partial(_manifest, w.component)) for w in workloads}
    return StaticControlPlane(part=pods.apply(staticpods.osc_part), manifests=manifests)


def node_configuration(
    name: str, values: ShootValues, access: ClusterAccess, static: StaticControlPlane | None, parent: pulumi.Resource
) -> list[pulumi.Resource]:
    """Per pool: the reconcile OSC (with the static pods on control-plane pools) and, self-hosted, the user data.

    A hosted shoot's user data is its machine classes' (concerns/workers.py); a self-hosted shoot's machines
    boot from the Secret in its own kube-system.
    """
    made: list[pulumi.Resource] = []
    for pool in values.workers:
        node = values.node_settings[pool.name]
        if static:
            secret = _secret(f"user-data-{pool.name}", "kube-system", {"userData": values.user_data[pool.name]})
            secret["metadata"]["labels"] = {POOL_LABEL: pool.name}
            in_shoot = pulumi.ResourceOptions(parent=parent, provider=access.provider, depends_on=list(access.ready))
            made.append(secret_object(f"{name}-user-data-{pool.name}", secret, in_shoot))
        extra = [static.part] if static and pool.control_plane else []
        config = pulumi.Output.all(*extra).apply(functools.partial(nodeagent.reconcile_osc, node))
        made.append(
            OperatingSystemConfig(
                f"{name}-osc-{pool.name}",
                kubeconfig=access.kubeconfig,
                pool=pool.name,
                secret=config.apply(functools.partial(_osc_secret, pool.name)),
                unit_hashes=config.apply(osc.unit_hashes),
                file_hashes=config.apply(osc.file_hashes),
                stopped_units=config.apply(osc.stopped_units),
                opts=pulumi.ResourceOptions(parent=parent, depends_on=list(access.ready)),
            )
        )
    return made


def with_checksums(
    workload: controlplane.Workload, plain: Mapping[str, Mapping[str, str]], sources: Sources
) -> pulumi.Output[dict[str, Any]]:
    """The workload's object with checksums of what it mounts: `plain` contents, and those of `sources` it mounts."""
    mounted = gathered({n: sources[n] for n in controlplane.mounted(workload) if n in sources})
    return mounted.apply(lambda got: controlplane.with_checksums(workload, {**plain, **got}))


def _secret(name: str, namespace: str, string_data: Any) -> dict[str, Any]:
    """A Secret of `string_data` in `namespace`."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "stringData": string_data,
    }


def _manifest(component: str, pods: Sequence[staticpods.StaticPod]) -> dict[str, Any]:
    """The manifest of one component among the static pods."""
    return next(p.manifest for p in pods if p.name == component)


def _osc_secret(pool: str, config: osc.OperatingSystemConfig) -> dict[str, object]:
    """node-agent's Secret of a pool's OSC (pool first, for partial application)."""
    return nodeagent.osc_secret(config, pool)


@dataclass(frozen=True)
class StaticControlPlane:
    """A self-hosted control plane: the OSC part with every manifest and file, and each manifest by component."""

    part: pulumi.Output[osc.Part]
    manifests: dict[str, pulumi.Output[dict[str, Any]]]
