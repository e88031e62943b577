"""The layers on the real engine: shoots and their status in the garden, control planes in the seed.

Project RBAC is enforced by the real API server. That a removed shoot takes its parts and nothing else is in
test_deletions, on its own small stack.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.integration.engine import Stack, kubectl

pytestmark = pytest.mark.integration


def test_garden_lists_every_shoot_succeeded_with_conditions_true(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN the local landscape after `up` WHEN the garden is asked for shoots THEN all three are there, healthy.

    The hosted shoots' control planes are read from the seed, the self-hosted one's from its mirror pods.
    """
    garden = local_stack.outputs()["kubeconfigs"]["garden"]
    shoots = json.loads(kubectl(garden, tmp_path, "get", "shoots", "-A", "-o", "json"))["items"]
    assert sorted((s["metadata"]["namespace"], s["metadata"]["name"]) for s in shoots) == [
        ("garden-dev", "web"),
        ("garden-ops", "db"),
        ("garden-ops", "root"),
    ]
    for shoot in shoots:
        status = shoot["status"]
        assert status["lastOperation"]["state"] == "Succeeded"
        assert status["lastOperation"]["type"] in ("Create", "Reconcile")
        assert status["lastOperation"]["progress"] == 100
        assert {c["type"]: c["status"] for c in status["conditions"]} == {
            "APIServerAvailable": "True",
            "ControlPlaneHealthy": "True",
            "EveryNodeReady": "True",
        }
    table = kubectl(garden, tmp_path, "get", "shoots", "-A")
    assert "Succeeded" in table and "local-1" in table


def test_control_plane_deployments_are_available_in_the_seed(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN the local landscape WHEN the seed is asked THEN every control-plane Deployment (and MCM) is Available."""
    seed = local_stack.outputs()["kubeconfigs"]["seed/local-1"]
    for namespace in ("shoot--dev--web", "shoot--ops--db"):
        deployments = json.loads(kubectl(seed, tmp_path, "get", "deployments", "-n", namespace, "-o", "json"))["items"]
        names = sorted(d["metadata"]["name"] for d in deployments)
        assert names == ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "machine-controller-manager"]
        for d in deployments:
            available = {c["type"]: c["status"] for c in d["status"]["conditions"]}["Available"]
            assert available == "True", d["metadata"]["name"]
        statefulsets = json.loads(kubectl(seed, tmp_path, "get", "statefulsets", "-n", namespace, "-o", "json"))
        assert sorted((s["metadata"]["name"], s["status"].get("readyReplicas")) for s in statefulsets["items"]) == [
            ("etcd-events", 1),
            ("etcd-main", 1),
        ]


@pytest.mark.parametrize(
    ("user", "verb", "namespace", "allowed"),
    [
        ("alice@example.com", "create", "garden-dev", "yes"),
        ("alice@example.com", "create", "garden-ops", "no"),
        ("bob@example.com", "get", "garden-dev", "yes"),
        ("bob@example.com", "delete", "garden-dev", "no"),
        ("mallory@example.com", "get", "garden-dev", "no"),
    ],
)
def test_project_members_rbac(
    local_stack: Stack, tmp_path: Path, user: str, verb: str, namespace: str, allowed: str
) -> None:
    """GIVEN project members WHEN the garden's API server authorises them THEN admins manage, viewers read."""
    garden = local_stack.outputs()["kubeconfigs"]["garden"]
    path = tmp_path / "garden"
    path.write_text(garden)
    cmd = [
        "kubectl",
        "--kubeconfig",
        str(path),
        "auth",
        "can-i",
        verb,
        "shoots.arbor.dev",
        "-n",
        namespace,
        "--as",
        user,
    ]
    answer = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
    assert answer == allowed
