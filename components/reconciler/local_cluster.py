"""LocalCluster: a real local Kubernetes cluster (kwokctl, binary runtime) as a Pulumi dynamic resource.

`read()` checks the cluster for real (/readyz over TLS), so `pulumi refresh` records a stopped cluster as
`running: false` (and a deleted one as gone), and the next `pulumi up` starts or recreates it. The kubeconfig
is a secret output. Inputs that name the cluster or its Kubernetes version replace it; the preview says so.

The engine stores the provider pickled by reference to this module (the provider process imports it from
the project root): moving or renaming the module or class needs a shim left behind, or existing resources
can no longer be read or deleted.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider, UpdateResult

from components.reconciler import kwokctl

# Bump when the provider logic changes, so that every LocalCluster shows a diff and is reconciled again.
PROVIDER_VERSION = "1"
# Inputs that identify a different cluster: a change replaces it (kwokctl cannot rename or upgrade in place).
REPLACE_ON = ("clusterName", "workdir", "kubernetesVersion")


def _cluster(props: dict[str, Any]) -> kwokctl.Cluster:
    """The kwokctl cluster the properties describe."""
    return kwokctl.Cluster(name=props["clusterName"], workdir=props["workdir"])


def _outputs(props: dict[str, Any], cluster: kwokctl.Cluster) -> dict[str, Any]:
    """Inputs plus what the running cluster tells: endpoint, kubeconfig, running."""
    return {
        **{k: props[k] for k in ("clusterName", "workdir", "kubernetesVersion", "version")},
        "endpoint": kwokctl.endpoint(cluster),
        "kubeconfig": kwokctl.kubeconfig(cluster),
        "running": True,
    }


def _ensure_running(props: dict[str, Any]) -> dict[str, Any]:
    """Brings the cluster up whatever state it is in (absent, stopped, half-created) and returns outputs."""
    cluster = _cluster(props)
    wanted = props["kubernetesVersion"]
    have = kwokctl.server_version()
    if have != wanted:
        raise kwokctl.KwokError(f"kube-apiserver on PATH is {have}, the stack wants {wanted}: run `make tools`")
    if not kwokctl.ready(cluster):
        if cluster.exists():
            try:
                kwokctl.start(cluster)
            except kwokctl.KwokError:
                # A cluster whose files a crash left half-written cannot start: make it again.
                kwokctl.delete(cluster)
        if not cluster.exists():
            kwokctl.create(cluster)
        kwokctl.wait_ready(cluster)
    return _outputs(props, cluster)


class LocalClusterProvider(ResourceProvider):
    """CRUD of a kwokctl cluster; clients and processes are made inside each method (nothing captured)."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Creates the cluster, or adopts it when a crashed run already made it."""
        return CreateResult(id_=props["clusterName"], outs=_ensure_running(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """Replaces on a new identity; updates when the logic version changed or refresh found it stopped."""
        replaces = [k for k in REPLACE_ON if olds.get(k) != news.get(k)]
        stopped = olds.get("running") is False
        changed = bool(replaces) or stopped or olds.get("version") != news.get("version")
        return DiffResult(changes=changed, replaces=replaces, delete_before_replace=True)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Starts a stopped cluster (or recreates a lost one); the kubeconfig stays when the pki survived."""
        return UpdateResult(outs=_ensure_running(news))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The cluster as it really is: gone (empty id), stopped (`running: false`) or running."""
        cluster = _cluster(props)
        if not cluster.exists():
            return ReadResult(id_="", outs={})
        if not kwokctl.ready(cluster):
            return ReadResult(id_=id_, outs={**props, "running": False})
        return ReadResult(id_=id_, outs=_outputs(props, cluster))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Stops every process of the cluster and removes its files."""
        kwokctl.delete(_cluster(props))


class LocalCluster(Resource, module="arbor", name="LocalCluster"):
    """A local Kubernetes cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)."""

    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    running: pulumi.Output[bool]

    def __init__(
        self,
        name: str,
        cluster_name: str,
        workdir: str,
        kubernetes_version: str,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "clusterName": cluster_name,
            "workdir": workdir,
            "kubernetesVersion": kubernetes_version,
            "version": PROVIDER_VERSION,
            "endpoint": None,
            "kubeconfig": None,
            "running": None,
        }
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=["kubeconfig"]))
        super().__init__(LocalClusterProvider(), name, props, opts)
