"""What a dynamic provider's diff is given for a value a preview does not know yet, and how to compare around it.

A preview hands an input whose source is being changed in the same run (a cluster restarted, a record updated) as
the engine's unknown: the sentinel string, or an object that is no plain value. Such an input is not a change: the
`up` that follows diffs again with the value known, and only then decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi.runtime import rpc

PLAIN = (str, int, float, bool, type(None))


def known(value: Any) -> bool:
    """Whether a value holds nothing a preview does not know yet, at any depth."""
    if isinstance(value, Mapping):
        return all(known(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(known(v) for v in value)
    return isinstance(value, PLAIN) and value != rpc.UNKNOWN


def changed(olds: Mapping[str, Any], news: Mapping[str, Any], keys: Iterable[str]) -> list[str]:
    """The keys whose new value is known and differs from the old one; one the old state lacks is no change."""
    return [k for k in keys if k in olds and known(news.get(k)) and olds[k] != news.get(k)]
