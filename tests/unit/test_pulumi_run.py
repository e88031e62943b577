"""hack/pulumi-run: the engine runs in a temporary directory of its own, which a later run removes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.integration.engine import ROOT

# Above the largest pid Linux gives (pid_max is at most 2^22): a run that surely ended.
ENDED = 2**22 + 1
# The engine's stand-in, Python run by `-c`: it says its argv[0] as the kernel has it, its TMPDIR and its
# arguments, and leaves a kubeconfig there as pulumi-kubernetes does.
REPORT = (
    "import os, sys; argv0 = open('/proc/self/cmdline').read().split(chr(0))[0]; "
    "print(argv0, os.environ['TMPDIR'], ' '.join(sys.argv[1:]), sep='|'); "
    "open(os.path.join(os.environ['TMPDIR'], 'kubeconfig123'), 'w').write('token')"
)


def _bin(tmp_path: Path) -> Path:
    """A `.bin` as hack/tools.sh links it, the engine a Python interpreter (given REPORT to run)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pulumi").symlink_to(ROOT / "hack" / "pulumi-run")
    (bin_dir / "pulumi-engine").symlink_to(sys.executable)
    return bin_dir


def test_each_run_has_a_private_temporary_directory_and_ended_runs_leave_none(tmp_path: Path) -> None:
    """GIVEN directories of an ended and of a running run WHEN pulumi runs THEN its own 0700 one; the ended one gone.

    The engine is run as `.../pulumi` with the arguments given; `--sweep` then removes the run's directory (its
    kubeconfig with it) and keeps the running one's.
    """
    base, bin_dir = tmp_path / "tmp", _bin(tmp_path)
    base.mkdir()
    ended, running = base / f"arbor-pulumi.{ENDED}", base / f"arbor-pulumi.{os.getpid()}"
    for d in (ended, running):
        d.mkdir()
        (d / "kubeconfig1").write_text("key")
    env = {**os.environ, "TMPDIR": str(base)}
    run = [str(bin_dir / "pulumi"), "-c", REPORT, "up", "--yes"]
    out = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    argv0, tmpdir, args = out.stdout.strip().split("|")
    own = Path(tmpdir)
    assert argv0 == str(bin_dir / "pulumi") and args == "up --yes"
    assert own.parent == base and own.name.startswith("arbor-pulumi.") and own != running
    assert stat.S_IMODE(own.stat().st_mode) == 0o700 and (own / "kubeconfig123").exists()
    assert not ended.exists() and running.exists()
    subprocess.run([ROOT / "hack" / "pulumi-run", "--sweep"], env=env, check=True)
    assert not own.exists() and running.exists()
    assert not any(p.name.startswith("kubeconfig") for p in base.iterdir())
