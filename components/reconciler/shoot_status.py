"""ShootStatus: after a shoot converged, writes its record's status in the garden from the real clusters.

The status carries Gardener's last operation (type, state, progress, time) and the conditions
APIServerAvailable, ControlPlaneHealthy and EveryNodeReady (components/render/health.py). The resource's outputs hold
the condition states without timestamps, so `pulumi refresh` shows a diff exactly when the health changed,
and `up` writes the record again.
"""

from __future__ import annotations

import datetime
import time
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.naming import API_GROUP, API_VERSION
from components.reconciler.kube import Kube, KubeError
from components.reconciler.provider import Provider
from components.render import health
from components.render.health import Condition

PROVIDER_VERSION = "2"


MIRROR = "kubernetes.io/config.mirror"
MACHINES = "/apis/machine.sapcloud.io/v1alpha1/namespaces"
# How long a write waits for MCM to bring the machines to what the update asked for (a roll on local: minutes).
SETTLE_S = 600.0
# How long a control plane just applied gets to answer (its pods start on the seed's nodes).
STARTING_S = 120.0
POLL_S = 3.0


def _control_plane(props: dict[str, Any], shoot: Kube, seed: Kube | None) -> list[dict[str, Any]]:
    """The control plane's workloads in the seed namespace, or a self-hosted shoot's mirror pods in kube-system."""
    if seed is None:
        pods = shoot.get("/api/v1/namespaces/kube-system/pods")["items"]
        return [{**p, "kind": "Pod"} for p in pods if MIRROR in ((p.get("metadata") or {}).get("annotations") or {})]
    ns = props["seedNamespace"]
    return [
        {**o, "kind": kind}
        for kind, path in (("Deployment", "deployments"), ("StatefulSet", "statefulsets"))
        for o in seed.get(f"/apis/apps/v1/namespaces/{ns}/{path}")["items"]
    ]


def _machines(props: dict[str, Any], seed: Kube | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A hosted shoot's Machines and MachineDeployments in its seed namespace (none for a self-hosted shoot)."""
    if seed is None:
        return [], []
    ns = props["seedNamespace"]
    machines, deployments = (seed.find(f"{MACHINES}/{ns}/{kind}") for kind in ("machines", "machinedeployments"))
    return (machines or {}).get("items") or [], (deployments or {}).get("items") or []


def _observe(props: dict[str, Any]) -> tuple[health.Condition, ...]:
    """The shoot's conditions as its clusters report them now."""
    shoot = Kube.from_kubeconfig(props["shootKubeconfig"])
    # One client of the seed for the whole look: the status is observed every few seconds while it settles.
    seed = Kube.from_kubeconfig(props["seedKubeconfig"]) if props.get("seedKubeconfig") else None
    try:
        workloads = _control_plane(props, shoot, seed)
    except KubeError:
        workloads = []
    try:
        nodes = shoot.get("/api/v1/nodes")["items"]
        machines, deployments = _machines(props, seed)
    except KubeError:
        nodes, machines, deployments = [], [], []
    return health.evaluate(shoot.ready(), workloads, nodes, int(props["expectedNodes"]), machines, deployments)


def _settled(
    props: dict[str, Any], timeout_s: float = SETTLE_S, poll_s: float = POLL_S, starting_s: float = STARTING_S
) -> tuple[Condition, ...]:
    """The conditions once the shoot caught up, or as they are when waiting for it is over.

    MCM makes and rolls machines after `up` applied their objects, and Gardener's reconcile waits for its worker
    likewise: EveryNodeReady alone is observed again up to `timeout_s`. A control plane just applied (a new shoot,
    one restored on another seed) gets `starting_s` to become ready, as Gardener waits for kube-apiserver.
    """
    started = time.monotonic()
    while True:
        conditions = _observe(props)
        failing = {c.type for c in conditions if not c.status}
        waited = time.monotonic() - started
        nodes_only = failing == {health.NODES} and waited < timeout_s
        if not (nodes_only or (failing and waited < min(starting_s, timeout_s))):
            return conditions
        time.sleep(poll_s)


def _outputs(props: dict[str, Any], conditions: tuple[health.Condition, ...]) -> dict[str, Any]:
    """Inputs plus condition states and the last operation's state (no timestamps: they would always drift)."""
    return {
        **props,
        "conditions": {c.type: "True" if c.status else "False" for c in conditions},
        "state": health.last_operation_state(conditions),
    }


def _write(props: dict[str, Any], operation: str) -> dict[str, Any]:
    """Observes the shoot and writes its record's status in the garden; returns the outputs."""
    conditions = _settled(props)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    state = health.last_operation_state(conditions)
    status = {
        "status": {
            "technicalID": props["seedNamespace"],
            "lastOperation": {
                "type": operation,
                "state": state,
                "progress": 100,
                "lastUpdateTime": now,
                "description": "Shoot cluster has been successfully reconciled."
                if state == "Succeeded"
                else "Shoot cluster reconciled, but not every condition holds.",
            },
            "conditions": [
                {
                    "type": c.type,
                    "status": "True" if c.status else "False",
                    "reason": c.reason,
                    "message": c.message,
                    "lastTransitionTime": now,
                    "lastUpdateTime": now,
                }
                for c in conditions
            ],
        }
    }
    garden = Kube.from_kubeconfig(props["gardenKubeconfig"])
    path = f"/apis/{API_GROUP}/{API_VERSION}/namespaces/{props['namespace']}/shoots/{props['name']}"
    # A condition's lastTransitionTime moves only when its status does, as Gardener keeps it.
    before = {c["type"]: c for c in ((garden.get(path).get("status") or {}).get("conditions") or []) if "type" in c}
    for condition in status["status"]["conditions"]:
        previous = before.get(condition["type"])
        if previous and previous.get("status") == condition["status"] and previous.get("lastTransitionTime"):
            condition["lastTransitionTime"] = previous["lastTransitionTime"]
    garden.merge_patch(f"{path}/status", status)
    return _outputs(props, conditions)


class ShootStatusProvider(Provider):
    """Writes a Shoot record's status; read() observes the clusters again."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """First status of a new shoot: last operation Create."""
        return CreateResult(id_=f"{props['namespace']}/{props['name']}", outs=_write(props, "Create"))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """Reconcile when an input changed (the shoot was changed) or refresh found the health changed."""
        inputs = [k for k in news if k not in ("conditions", "state") and olds.get(k) != news.get(k)]
        unhealthy = olds.get("state") not in (None, "Succeeded")
        return DiffResult(changes=bool(inputs) or unhealthy, replaces=[k for k in ("namespace", "name") if k in inputs])

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Status after a change: last operation Reconcile."""
        return UpdateResult(outs=_write(news, "Reconcile"))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The shoot's health now; a record that is gone makes the resource gone."""
        garden = Kube.from_kubeconfig(props["gardenKubeconfig"])
        try:
            garden.get(f"/apis/{API_GROUP}/{API_VERSION}/namespaces/{props['namespace']}/shoots/{props['name']}")
        except KubeError as err:
            if err.status == 404:
                return ReadResult(id_="", outs={})
            # The garden cannot be asked: the health is unknown, and the next `up` writes the status again.
            return ReadResult(id_=id_, outs={**props, "state": "Unknown"})
        return ReadResult(id_=id_, outs=_outputs(props, _observe(props)))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """Nothing to undo: the status goes with its record."""


class ShootStatus(Resource, module="arbor", name="ShootStatus"):
    """The status of one Shoot record, written from the real clusters after the shoot converged."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        conditions: pulumi.Output[dict[str, str]]
        state: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        namespace: str,
        shoot: str,
        seed_namespace: str,
        expected_nodes: int,
        garden_kubeconfig: pulumi.Input[str],
        seed_kubeconfig: pulumi.Input[str] | None,
        shoot_kubeconfig: pulumi.Input[str],
        kubernetes_version: str,
        machine_deployments: dict[str, str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "namespace": namespace,
            "name": shoot,
            "seedNamespace": seed_namespace,
            "expectedNodes": expected_nodes,
            "gardenKubeconfig": garden_kubeconfig,
            # A self-hosted shoot has no seed: its control plane is read from its own mirror pods.
            "seedKubeconfig": seed_kubeconfig or "",
            "shootKubeconfig": shoot_kubeconfig,
            "kubernetesVersion": kubernetes_version,
            # Each MachineDeployment's class and replicas: a change MCM carries out is one the status waits for.
            "machineDeployments": machine_deployments or {},
            "version": PROVIDER_VERSION,
            "conditions": None,
            "state": None,
        }
        super().__init__(ShootStatusProvider(), name, props, opts)
