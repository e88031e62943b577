"""Rules about Kubernetes providers and objects."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

KUBERNETES_PROVIDER = "pulumi:providers:kubernetes"
SERVICE = "kubernetes:core/v1:Service"
LOCAL_CLUSTER = "pulumi-python:dynamic/arbor:LocalCluster"


def missing_cluster_identifier(resource_type: str, props: Mapping[str, Any]) -> str | None:
    """A Kubernetes provider must name its cluster, or a new kubeconfig would replace every object it manages."""
    if resource_type == KUBERNETES_PROVIDER and not props.get("clusterIdentifier"):
        return (
            "Kubernetes provider without cluster_identifier: a changed kubeconfig (a rotated credential, a new "
            "endpoint) would replace every object it manages; set cluster_identifier to the cluster's identity"
        )
    return None


def load_balancers_on_local(resources: Iterable[tuple[str, str, Mapping[str, Any]]]) -> list[tuple[str, str]]:
    """(urn, message) for each Service of type LoadBalancer in a stack that runs local clusters.

    Nothing on loopback assigns load-balancer addresses, so such a Service would hold the update forever.
    `resources` are (type, urn, props) triples.
    """
    items = list(resources)
    if not any(t == LOCAL_CLUSTER for t, _, _ in items):
        return []
    return [
        (urn, "Service of type LoadBalancer in a local stack: no load balancer exists on loopback; use ClusterIP")
        for t, urn, props in items
        if t == SERVICE and (props.get("spec") or {}).get("type") == "LoadBalancer"
    ]
