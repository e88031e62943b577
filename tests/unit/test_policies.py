"""Policy rules as plain functions: each case either violates with its message or passes."""

from __future__ import annotations

from typing import Any

import pytest
from arbor_policies.kubernetes import SERVICE, load_balancer_on_local, missing_cluster_identifier


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


@pytest.mark.parametrize(
    ("resource_type", "props", "provider", "violates"),
    [
        (SERVICE, {"spec": {"type": "LoadBalancer"}}, {"clusterIdentifier": "local:local-garden"}, True),
        (SERVICE, {"spec": {"type": "ClusterIP"}}, {"clusterIdentifier": "local:local-garden"}, False),
        (SERVICE, {"spec": {"type": "LoadBalancer"}}, {"clusterIdentifier": "gcp:prod-seed"}, False),
        (SERVICE, {"spec": {"type": "LoadBalancer"}}, {}, False),
        (SERVICE, {}, {"clusterIdentifier": "local:x"}, False),
        ("kubernetes:core/v1:Namespace", {"spec": {"type": "LoadBalancer"}}, {"clusterIdentifier": "local:x"}, False),
    ],
)
def test_no_load_balancer_on_local_clusters(
    resource_type: str, props: dict[str, Any], provider: dict[str, Any], violates: bool
) -> None:
    """GIVEN a resource and its provider WHEN checked THEN only a LoadBalancer Service on a local cluster violates."""
    assert (load_balancer_on_local(resource_type, props, provider) is not None) == violates
