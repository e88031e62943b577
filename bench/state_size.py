"""State bytes per shoot: what a landscape's stack holds for each shoot, by resource kind.

Reads a stack's state as the engine stores it (`pulumi stack export`, secrets left encrypted) and gives each
resource to the shoot whose component holds it, or whose key its name carries (`<project>-<shoot>`, e.g. the seed's
machine-controller-manager of that shoot); the rest is the landscape's fixed part (garden, seeds). Bytes are those
of the resource's JSON in the checkpoint, as the engine rewrites it after every step. Usage (project root):
  .venv/bin/python bench/state_size.py --stack local          the local stack (after `make up`)
  .venv/bin/python bench/state_size.py --file export.json     a `pulumi stack export` or a checkpoint file
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

SHOOT_TYPE = "arbor:shoot:Shoot"


def load(path: Path | None, stack: str | None) -> list[dict[str, Any]]:
    """The resources of an export, a checkpoint file, or a stack exported by the CLI."""
    if path is not None:
        data = json.loads(path.read_text())
    else:
        out = subprocess.run(["pulumi", "stack", "export", "--stack", str(stack)], check=True, capture_output=True)
        data = json.loads(out.stdout)
    deployment = data.get("deployment") or data.get("checkpoint", {}).get("latest") or {}
    return list(deployment.get("resources") or [])


def kind(resource: dict[str, Any]) -> str:
    """A resource's kind: the Kubernetes kind, arbor's dynamic resource name, or the Pulumi type."""
    return resource["type"].rsplit(":", 1)[-1]


def shoot_of(resource: dict[str, Any], parents: dict[str, str], shoots: dict[str, str]) -> str | None:
    """The shoot a resource belongs to: an enclosing Shoot component, else a shoot key in its name."""
    urn = resource["urn"]
    while urn:
        if urn in shoots:
            return shoots[urn]
        urn = parents.get(urn, "")
    name = resource["urn"].rsplit("::", 1)[-1]
    keys = sorted(set(shoots.values()), key=len, reverse=True)
    return next((k for k in keys if f"-{k}-" in f"{name}-"), None)


def measure(resources: list[dict[str, Any]]) -> dict[str, Any]:
    """Bytes and counts per shoot and per kind, the stack traces' share, and the fixed part."""
    parents = {r["urn"]: r.get("parent", "") for r in resources}
    # A Shoot component is named arbor-shoot-<project>-<shoot>; its key is the part after the prefix.
    names = {r["urn"]: r["urn"].rsplit("::", 1)[-1] for r in resources if r["type"] == SHOOT_TYPE}
    shoots = {urn: name.removeprefix("arbor-shoot-") for urn, name in names.items()}
    per_shoot: dict[str, int] = defaultdict(int)
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    fixed = traces = 0
    for r in resources:
        size = len(json.dumps(r))
        traces += len(json.dumps(r.get("stackTrace", "")))
        owner = shoot_of(r, parents, shoots)
        if owner is None:
            fixed += size
            continue
        per_shoot[owner] += size
        by_kind[kind(r)][0] += 1
        by_kind[kind(r)][1] += size
    return {"resources": len(resources), "total": sum(len(json.dumps(r)) for r in resources), "fixed": fixed,
            "traces": traces, "per_shoot": dict(per_shoot), "by_kind": dict(by_kind)}  # fmt: skip


def report(m: dict[str, Any]) -> str:
    """The figures as Markdown: totals, each shoot, and the mean shoot's bytes by kind."""
    n = max(len(m["per_shoot"]), 1)
    lines = [
        f"{m['resources']} resources, {m['total'] / 1024:.0f} KiB in all, of which stack traces "
        f"{m['traces'] / 1024:.0f} KiB; garden and seeds {m['fixed'] / 1024:.0f} KiB.",
        "",
        "| shoot | KiB |",
        "|---|---:|",
        *(f"| {s} | {b / 1024:.0f} |" for s, b in sorted(m["per_shoot"].items())),
        f"| **mean** | **{sum(m['per_shoot'].values()) / n / 1024:.0f}** |",
        "",
        "| kind (mean shoot) | resources | KiB |",
        "|---|---:|---:|",
    ]
    ranked = sorted(m["by_kind"].items(), key=lambda kv: -kv[1][1])
    lines += [f"| {k} | {c / n:.1f} | {b / n / 1024:.1f} |" for k, (c, b) in ranked]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    """Prints the report of the stack or file given."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--stack")
    source.add_argument("--file", type=Path)
    args = parser.parse_args(argv)
    print(report(measure(load(args.file, args.stack))))


if __name__ == "__main__":
    main(sys.argv[1:])
