"""The state keeps one source position per resource and no stack trace: the SDK hooks still exist and trim it."""

from __future__ import annotations

import asyncio
import types
from typing import Any, cast

import pulumi.runtime.resource as sdk_resource
import pytest
from google.protobuf import struct_pb2  # type: ignore[import-untyped]

from components.registration import DYNAMIC_TYPE, keep_source_position_only, list_dependencies_once


class _Base:
    def __init__(self) -> None:  # as the SDK's registration: the trace, then the position from it
        self.trace = sdk_resource._get_stack_trace()
        self.position = sdk_resource._get_source_position(self.trace)


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
    """Puts the SDK's own functions back after the test."""
    monkeypatch.setattr(sdk_resource, "_get_stack_trace", sdk_resource._get_stack_trace)
    monkeypatch.setattr(sdk_resource, "_get_source_position", sdk_resource._get_source_position)


@pytest.mark.usefixtures("restore_sdk")
def test_only_the_declaring_frame_is_recorded_as_the_source_position() -> None:
    """GIVEN a registration several calls deep WHEN the hook is on THEN no stack trace, and the position declared."""
    full = _declare_in_a_component()
    assert len(full.trace.frames) > 2 and full.position is not None

    keep_source_position_only()
    keep_source_position_only()  # idempotent: a second call does not wrap the wrapper
    trimmed = _declare_in_a_component()

    assert len(trimmed.trace.frames) == 0
    assert trimmed.position == full.position == full.trace.frames[0].pc


@pytest.fixture
def restore_prepare(monkeypatch: pytest.MonkeyPatch) -> None:
    """Puts the SDK's own prepare_resource back after the test."""
    monkeypatch.setattr(sdk_resource, "prepare_resource", sdk_resource.prepare_resource)


def _prepared(
    ty: str, hooked: bool, monkeypatch: pytest.MonkeyPatch, deps: dict[str, list[str]]
) -> sdk_resource.ResourceResolverOperations:
    """What a registration of type `ty` sends, the SDK's preparation standing in: inputs `kubeconfig`, `namespace`."""

    async def sdk(*_args: object) -> sdk_resource.ResourceResolverOperations:
        props = struct_pb2.Struct()
        props.update({"kubeconfig": "k", "namespace": "n"})
        urns = {u for us in deps.values() for u in us} | {"urn:explicit"}
        ops: tuple[Any, ...] = ("urn:parent", props, urns, None, {}, deps, [], "", [], None, True)
        return sdk_resource.ResourceResolverOperations(*ops)

    monkeypatch.setattr(sdk_resource, "prepare_resource", sdk)
    if hooked:
        list_dependencies_once()
        list_dependencies_once()  # idempotent
    return asyncio.run(sdk_resource.prepare_resource(cast(Any, None), ty, True, False, {}, None))


FROM_TWO = {"kubeconfig": ["urn:cluster"], "namespace": ["urn:namespace"]}


@pytest.mark.usefixtures("restore_prepare")
@pytest.mark.parametrize("deps", [FROM_TWO, {}], ids=["inputs from two resources", "depends_on only"])
@pytest.mark.parametrize("ty", ["pulumi-python:dynamic/arbor:ObjectSet", "kubernetes:core/v1:Secret"])
def test_a_dynamic_resource_lists_its_dependencies_once(
    ty: str, deps: dict[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN the hook WHEN prepared THEN a dynamic resource names inputs with no URN, others theirs; all every one.

    Never an empty map from a dynamic resource: the engine would give each of its inputs every dependency.
    """
    plain = _prepared(ty, False, monkeypatch, deps)
    hooked = _prepared(ty, True, monkeypatch, deps)
    assert hooked.dependencies == plain.dependencies and "urn:explicit" in plain.dependencies
    if ty.startswith(DYNAMIC_TYPE):
        assert hooked.property_dependencies == {name: [] for name in deps or ["kubeconfig"]}
    else:
        assert hooked.property_dependencies == plain.property_dependencies == deps


def _names(code: types.CodeType) -> set[str]:
    """The global names a function's code, and the code of the functions it defines, look up when they run."""
    nested = (c for c in code.co_consts if isinstance(c, types.CodeType))
    return set(code.co_names).union(*(_names(c) for c in nested))


def test_the_sdk_registers_through_the_hooked_seam() -> None:
    """GIVEN the SDK in use THEN registering and reading a resource look prepare_resource up when they run."""
    assert "prepare_resource" in _names(sdk_resource.register_resource.__code__)
    assert "prepare_resource" in _names(sdk_resource.read_resource.__code__)
