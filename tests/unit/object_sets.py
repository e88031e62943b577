"""The objects ObjectSets apply, seen by the tests that look for objects of a kind as resources of their own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.render import objects
from components.render.packing import unpacked

OBJECT_SET = "pulumi-python:dynamic/arbor:ObjectSet"


def expanded(typed: Mapping[tuple[str, str], Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Every resource by (type, name), and each object of an ObjectSet by its kind's type and `<set>/<key>`."""
    out = {key: dict(inputs) for key, inputs in typed.items()}
    for (type_, name), inputs in typed.items():
        if type_ == OBJECT_SET:
            # A secret set's manifests reach a mock as the secret's wrapper: the value inside it, packed.
            manifests = inputs.get("manifests") or []
            for obj in unpacked(manifests.get("value", []) if isinstance(manifests, Mapping) else manifests):
                out[(objects.type_token(obj["apiVersion"], obj["kind"]), f"{name}/{objects.key(obj)}")] = dict(obj)
    return out
