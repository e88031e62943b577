"""Prints `go mod edit` flags derived from an upstream go.mod, for the wrapper modules of hack/tools.sh."""

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any


def replaces(go_mod: str) -> list[dict[str, Any]]:
    """The replace directives of a go.mod file, as `go mod edit -json` reports them."""
    out = subprocess.run(["go", "mod", "edit", "-json", go_mod], check=True, capture_output=True, text=True)
    found: list[dict[str, Any]] = json.loads(out.stdout).get("Replace") or []
    return found


def module_replaces(go_mod: str) -> None:
    """Replaces whose target is a module version; filesystem ones are the caller's to restate."""
    for r in replaces(go_mod):
        old, new = r["Old"], r["New"]
        if new.get("Version"):
            src = old["Path"] + ("@" + old["Version"] if old.get("Version") else "")
            print(f"-replace={src}={new['Path']}@{new['Version']}")


def staging_replaces(go_mod: str, version: str) -> None:
    """k8s.io/kubernetes points each staging module at ./staging: pin it to its published v0.<minor>.<patch>."""
    published = "v0." + version.removeprefix("v").split(".", 1)[1]
    for r in replaces(go_mod):
        if r["New"]["Path"].startswith("./staging/"):
            print(f"-replace={r['Old']['Path']}={r['Old']['Path']}@{published}")


COMMANDS: dict[str, Callable[..., None]] = {"module-replaces": module_replaces, "staging-replaces": staging_replaces}

if __name__ == "__main__":
    COMMANDS[sys.argv[1]](*sys.argv[2:])
