"""The policy pack on the real engine, through `make preview` and through `pulumi preview` of violating programs.

The local stack passes every mandatory policy; a config file that makes a policy it breaks mandatory fails
`make preview` with the policy's message in the summary; a program breaking a policy is stopped.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.engine import ROOT, Stack, make_stack, remove_stack, require_environment

pytestmark = pytest.mark.integration
POLICIES = str(ROOT / "policies")
VIOLATIONS = ROOT / "tests" / "integration" / "fixtures" / "violations"


@pytest.fixture(scope="module")
def violations() -> Iterator[Stack]:
    """One stack of the violating program for every violation: only previews run, so its state stays empty."""
    require_environment()
    # The fixture borrows arbor's LocalCluster; its program and dynamic provider import it from the root.
    stack = make_stack(VIOLATIONS, VIOLATIONS, {}, env={"PYTHONPATH": str(ROOT)})
    try:
        yield stack
    finally:
        remove_stack(stack, destroy=False)


def make_preview(stack: Stack, out: Path, *variables: str) -> subprocess.CompletedProcess[str]:
    """`make preview` of the stack, writing into `out`."""
    cmd = ["make", "-s", "preview", f"STACK={stack.name}", f"OUT={out}", *variables]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)


def test_local_stack_passes_the_policy_pack(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN the converged local stack WHEN `make preview` runs the pack THEN it passes, its findings advisory."""
    proc = make_preview(local_stack, tmp_path)
    summary = (tmp_path / "preview.md").read_text()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[mandatory]" not in summary and "failed" not in summary.splitlines()[0], summary
    assert "### policies" in summary  # the pack ran: its advisory findings are listed


def test_a_config_file_makes_a_policy_mandatory_and_fails_make_preview(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN a config making shoot-owner-labels mandatory WHEN `make preview` runs THEN it fails naming the shoots."""
    config = tmp_path / "strict.json"
    config.write_text(json.dumps({"shoot-owner-labels": {"enforcementLevel": "mandatory", "required": ["team"]}}))
    proc = make_preview(local_stack, tmp_path, f"POLICY_CONFIG={config}")
    summary = (tmp_path / "preview.md").read_text()
    assert proc.returncode != 0, summary
    assert summary.startswith(f"## arbor preview: stack `{local_stack.name}`: failed"), summary
    assert "[mandatory] shoot-owner-labels: " in summary
    assert "shoot garden-ops/db has no label team: set landscape.shoots[].labels.team" in summary
    assert "garden-dev/web" not in summary  # web has its team label


@pytest.mark.parametrize(
    ("violation", "policy", "message"),
    [
        ("identifier", "kubernetes-provider-cluster-identifier", "Kubernetes provider without cluster_identifier"),
        ("load-balancer", "local-no-load-balancer", "Service of type LoadBalancer in a local stack"),
        ("overlap", "no-overlap-across-shoots-of-a-seed", "shoots garden-dev/db and garden-dev/web on seed 's'"),
        (
            "borrowed-kubeconfig",
            "extension-namespaces-without-borrowed-kubeconfigs",
            "Secret extension-provider-local/seed-kubeconfig key kubeconfig is a kubeconfig whose user admin",
        ),
    ],
)
def test_policy_pack_stops_a_violating_preview(violations: Stack, violation: str, policy: str, message: str) -> None:
    """GIVEN a program breaking one policy WHEN previewed with the pack THEN that mandatory violation stops it."""
    violations.set_config({"arbor-policy-violations:violation": violation})  # replaces the previous test's
    proc = violations.run("preview", "--policy-pack", POLICIES, "--suppress-progress", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert f"[mandatory]  {policy}" in out, out
    assert message in out, out
