"""Crash recovery: `pulumi up` killed with SIGKILL at five points of a first `up`; `make up`'s steps then converge.

One stack goes through all kill points, each run resuming where the killed one stopped, so the test costs about
one first `up` plus five restarts and two more `up`s. The stack is the local garden with the self-hosted shoot
ops/root alone (56 resources, not the local landscape's 239): it holds every resource type of arbor's own
providers (clusters, PKI, keys, encryption, shoot status), the ones whose half-made creates recovery must clear;
what it leaves out (the seed, hosted shoots' workers) is made by the Kubernetes provider, whose creates a kill
leaves pending like any other. With `-s` it prints what each recovery cleared. 74 s to 95 s in three runs on the
2-core machine shared with other clones (the full local landscape took 283 s).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from components.reconciler import kwokctl
from tests.integration.engine import LOCAL_LANDSCAPE, ROOT, Stack, make_stack, remove_stack, require_environment

sys.path.insert(0, str(ROOT / "hack"))
import recover

pytestmark = [pytest.mark.integration, pytest.mark.own_landscape]
# The local garden (its projects, encryption at rest) and the self-hosted shoot, no seed.
LANDSCAPE = {**LOCAL_LANDSCAPE, "seeds": [], "shoots": [s for s in LOCAL_LANDSCAPE["shoots"] if s["name"] == "root"]}
# Kill points: resources reported created (engine events, over all runs so far) when `pulumi up` is killed;
# spread over the stack's 56 so the last run still has creates left.
KILL_AFTER = (6, 15, 24, 33, 42)
CONFIGMAP = "user-data-that-must-survive"
# When the shoot's cluster answers only after the last kill point, or no ConfigMap made in it has lived through a
# kill yet (creates run in parallel, so their order varies), one more kill this many creates later.
EXTRA_KILL = 3
# Extra kills stop here, short of the stack's last creates, so the killed run is still creating.
LAST_EXTRA_KILL = 50


def created(event_log: Path) -> int:
    """How many resources the engine reported created so far in the run's event log."""
    count = 0
    text = event_log.read_text() if event_log.exists() else ""
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break  # the line being written
        event = json.loads(line).get("resOutputsEvent") or {}
        count += event.get("metadata", {}).get("op") in ("create", "create-replacement")
    return count


def killed_up(stack: Stack, tmp_path: Path, so_far: int, kill_at: int) -> int:
    """Runs `up` as `make up` does and SIGKILLs the `pulumi` process once `kill_at` resources are created in all.

    Returns the resources this run reported created.
    """
    log = tmp_path / f"events-{kill_at}.jsonl"
    out = (tmp_path / f"up-{kill_at}.txt").open("w")
    cmd = ["pulumi", "up", "--stack", stack.name, "--yes", "--refresh", "--skip-preview", "--suppress-progress"]
    # The engine's event log (one JSON event a line, written as they happen) is a debug command's flag.
    env = {**os.environ, "PULUMI_DEBUG_COMMANDS": "true"}
    args = [*cmd, "--non-interactive", "--event-log", str(log)]
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=out)
    deadline = time.monotonic() + 600
    while so_far + created(log) < kill_at:
        assert proc.poll() is None, (
            f"`up` ended before {kill_at} creates:\n{(tmp_path / f'up-{kill_at}.txt').read_text()}"
        )
        assert time.monotonic() < deadline, f"`up` did not reach {kill_at} creates"
        time.sleep(0.05)
    proc.kill()  # SIGKILL to `pulumi` alone: its language host and plugins are left as a crash leaves them
    proc.wait()
    out.close()
    return created(log)


def lock_files(stack: Stack) -> list[Path]:
    """The file backend's lock files of the stack."""
    backend = recover.backend_dir()
    assert backend is not None
    return sorted(backend.glob(f"locks/*/arbor/{stack.name}/*.json"))


def run_recovery(stack: Stack) -> list[str]:
    """`make up`'s first step; its lines."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "hack" / "recover.py"), stack.name], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.splitlines()


def shoot_kubeconfig(stack: Stack, tmp_path: Path) -> Path | None:
    """The admin kubeconfig of shoot ops/root's cluster once it answers, else None.

    The self-hosted shoot's cluster is being made at about the 25th create (recovery lets the killed run's kwokctl
    finish it), so a ConfigMap made in it after the second kill lives through three more.
    """
    cluster = kwokctl.Cluster(name=f"{stack.name}-shoot-ops-root", workdir=os.environ["KWOK_WORKDIR"])
    if not kwokctl.ready(cluster):
        return None
    path = tmp_path / "shoot-ops-root.kubeconfig"
    path.write_text(kwokctl.kubeconfig(cluster))
    return path


def kubectl(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Kubectl against a cluster."""
    return subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), *args], capture_output=True, text=True)


def assert_recovered(stack: Stack, lines: list[str]) -> None:
    """Recovery removed the lock and stopped every orphan of the killed run, and said so."""
    assert any("removed stale lock" in line for line in lines), lines
    assert any("stopped pulumi-language-python" in line for line in lines), lines
    assert lock_files(stack) == []
    assert recover.orphans(recover.process_table(), str(ROOT)) == []


def test_up_killed_at_five_points_converges_and_keeps_user_objects(tmp_path: Path) -> None:
    """GIVEN `up` SIGKILLed after 6, 15, 24, 33 and 42 creates WHEN recovered and `up` again THEN all converges.

    After each kill the stack is locked and the run's host and plugins still run; hack/recover.py clears both (and
    the pending creates) and the next `up` resumes. A ConfigMap written into a shoot between kills survives, and a
    second `up` changes nothing.
    """
    require_environment()
    stack = make_stack(ROOT, ROOT / "stacks", {"arbor:landscape": LANDSCAPE})
    so_far, dropped, user_object, survived = 0, 0, None, 0
    try:
        kills = list(KILL_AFTER)
        while kills:
            kill_at = max(kills.pop(0), so_far + 1)
            so_far += killed_up(stack, tmp_path, so_far, kill_at)
            assert lock_files(stack), "a killed `up` leaves its lock"
            assert recover.orphans(recover.process_table(), str(ROOT)), "a killed `up` leaves its plugins"
            lines = run_recovery(stack)
            print(f"\nkilled after {so_far} creates (asked {kill_at}):", *lines, sep="\n  ")  # shown with -s
            assert_recovered(stack, lines)
            dropped += sum("dropped the pending create" in line for line in lines)
            if user_object is not None:
                assert kubectl(user_object, "get", "configmap", CONFIGMAP).returncode == 0, "lost after a kill"
                survived += 1
            elif kubeconfig := shoot_kubeconfig(stack, tmp_path):
                kubectl(kubeconfig, "create", "configmap", CONFIGMAP, "--from-literal=keep=me").check_returncode()
                user_object = kubeconfig
                print(f"  made ConfigMap {CONFIGMAP} in ops/root")
            if not kills and not survived and so_far + EXTRA_KILL <= LAST_EXTRA_KILL:
                kills.append(so_far + EXTRA_KILL)  # the shoot answered late, or not yet
        assert user_object is not None and survived > 0, "a ConfigMap should have been made in ops/root before a kill"
        assert dropped > 0, "killing parallel creates should have left pending creates to drop"

        stack.up()
        second = stack.up().stdout
        summary = second[second.index("Resources:") :]
        assert re.findall(r"^\s+[+~-]?\s*\d+ (\w+)", summary, re.MULTILINE) == ["unchanged"], summary
        got = kubectl(user_object, "get", "configmap", CONFIGMAP, "-o", "jsonpath={.data.keep}")
        assert got.stdout == "me", got.stderr
    finally:
        remove_stack(stack, destroy=False)
