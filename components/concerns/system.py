"""The shoot's system components (components/render/system) as resources in the shoot, through its provider."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi

from components.bundles import ClusterAccess, NetworkAccess
from components.concerns.objects import KubeObject
from components.plan.values import ShootValues
from components.render import system


def system_components(
    name: str, values: ShootValues, access: ClusterAccess, network: NetworkAccess, parent: pulumi.Resource
) -> list[pulumi.Resource]:
    """Each rendered object once the shoot's API serves, rendered from the ranges the provider resolved.

    Which objects there are depends on the plan alone; their fields on the resolved ranges (on gcp and aws the
    cloud assigns a dual-stack shoot's IPv6 ranges), so each field is an output of those ranges.
    """
    net = values.networking
    planned = system.objects(values, net.pods, net.services)
    rendered = network.ranges.apply(lambda r: system.objects(values, tuple(r["pods"]), tuple(r["services"])))
    # Named objects: a replacement deletes first, or it would delete the object it just applied.
    opts = pulumi.ResourceOptions(
        parent=parent, provider=access.provider, depends_on=list(access.ready), delete_before_replace=True
    )
    return [
        KubeObject(f"{name}-system-{system.key(obj)}", _fields(obj, rendered, i), opts) for i, obj in enumerate(planned)
    ]


def _fields(planned: dict[str, Any], rendered: pulumi.Output[list[dict[str, Any]]], i: int) -> dict[str, Any]:
    """The object's kind and metadata as planned, every other field from its rendering on the resolved ranges."""
    fields: dict[str, Any] = {k: planned[k] for k in ("apiVersion", "kind", "metadata")}
    for field in planned:
        if field not in fields:
            fields[field] = rendered.apply(_pick(i, field))
    return fields


def _pick(i: int, field: str) -> Callable[[list[dict[str, Any]]], Any]:
    """The `field` of the `i`-th rendered object."""
    return lambda objs: objs[i][field]
