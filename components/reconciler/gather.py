"""Outputs combined into one: `Output.all` and `Output.from_input` without an Output for every value inside.

`pulumi.Output.all`, `Output.secret` and `Output.from_input` first turn each value into a deeply lifted Output:
every nested dict, list and string becomes an Output of its own, a future and a task on the event loop. arbor
combines credentials and configuration many times per shoot and hands rendered manifests (pod specs, OSC
documents) to its resources, and that lifting was the largest part of what a registration spent beyond
registering its resources (bench/scale.py). `gathered` and `lifted` await the Outputs they are given as they are
and make one Output of their values, with what the SDK would carry: every value's resources, known only if all
are, secret if any is. They build on the SDK's own `Output._from_data` and `_OutputData`, as `Output.all` does;
tests/unit/test_gather.py holds them to the SDK's results, so an SDK that changes them fails there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, TypeVar

import pulumi
from pulumi.output import UNKNOWN, _OutputData

T = TypeVar("T")


def gathered(outputs: Mapping[str, pulumi.Output[T]], *, secret: bool | None = None) -> pulumi.Output[dict[str, T]]:
    """`Output.all(**outputs)` for Outputs of plain values, secret if any is.

    `secret=True` marks the result secret, as `Output.secret` would; `secret=False` not, as `Output.unsecret`
    would, for a combination whose only use reveals nothing of its secret values (their hashes).
    """
    keys, values = list(outputs), list(outputs.values())

    async def combined() -> _OutputData[dict[str, Any]]:
        got = await asyncio.gather(*(v._data for v in values))
        return _OutputData(
            resources=set().union(*(d.resources for d in got)),
            # An unknown value reads as the SDK's unknown, as Output.all lifts it.
            value={k: d.value if d.is_known else UNKNOWN for k, d in zip(keys, got, strict=True)},
            is_known=all(d.is_known for d in got),
            is_secret=any(d.is_secret for d in got) if secret is None else secret,
        )

    return pulumi.Output._from_data(combined())


def lifted(value: Any) -> pulumi.Output[Any]:
    """`Output.from_input(value)` for plain values, dicts, lists and tuples with Outputs anywhere inside."""
    return pulumi.Output._from_data(_resolved(value))


async def _resolved(value: Any) -> _OutputData[Any]:
    """The value with every Output inside it replaced by its value, and what those Outputs carry."""
    inside: list[pulumi.Output[Any]] = []
    _collect(value, inside)
    if not inside:
        return _OutputData(resources=set(), value=value, is_known=True, is_secret=False)
    got = await asyncio.gather(*(o._data for o in inside))
    # An Output's value may hold Outputs again (an apply that returned some), which from_input lifts too.
    nested = await asyncio.gather(*(_resolved(d.value) for d in got if d.is_known))
    deep = iter(nested)
    whole = [next(deep) if d.is_known else d for d in got]
    values = {id(o): d.value if d.is_known else UNKNOWN for o, d in zip(inside, whole, strict=True)}
    return _OutputData(
        resources=set().union(*(d.resources for d in got), *(d.resources for d in whole)),
        value=_replaced(value, values),
        is_known=all(d.is_known for d in whole),
        is_secret=any(d.is_secret for d in got) or any(d.is_secret for d in whole),
    )


def _collect(value: Any, into: list[pulumi.Output[Any]]) -> None:
    """Appends every Output in a value of dicts, lists and tuples."""
    if isinstance(value, pulumi.Output):
        into.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, into)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect(item, into)


def _replaced(value: Any, values: Mapping[int, Any]) -> Any:
    """The value with each Output in it replaced by its value (`values` by the Output's id)."""
    if isinstance(value, pulumi.Output):
        return values[id(value)]
    if isinstance(value, dict):
        return {key: _replaced(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, values) for item in value]
    if isinstance(value, tuple):
        return tuple(_replaced(item, values) for item in value)
    return value
