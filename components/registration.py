"""How the program registers resources: one source position each, and a dynamic resource's dependencies listed once.

The Python SDK sends the full call stack of every registration, and the engine stores it in the state: about
1.3 KiB per resource, a tenth of a landscape's state, rewritten after every step (bench/README.md, state per
shoot). The innermost frame is what a reader needs to find where a resource was declared, and the engine keeps it
as the resource's source position; a stack trace of that one frame would repeat it (75 bytes a resource). The SDK
has no setting for this, so the hook below is checked by tests/unit/test_registration.py against the SDK in use.
"""

from __future__ import annotations

from typing import Any

import pulumi.runtime.resource as sdk_resource
from pulumi.runtime.proto import source_pb2


def keep_source_position_only() -> None:
    """Makes every later registration send its source position (the declaring frame) and no stack trace."""
    full = sdk_resource._get_stack_trace  # the SDK's seams for what is recorded
    position = sdk_resource._get_source_position
    if getattr(full, "position_only", False):
        return

    def no_trace() -> source_pb2.StackTrace:
        return source_pb2.StackTrace()

    def declaring_frame(stack: source_pb2.StackTrace) -> source_pb2.SourcePosition | None:
        # Called by the SDK right after `no_trace`, in the same registration: the full trace is the same here.
        return position(full())

    no_trace.position_only = True  # type: ignore[attr-defined]
    sdk_resource._get_stack_trace = no_trace
    sdk_resource._get_source_position = declaring_frame


# The type prefix of every resource of a Python dynamic provider (all of arbor's reconcilers).
DYNAMIC_TYPE = "pulumi-python:dynamic"


def list_dependencies_once() -> None:
    """Makes every later registration of a dynamic resource list its dependencies once, not again per input.

    The SDK sends `dependencies` (every resource a resource waits for) and `propertyDependencies` (the same URNs
    again, by input), and the engine stores both; naming each input with no URN keeps 12 KiB a shoot out of the
    state (an empty map would not: the engine gives each input every dependency). It reads the second only when a
    resource is replaced delete-before-replace (a local cluster of a new Kubernetes version, a Kubernetes object
    given another name or provider): it asks each dependent's provider whether the inputs taken from it, unknown,
    replace the dependent too, and deletes those first. An arbor reconciler is not asked: it converges its objects
    in its own update once the replacement exists (another cluster or namespace: `cluster`, `namespace`), and a
    credential is never deleted for a cluster's sake. Ordering, deletion and `--target-dependents` read
    `dependencies`, which stays whole.
    """
    full = sdk_resource.prepare_resource
    if getattr(full, "dependencies_once", False):
        return

    async def once(
        res: Any, ty: str, custom: bool, remote: bool, props: Any, opts: Any, typ: Any = None
    ) -> sdk_resource.ResourceResolverOperations:
        prepared = await full(res, ty, custom, remote, props, opts, typ)
        if not ty.startswith(DYNAMIC_TYPE):
            return prepared
        inputs = list(prepared.property_dependencies) or sorted(prepared.serialized_props.keys())[:1]
        return prepared._replace(property_dependencies={name: [] for name in inputs})

    once.dependencies_once = True  # type: ignore[attr-defined]
    sdk_resource.prepare_resource = once
