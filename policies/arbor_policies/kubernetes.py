"""Rules about Kubernetes providers and objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KUBERNETES_PROVIDER = "pulumi:providers:kubernetes"
SERVICE = "kubernetes:core/v1:Service"
# arbor names every cluster's identity `<provider>:<name>` (components/naming.py); local ones start so.
LOCAL_IDENTIFIER_PREFIX = "local:"


def missing_cluster_identifier(resource_type: str, props: Mapping[str, Any]) -> str | None:
    """A Kubernetes provider must name its cluster, or a new kubeconfig would replace every object it manages."""
    if resource_type == KUBERNETES_PROVIDER and not props.get("clusterIdentifier"):
        return (
            "Kubernetes provider without cluster_identifier: a changed kubeconfig (a rotated credential, a new "
            "endpoint) would replace every object it manages; set cluster_identifier to the cluster's identity"
        )
    return None


def load_balancer_on_local(resource_type: str, props: Mapping[str, Any], provider: Mapping[str, Any]) -> str | None:
    """A LoadBalancer Service on a local cluster would hold the update forever.

    Nothing on loopback assigns load-balancer addresses. Local clusters are known by their provider's
    `local:` cluster identifier.
    """
    local = str(provider.get("clusterIdentifier") or "").startswith(LOCAL_IDENTIFIER_PREFIX)
    if resource_type == SERVICE and local and (props.get("spec") or {}).get("type") == "LoadBalancer":
        return "Service of type LoadBalancer in a local stack: no load balancer exists on loopback; use ClusterIP"
    return None
