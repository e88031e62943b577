"""The command provider plugin hack/tools.sh builds (from hack/goproxy/) runs `command.local.Command` steps offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.engine import ROOT, make_stack, remove_stack, require_environment

pytestmark = pytest.mark.integration

PROGRAM = """
import pulumi
import pulumi_command as command

marker = pulumi.Config().require("marker")
step = command.local.Command(
    "snapshot",
    create=f"printf '%s' {marker} > {marker}.txt && printf created",
    delete=f"rm -f {marker}.txt",
    triggers=[pulumi.Config().require("generation")],
)
pulumi.export("stdout", step.stdout)
"""


def test_a_local_command_runs_and_its_trigger_shows_as_a_replacement_in_the_preview(tmp_path: Path) -> None:
    """GIVEN the built plugin, no downloads WHEN a Command runs, then its trigger changes THEN it re-runs, previewed."""
    require_environment()
    (tmp_path / "Pulumi.yaml").write_text(
        "name: command-check\nruntime:\n  name: python\n  options:\n"
        f"    toolchain: pip\n    virtualenv: {ROOT / '.venv'}\n"
    )
    (tmp_path / "__main__.py").write_text(PROGRAM)
    stack = make_stack(tmp_path, tmp_path, {"command-check:marker": "m1", "command-check:generation": "1"})
    try:
        stack.up()
        assert stack.outputs()["stdout"] == "created"
        assert (tmp_path / "m1.txt").read_text() == "m1"
        # A new trigger replaces the step: the preview says so before anything runs (a snapshot before a risky step).
        stack.set_config({"command-check:generation": "2"})
        preview = json.loads(stack.run("preview", "--json").stdout)
        ops = {s["op"] for s in preview["steps"] if s["urn"].endswith("::snapshot")}
        assert "replace" in ops
    finally:
        remove_stack(stack)
    assert not (tmp_path / "m1.txt").exists()  # destroyed: the delete command ran
