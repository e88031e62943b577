"""Policy rules as plain functions: each case either violates with its message or passes."""

from __future__ import annotations

from typing import Any

import pytest
from arbor_policies.kubernetes import LOCAL_CLUSTER, SERVICE, load_balancers_on_local, missing_cluster_identifier


@pytest.mark.parametrize(
    ("resource_type", "props", "violates"),
    [
        ("pulumi:providers:kubernetes", {"kubeconfig": "x"}, True),
        ("pulumi:providers:kubernetes", {"clusterIdentifier": ""}, True),
        ("pulumi:providers:kubernetes", {"clusterIdentifier": "local-garden"}, False),
        ("pulumi:providers:aws", {}, False),
        ("kubernetes:core/v1:Namespace", {}, False),
    ],
)
def test_kubernetes_provider_needs_cluster_identifier(
    resource_type: str, props: dict[str, Any], violates: bool
) -> None:
    """GIVEN a resource WHEN checked THEN only a Kubernetes provider without identifier violates."""
    message = missing_cluster_identifier(resource_type, props)
    assert (message is not None) == violates
    if message:
        assert message.startswith("Kubernetes provider without cluster_identifier")


Resource = tuple[str, str, dict[str, Any]]
LB: Resource = (SERVICE, "urn:lb", {"spec": {"type": "LoadBalancer"}})
CLUSTER_IP: Resource = (SERVICE, "urn:ip", {"spec": {"type": "ClusterIP"}})
LOCAL: Resource = (LOCAL_CLUSTER, "urn:local", {})


@pytest.mark.parametrize(
    ("resources", "violating"),
    [
        ([LOCAL, LB, CLUSTER_IP], ["urn:lb"]),
        ([LOCAL, CLUSTER_IP], []),
        ([LB], []),  # no local cluster: a cloud stack may use load balancers
        ([LOCAL, (SERVICE, "urn:none", {})], []),
    ],
)
def test_no_load_balancer_in_local_stacks(
    resources: list[tuple[str, str, dict[str, Any]]], violating: list[str]
) -> None:
    """GIVEN a stack's resources WHEN checked THEN each LoadBalancer Service beside a LocalCluster violates."""
    assert [urn for urn, _ in load_balancers_on_local(resources)] == violating
