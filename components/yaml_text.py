"""YAML as arbor writes and reads it: PyYAML's safe dialect, with libyaml's C emitter and parser where they agree.

libyaml (when PyYAML was built with it) writes and reads several times faster than PyYAML's pure-Python code,
and registering a landscape writes a few YAML documents per shoot (kubeconfigs, node-agent's and the API
server's configuration). Its emitter folds long or multi-line quoted scalars at other places than PyYAML's, and
those bytes reach resources' inputs (and hashes of them), so the C emitter is used only for data whose strings
it cannot fold: one line of printable ASCII, short or without a space. tests/unit/test_yaml_text.py holds the two
emitters to the same bytes on that data.
"""

from __future__ import annotations

from typing import Any

import yaml

_C_DUMPER: Any = getattr(yaml, "CSafeDumper", None)
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Below PyYAML's default line width (80) less the deepest indentation arbor writes: never folded.
_SHORT = 48


def dump(data: Any, *, sort_keys: bool) -> str:
    """`yaml.safe_dump(data, sort_keys=sort_keys)`, byte for byte."""
    # A lone scalar ends with `...` from one emitter only; arbor writes mappings.
    fast = _C_DUMPER is not None and isinstance(data, (dict, list)) and _unfoldable(data)
    dumper = _C_DUMPER if fast else yaml.SafeDumper
    return yaml.dump(data, Dumper=dumper, sort_keys=sort_keys)


def load(text: str) -> Any:
    """`yaml.safe_load(text)`."""
    return yaml.load(text, Loader=_LOADER)


def load_all(text: str) -> list[Any]:
    """`list(yaml.safe_load_all(text))`."""
    return list(yaml.load_all(text, Loader=_LOADER))


def _unfoldable(data: Any) -> bool:
    """Whether no string in `data` (keys too) could be folded: one line of printable ASCII, short or one word."""
    if isinstance(data, str):
        return data.isascii() and data.isprintable() and (len(data) <= _SHORT or " " not in data)
    if isinstance(data, dict):
        # An empty key is written as a complex key (`? ''`) by one emitter only.
        return all(k != "" and _unfoldable(k) and _unfoldable(v) for k, v in data.items())
    if isinstance(data, (list, tuple)):
        return all(_unfoldable(v) for v in data)
    return True
