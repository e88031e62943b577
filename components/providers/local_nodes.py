"""What kwok stands in for on local: the nodes it simulates and the mirror pods kubelet would publish on them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import naming

# kwok manages the nodes that carry this annotation (its default configuration).
KWOK_NODE_ANNOTATION = {"kwok.x-k8s.io/node": "fake"}
# kubelet marks the pods it publishes for static pods with this annotation (the manifest's hash as value).
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def mirror_pod(node: str, manifest: dict[str, Any]) -> dict[str, Any]:
    """The mirror pod kubelet would publish for one static pod manifest on one node."""
    metadata = manifest["metadata"]
    component = metadata["name"]
    # Bound by name, never scheduled: ShootStatus reads the pods' readiness (ObjectSet awaits no pod).
    annotations = {
        **metadata.get("annotations", {}),
        MIRROR_ANNOTATION: metadata["annotations"][naming.label("config-hash")],
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**metadata, "name": f"{component}-{node}", "annotations": annotations},
        "spec": {**manifest["spec"], "nodeName": node},
    }


def kwok_node(
    name: str,
    node_name: str,
    labels: dict[str, str],
    provider: k8s.Provider,
    parent: pulumi.Resource,
    pod_cidrs: Sequence[str] = (),
) -> k8s.core.v1.Node:
    """A node that kwok simulates: it turns Ready and runs the pods scheduled to it, with IPs from its pod ranges."""
    spec = {"podCIDR": pod_cidrs[0], "podCIDRs": list(pod_cidrs)} if pod_cidrs else None
    return k8s.core.v1.Node(
        name,
        metadata={"name": node_name, "annotations": dict(KWOK_NODE_ANNOTATION), "labels": labels},
        spec=spec,
        opts=pulumi.ResourceOptions(
            parent=parent,
            provider=provider,
            # A named object: replacing it create-first would apply the new one, then delete that same object.
            delete_before_replace=True,
        ),
    )
