"""arbor's kwok sidecar driver: its Go unit tests (addresses, token check, list, delete), run by `make test`."""

from __future__ import annotations

import subprocess

import pytest

from tests.integration.engine import ROOT

pytestmark = pytest.mark.integration


def test_the_kwok_drivers_go_tests_pass() -> None:
    """GIVEN hack/machine-controller-kwok WHEN its Go tests run THEN they pass, each one reported."""
    proc = subprocess.run(
        [str(ROOT / "hack" / "tools.sh"), "kwok-driver-test"], capture_output=True, text=True, check=False, timeout=900
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "ok  \tarbor.local/machine-controller-kwok" in out, out[-4000:]
