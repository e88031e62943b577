"""How the program registers resources: each resource's state keeps one source frame, not its whole stack trace.

The Python SDK sends the full call stack of every registration, and the engine stores it in the state: about
1.3 KiB per resource, a tenth of a landscape's state, rewritten after every step (bench/README.md, state per
shoot). The innermost frame, from which the engine also takes the resource's source position, is what a reader
needs to find where a resource was declared. The SDK has no setting for this, so the hook below is checked by
tests/unit/test_registration.py against the SDK in use.
"""

from __future__ import annotations

import pulumi.runtime.resource as sdk_resource
from pulumi.runtime.proto import source_pb2


def keep_innermost_frame() -> None:
    """Makes every later registration send only the frame that declared the resource."""
    full = sdk_resource._get_stack_trace  # the SDK's only seam for what is recorded
    if getattr(full, "innermost_only", False):
        return

    def innermost() -> source_pb2.StackTrace:
        trace = full()
        del trace.frames[1:]
        return trace

    innermost.innermost_only = True  # type: ignore[attr-defined]
    sdk_resource._get_stack_trace = innermost
