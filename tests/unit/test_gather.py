"""components/reconciler/gather.py combines Outputs into what `Output.all` gives: values, resources, known, secret."""

from __future__ import annotations

import asyncio
from typing import Any

import pulumi
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.reconciler.gather import gathered, lifted


class _Mocks(pulumi.runtime.Mocks):
    """Outputs echo the inputs."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        """The inputs as outputs."""
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        """No invokes."""
        return {}, []


def _unknown() -> pulumi.Output[Any]:
    """An Output whose value is not known (as in a preview)."""
    loop = asyncio.get_event_loop()

    def done(value: Any) -> asyncio.Future[Any]:
        future = loop.create_future()
        future.set_result(value)
        return future

    return pulumi.Output(set(), done(None), done(False))


def _state(output: pulumi.Output[Any]) -> asyncio.Future[tuple[Any, bool, bool, set[str]]]:
    """What an Output carries: value, known, secret, and its resources' names."""

    async def read() -> tuple[Any, bool, bool, set[str]]:
        data = await output._data
        return data.value, data.is_known, data.is_secret, {r._name for r in data.resources}

    return asyncio.ensure_future(read())


@pytest.mark.parametrize("secret", [None, True, False])
@pytest.mark.parametrize("case", ["known", "secret", "unknown"])
def test_gathered_carries_what_output_all_carries(case: str, secret: bool | None) -> None:
    """GIVEN Outputs of resources, plain values, secrets or unknowns WHEN gathered THEN what Output.all carries."""
    pulumi.runtime.set_mocks(_Mocks(), project="arbor", stack="test", preview=False)
    got: list[tuple[Any, ...]] = []

    @pulumi.runtime.test
    def compare() -> pulumi.Output[Any]:
        first = pulumi.CustomResource("test:index:Thing", "first", {"pem": "CERT", "data": {"a": ["b", "c"]}})
        second = pulumi.CustomResource("test:index:Thing", "second", {"key": "KEY"})
        third: pulumi.Output[Any] = {
            "known": lambda: pulumi.Output.from_input({"plain": "value"}),
            "secret": lambda: pulumi.Output.secret("s3cret"),
            "unknown": _unknown,
        }[case]()
        outputs = {"pem": first.pem, "data": first.data, "key": second.key, "third": third}  # type: ignore[attr-defined]
        expected = pulumi.Output.all(**outputs)
        if secret is not None:
            expected = pulumi.Output.secret(expected) if secret else pulumi.Output.unsecret(expected)
        mine, theirs = _state(gathered(outputs, secret=secret)), _state(expected)

        async def both() -> None:
            got.append((await mine, await theirs))

        return pulumi.Output.from_input(asyncio.ensure_future(both()))

    compare()
    mine, theirs = got[0]
    assert mine == theirs
    value, known, is_secret, resources = mine
    assert resources == {"first", "second"}
    assert known is (case != "unknown")
    assert is_secret is (case == "secret" if secret is None else secret)
    if known:
        assert value["data"] == {"a": ["b", "c"]} and value["pem"] == "CERT"


# A tree of dicts, lists and tuples whose leaves are plain values or the name of an Output to put there.
_LEAF = st.one_of(
    st.integers(), st.text(max_size=3), st.none(), st.sampled_from(["@pem", "@secret", "@unknown", "@deep"])
)
_TREE = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=3), inner, max_size=3),
    ),
    max_leaves=12,
)


def _with_outputs(tree: Any, outputs: dict[str, Any]) -> Any:
    """The tree with each Output name replaced by a fresh Output of that kind."""
    if isinstance(tree, str) and tree in outputs:
        return outputs[tree]()
    if isinstance(tree, dict):
        return {k: _with_outputs(v, outputs) for k, v in tree.items()}
    if isinstance(tree, list | tuple):
        return type(tree)(_with_outputs(v, outputs) for v in tree)
    return tree


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=_TREE)
def test_lifted_carries_what_from_input_carries(tree: Any) -> None:
    """GIVEN any tree with Outputs inside WHEN lifted THEN value, resources, known, secret are from_input's."""
    pulumi.runtime.set_mocks(_Mocks(), project="arbor", stack="test", preview=False)
    got: list[tuple[Any, ...]] = []

    @pulumi.runtime.test
    def compare() -> pulumi.Output[Any]:
        thing = pulumi.CustomResource("test:index:Thing", "thing", {"pem": "CERT"})
        outputs = {
            "@pem": lambda: thing.pem,  # type: ignore[attr-defined]
            "@secret": lambda: pulumi.Output.secret("s3cret"),
            "@unknown": _unknown,
            # An apply that returns Outputs inside its value: from_input lifts those as well.
            "@deep": lambda: thing.pem.apply(lambda p: {"pem": p, "key": pulumi.Output.secret(["KEY"])}),  # type: ignore[attr-defined]
        }
        mine = _state(lifted(_with_outputs(tree, outputs)))
        theirs = _state(pulumi.Output.from_input(_with_outputs(tree, outputs)))

        async def both() -> None:
            got.append((await mine, await theirs))

        return pulumi.Output.from_input(asyncio.ensure_future(both()))

    compare()
    mine, theirs = got[0]
    value, known, is_secret, resources = mine
    assert (known, is_secret, resources) == theirs[1:]
    if known:
        assert value == theirs[0]
