"""MachinesReleased: machine-controller-manager outlives the machine objects it holds, when a shoot's workers go.

MCM puts finalizers on what it manages in a shoot's seed namespace (MachineDeployments, MachineSets, Machines,
MachineClasses and the Secrets classes reference) and removes them only once the machines behind them are gone.
Stopping MCM first would leave those objects, and the seed namespace, stuck for ever. The machine objects depend on
this resource and it depends on MCM, so the engine deletes the objects first, then this resource, whose delete
waits until no MCM finalizer is left in the namespace (as Gardener's worker deletion waits for the machines),
and only then MCM. Creating it does nothing.

The engine stores the provider pickled by reference to this module: keep its path and class names.
"""

from __future__ import annotations

import time
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource

from components.reconciler.kube import Kube, KubeError, secret_path
from components.reconciler.provider import Provider

PROVIDER_VERSION = "1"
GROUP_PATH = "/apis/machine.sapcloud.io/v1alpha1/namespaces"
MACHINE_KINDS = ("machinedeployments", "machinesets", "machines", "machineclasses")
# Every finalizer MCM sets starts so (machine.sapcloud.io/machine-controller[-manager]).
FINALIZER_PREFIX = "machine.sapcloud.io/"
# Upper bound of the wait: a machine's drain and deletion, with MCM's retries (Gardener waits as long).
TIMEOUT_S = 900.0
POLL_S = 2.0


def _held(kube: Kube, namespace: str) -> list[tuple[str, dict[str, Any]]]:
    """The collection path and metadata of each object in the namespace that still carries an MCM finalizer."""
    paths = [f"{GROUP_PATH}/{namespace}/{kind}" for kind in MACHINE_KINDS] + [secret_path(namespace)]
    found = []
    for path in paths:
        listed = kube.find(path)
        for item in (listed or {}).get("items") or []:
            meta = item.get("metadata") or {}
            if any(f.startswith(FINALIZER_PREFIX) for f in meta.get("finalizers") or []):
                found.append((path, meta))
    return found


def _named(path: str, meta: dict[str, Any]) -> str:
    """`<kind>/<name>` of an object listed at `path`."""
    return f"{path.rsplit('/', 1)[1]}/{meta.get('name')}"


def held(kube: Kube, namespace: str) -> list[str]:
    """`<kind>/<name>` of each object in the namespace that still carries an MCM finalizer."""
    return [_named(path, meta) for path, meta in _held(kube, namespace)]


def release(kube: Kube, namespace: str) -> list[str]:
    """Takes MCM's finalizers off every object it holds in the namespace, with MCM stopped (a migration's source).

    Gardener's worker migration does so, so that the namespace can go without deleting the machines behind them.
    Returns `<kind>/<name>` of each released object.
    """
    released = []
    for path, meta in _held(kube, namespace):
        kept = [f for f in meta.get("finalizers") or [] if not f.startswith(FINALIZER_PREFIX)]
        # The resource version makes a patch of an object changed meanwhile fail, not drop another's finalizer.
        body = {"metadata": {"finalizers": kept or None, "resourceVersion": meta.get("resourceVersion")}}
        kube.merge_patch(f"{path}/{meta['name']}", body)
        released.append(_named(path, meta))
    return released


def wait_released(kube: Kube, namespace: str, timeout_s: float = TIMEOUT_S, poll_s: float = POLL_S) -> None:
    """Returns once nothing in the namespace carries an MCM finalizer; fails naming what does after the timeout."""
    deadline = time.monotonic() + timeout_s
    while remaining := held(kube, namespace):
        if time.monotonic() >= deadline:
            raise KubeError(
                f"namespace {namespace}: machine-controller-manager still holds {', '.join(sorted(remaining))} "
                f"after {timeout_s:.0f} s; it stays running until they are released (see its log)"
            )
        time.sleep(poll_s)


class MachinesReleasedProvider(Provider):
    """Nothing on create; delete waits for MCM to release the namespace's machine objects."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Records the namespace."""
        return CreateResult(id_=props["namespace"], outs=props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """The namespace or logic version changed: kept in place (delete is all it does)."""
        changed = any(olds.get(k) != news.get(k) for k in ("namespace", "version"))
        return DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """Nothing to read: it holds no object of its own."""
        return ReadResult(id_=id_, outs=props)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Waits until MCM has released the namespace's machine objects; an unreachable seed has nothing to wait for."""
        try:
            kube = Kube.from_kubeconfig(props["kubeconfig"])
        except KubeError:
            return
        if kube.ready():
            wait_released(kube, props["namespace"])


class MachinesReleased(Resource, module="arbor", name="MachinesReleased"):
    """Deleted after a shoot's machine objects and before its machine-controller-manager: waits for MCM to finish."""

    def __init__(
        self, name: str, *, kubeconfig: pulumi.Input[str], namespace: str, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        props = {"kubeconfig": kubeconfig, "namespace": namespace, "version": PROVIDER_VERSION}
        super().__init__(MachinesReleasedProvider(), name, props, opts)
