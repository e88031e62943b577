"""The stack's outputs of its previous update, read before anything is registered.

Some changes are allowed only relative to what was deployed (a network's families, its set ranges); the program
reads the last update's outputs through the engine's built-in `readStackOutputs` (what a StackReference uses),
synchronously, so a refused change stops the run before any resource is touched.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.runtime import invoke

READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"


def previous(name: str) -> Any:
    """The output `name` of this stack's previous update, or None before the first update."""
    stack = f"{pulumi.get_organization()}/{pulumi.get_project()}/{pulumi.get_stack()}"
    result = invoke(READ_STACK_OUTPUTS, {"name": stack})
    outputs = (result.value or {}).get("outputs") or {}
    return outputs.get(name)
