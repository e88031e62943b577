"""The machine CRDs are MCM's own: the checked-in files equal the pinned module's and are rendered as they are.

The first test needs the module's source: the go client downloads it into Go's module cache (once) from the Go
module proxy, as hack/tools.sh does. Without it the test fails and says why; it is never skipped.
"""

from __future__ import annotations

from pathlib import Path

import machine_crds as copier
import pytest
import yaml

from components.pins import MCM_MODULE, MCM_VERSION
from components.render import machine_crds


def test_checked_in_crds_are_the_pinned_modules() -> None:
    """GIVEN MCM's module at the pinned version WHEN its CRD files are compared THEN the checked-in ones are equal."""
    try:
        module = copier.module_dir()
    except copier.ModuleUnavailableError as err:
        pytest.fail(f"{err}; the checked-in machine CRDs cannot be compared with the module without it")
    upstream = copier.crd_files(module / copier.MODULE_CRDS)
    lines = copier.differences(copier.crd_files(machine_crds.CRD_DIR), upstream)
    assert lines == [], f"run `python hack/machine_crds.py` to copy the CRDs of {MCM_MODULE}@{MCM_VERSION}"
    assert sorted(upstream) == sorted(machine_crds.file_name(p) for p in machine_crds.PLURALS)


def test_differences_name_every_file_that_is_missing_extra_or_changed() -> None:
    """GIVEN copies that differ from the module in each way WHEN compared THEN each file is named with how."""
    upstream = {"a.yaml": b"a", "b.yaml": b"b", "c.yaml": b"c"}
    checked_in = {"a.yaml": b"a", "b.yaml": b"B", "d.yaml": b"d"}
    assert copier.differences(checked_in, upstream) == [
        "d.yaml: not in the module",
        "c.yaml: missing from machine-crds/",
        "b.yaml: differs",
    ]
    assert copier.differences(upstream, upstream) == []
    assert copier.differences({}, {}) == [f"the module holds no kubernetes/crds/{copier.PATTERN}"]


def test_a_missing_go_client_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """GIVEN no go client on PATH WHEN the module is asked for THEN the error names the module and the cause."""
    monkeypatch.setenv("PATH", str(tmp_path))
    expected = rf"{MCM_MODULE}@{MCM_VERSION}: the go client is not on PATH"
    with pytest.raises(copier.ModuleUnavailableError, match=expected):
        copier.module_dir()


def test_rendered_crds_are_the_files_unchanged() -> None:
    """GIVEN the checked-in files WHEN the CRDs are rendered THEN each is its file's object, classes first."""
    rendered = machine_crds.crds()
    assert [c["spec"]["names"]["plural"] for c in rendered] == list(machine_crds.PLURALS)
    for crd in rendered:
        plural = crd["spec"]["names"]["plural"]
        assert crd == yaml.safe_load((machine_crds.CRD_DIR / machine_crds.file_name(plural)).read_text())
        assert crd["metadata"]["name"] == f"{plural}.{machine_crds.GROUP}"
    rendered[0]["spec"]["group"] = "changed"
    assert machine_crds.crds()[0]["spec"]["group"] == machine_crds.GROUP
