"""Outputs combined whole: `Output.all` without lifting what is inside each value.

`pulumi.Output.all` (and `Output.secret`) turn every nested dict, list and string of every value into an Output
of its own before combining them: a Secret's content of n keys costs about 3n + 4 Outputs, each a future and a
task on the event loop. arbor combines credentials and configuration whose values hold no Outputs, many times per
shoot, and that lifting was the largest part of what a registration spent beyond registering its resources
(bench/scale.py). Here each value is kept whole: three Outputs per value, whatever its size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import pulumi

T = TypeVar("T")


class _Whole:
    """A value `Output.from_input` passes through as it is (not a dict, list, tuple, input type or awaitable)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def gathered(outputs: Mapping[str, pulumi.Output[T]], *, secret: bool = False) -> pulumi.Output[dict[str, T]]:
    """`Output.all(**outputs)` for Outputs of plain values; `secret` marks the result as `Output.secret` would."""
    keys = list(outputs)
    wholes = [output.apply(_Whole) for output in outputs.values()]
    if secret:
        # A secret value among them makes the combination secret; this one carries nothing else.
        wholes.append(pulumi.Output.secret(_Whole(None)))
    return pulumi.Output.all(*wholes).apply(lambda got: {k: got[i].value for i, k in enumerate(keys)})
