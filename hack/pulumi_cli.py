"""The `pulumi` CLI as the hack scripts call it: one command's output, and a changed state written back."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from typing import Any


def pulumi(stack: str, *args: str, who: str = "pulumi") -> str:
    """`pulumi <args> --stack <stack>`'s output; exits with the command and its message, as `who`, when it fails."""
    cmd = ["pulumi", *args, "--stack", stack, "--non-interactive"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{who}: `{' '.join(cmd)}` failed: {proc.stderr.strip()[-2000:]}")
    return proc.stdout


def export(stack: str, who: str = "pulumi") -> dict[str, Any]:
    """The stack's state as `pulumi stack export` writes it (secrets left encrypted)."""
    return dict(json.loads(pulumi(stack, "stack", "export", who=who)))


def import_state(stack: str, exported: dict[str, Any], who: str = "pulumi") -> None:
    """Writes a changed export back (`pulumi stack import`)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as out:
        json.dump(exported, out)
    try:
        pulumi(stack, "stack", "import", "--file", out.name, who=who)
    finally:
        os.unlink(out.name)
