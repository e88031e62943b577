"""The state keeps one source frame per resource: the SDK hook still exists and trims what it records."""

from __future__ import annotations

import pulumi.runtime.resource as sdk_resource
import pytest

from components.registration import keep_innermost_frame


class _Base:
    def __init__(self) -> None:
        self.trace = sdk_resource._get_stack_trace()


class _Custom(_Base):
    def __init__(self) -> None:  # the SDK counts three __init__ frames
        super().__init__()


class _Concrete(_Custom):
    def __init__(self) -> None:
        super().__init__()


def _declare() -> _Concrete:
    """A resource declared two calls below the test, as the layers declare theirs."""
    return _Concrete()


def _declare_in_a_component() -> _Concrete:
    return _declare()


@pytest.fixture
def restore_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Puts the SDK's own function back after the test."""
    monkeypatch.setattr(sdk_resource, "_get_stack_trace", sdk_resource._get_stack_trace)


@pytest.mark.usefixtures("restore_sdk")
def test_only_the_declaring_frame_is_recorded() -> None:
    """GIVEN a registration several calls deep WHEN the hook is on THEN one frame is sent: where it was declared."""
    full = _declare_in_a_component().trace
    assert len(full.frames) > 2

    keep_innermost_frame()
    keep_innermost_frame()  # idempotent: a second call does not wrap the wrapper
    trimmed = _declare_in_a_component().trace

    assert len(trimmed.frames) == 1
    assert trimmed.frames[0].pc.uri == full.frames[0].pc.uri
    assert trimmed.frames[0].pc.line == full.frames[0].pc.line
    assert sdk_resource._get_source_position(trimmed) == sdk_resource._get_source_position(full)
