"""Pure health evaluation of a shoot: the conditions Gardener reports, from what the clusters say.

- APIServerAvailable: the shoot's API answers /readyz and its kube-apiserver is available;
- ControlPlaneHealthy: every control-plane component is fully ready: the Deployments and StatefulSets in the
  seed namespace of a hosted shoot, or the mirror pods kubelet publishes for a self-hosted shoot's static pods;
- EveryNodeReady: the shoot has at least as many nodes as its pools' minimums, and every node is Ready.
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


def evaluate(
    api_ready: bool, workloads: Iterable[dict[str, Any]], nodes: Iterable[dict[str, Any]], expected_nodes: int
) -> tuple[Condition, ...]:
    """The three conditions of a shoot from its API, its control-plane workloads (or mirror pods) and its nodes."""
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
    node_list = list(nodes)
    not_ready = sorted(n["metadata"]["name"] for n in node_list if not _node_ready(n))
    nodes_ok = len(node_list) >= expected_nodes and not not_ready
    if nodes_ok:
        message = f"all {len(node_list)} nodes are ready"
    elif not_ready:
        message = f"nodes not ready: {', '.join(not_ready)}"
    else:
        message = f"{len(node_list)} of at least {expected_nodes} nodes registered"
    every_node = Condition(NODES, nodes_ok, "EveryNodeReady" if nodes_ok else "NodesUnhealthy", message)
    return (api, control_plane, every_node)


def last_operation_state(conditions: Iterable[Condition]) -> str:
    """`Succeeded` when every condition holds, else `Error`, as Gardener's last operation reads."""
    return "Succeeded" if all(c.status for c in conditions) else "Error"
