"""Resources that apply several objects: each object as a policy sees it, named `<resource>/<object key>`.

A shoot's system components are one resource (components/reconciler/system_components.py) whose inputs are the
values its objects render from: the pack renders them with arbor's own renderer. An ObjectSet (a hosted control
plane's component: components/reconciler/object_set.py) has its objects as an input, packed. The rules read Kubernetes
objects, so each is checked as one.
"""

from __future__ import annotations

import sys
from pathlib import Path

from arbor_policies.resource import Resource, items, mapping

# The policy pack runs from policies/ (the engine's working directory there); the renderer is arbor's own.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from components.render import objects, system
from components.render.packing import unpacked

SYSTEM_COMPONENTS = "pulumi-python:dynamic/arbor:SystemComponents"
OBJECT_SET = "pulumi-python:dynamic/arbor:ObjectSet"


def expanded(r: Resource) -> list[Resource]:
    """The resource itself, or each object it applies (a value unknown in a preview raises, as a rule's read does)."""
    provider = r.provider
    if r.type == SYSTEM_COMPONENTS:
        objs = system.render(system.SystemValues.from_object(mapping(r.props.get("values"))))
    elif r.type == OBJECT_SET:
        objs = [dict(mapping(o)) for o in items(unpacked(r.props.get("manifests")))]
        provider = {"clusterIdentifier": r.props.get("cluster")}  # as the cluster's Kubernetes provider has it
    else:
        return [r]
    return [
        Resource(
            type=objects.type_token(o["apiVersion"], o["kind"]),
            props=o,
            name=f"{r.name}/{objects.key(o)}",
            provider=provider,
            protect=r.protect,
        )
        for o in objs
    ]
