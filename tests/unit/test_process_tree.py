"""hack/process_tree.py: a process and everything under it, stopped whole."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from process_tree import kill_tree, processes, tree, tree_rss


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_kill_tree_stops_grandchildren_in_their_own_session(tmp_path: Path) -> None:
    """GIVEN a shell whose child started its own session (as the engine's plugins do) WHEN killed THEN both stop."""
    pids = tmp_path / "pids"
    script = f"setsid sleep 300 & echo $! > {pids}; wait"
    with subprocess.Popen(["sh", "-c", script]) as shell:
        while not pids.exists() or not pids.read_text().strip():
            time.sleep(0.05)
        grandchild = int(pids.read_text())
        while grandchild not in tree(shell.pid, processes()[0]):
            time.sleep(0.05)
        assert tree_rss(shell.pid) > 0
        kill_tree(shell.pid)
        shell.wait(timeout=10)
    deadline = time.monotonic() + 10
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)


def test_the_tree_of_a_process_without_children_is_itself() -> None:
    """GIVEN this test's own pid and no child map WHEN its tree is read THEN it is that pid alone."""
    assert tree(os.getpid(), {}) == [os.getpid()]
