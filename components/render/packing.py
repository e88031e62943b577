"""A value as the state keeps it where it is large: canonical JSON, gzip-compressed, base64, after PACKED (pure).

The engine rewrites a stack's whole state after every step (docs/state.md), so an input that only its provider reads
(an OSC Secret, the objects of an ObjectSet) is kept packed: Kubernetes objects compress several times. Hashes of
the value stay readable beside it, so the preview still names what changes.
"""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

PACKED = "gzip+base64:"


def pack(value: Any) -> str:
    """The value packed: the same value, the same text (no timestamp in the gzip header)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
    return PACKED + base64.b64encode(gzip.compress(text, mtime=0)).decode()


def unpacked(value: Any) -> Any:
    """The value a packed text holds; any other value as it is (an older state kept it whole)."""
    if isinstance(value, str) and value.startswith(PACKED):
        return json.loads(gzip.decompress(base64.b64decode(value[len(PACKED) :])))
    return value
