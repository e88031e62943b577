"""The API downtime of a control-plane migration between two local seeds, on the real engine (issue 17).

Makes a stack of its own (the local garden, seeds local-1 and local-2 with backups, dev/web hosted on local-1),
converges it, then moves dev/web to local-2 with `make up`'s path while a client asks the shoot's API for a
namespace every PROBE_S with the admin kubeconfig from before. Reports the `up` time, the longest outage (from the
last answer before it to the first after it) and the number of outages. Usage (project root, tools set up):
  export ARBOR_STACK=local && source hack/env.sh && .venv/bin/python bench/migration_downtime.py
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# arbor is a program, not a package: components/ and tests/ import from the project root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.reconciler.kube import Kube, KubeError
from tests.integration.engine import (
    LOCAL_LANDSCAPE,
    ROOT,
    SECOND_SEED,
    make_stack,
    remove_stack,
    require_environment,
)

PROBE_S, PROBE_TIMEOUT_S = 0.25, 2.0


@dataclass
class Probes:
    """The answers of the shoot's API over time: (monotonic second, answered)."""

    seen: list[tuple[float, bool]]

    def outages(self) -> list[float]:
        """Each outage's length: from the last answer before it to the first answer after it."""
        found, last_ok, down = [], None, False
        for at, ok in self.seen:
            if ok:
                if down and last_ok is not None:
                    found.append(at - last_ok)
                last_ok, down = at, False
            else:
                down = True
        if down and last_ok is not None and self.seen:
            found.append(self.seen[-1][0] - last_ok)  # never answered again: counted to the end
        return found


def probe(admin: str, stop: threading.Event, into: Probes) -> None:
    """Asks the API for `default` every PROBE_S until stopped; a new client each time, as a user's kubectl."""
    while not stop.is_set():
        at = time.monotonic()
        try:
            Kube.from_kubeconfig(admin).get("/api/v1/namespaces/default", timeout=PROBE_TIMEOUT_S)
            into.seen.append((at, True))
        except (KubeError, OSError):
            into.seen.append((at, False))
        stop.wait(max(0.0, PROBE_S - (time.monotonic() - at)))


def landscape(seed: str) -> dict[str, Any]:
    """The local garden, both seeds, dev/web on `seed`."""
    web = {**LOCAL_LANDSCAPE["shoots"][0], "seed": seed}
    return {"garden": LOCAL_LANDSCAPE["garden"], "seeds": [*LOCAL_LANDSCAPE["seeds"], SECOND_SEED], "shoots": [web]}


def measure() -> dict[str, float]:
    """Converges the stack on local-1, migrates dev/web to local-2 under probes; the figures."""
    require_environment()
    stack = make_stack(ROOT, ROOT / "stacks", {"arbor:landscape": landscape("local-1")})
    try:
        started = time.monotonic()
        stack.make_up()
        made_s = time.monotonic() - started
        admin = stack.admin_kubeconfig("dev/web")
        stack.set_config({"arbor:landscape": landscape("local-2")})
        probes, stop = Probes([]), threading.Event()
        prober = threading.Thread(target=probe, args=(admin, stop, probes), daemon=True)
        prober.start()
        time.sleep(2)  # answers before the move starts
        started = time.monotonic()
        stack.make_up()
        moved_s = time.monotonic() - started
        time.sleep(2)
        stop.set()
        prober.join()
    finally:
        remove_stack(stack, destroy=False)
    outages = probes.outages()
    return {"made_s": made_s, "up_s": moved_s, "longest_s": max(outages, default=0.0), "outages": len(outages),
            "down_s": sum(outages), "probes": len(probes.seen)}  # fmt: skip


def main() -> None:
    """Prints the figures as a Markdown table row."""
    figures = measure()
    day = datetime.date.today().isoformat()
    print(f"{day}, {platform.node()}, {os.cpu_count()} cores")
    print("| migration `make up` s | API downtime, longest outage s | outages | down in all s | probes |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {figures['up_s']:.0f} | **{figures['longest_s']:.1f}** | {figures['outages']:.0f} | "
          f"{figures['down_s']:.1f} | {figures['probes']:.0f} |")  # fmt: skip
    print(f"(landscape made in {figures['made_s']:.0f} s)")


if __name__ == "__main__":
    main()
