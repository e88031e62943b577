"""Pure health evaluation of a shoot: the conditions Gardener reports, from what the clusters say.

- APIServerAvailable: the shoot's API answers /readyz and its kube-apiserver is available;
- ControlPlaneHealthy: every control-plane component is fully ready: the Deployments and StatefulSets in the
  seed namespace of a hosted shoot, or the mirror pods kubelet publishes for a self-hosted shoot's static pods;
- EveryNodeReady: the shoot has at least as many nodes as its pools' minimums, and every node is Ready; for a
  hosted shoot also every Machine is Running with a node, and every MachineDeployment has rolled out (all its
  replicas updated and available at its latest generation), as Gardener's care reads machine-controller-manager's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

APISERVER = "APIServerAvailable"
CONTROL_PLANE = "ControlPlaneHealthy"
NODES = "EveryNodeReady"
CONDITIONS = (APISERVER, CONTROL_PLANE, NODES)


@dataclass(frozen=True)
class Condition:
    """One condition: status True or False, with a reason and a message for people."""

    type: str
    status: bool
    reason: str
    message: str


def _component(obj: dict[str, Any]) -> str:
    """The component an object runs: its name, or for a mirror pod its name without kubelet's `-<node>`."""
    name = str(obj["metadata"]["name"])
    node = (obj.get("spec") or {}).get("nodeName")
    return name.removesuffix(f"-{node}") if obj.get("kind") == "Pod" and node else name


def _ready_workload(obj: dict[str, Any]) -> bool:
    """Whether a Deployment or StatefulSet has all its desired replicas ready (and available), or a pod is Ready."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if obj.get("kind") == "Pod":
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    desired = spec.get("replicas", 1)
    key = "availableReplicas" if obj.get("kind") == "Deployment" else "readyReplicas"
    return bool(status.get(key, 0) >= desired and status.get("updatedReplicas", 0) >= desired)


def _node_ready(node: dict[str, Any]) -> bool:
    """Whether a node's Ready condition is True."""
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _machine_problem(machine: dict[str, Any]) -> str | None:
    """Why a Machine is not a healthy node yet (phase not Running, or no node), or None."""
    name = machine["metadata"]["name"]
    status = machine.get("status") or {}
    phase = (status.get("currentStatus") or {}).get("phase") or "Pending"
    if phase != "Running":
        return f"machine {name} is {phase}"
    if not status.get("node") and not (machine["metadata"].get("labels") or {}).get("node"):
        return f"machine {name} has no node"
    return None


def _rollout_problem(deployment: dict[str, Any]) -> str | None:
    """Why a MachineDeployment has not rolled out (an old generation, or replicas not all updated and available)."""
    meta, spec, status = deployment["metadata"], deployment.get("spec") or {}, deployment.get("status") or {}
    wanted = spec.get("replicas", 0)
    observed = status.get("observedGeneration", 0) >= meta.get("generation", 0)
    counts = [status.get(k, 0) for k in ("replicas", "updatedReplicas", "availableReplicas")]
    if observed and counts == [wanted] * 3:
        return None
    return f"machine deployment {meta['name']} is rolling out ({counts[1]}/{wanted} updated, {counts[2]} available)"


def _nodes(
    nodes: list[dict[str, Any]], expected: int, machines: list[dict[str, Any]], deployments: list[dict[str, Any]]
) -> Condition:
    """EveryNodeReady from the nodes and, for a hosted shoot, its machines and machine deployments."""
    not_ready = sorted(n["metadata"]["name"] for n in nodes if not _node_ready(n))
    problems = [p for p in (*map(_machine_problem, machines), *map(_rollout_problem, deployments)) if p]
    if not_ready:
        problems.insert(0, f"nodes not ready: {', '.join(not_ready)}")
    elif len(nodes) < expected:
        problems.insert(0, f"{len(nodes)} of at least {expected} nodes registered")
    if problems:
        return Condition(NODES, False, "NodesUnhealthy", "; ".join(problems))
    return Condition(NODES, True, "EveryNodeReady", f"all {len(nodes)} nodes are ready")


def evaluate(
    api_ready: bool,
    workloads: Iterable[dict[str, Any]],
    nodes: Iterable[dict[str, Any]],
    expected_nodes: int,
    machines: Iterable[dict[str, Any]] = (),
    deployments: Iterable[dict[str, Any]] = (),
) -> tuple[Condition, ...]:
    """A shoot's three conditions from its API, control-plane workloads (or mirror pods), nodes and machines."""
    items = list(workloads)
    apiservers = [o for o in items if _component(o) == "kube-apiserver"]
    api_ok = api_ready and bool(apiservers) and all(_ready_workload(o) for o in apiservers)
    api = Condition(
        APISERVER,
        api_ok,
        "HealthzRequestSucceeded" if api_ok else "HealthzRequestFailed",
        "API server /readyz responds with ok" if api_ok else "API server is not ready",
    )
    unready = sorted(o["metadata"]["name"] for o in items if not _ready_workload(o))
    cp_ok = bool(items) and not unready
    control_plane = Condition(
        CONTROL_PLANE,
        cp_ok,
        "ControlPlaneRunning" if cp_ok else "DeploymentUnhealthy",
        "all control-plane components are healthy"
        if cp_ok
        else f"not ready: {', '.join(unready) or 'no control-plane workload found'}",
    )
    every_node = _nodes(list(nodes), expected_nodes, list(machines), list(deployments))
    return (api, control_plane, every_node)


def last_operation_state(conditions: Iterable[Condition]) -> str:
    """`Succeeded` when every condition holds, else `Error`, as Gardener's last operation reads."""
    return "Succeeded" if all(c.status for c in conditions) else "Error"
