"""components/yaml_text.py writes exactly what `yaml.safe_dump` writes, and takes libyaml's emitter where it can."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components import yaml_text
from components.checks import check
from tests.unit.landscape_mocks import registered
from tests.unit.spec_cases import base

# YAML's indicators, quotes, spaces and escapes among ordinary characters: what makes an emitter quote or fold.
ALPHABET = st.sampled_from([*"az09 -_:#'\"{}[],&*!|>%@`?\\/.=\n\t", "é", "\x07", "\u2028"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(ALPHABET, max_size=140),
    # Long words and long sentences: where folding happens, if anywhere.
    st.builds(lambda w, n: " ".join([w] * n), st.text(ALPHABET, min_size=1, max_size=12), st.integers(1, 20)),
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(ALPHABET, max_size=30), inner, max_size=4),
    max_leaves=25,
)
STABLE = settings(derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(STABLE, max_examples=1000)
@given(DOCUMENTS, st.booleans())
def test_dump_writes_what_safe_dump_writes(data: Any, sort_keys: bool) -> None:
    """GIVEN any document of YAML's awkward characters WHEN dumped THEN the bytes of `yaml.safe_dump`."""
    assert yaml_text.dump(data, sort_keys=sort_keys) == yaml.safe_dump(data, sort_keys=sort_keys)


@settings(STABLE, max_examples=300)
@given(DOCUMENTS)
def test_load_reads_what_safe_load_reads(data: Any) -> None:
    """GIVEN a dumped document WHEN loaded THEN what `yaml.safe_load` reads."""
    text = yaml.safe_dump(data)
    assert yaml_text.load(text) == yaml.safe_load(text)
    assert yaml_text.load_all(text + "---\n" + text) == list(yaml.safe_load_all(text + "---\n" + text))


def test_the_emitters_differ_where_the_guard_keeps_the_python_one() -> None:
    """GIVEN a multi-line string deep in a document WHEN libyaml writes it THEN other bytes: the guard is needed."""
    config = "apiServer:\n  server: https://kube-apiserver.shoot--p00--s001.svc.cluster.local\nkind: Config\n"
    data = {"spec": {"files": [{"path": "/etc/config", "content": {"inline": {"encoding": "", "data": config}}}]}}
    fast = yaml.dump(data, Dumper=yaml.CSafeDumper, sort_keys=False)
    assert fast != yaml.safe_dump(data, sort_keys=False)
    assert not yaml_text._unfoldable(data)


def test_a_registration_writes_its_kubeconfigs_with_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN the local landscape WHEN registered THEN every kubeconfig arbor writes passes the guard (the fast path)."""
    guard = yaml_text._unfoldable
    judged: list[tuple[Any, bool]] = []

    def judge(data: Any) -> bool:
        judged.append((data, guard(data)))
        return judged[-1][1]

    monkeypatch.setattr(yaml_text, "_unfoldable", judge)
    registered(check(base(), "local", dict).plan)
    kubeconfigs = [fast for data, fast in judged if isinstance(data, dict) and data.get("kind") == "Config"]
    assert kubeconfigs, "no kubeconfig was written"
    assert all(kubeconfigs)
