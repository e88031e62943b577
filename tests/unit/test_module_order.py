"""The order pytest collects modules in: modules with a landscape of their own first, unit modules last."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_modules_with_a_landscape_of_their_own_start_first_and_unit_modules_last() -> None:
    """GIVEN a unit, a shared-landscape and an own-landscape module WHEN collected THEN own, shared, unit."""
    given = ["tests/unit/test_kube.py", "tests/integration/test_workers.py", "tests/integration/test_shards.py"]
    cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *given]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    modules = list(dict.fromkeys(line.split("::")[0] for line in out.splitlines() if "::" in line))
    assert modules == [given[2], given[1], given[0]], out
