"""The real machine-controller-manager on the local landscape: it and its kwok sidecar as processes per hosted shoot.

Its control cluster is the shoot's seed (the shoot's namespace there), its target the shoot's API; it is what turns
each MachineDeployment into a MachineSet. Killed, it is drift that the next `up` (with refresh) repairs.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from components.reconciler import local_process
from components.render import machine_providers, machines
from tests.integration.engine import Stack, kubectl

pytestmark = pytest.mark.integration
# MCM needs a few seconds after its start to sync its caches and reconcile: an eventual condition, waited for.
SETTLE_S = 180.0


PROGRAMS = (machines.MCM_NAME, machine_providers.KWOK_SIDECAR)


def processes(stack: Stack) -> dict[tuple[str, str], int]:
    """The stack's running MCM and sidecar processes: (the namespace each controls, its program) to its pid."""
    running: dict[tuple[str, str], int] = {}
    for d in (Path(os.environ["KWOK_WORKDIR"]) / "processes").glob(f"{stack.name}-*"):
        pid = local_process.running_pid({"dir": str(d)})
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0") if pid else []
        except OSError:  # exited since
            continue
        if argv and Path(argv[0]).name in PROGRAMS:
            [namespace] = [a.removeprefix("--namespace=") for a in argv if a.startswith("--namespace=")]
            running[(namespace, Path(argv[0]).name)] = pid or 0
    return running


def machine_objects(stack: Stack, tmp_path: Path, kind: str) -> list[dict[str, Any]]:
    """Every object of a machine kind in every seed of the stack."""
    kubeconfigs = stack.outputs()["kubeconfigs"]
    items: list[dict[str, Any]] = []
    for key in (k for k in kubeconfigs if k.startswith("seed/")):
        out = kubectl(kubeconfigs[key], tmp_path, "get", f"{kind}.machine.sapcloud.io", "-A", "-o", "json")
        items += json.loads(out)["items"]
    return items


def unowned_deployments(stack: Stack, tmp_path: Path) -> list[str]:
    """The MachineDeployments no MachineSet is owned by yet, as `namespace/name`."""
    owners = {
        (s["metadata"]["namespace"], ref["name"])
        for s in machine_objects(stack, tmp_path, "machinesets")
        for ref in s["metadata"].get("ownerReferences", [])
        if ref["kind"] == "MachineDeployment"
    }
    deployments = machine_objects(stack, tmp_path, "machinedeployments")
    return [
        f"{d['metadata']['namespace']}/{d['metadata']['name']}"
        for d in deployments
        if (d["metadata"]["namespace"], d["metadata"]["name"]) not in owners
    ]


def test_mcm_runs_per_hosted_shoot_makes_machine_sets_and_is_restarted_by_up(
    local_stack: Stack, tmp_path: Path
) -> None:
    """GIVEN the local landscape WHEN up THEN MCM and its sidecar run per hosted shoot; killed, up restarts both."""
    namespaces = {d["metadata"]["namespace"] for d in machine_objects(local_stack, tmp_path, "machinedeployments")}
    assert namespaces, "the local landscape has hosted shoots with MachineDeployments"
    running = processes(local_stack)
    assert set(running) == {(n, p) for n in namespaces for p in PROGRAMS}
    deadline = time.monotonic() + SETTLE_S
    while (missing := unowned_deployments(local_stack, tmp_path)) and time.monotonic() < deadline:
        time.sleep(5)
    assert missing == [], f"no MachineSet made by MCM for {missing}"

    for pid in running.values():
        os.kill(pid, signal.SIGKILL)
    # A killed process is gone once its parent (init: the engine's provider process has exited) has reaped it.
    deadline = time.monotonic() + 30
    while processes(local_stack) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert processes(local_stack) == {}
    local_stack.up()
    again = processes(local_stack)
    assert set(again) == set(running)
    assert not set(again.values()) & set(running.values())
