"""The stack's outputs of its previous update, read before anything is registered.

Some changes are allowed only relative to what was deployed (a network's families, its set ranges); the program
reads the last update's outputs through the engine's built-in `readStackOutputs` (what a StackReference uses),
synchronously, so a refused change stops the run before any resource is touched.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pulumi
from pulumi.runtime import invoke

READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"
# How the engine answers a read of a stack the backend does not have.
UNKNOWN_STACK = "unknown stack"
# The file backend may be writing this very stack's checkpoint (an update's refresh) while it is read, and then
# answers with a truncated file: read again after a pause before giving up.
RETRY_PAUSES_S = (0.5, 1.0, 2.0, 4.0)


def _read(stack: str) -> dict[str, Any]:
    """The stack's outputs as the backend has them."""
    result = invoke(READ_STACK_OUTPUTS, {"name": stack})
    return dict((result.value or {}).get("outputs") or {})


def previous_outputs(read: Callable[[str], dict[str, Any]] = _read) -> dict[str, Any]:
    """Every output of this stack's previous update ({} before the first one), read once.

    A read that keeps failing stops the program: without the previous outputs no change can be checked.
    """
    return stack_outputs(pulumi.get_stack(), read)


def qualified(stack: str) -> str:
    """A stack of this project by its fully qualified name, as a StackReference names it."""
    return f"{pulumi.get_organization()}/{pulumi.get_project()}/{stack}"


def stack_outputs(stack: str, read: Callable[[str], dict[str, Any]] = _read) -> dict[str, Any]:
    """Every output of the last update of a stack of this project; {} for a stack that does not exist (yet)."""
    name = qualified(stack)
    for pause in (*RETRY_PAUSES_S, None):
        try:
            return read(name)
        except Exception as err:  # the engine reports every failure as a plain Exception
            if UNKNOWN_STACK in str(err):
                return {}
            if pause is None:
                raise pulumi.RunError(f"cannot read the outputs of the previous update of {name}: {err}") from None
            time.sleep(pause)
    return {}
