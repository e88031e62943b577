"""Registration under Pulumi mocks: a landscape of N shoots against as many plain resources, N = 10, 100, 500.

No engine: both sides register through the same mocks (inputs echoed as outputs), each in a fresh event loop
and mocks set-up, timed with perf_counter from the first constructor call until every RPC and output settled.
"Raw" registers as many trivial CustomResources (ConfigMap objects, inputs of arbor's mean serialized size) as
arbor registered resources, flat under the stack: the floor of what registering that many resources costs.
Each side runs --repeat times, alternating; the fastest run counts. Usage (from the project root, or `make bench`):
  .venv/bin/python bench/scale.py [--shoots 10 100 500] [--repeat 2] [--readme]   prints (and writes) the table
  .venv/bin/python bench/scale.py --profile 100   cProfile of both sides: arbor's hotspots, and where it spends more
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import datetime
import functools
import gc
import importlib.metadata
import ipaddress
import json
import os
import platform
import pstats
import re
import sys
import textwrap
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# arbor is a program, not a package: components/ imports from the project root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pulumi
from pulumi.runtime.settings import SETTINGS
from pulumi.runtime.stack import run_pulumi_func

# --- arbor's API: the only imports from components/ ---
from components.checks import check
from components.layers.landscape import Landscape
from components.providers.local import LocalProvider, LocalSettings

# What arbor's dynamic providers compute, as the unit tests' mocks give it: later steps read these outputs.
from tests.unit.landscape_mocks import OUTPUTS

# ---

ROOT = Path(__file__).resolve().parents[1]
SHOOTS = (10, 100, 500)
# Shoots per seed: a seed hosts their control planes; enough seeds that none is a landscape of its own.
SHOOTS_PER_SEED = 20
# Shoot i's ranges are the i-th subnet of each block: disjoint across all shoots (so on every seed), clear of the
# seeds' own ranges (10.0.0.0/12, 10.16.0.0/16) and of every reserved range; 1024 shoots at most.
NODE_BLOCK, NODE_PREFIX = ipaddress.ip_network("10.64.0.0/10"), 24
POD_BLOCK, POD_PREFIX = ipaddress.ip_network("100.64.0.0/10"), 20
SERVICE_BLOCK, SERVICE_PREFIX = ipaddress.ip_network("10.128.0.0/10"), 22
STACK = "local"
README = ROOT / "bench" / "README.md"
SECTION = "## Registration under mocks (`bench/scale.py`)"
TARGET_RATIO = 1.3


class Mocks(pulumi.runtime.Mocks):
    """The same mocks for arbor and raw: outputs echo the inputs, plus what arbor's reconcilers compute."""

    def __init__(self) -> None:
        self.registered: list[tuple[str, dict[str, Any]]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        """Records the type and inputs; kept cheap, since it runs inside the timed section."""
        self.registered.append((args.typ, args.inputs))
        outputs = dict(args.inputs) | OUTPUTS.get(args.typ, {})
        if args.typ.endswith(":LocalCluster"):
            outputs["kubeconfig"] = f"kubeconfig of {args.name}"
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        """No invoke returns anything; the SDK iterates the failures, so an empty list rather than None."""
        return {}, []


class RawObject(pulumi.CustomResource):
    """A plain resource: inputs registered as given, no component, no transformation."""

    def __init__(self, name: str, props: dict[str, Any]) -> None:
        super().__init__("kubernetes:core/v1:ConfigMap", name, props)


def _subnet(block: ipaddress.IPv4Network | ipaddress.IPv6Network, prefix: int, index: int) -> str:
    """The index-th /prefix of block."""
    size = 2 ** (block.max_prefixlen - prefix)
    subnet = ipaddress.ip_network((int(block.network_address) + index * size, prefix))
    if not subnet.subnet_of(block):  # type: ignore[arg-type]
        raise ValueError(f"{block} has no /{prefix} number {index}")
    return str(subnet)


def landscape_spec(shoots: int) -> dict[str, Any]:
    """A local landscape like stacks/Pulumi.local.yaml's, with `shoots` hosted shoots spread over seeds."""
    seeds = -(-shoots // SHOOTS_PER_SEED)
    image = {"name": "gardenlinux", "version": "1877.0.0"}
    return {
        "garden": {
            "provider": "local",
            "cluster": {"nodes": 1},
            "encryption": {"provider": "aescbc", "resources": ["configmaps"]},
            # A project per seed, each with an admin and a viewer, as the local stack's dev project.
            "projects": [
                {
                    "name": f"p{j:02d}",
                    "members": [
                        {"name": f"admin-{j}@example.com", "role": "admin"},
                        {"name": f"viewer-{j}@example.com", "role": "viewer"},
                    ],
                }
                for j in range(seeds)
            ],
        },
        "seeds": [
            {
                "name": f"seed-{j:02d}",
                "provider": "local",
                "zones": ["local-a", "local-b"],
                "cluster": {"nodes": 1},
                "networks": {"pods": "10.0.0.0/12", "services": "10.16.0.0/16"},
            }
            for j in range(seeds)
        ],
        # Each like the local stack's `web`: IPv4, one pool of one to two machines in one zone.
        "shoots": [
            {
                "name": f"s{i:03d}",
                "project": f"p{i // SHOOTS_PER_SEED:02d}",
                "seed": f"seed-{i // SHOOTS_PER_SEED:02d}",
                "kubernetes": {"version": "1.34.4"},
                "networking": {
                    "nodes": _subnet(NODE_BLOCK, NODE_PREFIX, i),
                    "pods": _subnet(POD_BLOCK, POD_PREFIX, i),
                    "services": _subnet(SERVICE_BLOCK, SERVICE_PREFIX, i),
                },
                "workers": [
                    {
                        "name": "pool-a",
                        "machine": {"type": "local", "image": image},
                        "minimum": 1,
                        "maximum": 2,
                        "zones": ["local-a" if i % 2 == 0 else "local-b"],
                    }
                ],
                "labels": {"team": f"t{i % 7}"},
            }
            for i in range(shoots)
        ],
    }


def register_arbor(raw: dict[str, Any]) -> Callable[[], None]:
    """__main__.py's registration: every check (parse, plan, refusals), the Landscape on local (exports left out)."""

    def register() -> None:
        settings = LocalSettings(workdir="/work/.kwok", kubernetes_version="v1.34.4")
        provider = LocalProvider(settings)
        Landscape("arbor", check(raw, STACK, dict).plan, lambda _: provider)

    return register


def _config_map(name: str, data: dict[str, str]) -> dict[str, Any]:
    """A ConfigMap object with `data`."""
    metadata = {"name": name, "namespace": "default", "labels": {"bench": "raw"}}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


def register_raw(count: int, input_bytes: int) -> Callable[[], None]:
    """`count` plain resources whose serialized inputs are `input_bytes` each (JSON), as ConfigMaps of eight keys."""
    keys = [f"key-{k}" for k in range(8)]  # a few keys, so the inputs nest a little, as rendered objects do
    envelope = len(json.dumps(_config_map(f"raw-{count}", dict.fromkeys(keys, ""))))
    chunk = max((input_bytes - envelope) // len(keys), 1)
    data = {k: "x" * chunk for k in keys}

    def register() -> None:
        for i in range(count):
            RawObject(f"raw-{i}", _config_map(f"raw-{i}", data))

    return register


@dataclass(frozen=True)
class Run:
    """One timed registration: wall and CPU seconds, resources the mocks saw (components too), mean input bytes."""

    seconds: float
    cpu_seconds: float
    resources: int
    custom: int
    input_bytes: int


def _fresh_mocks() -> tuple[asyncio.AbstractEventLoop, Mocks, list[asyncio.AbstractEventLoop]]:
    """A new event loop with its own RPC threads, a new root stack and new mocks, as if the program started again."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    # The mock monitor gives each RPC thread an event loop and never closes it; the garbage collector then may
    # finalize a loop after its socket and print a ValueError. The threads' loops are made here, to close them.
    thread_loops: list[asyncio.AbstractEventLoop] = []

    def thread_loop() -> None:
        thread_loops.append(asyncio.new_event_loop())
        asyncio.set_event_loop(thread_loops[-1])

    loop.set_default_executor(ThreadPoolExecutor(min(32, (os.cpu_count() or 1) + 4), initializer=thread_loop))
    pulumi.runtime.reset_options(project="arbor", stack=STACK, preview=False)  # drops the previous root stack
    mocks = Mocks()
    pulumi.runtime.set_mocks(mocks, project="arbor", stack=STACK, preview=False)
    SETTINGS.outputs.clear()
    return loop, mocks, thread_loops


def _close(loop: asyncio.AbstractEventLoop, thread_loops: list[asyncio.AbstractEventLoop]) -> None:
    """Ends the loop, its RPC threads and their loops, so runs share none of them."""
    loop.run_until_complete(loop.shutdown_default_executor())
    loop.close()
    for thread_loop in thread_loops:
        thread_loop.close()
    asyncio.set_event_loop(None)


def measure(register: Callable[[], None], profile: cProfile.Profile | None = None) -> Run:
    """Runs `register` under fresh mocks until every registration settled, as pulumi.runtime.test does."""
    loop, mocks, thread_loops = _fresh_mocks()
    gc.collect()  # garbage of the previous run is not this run's cost
    try:
        if profile:
            profile.enable()
        start, cpu = time.perf_counter(), time.process_time()
        loop.run_until_complete(run_pulumi_func(register))
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        if profile:
            profile.disable()
    finally:
        _close(loop, thread_loops)
    sizes = [len(json.dumps(inputs, default=str)) for _, inputs in mocks.registered]
    custom = sum(1 for typ, _ in mocks.registered if not typ.startswith("arbor:"))
    return Run(seconds, cpu, len(sizes), custom, sum(sizes) // max(len(sizes), 1))


@dataclass(frozen=True)
class Row:
    """One line of the table, from every run of each side at one N."""

    shoots: int
    arbor_runs: tuple[Run, ...]
    raw_runs: tuple[Run, ...]

    # The fastest run is the one least disturbed by whatever else the machine runs: the best estimate of the cost.
    @property
    def arbor(self) -> Run:
        """Arbor's run of least wall time."""
        return min(self.arbor_runs, key=lambda r: r.seconds)

    @property
    def raw(self) -> Run:
        """Raw's run of least wall time."""
        return min(self.raw_runs, key=lambda r: r.seconds)

    @property
    def arbor_cpu(self) -> float:
        """Arbor's least CPU seconds."""
        return min(r.cpu_seconds for r in self.arbor_runs)

    @property
    def raw_cpu(self) -> float:
        """Raw's least CPU seconds."""
        return min(r.cpu_seconds for r in self.raw_runs)


def bench(shoots: int, repeat: int) -> Row:
    """Both sides at `shoots`: raw with as many resources of arbor's mean input size; alternating, `repeat` times."""
    spec = landscape_spec(shoots)
    arbor: list[Run] = []
    raw: list[Run] = []
    for _ in range(repeat):
        # Alternating, so a burst of other load on the machine hits both sides rather than one.
        arbor.append(measure(register_arbor(spec)))
        raw.append(measure(register_raw(arbor[0].resources, arbor[0].input_bytes)))
        if raw[-1].resources != arbor[-1].resources:
            raise RuntimeError(f"raw registered {raw[-1].resources} resources, arbor {arbor[-1].resources}")
        print(f"{shoots} shoots: arbor {arbor[-1].seconds:.2f} s, raw {raw[-1].seconds:.2f} s", file=sys.stderr)
    return Row(shoots, tuple(arbor), tuple(raw))


def _us(seconds: float, resources: int) -> str:
    """Microseconds per resource."""
    return f"{seconds / resources * 1e6:.0f}"


def table(rows: list[Row]) -> str:
    """The Markdown table of all rows: wall time (perf_counter), then CPU time (process_time, all threads)."""
    lines = [
        "| shoots | resources registered (custom) | arbor s | raw s | arbor / raw | arbor µs / resource "
        "| raw µs / resource | CPU: arbor / raw | CPU: arbor µs / resource | CPU: raw µs / resource |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        n = r.arbor.resources
        lines.append(
            f"| {r.shoots} | {n} ({r.arbor.custom}) | {r.arbor.seconds:.2f} | {r.raw.seconds:.2f} "
            f"| **{r.arbor.seconds / r.raw.seconds:.2f}x** | {_us(r.arbor.seconds, n)} | {_us(r.raw.seconds, n)} "
            f"| {r.arbor_cpu / r.raw_cpu:.2f}x | {_us(r.arbor_cpu, n)} | {_us(r.raw_cpu, n)} |"
        )
    return "\n".join(lines)


def write_readme(intro: str, text: str, note: str, heading: str = SECTION) -> None:
    """Replaces the section `heading` in bench/README.md, or appends it; prose wrapped as the rest of the file."""
    readme = README.read_text()
    wrap = functools.partial(textwrap.fill, width=110, break_long_words=False, break_on_hyphens=False)
    section = f"{heading}\n\n{wrap(intro)}\n\n{text}\n\n{wrap(note)}\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(readme):
        readme = pattern.sub(lambda _: section + "\n", readme, count=1).rstrip("\n") + "\n"
    else:
        readme = readme.rstrip("\n") + "\n\n" + section
    README.write_text(readme)


Key = tuple[str, int, str]
Stat = tuple[int, int, float, float]  # calls, primitive calls, own s, cumulative s


def _stats(prof: cProfile.Profile) -> dict[Key, Stat]:
    """Function -> (calls, primitive calls, own s, cumulative s)."""
    raw: dict[Key, tuple[int, int, float, float, object]] = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    return {key: (nc, cc, tt, ct) for key, (cc, nc, tt, ct, _) in raw.items()}


def _where(key: Key) -> str:
    """`components/shoot.py:66 __init__`, site-packages and the standard library shortened."""
    file, line, func = key
    # Site-packages first: the virtualenv lives inside the project root.
    for base in (
        str(Path(pulumi.__file__).parents[1]) + "/",
        str(ROOT) + "/",
        str(Path(json.__file__).parents[1]) + "/",
    ):
        file = file.removeprefix(base)
    return f"{file}:{line} `{func}`" if line else f"`{func}`"


def profile(shoots: int, top: int = 15) -> None:
    """Profiles both sides at `shoots` with cProfile: arbor's hotspots, and where it spends more than raw."""
    arbor_prof, raw_prof = cProfile.Profile(), cProfile.Profile()
    arbor = measure(register_arbor(landscape_spec(shoots)), arbor_prof)
    raw = measure(register_raw(arbor.resources, arbor.input_bytes), raw_prof)
    mine, theirs = _stats(arbor_prof), _stats(raw_prof)
    # cProfile sees the event loop's thread only: arbor's code and the SDK's run there, the mock monitor does not.
    print(
        f"cProfile, {arbor.resources} resources: arbor ({shoots} shoots) {arbor.seconds:.2f} s, "
        f"raw {raw.seconds:.2f} s (both slowed by the profiler)\n"
    )
    components = str(ROOT / "components")
    own = sorted((k for k in mine if k[0].startswith(components)), key=lambda k: -mine[k][3])
    print(f"Top {top} of components/ by cumulative time:\n\n| function | calls | cumulative s | own s |")
    print("|---|---:|---:|---:|")
    for key in own[:top]:
        calls, _, tt, ct = mine[key]
        print(f"| {_where(key)} | {calls} | {ct:.2f} | {tt:.2f} |")
    # Where the surplus goes: outside components/ (the SDK, yaml, dill), what arbor's run spends beyond raw's.
    loop = str(Path(asyncio.__file__).parent)
    zero: Stat = (0, 0, 0.0, 0.0)
    deltas = sorted(
        (k for k in mine if not k[0].startswith((components, loop, "~", "<")) and "scale.py" not in k[0]),
        key=lambda k: -(mine[k][3] - theirs.get(k, zero)[3]),
    )
    print("\nOutside components/, by cumulative time over raw's:\n\n| function | calls arbor (raw) | s arbor (raw) |")
    print("|---|---:|---:|")
    for key in deltas[: top + 10]:
        a, r = mine[key], theirs.get(key, zero)
        print(f"| {_where(key)} | {a[0]} ({r[0]}) | {a[3]:.2f} ({r[3]:.2f}) |")


def main() -> None:
    """Warms up, measures every N, prints the table (and writes it into bench/README.md with --readme)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--shoots", type=int, nargs="+", default=list(SHOOTS))
    parser.add_argument("--repeat", type=int, default=2, help="runs of each side per N; the fastest counts")
    parser.add_argument("--readme", action="store_true", help="write the table into bench/README.md")
    parser.add_argument("--profile", type=int, metavar="N", help="only profile arbor and raw at N shoots")
    args = parser.parse_args()
    started, load = time.perf_counter(), os.getloadavg()[0]
    # One small run of each first: imports, the SDK's lazy set-up and arbor's caches are not the first row's cost.
    warm = measure(register_arbor(landscape_spec(2)))
    measure(register_raw(warm.resources, warm.input_bytes))
    if args.profile:
        profile(args.profile)
        return
    rows = [bench(shoots, args.repeat) for shoots in args.shoots]
    wall, load = time.perf_counter() - started, max(load, os.getloadavg()[0])
    text = table(rows)
    ok = all(r.arbor.seconds / r.raw.seconds <= TARGET_RATIO for r in rows)
    mine, theirs = (_span([getattr(r, side).input_bytes for r in rows]) for side in ("arbor", "raw"))
    verdict = "met" if ok else "not met"
    note = (
        f"Mean serialized inputs of a resource: arbor {mine} bytes, raw {theirs}. "
        f"Best of {args.repeat} alternating runs per side; whole bench {wall:.0f} s wall; load average {load:.1f} "
        "at its start or end (other work on the machine slows wall time more than CPU time). "
        f"Target: arbor / raw at most {TARGET_RATIO}x ({verdict}), and linear in N (µs per resource flat). "
        # Growth common to both sides is the mocks' and the SDK's, not arbor's.
        f"From {rows[0].shoots} to {rows[-1].shoots} shoots, wall µs per resource grow "
        f"{_growth(rows, 'arbor'):.2f}x for arbor and {_growth(rows, 'raw'):.2f}x for raw."
    )
    print(f"{text}\n\n{note}")
    if args.readme:
        day = datetime.date.today().isoformat()
        write_readme(intro(day), text, note)


def intro(day: str) -> str:
    """The paragraph above the table in bench/README.md."""
    return (
        f"Measured {day} on this project's machine (2 cores, 24 GiB, {platform.python_implementation()} "
        f"{platform.python_version()}, pulumi {pulumi_version()}): `make bench`. Each N is a generated local landscape "
        f"(garden, a seed per {SHOOTS_PER_SEED} shoots, hosted shoots like the local stack's `web`) registered under "
        "Pulumi mocks, no engine; raw registers as many plain resources (ConfigMap objects of arbor's mean input "
        "size) under the same mocks. Resources registered count components too (custom resources in parentheses); "
        "wall time is perf_counter from the first constructor until every registration settled, CPU time is the "
        "process's (all threads)."
    )


def _growth(rows: list[Row], side: str) -> float:
    """Wall time per resource at the largest N over that at the smallest, for one side."""
    first, last = getattr(rows[0], side), getattr(rows[-1], side)
    return float(last.seconds / last.resources / (first.seconds / first.resources))


def _span(values: list[int]) -> str:
    """`811-814`, or `811` when all are the same."""
    low, high = min(values), max(values)
    return f"{low}" if low == high else f"{low}-{high}"


def pulumi_version() -> str:
    """The installed pulumi SDK's version."""
    return importlib.metadata.version("pulumi")


if __name__ == "__main__":
    main()
