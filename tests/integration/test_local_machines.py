"""Machines on the local landscape, made for real: MachineDeployment -> MachineSet -> Machine -> kwok Node.

machine-controller-manager runs as a process per hosted shoot with arbor's kwok sidecar (test_local_mcm.py); here
its work is watched: a Running Machine per pool minimum whose bootstrap token authenticated, scaling, a roll
within the pool's surge budget that the preview announced, and a node deleted by hand replaced by MCM. The roll of a
Kubernetes minor upgrade, which has no way back, is in test_deletions on its small stack.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import preview_summary
import pytest

from components.render import machine_providers
from tests.integration.engine import LOCAL_LANDSCAPE, Stack, items, kubectl

pytestmark = pytest.mark.integration
SEED = "seed/local-1"
WEB = "shoot--dev--web"
SHOOT = "shoot/dev/web"
# A failed machine is replaced after the local sidecar's health timeout (1 min), then created and joined.
REPLACED_S = 300.0


def machines_of(stack: Stack, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """dev/web's Machines by name."""
    return {m["metadata"]["name"]: m for m in items(stack, SEED, tmp_path, "machines.machine.sapcloud.io", "-n", WEB)}


def live_machines(stack: Stack, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """dev/web's Machines not being deleted, by name."""
    return {n: m for n, m in machines_of(stack, tmp_path).items() if not m["metadata"].get("deletionTimestamp")}


def nodes_of(stack: Stack, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """dev/web's Nodes by name."""
    return {n["metadata"]["name"]: n for n in items(stack, SHOOT, tmp_path, "nodes")}


def wait_for(what: str, check: Callable[[], bool], timeout_s: float) -> None:
    """Polls `check` until it holds; fails naming `what` after the timeout."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout_s:.0f} s")
        time.sleep(3)


def with_pool(**change: Any) -> dict[str, Any]:
    """The local landscape with dev/web's pool-a changed."""
    landscape: dict[str, Any] = copy.deepcopy(LOCAL_LANDSCAPE)
    landscape["shoots"][0]["workers"][0].update(change)
    return landscape


def assert_running_with_nodes(stack: Stack, tmp_path: Path, count: int) -> dict[str, dict[str, Any]]:
    """dev/web has `count` Running machines, each with its kwok node (provider ID kwok://<machine>), Ready."""
    machines, nodes = machines_of(stack, tmp_path), nodes_of(stack, tmp_path)
    assert len(machines) == count, sorted(machines)
    for name, machine in machines.items():
        assert machine["status"]["currentStatus"]["phase"] == "Running", (name, machine["status"])
        node = nodes[machine["metadata"]["labels"]["node"]]
        assert node["spec"]["providerID"] == f"kwok://{name}" == machine["spec"]["providerID"]
        ready = {c["type"]: c["status"] for c in node["status"]["conditions"]}["Ready"]
        assert ready == "True", name
    assert sorted(nodes) == sorted(machines)
    return machines


def assert_rolls(stack: Stack, tmp_path: Path, landscape: dict[str, Any], before: dict[str, Any]) -> None:
    """With `landscape`, the preview says pool-a rolls and `up` replaces `before`, within maxSurge 1 (Gardener's)."""
    stack.set_config({"arbor:landscape": landscape})
    summary = preview_summary.render(json.loads(stack.run("preview", "--json").stdout))
    assert "`arbor-shoot-dev-web` pool `pool-a`: **rolls**" in summary, summary
    # MCM's maxSurge bounds the machines its sets hold; one being deleted (drained, its node going) is no longer
    # one of them, and under load can outlive the next new one's creation, so it is not counted.
    peak = watch_peak(lambda: len(live_machines(stack, tmp_path)), stack.up)
    after = assert_running_with_nodes(stack, tmp_path, len(before))
    assert not set(after) & set(before), "every machine was replaced"
    assert peak <= len(before) + 1, f"{peak} machines at once: more than replicas + maxSurge"


def test_each_machine_is_a_kwok_node_that_joined_with_its_bootstrap_token(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN the local landscape WHEN up THEN a Running Machine per pool minimum, its token checked, its node up."""
    [machine] = assert_running_with_nodes(local_stack, tmp_path, 1).values()
    node = nodes_of(local_stack, tmp_path)[machine["metadata"]["name"]]
    internal = [a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP"]
    assert (internal, node["spec"]["podCIDRs"]) == (["10.250.0.2"], ["100.64.0.0/24"])
    assert node["metadata"]["labels"]["worker.gardener.cloud/pool"] == "pool-a"
    # MCM made the machine's bootstrap token in the shoot, the sidecar checked it against the shoot's API, and MCM
    # deleted it once the machine was Running (as upstream does: the kubelet has its own credentials by then).
    tokens = items(local_stack, SHOOT, tmp_path, "secrets", "-n", "kube-system", "--field-selector",
                   "type=bootstrap.kubernetes.io/token")  # fmt: skip
    assert tokens == []
    processes = Path(os.environ["KWOK_WORKDIR"], "processes")
    logs = processes.glob(f"{local_stack.name}-*-{machine_providers.KWOK_SIDECAR}/process.log")
    text = "".join(log.read_text() for log in logs)
    assert f"machine {machine['metadata']['name']}: its bootstrap token authenticates as system:bootstrap:" in text


def test_a_new_minimum_scales_and_each_roll_worthy_change_rolls_within_max_surge(
    local_stack: Stack, tmp_path: Path
) -> None:
    """GIVEN pool-a WHEN its minimum grows THEN MCM scales; WHEN its type, then its image changes THEN each rolls.

    One sequence (one way back at the end, itself a roll): each roll replaces every machine within maxSurge 1 and
    maxUnavailable 0 (Gardener's defaults), and the preview announced it.
    """
    machine = LOCAL_LANDSCAPE["shoots"][0]["workers"][0]["machine"]
    large = {**machine, "type": "local-large"}
    try:
        local_stack.set_config({"arbor:landscape": with_pool(minimum=2, maximum=3)})
        local_stack.up()
        before = assert_running_with_nodes(local_stack, tmp_path, 2)
        assert_rolls(local_stack, tmp_path, with_pool(minimum=2, maximum=3, machine=large), before)
        for node in nodes_of(local_stack, tmp_path).values():
            assert node["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "local-large"
        before = assert_running_with_nodes(local_stack, tmp_path, 2)
        newer = {**large, "image": {**machine["image"], "version": "1877.1.0"}}
        assert_rolls(local_stack, tmp_path, with_pool(minimum=2, maximum=3, machine=newer), before)
    finally:
        local_stack.set_config({"arbor:landscape": LOCAL_LANDSCAPE})
        local_stack.up()
    assert_running_with_nodes(local_stack, tmp_path, 1)


def test_a_node_deleted_by_hand_is_replaced_by_mcm(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN a Running machine WHEN its node is deleted by hand THEN MCM replaces the machine, without an `up`."""
    [gone] = machines_of(local_stack, tmp_path)
    kubectl(local_stack.outputs()["kubeconfigs"][SHOOT], tmp_path, "delete", "node", gone, "--wait=false")

    def replaced() -> bool:
        machines = machines_of(local_stack, tmp_path)
        phases = [m.get("status", {}).get("currentStatus", {}).get("phase") for m in machines.values()]
        return gone not in machines and phases == ["Running"] and len(nodes_of(local_stack, tmp_path)) == 1

    wait_for(f"machine {gone} replaced", replaced, REPLACED_S)
    assert_running_with_nodes(local_stack, tmp_path, 1)


def watch_peak(count: Callable[[], int], action: Callable[[], object]) -> int:
    """The highest `count()` seen while `action` runs."""
    peak, done = 0, threading.Event()

    def poll() -> None:
        nonlocal peak
        while not done.is_set():
            # A poll racing a cluster restart fails; the next one counts.
            with contextlib.suppress(subprocess.CalledProcessError):
                peak = max(peak, count())
            time.sleep(1)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    try:
        action()
    finally:
        done.set()
        watcher.join()
    return peak
