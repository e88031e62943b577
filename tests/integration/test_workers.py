"""Workers on the real engine: MCM and machine deployments in the seed, nodes per pool, rolls in the preview.

MCM and arbor's kwok sidecar run locally as processes (tests/integration/test_local_mcm.py) and make each
Machine a kwok node in the shoot (tests/integration/test_local_machines.py watches them work): a change that rolls
a pool gives it a new class, and MCM replaces its machines; one that does not leaves them be.
"""

from __future__ import annotations

import copy
import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from components.plan.nodes import INSTANCE_TYPE_LABEL, POOL_LABEL, ZONE_LABEL
from components.render import machine_pools, machines
from tests.integration.engine import LOCAL_LANDSCAPE, Stack, kubectl, preview_with

pytestmark = pytest.mark.integration
SEED = "seed/local-1"
WEB = "shoot--dev--web"
CLASS = "kubernetes:machine.sapcloud.io/v1alpha1:MachineClass"
MACHINE_DEPLOYMENT = "kubernetes:machine.sapcloud.io/v1alpha1:MachineDeployment"
# A second pool for dev/web over both zones: two nodes in local-a, one in local-b.
POOL_B = {
    "name": "pool-b",
    "machine": {"type": "local-large", "image": {"name": "gardenlinux", "version": "1877.0.0"}},
    "minimum": 3,
    "maximum": 4,
    "zones": ["local-a", "local-b"],
}


def get(stack: Stack, key: str, tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    """`kubectl get <args> -o json` in a cluster of the stack, as its items."""
    kubeconfig = stack.outputs()["kubeconfigs"][key]
    return list(json.loads(kubectl(kubeconfig, tmp_path, "get", *args, "-o", "json"))["items"])


def names(items: list[dict[str, Any]]) -> list[str]:
    """The objects' names, sorted."""
    return sorted(i["metadata"]["name"] for i in items)


def test_mcm_and_machine_deployments_run_in_each_hosted_shoots_namespace(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN the local landscape WHEN up THEN each hosted shoot has MCM with the local sidecar and machine objects."""
    for namespace in (WEB, "shoot--ops--db"):
        [mcm] = get(
            local_stack, SEED, tmp_path, "deployments", "-n", namespace, "-l", "role=machine-controller-manager"
        )
        containers = [c["name"] for c in mcm["spec"]["template"]["spec"]["containers"]]
        assert containers == ["machine-controller-manager", "machine-controller-manager-provider-local"]
        assert mcm["status"].get("readyReplicas") == 1
        [service] = get(
            local_stack, SEED, tmp_path, "services", "-n", namespace, "-l", "role=machine-controller-manager"
        )
        assert sorted(p["port"] for p in service["spec"]["ports"]) == [10258, 10259]

        [deployment] = get(local_stack, SEED, tmp_path, "machinedeployments", "-n", namespace)
        assert deployment["metadata"]["name"] == f"{namespace}-pool-a-z1"
        assert deployment["spec"]["replicas"] == 1
        [machine_class] = get(local_stack, SEED, tmp_path, "machineclasses", "-n", namespace)
        assert deployment["spec"]["template"]["spec"]["class"]["name"] == machine_class["metadata"]["name"]
        assert machine_class["provider"] == "local"
        secrets = names(get(local_stack, SEED, tmp_path, "secrets", "-n", namespace))
        assert {machine_class["secretRef"]["name"], machine_pools.CREDENTIALS_SECRET, machines.MCM_NAME} <= set(secrets)
    # The self-hosted shoot has no seed, so no MCM: its nodes are its own.
    namespaces = names(get(local_stack, SEED, tmp_path, "namespaces"))
    assert "shoot--ops--root" not in namespaces


def test_mcm_may_drain_nodes_in_the_shoot_but_not_read_its_secrets(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN MCM's user in shoot dev/web WHEN its rights are checked THEN it may delete nodes and evict, not more."""
    path = tmp_path / "shoot"
    path.write_text(local_stack.outputs()["kubeconfigs"]["shoot/dev/web"])

    def can(*args: str) -> str:
        # `can-i` answers on stdout and exits 1 on "no".
        command = ["kubectl", "--kubeconfig", str(path), "auth", "can-i", *args, "--as", machines.MCM_USER]
        return subprocess.run(command, capture_output=True, text=True, check=False).stdout.strip()

    assert can("delete", "nodes") == "yes"
    assert can("create", "pods/eviction", "-n", "default") == "yes"
    assert can("get", "secrets", "-n", "kube-system") == "yes"
    assert can("get", "secrets", "-n", "default") == "no"
    assert can("create", "clusterrolebindings") == "no"


def test_each_pool_becomes_nodes_labelled_with_pool_and_zone(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN a second pool over two zones WHEN up THEN its minimum shows up as nodes per zone, and goes with it."""
    landscape: dict[str, Any] = copy.deepcopy(LOCAL_LANDSCAPE)
    landscape["shoots"][0]["workers"].append(POOL_B)
    local_stack.set_config({"arbor:landscape": landscape})
    try:
        local_stack.up()
        nodes = get(local_stack, "shoot/dev/web", tmp_path, "nodes")
        placed = Counter((n["metadata"]["labels"][POOL_LABEL], n["metadata"]["labels"][ZONE_LABEL])
                         for n in nodes)  # fmt: skip
        assert placed == {("pool-a", "local-a"): 1, ("pool-b", "local-a"): 2, ("pool-b", "local-b"): 1}
        for node in nodes:
            ready = {c["type"]: c["status"] for c in node["status"]["conditions"]}["Ready"]
            assert ready == "True", node["metadata"]["name"]
            pool = node["metadata"]["labels"][POOL_LABEL]
            assert node["metadata"]["labels"][INSTANCE_TYPE_LABEL] == ("local-large" if pool == "pool-b"
                                                                                else "local")  # fmt: skip
        deployments = get(local_stack, SEED, tmp_path, "machinedeployments", "-n", WEB)
        replicas = {d["metadata"]["name"]: d["spec"]["replicas"] for d in deployments}
        assert replicas == {f"{WEB}-pool-a-z1": 1, f"{WEB}-pool-b-z1": 2, f"{WEB}-pool-b-z2": 1}
    finally:
        local_stack.set_config({"arbor:landscape": LOCAL_LANDSCAPE})
        local_stack.up()
    assert names(get(local_stack, SEED, tmp_path, "machinedeployments", "-n", WEB)) == [f"{WEB}-pool-a-z1"]
    assert len(get(local_stack, "shoot/dev/web", tmp_path, "nodes")) == 1


def changes(preview: dict[str, Any]) -> dict[str, str]:
    """Each changed resource's name and operation in a preview."""
    return {s["urn"].rsplit("::", 1)[-1]: s["op"] for s in preview["steps"] if s["op"] not in ("same", "read")}


def test_a_rolling_change_replaces_class_and_nodes_an_in_place_one_does_not(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN pool-a of dev/web WHEN its machine type (rolls) or maximum (in place) change THEN the preview says so."""
    pool = LOCAL_LANDSCAPE["shoots"][0]["workers"][0]
    rolling = preview_with(
        local_stack, tmp_path, {"workers": [{**pool, "machine": {**pool["machine"], "type": "big"}}]}
    )
    rolled = changes(rolling)
    prefix = "arbor-shoot-dev-web"
    # Nothing is replaced: the zone's ObjectSet applies a new class and user data, points the MachineDeployment at
    # them and deletes the old two (MCM rolls its machines by its strategy, then lets them go).
    assert not [n for n, op in rolled.items() if op == "replace"], rolled
    assert rolled[f"{prefix}-workers-pool-a-z1"] == "update"
    step = next(s for s in rolling["steps"] if s["urn"].endswith(f"{prefix}-workers-pool-a-z1"))
    old, new = (set(step[k]["inputs"]["objects"]) for k in ("oldState", "newState"))
    [old_class], [new_class] = ({k for k in keys if k.startswith("machineclass-")} for keys in (old, new))
    assert old_class != new_class and new_class.startswith(f"machineclass-{WEB}-pool-a-z1-")

    in_place = changes(preview_with(local_stack, tmp_path, {"workers": [{**pool, "maximum": 3}]}))
    # The record shows the new maximum too; nothing else changes.
    assert in_place == {f"{prefix}-workers-pool-a-z1": "update", f"{prefix}-record": "update"}, in_place
