"""Patterns match whole ASCII strings: no trailing newline, no Unicode digits (Gardener's validation is ASCII)."""

from __future__ import annotations

from typing import Any

import pytest

from components.checks import parse_landscape
from components.spec.fields import SpecError
from tests.unit.spec_cases import changed

S = "landscape.shoots[0]"
DNS = "is not a DNS-1123 label (lower-case letters, digits and '-')"
CASES: list[tuple[str, str, Any, str]] = [
    ("shoot name, newline", "shoots[0].name", "web\n", f"{S}.name: a value with a line break {DNS}"),
    ("seed name, newline", "seeds[0].name", "local-1\n", f"landscape.seeds[0].name: a value with a line break {DNS}"),
    ("version, newline", "shoots[0].kubernetes.version", "1.34.4\n",
     f"{S}.kubernetes.version: a value with a line break is not a version <major>.<minor>.<patch>"),
    ("version, Arabic-Indic digits", "shoots[0].kubernetes.version", "1.\u0663\u0664.4",
     f"{S}.kubernetes.version: '1.\u0663\u0664.4' is not a version <major>.<minor>.<patch>"),
    ("label value, newline", "shoots[0].labels", {"team": "a\n"},
     f"{S}.labels: a value with a line break is not a valid label value (key 'team')"),
    ("label key, newline", "shoots[0].labels", {"team\n": "a"},
     f"{S}.labels: a value with a line break is not a valid label key"),
    ("duration, newline", "shoots[0].adminKubeconfig", {"expiration": "1h\n"},
     f"{S}.adminKubeconfig.expiration: a value with a line break is not a duration like 1h, 30m or 1h30m"),
    ("duration, Arabic-Indic digit", "shoots[0].adminKubeconfig", {"expiration": "\u0661h"},
     f"{S}.adminKubeconfig.expiration: '\u0661h' is not a duration like 1h, 30m or 1h30m"),
    ("node-agent version, Arabic-Indic digits", "shoots[0].nodeAgent", {"version": "v1.\u0661\u0662.0"},
     f"{S}.nodeAgent.version: string should match pattern '^v[0-9]+\\.[0-9]+\\.[0-9]+$'"),
    ("encrypted resource, newline", "shoots[0].encryption", {"resources": ["configmaps\n"]},
     f"{S}.encryption: a value with a line break is not a lower-case <resource>[.<group>]"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "path", "value", "line"), CASES, ids=[c[0] for c in CASES])
def test_patterns_refuse_what_is_not_whole_ascii(case: str, path: str, value: Any, line: str) -> None:
    """GIVEN a value a `$` or a Unicode digit class would let through WHEN it is parsed THEN it is refused."""
    with pytest.raises(SpecError) as refused:
        parse_landscape(changed(path, value))
    assert refused.value.lines == [line]
