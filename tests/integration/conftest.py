"""Integration fixtures; the helpers they use live in engine.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.engine import LOCAL_LANDSCAPE, ROOT, Stack, make_stack, remove_stack, require_environment


@pytest.fixture(scope="session")
def local_stack() -> Iterator[Stack]:
    """A throwaway stack of arbor with the local landscape, converged once for the session."""
    require_environment()
    stack = make_stack(ROOT, ROOT / "stacks", {"arbor:landscape": LOCAL_LANDSCAPE})
    try:
        stack.up()
        yield stack
    finally:
        remove_stack(stack, destroy=False)
