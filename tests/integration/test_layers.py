"""The layers on the real engine: shoots and their status in the garden, control planes in the seed.

Project RBAC is enforced by the real API server, and a removed shoot takes its parts and nothing else.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.integration.engine import LOCAL_LANDSCAPE, ROOT, Stack, kubectl, make_stack, remove_stack, steps_by_type

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


def test_removing_a_shoot_removes_its_parts_and_touches_nothing_else(tmp_path: Path) -> None:
    """GIVEN two shoots WHEN one is removed from the config, confirmed, and `up` runs THEN only its parts go.

    Its namespace, record and cluster are deleted; no resource of the other shoot changes. The confirmation is
    `confirmDeletion`; previewed as `make preview` does (its protected resources previewed as deleted), converged
    as `make up` does (their protection lifted first). The other shoot is web moved into db's project, so it shares
    db's seed and db's namespace in the garden: all a deletion of db could wrongly reach. The self-hosted root of
    the local landscape is left out (256 resources, not 331): it shares no more with db than that namespace.
    """
    web = {**LOCAL_LANDSCAPE["shoots"][0], "project": "ops"}
    two_shoots = {**LOCAL_LANDSCAPE, "shoots": [web, LOCAL_LANDSCAPE["shoots"][1]]}
    stack = make_stack(ROOT, ROOT / "stacks", {"arbor:landscape": two_shoots})
    try:
        stack.up()
        without_db = {**two_shoots, "shoots": [web], "confirmDeletion": {"shoots": ["ops/db"]}}
        stack.set_config({"arbor:landscape": without_db})
        preview = stack.preview_json("--refresh", "--ignore-protect")
        changes = {
            (step.get("newState") or step.get("oldState") or {}).get("urn", step["urn"]).rsplit("::", 1)[-1]: step["op"]
            for step in preview["steps"]
            if step["op"] not in ("same", "refresh")
        }
        assert changes and set(changes.values()) == {"delete"}, changes
        assert all("ops-db" in name or "ops--db" in name for name in changes), changes
        assert {"arbor-shoot-ops-db-record", "arbor-seed-local-1-shoot--ops--db", "arbor-shoot-ops-db-cluster"} <= set(
            changes
        )

        stack.make_up()
        kubeconfigs = stack.outputs()["kubeconfigs"]
        assert "shoot/ops/db" not in kubeconfigs
        namespaces = kubectl(kubeconfigs["seed/local-1"], tmp_path, "get", "namespaces", "-o", "name").split()
        assert "namespace/shoot--ops--db" not in namespaces and "namespace/shoot--ops--web" in namespaces
        shoots = kubectl(kubeconfigs["garden"], tmp_path, "get", "shoots", "-A", "-o", "name").split()
        assert shoots == ["shoot.arbor.dev/web"]
        assert steps_by_type(stack.preview_json("--refresh"), ops=("same", "refresh")) == {}
    finally:
        remove_stack(stack, destroy=False)
