"""The engine bench's limit on a one-stack `up`: stopped with its whole process tree, shown as a lower bound."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import engine_scale


def test_a_command_past_its_limit_is_stopped_with_its_children(tmp_path: Path) -> None:
    """GIVEN a command whose child outlives it in a session of its own WHEN timed with a limit THEN both killed.

    The engine starts its plugins in process groups of their own: killing the CLI's group alone left them running.
    """
    marker = tmp_path / "child-finished"
    script = f"setsid bash -c 'sleep 3; touch {marker}' & wait"
    seconds, _, stopped = engine_scale._timed(["bash", "-c", script], tmp_path, {"PATH": "/usr/bin:/bin"}, 0.5)
    assert stopped and 0.5 <= seconds < 3
    time.sleep(3)
    assert not marker.exists(), "the child of a stopped command is killed with it"
    seconds, _, stopped = engine_scale._timed(["true"], tmp_path, {"PATH": "/usr/bin:/bin"}, 5)
    assert not stopped and seconds < 5


def test_a_stopped_stack_reads_as_a_lower_bound_without_a_preview() -> None:
    """GIVEN a one-stack run stopped at its limit WHEN tabled THEN `> limit (stopped)`, no preview or size per shoot."""
    args = argparse.Namespace(resources=44, kib=188, layers=8, shard=50, parallel=2)
    stopped = engine_scale.Run(100, 1800.4, 0.0, 50 * 2**20, 3 * 2**30, stopped=True)
    shard = engine_scale.Run(50, 400.0, 12.0, 10 * 2**20, 2**30)
    text = engine_scale.table({100: {"one": [stopped], "shards": [shard, shard], "shards_wall_s": 830.0}}, args)
    one, shards = text.splitlines()[-2:]
    assert "| > 1800 (stopped) | - |" in one and one.endswith("| > 1800 |")
    assert "| 400 | 12 |" in shards and shards.endswith("| 830 |")


def test_one_stack_is_not_run_past_a_smaller_one_that_was_stopped(tmp_path: Path, monkeypatch: Any) -> None:
    """GIVEN one stack of 100 stopped at the limit WHEN 500 are measured THEN their one stack is not run, shards are.

    The table shows the skipped stack as `> limit (not run)` with no state or memory.
    """
    ran: list[str] = []

    def run_stack(workdir: Path, name: str, first: int, shoots: int, args: Any, limit_s: Any = None) -> Any:
        ran.append(name)
        return engine_scale.Run(shoots, 900.0 if name.startswith("one") else 300.0, 0.0, 2**20, 2**30,
                                stopped=name.startswith("one"))  # fmt: skip

    monkeypatch.setattr(engine_scale, "run_stack", run_stack)
    args = argparse.Namespace(resources=45, kib=189, layers=8, shard=250, parallel=1, one_stack_limit=900.0)
    results = {n: engine_scale.measure(n, args, tmp_path, past) for n, past in ((100, False), (500, True))}
    assert ran == ["one-100", "shard-500-0", "shard-500-1"]
    row = engine_scale.table({500: results[500]}, args).splitlines()[-2]
    assert "| > 900 (not run) | - | - | - | - |" in row, row
