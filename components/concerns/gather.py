"""Outputs combined into one: `Output.all` without an Output for every value and everything inside it.

`pulumi.Output.all` (and `Output.secret`) first turn each argument into a deeply lifted Output: every nested
dict, list and string of every value becomes an Output of its own, a future and a task on the event loop. arbor
combines credentials and configuration many times per shoot, and that lifting was the largest part of what a
registration spent beyond registering its resources (bench/scale.py). `gathered` awaits the given Outputs as they
are and makes one Output of their values, with what `Output.all` would carry: every value's resources, known only
if all are, secret if any is. It builds on the SDK's own `Output._from_data` and `_OutputData`, as `Output.all`
does; tests/unit/test_gather.py holds it to `Output.all`'s results, so an SDK that changes them fails there.
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
