"""The state keeps one source frame per resource: the SDK hook still exists and trims what it records."""

from __future__ import annotations

import asyncio
import types
from typing import Any, cast

import pulumi.runtime.resource as sdk_resource
import pytest

from components.registration import DYNAMIC_TYPE, keep_innermost_frame, list_dependencies_once


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


@pytest.fixture
def restore_prepare(monkeypatch: pytest.MonkeyPatch) -> None:
    """Puts the SDK's own prepare_resource back after the test."""
    monkeypatch.setattr(sdk_resource, "prepare_resource", sdk_resource.prepare_resource)


def _prepared(ty: str, hooked: bool, monkeypatch: pytest.MonkeyPatch) -> sdk_resource.ResourceResolverOperations:
    """What a registration of type `ty` sends, the SDK's preparation standing in with two inputs from two URNs."""

    async def sdk(*_args: object) -> sdk_resource.ResourceResolverOperations:
        deps = {"kubeconfig": ["urn:cluster"], "namespace": ["urn:namespace"]}
        return sdk_resource.ResourceResolverOperations(
            "urn:parent", None, {"urn:cluster", "urn:namespace"}, None, {}, deps, [], "", [], None, True
        )

    monkeypatch.setattr(sdk_resource, "prepare_resource", sdk)
    if hooked:
        list_dependencies_once()
        list_dependencies_once()  # idempotent
    return asyncio.run(sdk_resource.prepare_resource(cast(Any, None), ty, True, False, {}, None))


@pytest.mark.usefixtures("restore_prepare")
@pytest.mark.parametrize("ty", ["pulumi-python:dynamic/arbor:ObjectSet", "kubernetes:core/v1:Secret"])
def test_a_dynamic_resource_lists_its_dependencies_once(ty: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN the hook WHEN prepared THEN a dynamic resource sends no per-input list, others theirs; all every one."""
    plain = _prepared(ty, False, monkeypatch)
    hooked = _prepared(ty, True, monkeypatch)
    assert hooked.dependencies == plain.dependencies == {"urn:cluster", "urn:namespace"}
    assert hooked.property_dependencies == ({} if ty.startswith(DYNAMIC_TYPE) else plain.property_dependencies)
    assert plain.property_dependencies


def _names(code: types.CodeType) -> set[str]:
    """The global names a function's code, and the code of the functions it defines, look up when they run."""
    nested = (c for c in code.co_consts if isinstance(c, types.CodeType))
    return set(code.co_names).union(*(_names(c) for c in nested))


def test_the_sdk_registers_through_the_hooked_seam() -> None:
    """GIVEN the SDK in use THEN registering and reading a resource look prepare_resource up when they run."""
    assert "prepare_resource" in _names(sdk_resource.register_resource.__code__)
    assert "prepare_resource" in _names(sdk_resource.read_resource.__code__)
