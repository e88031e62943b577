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


@pytest.mark.parametrize(
    ("violation", "policy", "message"),
    [
        ("identifier", "kubernetes-provider-cluster-identifier", "Kubernetes provider without cluster_identifier"),
        ("load-balancer", "local-no-load-balancer", "Service of type LoadBalancer in a local stack"),
        ("overlap", "no-overlap-across-shoots-of-a-seed", "shoots garden-dev/db and garden-dev/web on seed 's'"),
    ],
)
def test_policy_pack_stops_a_violating_preview(violation: str, policy: str, message: str) -> None:
    """GIVEN a program breaking one policy WHEN previewed with the pack THEN that mandatory violation stops it."""
    require_environment()
    fixture = ROOT / "tests" / "integration" / "fixtures" / "violations"
    # The fixture borrows arbor's LocalCluster; its program and dynamic provider import it from the root.
    stack = make_stack(
        fixture, fixture, {"arbor-policy-violations:violation": violation}, env={"PYTHONPATH": str(ROOT)}
    )
    try:
        proc = stack.run("preview", "--policy-pack", POLICIES, "--suppress-progress", check=False)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0, out
        assert f"[mandatory]  {policy}" in out, out
        assert message in out, out
    finally:
        remove_stack(stack)
