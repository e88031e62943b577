"""The policy pack on the real engine: the local stack passes, a violating program is stopped."""

from __future__ import annotations

import pytest

from tests.integration.engine import ROOT, Stack, make_stack, remove_stack, require_environment

pytestmark = pytest.mark.integration
POLICIES = str(ROOT / "policies")


def test_local_stack_passes_the_policy_pack(local_stack: Stack) -> None:
    """GIVEN the converged local stack WHEN previewed with the policy pack THEN no policy is violated."""
    proc = local_stack.run("preview", "--policy-pack", POLICIES, "--suppress-progress")
    assert "mandatory" not in proc.stdout.lower(), proc.stdout


def test_policy_pack_stops_a_violating_preview() -> None:
    """GIVEN a program breaking both policies WHEN previewed with the pack THEN both mandatory violations stop it."""
    require_environment()
    fixture = ROOT / "tests" / "integration" / "fixtures" / "violations"
    stack = make_stack(fixture, fixture, {})
    try:
        proc = stack.run("preview", "--policy-pack", POLICIES, "--suppress-progress", check=False)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0, out
        assert "kubernetes-provider-cluster-identifier" in out and "(mandatory)" in out, out
        assert "local-no-load-balancer" in out, out
        assert "Kubernetes provider without cluster_identifier" in out, out
    finally:
        remove_stack(stack)
