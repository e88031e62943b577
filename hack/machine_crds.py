"""Copies machine-controller-manager's CRDs from its Go module at the pinned version into the repository.

arbor renders MCM's own CRDs (components/render/machine_crds.py), never hand-written copies: the files under
components/render/machine-crds/ are `kubernetes/crds/machine.sapcloud.io_*.yaml` of the module
github.com/gardener/machine-controller-manager at `MCM_VERSION` (components/pins.py), byte for byte. The module's
source comes from the Go module proxy with the ordinary go client, as hack/tools.sh fetches its modules (checked
against the checksum database, kept in Go's module cache); nothing is built. A unit test
(tests/unit/test_machine_crds.py) runs `differences` against the module.

Usage: python hack/machine_crds.py            refresh the checked-in CRDs after a change of MCM_VERSION
       python hack/machine_crds.py --check    list how they differ from the module; exit 1 if they do
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.pins import MCM_MODULE, MCM_VERSION
from components.render.machine_crds import CRD_DIR, GROUP

PATTERN = f"{GROUP}_*.yaml"
# Where the module keeps its CRDs.
MODULE_CRDS = Path("kubernetes") / "crds"
# As hack/tools.sh: go.mod may be updated, and the local toolchain is used, never one downloaded.
GO_ENV = {"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}


class ModuleUnavailableError(RuntimeError):
    """The pinned module's source could not be had."""


def module_dir(module: str = MCM_MODULE, version: str = MCM_VERSION) -> Path:
    """The module's source directory in Go's module cache, downloaded first if it is not there."""
    wanted = f"{module}@{version}"
    try:
        run = subprocess.run(
            ["go", "mod", "download", "-json", wanted],
            env={**os.environ, **GO_ENV},
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        raise ModuleUnavailableError(f"cannot download {wanted}: the go client is not on PATH") from None
    try:
        info = json.loads(run.stdout)
    except json.JSONDecodeError:
        info = {}
    if run.returncode != 0 or info.get("Error") or not info.get("Dir"):
        reason = info.get("Error") or run.stderr.strip() or f"go exited with {run.returncode}"
        raise ModuleUnavailableError(f"cannot download {wanted} from the Go module proxy: {reason}")
    return Path(info["Dir"])


def crd_files(directory: Path) -> dict[str, bytes]:
    """The machine CRD files of a directory, by name."""
    return {path.name: path.read_bytes() for path in sorted(directory.glob(PATTERN))}


def differences(checked_in: dict[str, bytes], upstream: dict[str, bytes]) -> list[str]:
    """How the checked-in files differ from the module's, one line per file; empty when they are the same."""
    lines = [f"{name}: not in the module" for name in sorted(checked_in.keys() - upstream.keys())]
    lines += [f"{name}: missing from {CRD_DIR.name}/" for name in sorted(upstream.keys() - checked_in.keys())]
    lines += [
        f"{name}: differs" for name in sorted(checked_in.keys() & upstream.keys()) if checked_in[name] != upstream[name]
    ]
    if not upstream:
        lines.append(f"the module holds no {MODULE_CRDS}/{PATTERN}")
    return lines


def refresh(upstream: dict[str, bytes]) -> None:
    """Replaces the checked-in files with the module's."""
    CRD_DIR.mkdir(exist_ok=True)
    for stale in CRD_DIR.glob(PATTERN):
        stale.unlink()
    for name, content in upstream.items():
        (CRD_DIR / name).write_bytes(content)


def main(argv: list[str]) -> int:
    """Refresh, or with --check only compare; a message and exit 1 on a difference or without the module."""
    if argv[1:] not in ([], ["--check"]):
        print("usage: python hack/machine_crds.py [--check]", file=sys.stderr)
        return 2
    try:
        upstream = crd_files(module_dir() / MODULE_CRDS)
    except ModuleUnavailableError as err:
        print(f"machine_crds.py: {err}", file=sys.stderr)
        return 1
    if argv[1:] == ["--check"] or not upstream:
        lines = differences(crd_files(CRD_DIR), upstream)
        for line in lines:
            print(f"machine_crds.py: {CRD_DIR.name}/ against {MCM_MODULE}@{MCM_VERSION}: {line}", file=sys.stderr)
        return 1 if lines else 0
    refresh(upstream)
    print(f"{len(upstream)} CRDs of {MCM_MODULE}@{MCM_VERSION} written to {CRD_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
