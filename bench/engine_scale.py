"""The engine at landscape scale: `pulumi up` and a no-op `pulumi preview` of N shoots, one stack against shards.

Issue 19, part 3. The real engine and the file backend, with shoots of arbor's measured shape rather than arbor's
program (which needs a cluster per shoot): each synthetic shoot is a component of `--resources` dynamic resources
keeping `--kib` KiB in the state between them, in `--layers` waves (bench/engine_program). The defaults are a hosted
shoot's figures on the local landscape (bench/state_size.py, bench/README.md). For each N: one stack of N shoots,
and N / `--shard` stacks of `--shard` shoots (a stack per seed), run `--parallel` at a time. Measured per stack:
`up` from nothing and a second, no-op `preview` (engine time: wall-clock of the CLI), the checkpoint's bytes, and the
peak resident memory of the CLI and every process under it (sampled from /proc). Usage (project root, tools built):
  source hack/env.sh && .venv/bin/python bench/engine_scale.py [--shoots 10 100 500] [--shard 50] [--readme]
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hack"))  # run as a script: hack/ holds the process-tree kill the tests share
from process_tree import kill_tree, tree_rss  # noqa: E402
from scale import write_readme  # noqa: E402

PROGRAM = ROOT / "bench" / "engine_program"
# The section `--readme` rewrites: the last run alone; the history and its reading stay in the section before it.
HEADING = "## The engine at landscape scale: the last run (`make bench`)"
# A hosted shoot on the local landscape, measured with bench/state_size.py after `make up` twice on a fresh clone
# (bench/README.md; 2026-12-06, 4f1b8d1: dev/web 188 KiB and ops/db 189 KiB, 45 resources each).
RESOURCES_PER_SHOOT = 45
KIB_PER_SHOOT = 189
# What the engine keeps of a bench resource besides its content (URN, type, parent, dependencies, the pickled
# provider, outputs), measured: the table's "KiB per shoot" shows what the state held.
OVERHEAD_BYTES = 2300
PASSPHRASE = "bench"


@dataclass(frozen=True)
class Run:
    """One stack's figures."""

    shoots: int
    up_s: float
    preview_s: float
    state_bytes: int
    peak_rss: int
    # Stopped at `--one-stack-limit`: `up_s` is then a lower bound, and no preview ran.
    stopped: bool = False
    # Not run: one stack of fewer shoots was already stopped, so `up_s` (the limit) is a lower bound too.
    skipped: bool = False


def _timed(cmd: list[str], cwd: Path, env: dict[str, str], limit_s: float | None = None) -> tuple[float, int, bool]:
    """Runs `cmd`; its wall-clock seconds, the peak resident bytes of its process tree, and whether it was stopped.

    Past `limit_s` the whole process tree is killed (the stack is thrown away). Raises when it fails.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.5):
            peak = max(peak, tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stopped = False
    try:
        out, _ = proc.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        stopped = True
        kill_tree(proc.pid)
        out, _ = proc.communicate()
    done.set()
    sampler.join()
    if proc.returncode != 0 and not stopped:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{out[-3000:]}")
    return time.perf_counter() - start, peak, stopped


def _project(workdir: Path, name: str) -> Path:
    """A copy of the bench program with its Pulumi.yaml, using arbor's virtualenv."""
    project = workdir / name
    shutil.copytree(PROGRAM, project, ignore=shutil.ignore_patterns("__pycache__"))
    venv = ROOT / ".venv"
    (project / "Pulumi.yaml").write_text(
        f"name: arbor-bench\nruntime:\n  name: python\n  options:\n    toolchain: pip\n    virtualenv: {venv}\n"
    )
    return project


def run_stack(
    workdir: Path, name: str, first: int, shoots: int, args: argparse.Namespace, limit_s: float | None = None
) -> Run:
    """A stack of `shoots` shoots from nothing: `up` (stopped after `limit_s`), then a no-op `preview`."""
    project = _project(workdir, name)
    backend = workdir / f"{name}-state"
    backend.mkdir()
    # The backend's options as hack/env.sh sets them for arbor's stacks (metadata=skip), so the bench measures those.
    options = urlparse(os.environ.get("PULUMI_BACKEND_URL", "")).query
    url = f"file://{backend}" + (f"?{options}" if options else "")
    env = {**os.environ, "PULUMI_BACKEND_URL": url, "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
           "PYTHONPATH": str(project), "PULUMI_SKIP_UPDATE_CHECK": "true"}  # fmt: skip
    size = max(args.kib * 1024 // args.resources - OVERHEAD_BYTES, 0)
    cli = ["pulumi", "--non-interactive"]
    subprocess.run([*cli, "stack", "init", name], cwd=project, env=env, check=True, capture_output=True)
    for key, value in (("shoots", shoots), ("first", first), ("resources", args.resources), ("bytes", size),
                       ("layers", args.layers)):  # fmt: skip
        subprocess.run([*cli, "config", "set", f"arbor-bench:{key}", str(value)], cwd=project, env=env, check=True)
    up_s, up_peak, stopped = _timed([*cli, "up", "--yes", "--skip-preview", "--suppress-progress"], project, env,
                                    limit_s)  # fmt: skip
    preview_s, preview_peak = 0.0, 0
    if not stopped:
        preview = [*cli, "preview", "--expect-no-changes", "--suppress-progress"]
        preview_s, preview_peak, _ = _timed(preview, project, env)
    checkpoint = next(backend.glob(".pulumi/stacks/**/*.json"), None)
    if not args.keep:
        shutil.rmtree(project)
    state = checkpoint.stat().st_size if checkpoint else 0
    return Run(shoots, up_s, preview_s, state, max(up_peak, preview_peak), stopped)


def measure(shoots: int, args: argparse.Namespace, workdir: Path, past_limit: bool) -> dict[str, list[Run] | float]:
    """One stack of `shoots` (unless fewer were `past_limit`), and shards of `--shard` run `--parallel` at a time."""
    if past_limit:  # more shoots in one stack cannot converge sooner than fewer did
        one = [Run(shoots, args.one_stack_limit, 0.0, 0, 0, stopped=True, skipped=True)]
    else:
        one = [run_stack(workdir, f"one-{shoots}", 0, shoots, args, args.one_stack_limit or None)]
    count = math.ceil(shoots / args.shard)
    if count == 1:
        return {"one": one, "shards": one, "shards_wall_s": one[0].up_s + one[0].preview_s}
    start = time.perf_counter()

    def shard(i: int) -> Run:
        return run_stack(workdir, f"shard-{shoots}-{i}", i * args.shard, min(args.shard, shoots - i * args.shard), args)

    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        runs = list(pool.map(shard, range(count)))
    return {"one": one, "shards": runs, "shards_wall_s": time.perf_counter() - start}


def _cells(runs: list[Run]) -> tuple[str, str, str, str, str]:
    """The slowest stack's `up`, preview, state (MiB), KiB per shoot and peak memory (MiB), as table cells.

    A stopped stack's time is a lower bound and its state partial: no preview, no size per shoot. One not run has
    its bound alone.
    """
    slow = max(runs, key=lambda r: r.up_s)
    if slow.stopped:
        up, preview, per_shoot = f"> {slow.up_s:.0f} ({'not run' if slow.skipped else 'stopped'})", "-", "-"
    else:
        up, preview = f"{slow.up_s:.0f}", f"{max(r.preview_s for r in runs):.0f}"
        per_shoot = f"{slow.state_bytes / slow.shoots / 1024:.0f}"
    if slow.skipped:
        return up, preview, "-", per_shoot, "-"
    state, peak = max(r.state_bytes for r in runs) / 2**20, max(r.peak_rss for r in runs) / 2**20
    return up, preview, f"{state:.1f}", per_shoot, f"{peak:.0f}"


def table(results: dict[int, dict[str, list[Run] | float]], args: argparse.Namespace) -> str:
    """The figures as Markdown: per N and layout, the slowest stack's times, its state and memory."""
    lines = [
        f"{args.resources} resources and {args.kib} KiB of state per shoot, {args.layers} waves; shards of "
        f"{args.shard} shoots, {args.parallel} stacks at a time. Engine time: the CLI's wall-clock.",
        "",
        "| shoots | layout | stacks | resources per stack | `up` (s, slowest stack) | no-op `preview` (s) "
        "| state per stack (MiB) | KiB per shoot | peak memory (MiB) | all stacks (s) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for shoots, got in results.items():
        for layout in ("one", "shards"):
            runs = got[layout]
            assert isinstance(runs, list)
            if layout == "shards" and len(runs) == 1:
                continue
            slow = max(runs, key=lambda r: r.up_s)
            wall = got["shards_wall_s"] if layout == "shards" else slow.up_s + slow.preview_s
            up, preview, state, per_shoot, peak = _cells(runs)
            lines.append(
                f"| {shoots} | {'one stack' if layout == 'one' else 'a stack per seed'} | {len(runs)} "
                f"| {slow.shoots * args.resources} | {up} | {preview} | {state} | {per_shoot} | {peak} "
                f"| {'> ' if slow.stopped else ''}{wall:.0f} |"
            )
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    """Runs every N and prints the table (and writes it into bench/README.md with --readme)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shoots", type=int, nargs="+", default=[10, 100, 500])
    parser.add_argument("--shard", type=int, default=50)
    parser.add_argument("--resources", type=int, default=RESOURCES_PER_SHOOT)
    parser.add_argument("--kib", type=int, default=KIB_PER_SHOOT)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--parallel", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--one-stack-limit",
        type=float,
        default=900.0,
        help="seconds after which a one-stack `up` is stopped, shown as a lower bound (0: none); the target: 15 min",
    )
    parser.add_argument("--keep", action="store_true", help="keep the projects and states (printed)")
    parser.add_argument("--readme", action="store_true")
    args = parser.parse_args(argv)
    if not shutil.which("pulumi"):
        raise SystemExit("engine_scale: pulumi is not on PATH; run it through `make bench` or source hack/env.sh")
    workdir = Path(tempfile.mkdtemp(prefix="arbor-engine-scale-"))
    try:
        results: dict[int, dict[str, list[Run] | float]] = {}
        past = False  # whether a one-stack `up` was stopped: larger ones are then not run
        for shoots in sorted(args.shoots):
            results[shoots] = measure(shoots, args, workdir, past)
            one = results[shoots]["one"]
            past = isinstance(one, list) and one[0].stopped
            print(json.dumps({str(shoots): {k: v if isinstance(v, float) else [r.__dict__ for r in v]
                                            for k, v in results[shoots].items()}}), flush=True)  # fmt: skip
        text = table(results, args)
        print(text)
        if args.readme:
            intro = (
                f"Measured {datetime.date.today()} by `make bench` (bench/engine_scale.py) on this project's machine."
            )
            note = (
                "A stopped one-stack `up` ran for its limit (`--one-stack-limit`, the 15-minute target) without "
                "converging: its time is a lower bound, and it had no preview. A one-stack `up` marked not run was "
                "skipped because one stack of fewer shoots had been stopped: more shoots cannot converge sooner."
            )
            write_readme(intro, text, note, HEADING)
    finally:
        if args.keep:
            print(f"kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
