"""Destructive changes on the real engine: refused before anything changes, and a confirmed deletion in one `up`.

One small stack (garden, a seed, two hosted shoots): data-bearing resources are protected in the state; a
downgrade and an unconfirmed removal fail the preview with their line; with `confirmDeletion` the `make up` path
(hack/deletions.py, then `pulumi up`) deletes the shoot, its cluster and its protected CAs and keys.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.engine import (
    LOCAL_LANDSCAPE,
    ROOT,
    Stack,
    cluster_dir,
    make_stack,
    processes_of,
    remove_stack,
    require_environment,
)

WEB, DB = LOCAL_LANDSCAPE["shoots"][0], LOCAL_LANDSCAPE["shoots"][1]


def landscape(**fields: Any) -> dict[str, Any]:
    """The local garden and seed with dev/web and ops/db, and `fields` at the top of the landscape."""
    garden = {**LOCAL_LANDSCAPE["garden"]}
    garden.pop("encryption", None)
    return {"garden": garden, "seeds": LOCAL_LANDSCAPE["seeds"], "shoots": [WEB, DB], **fields}


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    """The small stack, converged once."""
    require_environment()
    stack = make_stack(ROOT, ROOT / "stacks", {"arbor:landscape": landscape()})
    try:
        stack.make_up()
        yield stack
    finally:
        remove_stack(stack, destroy=False)


def hack_deletions(stack: Stack, *args: str) -> str:
    """hack/deletions.py on the stack, as `make preview` runs it; its output."""
    cmd = [sys.executable, str(ROOT / "hack" / "deletions.py"), stack.name, *args]
    return subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def refused_preview(stack: Stack) -> str:
    """The output of a preview that must fail before any step."""
    proc = stack.run("preview", "--json", check=False)
    assert proc.returncode != 0
    preview = json.loads(proc.stdout)
    steps = preview.get("steps") or []
    assert [s["op"] for s in steps if s["op"] != "same" and "Stack" not in s["urn"]] == []
    # The diagnostics as written (the JSON on stdout escapes `>`).
    return "\n".join(str(d.get("message", "")) for d in preview.get("diagnostics") or []) + proc.stderr


def names(stack: Stack, protected: bool = False) -> set[str]:
    """Names of the resources in the stack's state (only the protected ones with `protected`)."""
    resources = stack.export()["deployment"]["resources"]
    return {r["urn"].rsplit("::", 1)[-1] for r in resources if r.get("protect") or not protected}


def test_data_bearing_resources_are_protected_in_the_state(stack: Stack) -> None:
    """GIVEN the converged stack THEN its clusters, encryption keys, CAs and keys are protected, leaves are not."""
    protected = names(stack, protected=True)
    assert {"arbor-garden-cluster", "arbor-seed-local-1-cluster", "arbor-shoot-dev-web-cluster"} <= protected
    assert {"arbor-shoot-dev-web-encryption-keys", "arbor-shoot-dev-web-pki-ca-etcd"} <= protected
    assert "arbor-shoot-dev-web-pki-etcd-server" not in protected


def test_a_downgrade_is_refused(stack: Stack) -> None:
    """GIVEN dev/web at 1.34.4 WHEN previewed at 1.33.0 THEN the preview fails with the downgrade line."""
    stack.set_config({"arbor:landscape": landscape(shoots=[{**WEB, "kubernetes": {"version": "1.33.0"}}, DB])})
    try:
        out = refused_preview(stack)
    finally:
        stack.set_config({"arbor:landscape": landscape()})
    assert (
        "landscape.shoots[0].kubernetes.version: 1.34.4 -> 1.33.0 is a downgrade; Kubernetes does not support "
        "downgrading a control plane (etcd data is written by the newer version)" in out
    )


def test_removing_a_shoot_needs_a_confirmation_and_then_one_up_deletes_it(stack: Stack, tmp_path: Path) -> None:
    """GIVEN dev/web removed WHEN previewed THEN refused with how to confirm; WHEN confirmed THEN `up` deletes it."""
    stack.set_config({"arbor:landscape": landscape(shoots=[DB])})
    out = refused_preview(stack)
    assert "landscape.shoots: dev/web was removed;" in out
    assert "add to the landscape `confirmDeletion: {shoots: [dev/web]}`" in out
    assert "arbor-shoot-dev-web-cluster" in names(stack)

    stack.set_config({"arbor:landscape": landscape(shoots=[DB], confirmDeletion={"shoots": ["dev/web"]})})
    # As `make preview`: the confirmed deletion is previewed, and nothing else protected is deleted or replaced.
    assert hack_deletions(stack, "--preview-flags") == "--ignore-protect"
    preview = stack.run("preview", "--json", "--ignore-protect")
    deleted = {s["urn"].rsplit("::", 1)[-1] for s in json.loads(preview.stdout)["steps"] if s["op"] == "delete"}
    assert {"arbor-shoot-dev-web-cluster", "arbor-shoot-dev-web-pki-ca"} <= deleted
    # Only dev/web's: its resources, and its namespace in the seed.
    assert not {n for n in deleted if "dev-web" not in n and "dev--web" not in n}
    (tmp_path / "preview.json").write_text(preview.stdout)
    assert hack_deletions(stack, "--verify", str(tmp_path / "preview.json")) == ""
    stack.make_up()
    assert not {n for n in names(stack) if n.startswith("arbor-shoot-dev-web")}
    assert not cluster_dir(f"{stack.name}-shoot-dev-web").exists()
    assert processes_of(f"{stack.name}-shoot-dev-web/") == []
    assert "dev/web" not in stack.outputs()["shoots"]
    assert "arbor-shoot-ops-db-cluster" in names(stack, protected=True)
