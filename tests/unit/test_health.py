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
