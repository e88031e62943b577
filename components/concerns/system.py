"""The shoot's system components (components/render/system) as one resource in the shoot, which keeps hashes."""

from __future__ import annotations

import pulumi

from components.bundles import ClusterAccess, NetworkAccess
from components.plan.values import ShootValues
from components.reconciler.system_components import SystemComponents
from components.render import system


def system_components(
    name: str, values: ShootValues, access: ClusterAccess, network: NetworkAccess, parent: pulumi.Resource
) -> list[pulumi.Resource]:
    """The network plugin, kube-proxy and CoreDNS once the shoot's API serves, on the ranges the provider resolved.

    On gcp and aws the cloud assigns a dual-stack shoot's IPv6 ranges, so the values are an output of those ranges.
    """
    resolved = network.ranges.apply(lambda r: system.values_of(values, tuple(r["pods"]), tuple(r["services"])))
    return [
        SystemComponents(
            f"{name}-system",
            kubeconfig=access.reach,
            values=resolved.apply(lambda v: v.to_object()),
            # After what objects in the shoot wait for (its provider waits for the same): its API, and its records.
            opts=pulumi.ResourceOptions(parent=parent, depends_on=list(access.ready)),
        )
    ]
