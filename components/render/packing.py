"""A value as the state keeps it where it is large: canonical JSON, deflated with a dictionary, base64 (pure).

The engine rewrites a stack's whole state after every step (docs/state.md), so an input that only its provider reads
(an OSC Secret, the objects of an ObjectSet) is kept packed: Kubernetes objects compress several times, more so
against a dictionary of objects as arbor renders them (packing-dictionary/, hack/packing_dictionary.py), and an RSA
private key is kept as its two primes, a fifth of its PEM. Hashes of the value stay readable beside it, so the
preview still names what changes. Values an older arbor packed (gzip) are read as they are.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import json
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from components.render import packed_keys

# The dictionary packed values are written with; each version stays readable (a state holds its values).
DICTIONARY = 1
DICTIONARY_DIR = Path(__file__).with_name("packing-dictionary")
# The SHA-256 of each version's text: a dictionary edited after values were packed with it would not unpack them.
DICTIONARY_SHA256 = {1: "8bfe3d000dba82ceffe050af6652fde9abe6d0c64810758efed7018fa36eaae3"}
# How far back deflate looks: a dictionary's longer text would go unread.
WINDOW = 32 * 1024
PACKED = f"deflate+dict{DICTIONARY}+base64:"
# A packed value whose RSA private keys are kept as their primes (render/packed_keys.py). Another prefix, so that an
# older arbor, which would not write the keys out again, fails on it instead of writing a token where a key belongs.
PACKED_KEYS = f"deflate+dict{DICTIONARY}+base64+rsa:"
# What an older arbor wrote: gzip, no dictionary.
GZIP, GZIP_KEYS = "gzip+base64:", "gzip+base64+rsa:"
_FORMAT = re.compile(r"(?:gzip|deflate\+dict(?P<version>[0-9]+))\+base64(?P<keys>\+rsa)?:")


@functools.cache
def dictionary(version: int) -> bytes:
    """A dictionary's text, checked against its hash."""
    if version not in DICTIONARY_SHA256:
        raise ValueError(f"a value is packed with dictionary {version}, which only a newer arbor has")
    text = (DICTIONARY_DIR / f"{version}.txt").read_bytes()
    if hashlib.sha256(text).hexdigest() != DICTIONARY_SHA256[version]:
        raise ValueError(f"packing dictionary {version} is not the one values were packed with")
    return text


def _strings(value: Any, change: Callable[[str], str]) -> Any:
    """The value with `change` applied to each string in it (not to mapping keys)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: _strings(v, change) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strings(v, change) for v in value]
    return value


def canonical_json(value: Any) -> str:
    """Canonical JSON: keys sorted, no spaces (what is packed, and what the dictionary is made of)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _compressed(text: str, version: int = DICTIONARY) -> str:
    """Text deflated against a dictionary (raw: no header, the prefix names the format), base64."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zdict=dictionary(version))
    return base64.b64encode(deflate.compress(text.encode()) + deflate.flush()).decode()


def _decompressed(data: bytes, version: int | None) -> bytes:
    """What `_compressed` (a version) or an older arbor's gzip (None) made of a text."""
    if version is None:
        return gzip.decompress(data)
    inflate = zlib.decompressobj(-15, zdict=dictionary(version))
    return inflate.decompress(data) + inflate.flush()


def pack(value: Any) -> str:
    """The value packed, its RSA private keys as their primes: the same value, the same text.

    A value that holds a token's mark itself is packed as it is, so every token unpacked is one this wrote.
    """
    text = canonical_json(value)
    keys = packed_keys.BEGIN in text or packed_keys.B64_BEGIN in text
    if not keys or packed_keys.MARK in text or packed_keys.B64_MARK in text:
        return PACKED + _compressed(text)
    compact = canonical_json(_strings(value, packed_keys.compacted))
    return (PACKED if compact == text else PACKED_KEYS) + _compressed(compact)


def unpacked(value: Any) -> Any:
    """The value a packed text holds, its keys written out; any other value as it is (an older state kept it whole)."""
    form = _FORMAT.match(value) if isinstance(value, str) else None
    if form is None:
        return value
    version = int(form["version"]) if form["version"] else None
    whole = json.loads(_decompressed(base64.b64decode(value[form.end() :]), version))
    return _strings(whole, packed_keys.expanded) if form["keys"] else whole
