"""Shoot health: conditions from workloads, API readiness and nodes, as a table."""

from __future__ import annotations

from typing import Any

import pytest

from components.render import health


def deployment(name: str, replicas: int = 1, available: int = 1) -> dict[str, Any]:
    """A Deployment as the API returns it."""
    return {"kind": "Deployment", "metadata": {"name": name}, "spec": {"replicas": replicas},
            "status": {"availableReplicas": available, "updatedReplicas": available}}  # fmt: skip


def statefulset(name: str, ready: int = 1) -> dict[str, Any]:
    """A StatefulSet as the API returns it."""
    return {"kind": "StatefulSet", "metadata": {"name": name}, "spec": {"replicas": 1},
            "status": {"readyReplicas": ready, "updatedReplicas": ready}}  # fmt: skip


def node(name: str, ready: str = "True") -> dict[str, Any]:
    """A Node with its Ready condition."""
    return {"metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": ready}]}}


HEALTHY = [deployment("kube-apiserver", 2, 2), deployment("kube-scheduler"), statefulset("etcd-main")]


@pytest.mark.parametrize(
    ("case", "api_ready", "workloads", "nodes", "expected", "want"),
    [
        ("all healthy", True, HEALTHY, [node("n0")], 1, (True, True, True)),
        ("api not ready", False, HEALTHY, [node("n0")], 1, (False, True, True)),
        ("apiserver half available", True,
         [deployment("kube-apiserver", 2, 1), *HEALTHY[1:]], [node("n0")], 1, (False, False, True)),
        ("etcd not ready", True, [*HEALTHY[:2], statefulset("etcd-main", 0)], [node("n0")], 1, (True, False, True)),
        ("no workloads at all", True, [], [node("n0")], 1, (False, False, True)),
        ("node not ready", True, HEALTHY, [node("n0"), node("n1", "False")], 2, (True, True, False)),
        ("too few nodes", True, HEALTHY, [node("n0")], 2, (True, True, False)),
        ("no nodes expected", True, HEALTHY, [], 0, (True, True, True)),
    ],
)  # fmt: skip
def test_conditions(
    case: str,
    api_ready: bool,
    workloads: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    expected: int,
    want: tuple[bool, bool, bool],
) -> None:
    """GIVEN what the clusters report WHEN evaluated THEN each condition is as expected."""
    conditions = health.evaluate(api_ready, workloads, nodes, expected)
    assert [c.type for c in conditions] == list(health.CONDITIONS)
    assert tuple(c.status for c in conditions) == want
    assert health.last_operation_state(conditions) == ("Succeeded" if all(want) else "Error")


def test_messages_name_what_is_wrong() -> None:
    """GIVEN an unready StatefulSet and node WHEN evaluated THEN the messages name them."""
    conditions = health.evaluate(True, [*HEALTHY[:2], statefulset("etcd-main", 0)], [node("n1", "False")], 1)
    assert conditions[1].message == "not ready: etcd-main"
    assert conditions[2].message == "nodes not ready: n1"


def machine(name: str, phase: str = "Running", node: str = "n0") -> dict[str, Any]:
    """A Machine as MCM writes its status."""
    return {"metadata": {"name": name, "labels": {"node": node} if node else {}},
            "status": {"currentStatus": {"phase": phase}, "node": node}}  # fmt: skip


def machine_deployment(
    name: str, replicas: int = 1, updated: int = 1, available: int = 1, observed: int = 1
) -> dict[str, Any]:
    """A MachineDeployment at generation 1 as MCM writes its status."""
    return {"metadata": {"name": name, "generation": 1}, "spec": {"replicas": replicas},
            "status": {"observedGeneration": observed, "replicas": max(replicas, updated),
                       "updatedReplicas": updated, "availableReplicas": available}}  # fmt: skip


@pytest.mark.parametrize(
    ("case", "machines", "deployments", "ok", "says"),
    [
        ("running and rolled out", [machine("m0")], [machine_deployment("md")], True, "all 1 nodes are ready"),
        ("machine pending", [machine("m0", "Pending", "")], [machine_deployment("md")], False, "machine m0 is Pending"),
        ("machine failed", [machine("m0", "Failed")], [machine_deployment("md")], False, "machine m0 is Failed"),
        ("running without node", [machine("m0", node="")], [], False, "machine m0 has no node"),
        ("rolling", [machine("m0")], [machine_deployment("md", 1, 0, 1)], False, "md is rolling out (0/1 updated"),
        ("old generation", [machine("m0")], [machine_deployment("md", observed=0)], False, "md is rolling out"),
        ("scaling up", [machine("m0")], [machine_deployment("md", 2, 1, 1)], False, "md is rolling out (1/2"),
    ],
)  # fmt: skip
def test_machines_in_every_node_ready(
    case: str, machines: list[dict[str, Any]], deployments: list[dict[str, Any]], ok: bool, says: str
) -> None:
    """GIVEN a hosted shoot's Machines and MachineDeployments WHEN evaluated THEN EveryNodeReady reads them."""
    *_, nodes = health.evaluate(True, HEALTHY, [node("n0")], 1, machines, deployments)
    assert (nodes.status, nodes.reason) == (ok, "EveryNodeReady" if ok else "NodesUnhealthy")
    assert says in nodes.message
