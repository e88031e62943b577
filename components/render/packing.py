"""A value as the state keeps it where it is large: canonical JSON, gzip-compressed, base64, after PACKED (pure).

The engine rewrites a stack's whole state after every step (docs/state.md), so an input that only its provider reads
(an OSC Secret, the objects of an ObjectSet) is kept packed: Kubernetes objects compress several times, and an RSA
private key is kept as its two primes, a fifth of its PEM. Hashes of the value stay readable beside it, so the
preview still names what changes.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable
from typing import Any

from components.render import packed_keys

PACKED = "gzip+base64:"
# A packed value whose RSA private keys are kept as their primes (render/packed_keys.py). Another prefix, so that an
# older arbor, which would not write the keys out again, fails on it instead of writing a token where a key belongs.
PACKED_KEYS = "gzip+base64+rsa:"


def _strings(value: Any, change: Callable[[str], str]) -> Any:
    """The value with `change` applied to each string in it (not to mapping keys)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: _strings(v, change) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strings(v, change) for v in value]
    return value


def _json(value: Any) -> str:
    """Canonical JSON."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _compressed(text: str) -> str:
    """Text gzip-compressed (no timestamp in the header), base64."""
    return base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()


def pack(value: Any) -> str:
    """The value packed, its RSA private keys as their primes: the same value, the same text.

    A value that holds a token's mark itself is packed as it is, so every token unpacked is one this wrote.
    """
    text = _json(value)
    keys = packed_keys.BEGIN in text or packed_keys.B64_BEGIN in text
    if not keys or packed_keys.MARK in text or packed_keys.B64_MARK in text:
        return PACKED + _compressed(text)
    compact = _json(_strings(value, packed_keys.compacted))
    return (PACKED if compact == text else PACKED_KEYS) + _compressed(compact)


def unpacked(value: Any) -> Any:
    """The value a packed text holds, its keys written out; any other value as it is (an older state kept it whole)."""
    if isinstance(value, str) and value.startswith(PACKED_KEYS):
        text = gzip.decompress(base64.b64decode(value[len(PACKED_KEYS) :]))
        return _strings(json.loads(text), packed_keys.expanded)
    if isinstance(value, str) and value.startswith(PACKED):
        return json.loads(gzip.decompress(base64.b64decode(value[len(PACKED) :])))
    return value
