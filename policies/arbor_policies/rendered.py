"""Resources that keep the values their objects render from, not the objects: each object as a policy sees it.

A shoot's system components are one resource (components/reconciler/system_components.py) whose inputs are the
values its objects render from; the rules read Kubernetes objects, so the pack renders them with arbor's own
renderer and checks each, named `<resource>/<object key>`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from arbor_policies.resource import Resource, mapping

# The policy pack runs from policies/ (the engine's working directory there); the renderer is arbor's own.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from components.render import system

SYSTEM_COMPONENTS = "pulumi-python:dynamic/arbor:SystemComponents"


def type_token(api_version: str, kind: str) -> str:
    """The kubernetes provider's type of a kind, as a resource of its own would have: `kubernetes:apps/v1:DaemonSet`."""
    return f"kubernetes:{api_version if '/' in api_version else f'core/{api_version}'}:{kind}"


def expanded(r: Resource) -> list[Resource]:
    """The resource itself, or each object it renders (a value unknown in a preview raises, as a rule's read does)."""
    if r.type != SYSTEM_COMPONENTS:
        return [r]
    values = system.SystemValues.from_object(mapping(r.props.get("values")))
    return [
        Resource(
            type=type_token(o["apiVersion"], o["kind"]),
            props=o,
            name=f"{r.name}/{system.key(o)}",
            provider=r.provider,
            protect=r.protect,
        )
        for o in system.render(values)
    ]
