"""The local provider: every cluster is a kwokctl cluster on loopback, with kwok nodes; backups in a local MinIO.

Binaries come from PATH (hack/tools.sh); the work directory and Kubernetes version from hack/env.sh's environment,
so the program is the same in `make up`, in tests and in a user's shell.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import naming
from components.bundles import (
    ClusterAccess,
    ExposedControlPlane,
    Issuer,
    MachineCredentials,
    NetworkAccess,
    ResourceManagerServing,
    SeedAccess,
    ServingSecret,
)
from components.kinds import ProviderType
from components.plan.network import NetworkPlan, NodeNetwork, local_node_ranges
from components.plan.values import ClusterValues, LocalNode, ShootValues, ZoneDeployment
from components.providers import cloud, local_backup
from components.providers.local_nodes import kwok_node, mirror_pod
from components.providers.local_resource_manager import run_resource_manager
from components.reconciler import kwokctl
from components.reconciler.kube import kubeconfig_file, server_of
from components.reconciler.kwokctl import flag_name
from components.reconciler.local_cluster import LocalCluster
from components.reconciler.local_process import LocalProcess, process_dir
from components.reconciler.node_addresses import NodeAddresses
from components.reconciler.object_set import ObjectSet
from components.render import machine_providers, machines, resource_manager
from components.render.machines import Object, Sidecar

# The kubeconfig files of a local machine-controller-manager, in its process directory.
CONTROL_KUBECONFIG = "control.kubeconfig"
TARGET_KUBECONFIG = "target.kubeconfig"
# Under the work directory: each self-hosted shoot's machine directory (hack/local-down.sh removes it).
MACHINES = "machines"


@dataclass(frozen=True)
class LocalSettings:
    """Where local clusters live and which Kubernetes they run."""

    workdir: str
    kubernetes_version: str
    # `make backup` asks for a full snapshot of every local shoot's etcd now (its value changes at each ask).
    backup_request: str = ""

    @staticmethod
    def from_environment() -> LocalSettings:
        """Settings from hack/env.sh's environment; a clear error when it is missing."""
        missing = [v for v in ("KWOK_WORKDIR", "KUBERNETES_VERSION") if not os.environ.get(v)]
        if missing:
            raise pulumi.RunError(
                f'the local provider needs {", ".join(missing)}: run through make, or eval "$(make -s env)" first'
            )
        return LocalSettings(
            workdir=os.environ["KWOK_WORKDIR"],
            kubernetes_version=os.environ["KUBERNETES_VERSION"],
            backup_request=os.environ.get("ARBOR_BACKUP_REQUEST", ""),
        )


# Settings of the local processes over their containers': arbor supervises exactly one of each per shoot, so no
# leader election (which would exit the process whenever the seed is down for a few seconds).
LOCAL_PROCESS_FLAGS = ("--leader-elect=false",)
# And a kwok node deleted by hand is a failed machine after a minute, not ten, so MCM replaces it while a test watches.
KWOK_SIDECAR_FLAGS = (*LOCAL_PROCESS_FLAGS, "--machine-health-timeout=1m")


def process_args(flags: Sequence[str], namespace: str, overrides: Sequence[str] = ()) -> list[str]:
    """A controller's flags as a local process: its container's, `overrides` replacing some, kubeconfigs as files.

    `{dir}` and `{port}` are filled in at each start (components/reconciler/local_process.py).
    """
    replaced = {flag_name(f) for f in overrides} | {"--control-kubeconfig"}
    return [
        *(f for f in flags if flag_name(f) not in replaced),
        *overrides,
        f"--control-kubeconfig={{dir}}/{CONTROL_KUBECONFIG}",
        f"--target-kubeconfig={{dir}}/{TARGET_KUBECONFIG}",
        f"--namespace={namespace}",
        "--port={port}",
    ]


def _provider(
    values: ClusterValues, parent: pulumi.Resource, kubeconfig: pulumi.Input[str], depends_on: list[pulumi.Resource]
) -> k8s.Provider:
    """The Kubernetes provider of a local cluster, named after its component (`<component>-k8s`)."""
    return k8s.Provider(
        f"{parent._name}-k8s",
        kubeconfig=kubeconfig,
        # The identity of the cluster, not its credentials: a new kubeconfig must not replace resources.
        cluster_identifier=naming.cluster_identifier(values.provider.value, values.name),
        # A stopped local cluster is recorded as gone by refresh; `up` then starts it and re-applies.
        delete_unreachable=True,
        # ConfigMaps and Secrets change in place, as kubectl apply does: a replacement would recreate them.
        enable_config_map_mutable=True,
        enable_secret_mutable=True,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=depends_on),
    )


class LocalProvider(local_backup.LocalBackups):
    """InfrastructureProvider for the local landscape: every cluster is a kwokctl cluster."""

    def __init__(self, settings: LocalSettings) -> None:
        super().__init__(settings.workdir, settings.backup_request)
        self.settings = settings

    def cluster(
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
        """A LocalCluster, a Kubernetes provider bound to it, and its kwok nodes.

        With `encryption_config`, the cluster's kube-apiserver encrypts at rest as that EncryptionConfiguration says;
        with `client_ca`, it also accepts client certificates of that CA (the shoot's admin kubeconfigs). A shoot's
        nodes are its `machines` (the plan holds them, addressed); a garden's or seed's are `values.nodes`.
        """
        if values.kubeconfig_secret:
            return self.existing(values, parent)
        prefix = parent._name  # children are named from their parent
        cluster = LocalCluster(
            f"{prefix}-cluster",
            cluster_name=values.name,
            workdir=self.settings.workdir,
            kubernetes_version=self.settings.kubernetes_version,
            encryption_config=encryption_config,
            extra_client_cas=client_ca,
            pki=pki,
            restore=restore,
            serves_issuer=values.key.split("/")[0] == "seed",  # its tokens, which the local store trusts
            # Protected: it holds etcd's data and admin credentials. A replacement (new Kubernetes version, another
            # work directory) starts a garden or seed empty; a shoot comes back from its entry's final snapshot.
            opts=pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on), protect=True),
        )
        provider = functools.cache(lambda: _provider(values, parent, cluster.kubeconfig, [cluster]))
        labels = {naming.label("cluster"): values.key.replace("/", "."), "type": "kwok"}
        ready: list[pulumi.Resource] = []
        by_pool: dict[str, list[str]] = {}
        # A shoot's node stands for a machine of its pool's zone, named and labelled as one.
        for machine in machines:
            ready += self._node(prefix, machine.key, machine.name, labels | machine.labels, machine.network, cluster,
                                provider(), parent)  # fmt: skip
            by_pool.setdefault(machine.pool, []).append(machine.name)
        for i in range(len(machines), values.nodes):
            ready += self._node(prefix, str(i), f"{values.name}-node-{i}", labels, None, cluster, provider(), parent)
        identifier = naming.cluster_identifier(values.provider.value, values.name)
        return ClusterAccess(
            values.key, cluster.endpoint, cluster.kubeconfig, provider, [cluster, *ready], by_pool, identifier,
            kubeconfig_file=self._kubeconfig_file(values.name, cluster),
        )  # fmt: skip

    def _kubeconfig_file(self, name: str, cluster: LocalCluster) -> pulumi.Output[str]:
        """The reference reconcilers reach the cluster by: kwokctl's kubeconfig file, once the cluster is up.

        A path, not a credential: the file names the cluster's PKI files and goes with the cluster.
        """
        path = kwokctl.Cluster(name, str(Path(self.settings.workdir).resolve())).dir / "kubeconfig.yaml"
        return pulumi.Output.unsecret(cluster.kubeconfig.apply(lambda _: kubeconfig_file(str(path))))

    def reference(
        self,
        values: ClusterValues,
        parent: pulumi.Resource,
        kubeconfig: pulumi.Output[str],
        reach: pulumi.Output[str] | None,
        issuer: Issuer | None = None,
    ) -> ClusterAccess:
        """A local cluster another stack of this landscape registered (its garden, for a seed stack), or one given."""
        provider = functools.cache(lambda: _provider(values, parent, kubeconfig, []))
        identifier = naming.cluster_identifier(values.provider.value, values.name)
        endpoint = pulumi.Output.unsecret(kubeconfig.apply(server_of))
        return ClusterAccess(
            values.key, endpoint, kubeconfig, provider, identifier=identifier, kubeconfig_file=reach, issuer=issuer
        )

    def existing(self, values: ClusterValues, parent: pulumi.Resource) -> ClusterAccess:
        """A seed's cluster someone else runs (a kwokctl cluster), by the kubeconfig in the stack's secret config.

        Its nodes are its own; its issuer, where its spec names one, is where the object store fetches its keys.
        """
        kubeconfig = cloud.given_kubeconfig(values)
        issuer = Issuer(pulumi.Output.from_input(values.issuer), cloud=ProviderType.LOCAL) if values.issuer else None
        return self.reference(values, parent, kubeconfig, None, issuer)

    @staticmethod
    def _node(
        prefix: str,
        key: str,
        node_name: str,
        labels: dict[str, str],
        network: NodeNetwork | None,
        cluster: LocalCluster,
        provider: k8s.Provider,
        parent: pulumi.Resource,
    ) -> list[pulumi.Resource]:
        """A kwok node and, where the plan addresses it, its InternalIPs of each family."""
        node = kwok_node(
            f"{prefix}-node-{key}", node_name, labels, provider, parent, network.pod_cidrs if network else ()
        )
        if network is None:
            return [node]
        addresses = NodeAddresses(
            f"{prefix}-node-{key}-addresses",
            kubeconfig=cluster.kubeconfig,
            node=node_name,
            node_uid=node.metadata.apply(lambda m: m.uid or ""),
            addresses=list(network.addresses),
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[node]),
        )
        return [node, addresses]

    def publish_static_pods(
        self,
        access: ClusterAccess,
        pool: str,
        manifests: Mapping[str, pulumi.Output[dict[str, Any]]],
        parent: pulumi.Resource,
    ) -> list[pulumi.Resource]:
        """Kwok stands in for kubelet here: each control-plane node gets the mirror pods of the pool's static pods.

        They are the manifests as node-agent writes them, named `<pod>-<node>` and annotated as kubelet does, so
        the API server validates them as mirror pods and kwok runs them on the node.
        """
        pods: list[pulumi.Resource] = []
        for i, node in enumerate(access.nodes_by_pool.get(pool, ())):
            mirrored = [static.apply(functools.partial(mirror_pod, node)) for static in manifests.values()]
            pods.append(
                ObjectSet(
                    # Named by pool and index, not by node: resource names must not depend on the stack.
                    f"{parent._name}-static-pods-{pool}-{i}",
                    kubeconfig=access.reach,
                    cluster=access.identifier,
                    # A pod's spec is fixed: a new manifest is a new mirror pod, as kubelet makes one (apply.REPLACED).
                    manifests=pulumi.Output.all(*mirrored).apply(list),
                    opts=pulumi.ResourceOptions(parent=parent, depends_on=list(access.ready)),
                )
            )
        return pods

    def network(self, plan: NetworkPlan, parent: pulumi.Resource) -> NetworkAccess:
        """Nothing to build on loopback: every range is the shoot's own, recorded on its record and nodes."""
        nodes = plan.subnet("nodes")
        ranges = {
            "nodes": [c for c in (nodes.ipv4, nodes.ipv6) if isinstance(c, str)],
            "pods": [str(r) for r in plan.pods],
            "services": [str(r) for r in plan.services],
        }
        return NetworkAccess(ranges=pulumi.Output.from_input(ranges), subnets=pulumi.Output.from_input({}))

    def machine_directory(self, values: ClusterValues) -> str | None:
        """`<workdir>/machines/<cluster>`: it outlives the cluster, whose lost or new self is made from it."""
        return str(Path(self.settings.workdir).resolve() / MACHINES / values.name)

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
        """On local, a shoot's API is one more kwokctl cluster, its nodes addressed from the shoot's ranges.

        It stands in for what the shoot's control plane serves (kwok runs no real kube-apiserver in the seed or on
        a node), with the shoot's encryption configuration, PKI (its CA, service-account key) and client CA, as that
        control plane does; lost, it is made again from its entry's newest snapshot (reconciler/shoot_cluster.py).
        Its kwok nodes stand in for the machines MCM would make (nothing runs the local sidecar's pods as nodes).
        """
        return self.cluster(
            values, parent, depends_on,
            encryption_config=encryption_config, client_ca=client_ca, machines=machines, pki=pki, restore=restore,
        )  # fmt: skip

    def machine_sidecar(self, namespace: str) -> Sidecar:
        """provider-local's sidecar."""
        return machine_providers.sidecar_local(namespace)

    def shoot_issuer(
        self, shoot: ShootValues, public_key: pulumi.Output[str], parent: pulumi.Resource
    ) -> Issuer | None:
        """None: kwok machines call no cloud."""
        return None

    def machine_credentials(
        self, shoot: ShootValues, network: NetworkAccess, seed: ClusterAccess, parent: pulumi.Resource
    ) -> MachineCredentials | None:
        """None: kwok machines call no cloud."""
        return None

    def machine_class(self, shoot: ShootValues, d: ZoneDeployment, network: NetworkAccess) -> Object:
        """The local class: the image, the node labels and the ranges nodes are addressed from; nothing of a cloud."""
        return machine_providers.local_machine_class(shoot.machine_namespace, d, local_node_ranges(shoot.networking))

    def machine_controller(
        self,
        shoot: ShootValues,
        seed: SeedAccess,
        shoot_api: ClusterAccess,
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> Sequence[pulumi.Resource]:
        """The real machine-controller-manager and arbor's kwok sidecar as processes: kwok only simulates their Pod.

        Control cluster: the seed (the shoot's namespace there); target: the shoot's API. Both through the
        clusters' admin kubeconfigs, written into each process's directory under the work dir with its log.
        """
        files: dict[str, pulumi.Input[str]] = {
            CONTROL_KUBECONFIG: seed.cluster.kubeconfig,
            TARGET_KUBECONFIG: shoot_api.kubeconfig,
        }
        programs = (
            (
                "mcm-process",
                machines.MCM_NAME,
                process_args(machines.MCM_FLAGS, shoot.machine_namespace, LOCAL_PROCESS_FLAGS),
            ),
            (
                "sidecar-process",
                machine_providers.KWOK_SIDECAR,
                process_args(machines.SIDECAR_FLAGS, shoot.machine_namespace, KWOK_SIDECAR_FLAGS),
            ),
        )
        return [
            LocalProcess(
                f"{parent._name}-{suffix}",
                program=program,
                directory=process_dir(self.settings.workdir, shoot.cluster.name, program),
                args=args,
                files=files,
                opts=pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on)),
            )
            for suffix, program, args in programs
        ]

    def resource_manager(
        self,
        shoot: ShootValues,
        seed: SeedAccess,
        shoot_api: ClusterAccess,
        serving: ServingSecret,
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> ResourceManagerServing:
        """The real gardener-resource-manager as a process: kwok only simulates pods (local_resource_manager.py)."""
        directory = process_dir(self.settings.workdir, shoot.cluster.name, resource_manager.NAME)
        return run_resource_manager(shoot, seed, shoot_api, serving, directory, parent, depends_on)

    def control_plane_machine(
        self, shoot: ShootValues, network: NetworkAccess, bundle: pulumi.Output[str], parent: pulumi.Resource
    ) -> ExposedControlPlane:
        """Never asked: a local self-hosted shoot's nodes are the kwok nodes `shoot_api` registers."""
        raise ValueError(f"{shoot.technical_id}: local control-plane nodes are kwok nodes, not machines")
