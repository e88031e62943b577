"""Renders `pulumi preview --json` as a Markdown summary per layer, fit for a pull-request comment.

Usage: python hack/preview_summary.py out/preview.json > out/preview.md
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from typing import Any

# Layer components by type token; a resource belongs to its nearest ancestor of one of these.
LAYERS = {"arbor:garden:Garden": "garden", "arbor:seed:Seed": "seed", "arbor:shoot:Shoot": "shoot"}
OPS = ("create", "update", "replace", "delete")
# Pulumi spells a replacement as several steps; the reviewer sees one replacement.
OP_ALIASES = {
    "create-replacement": None,
    "delete-replaced": None,
    "replace": "replace",
    "discard": "delete",
    "read": None,
    "refresh": None,
    "same": None,
}


def _state(step: dict[str, Any]) -> dict[str, Any]:
    """The new state of a step, or the old one for deletions."""
    return step.get("newState") or step.get("oldState") or {}


def _name(urn: str) -> str:
    """The resource name at the end of a URN."""
    return urn.rsplit("::", 1)[-1]


def _layer(urn: str, parents: dict[str, str], types: dict[str, str]) -> str:
    """`garden`, `seed <name>`, `shoot <name>`, or `landscape` for everything outside a layer.

    The nearest layer component among the resource itself and its ancestors; ancestors that the preview left
    out (unchanged components) are still known from the parent URN, whose type chain ends in their type.
    """
    current: str | None = urn
    while current:
        type_ = types.get(current) or current.split("::")[-2].split("$")[-1]
        layer = LAYERS.get(type_)
        if layer:
            return f"{layer} {_name(current)}" if layer != "garden" else layer
        current = parents.get(current)
    return "landscape"


OSC = "pulumi-python:dynamic/arbor:OperatingSystemConfig"


# kubelet runs a static pod per manifest here, and restarts it when the manifest changes (its config hash does).
MANIFESTS = "/etc/kubernetes/manifests/"


def static_pods_changed(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """The static pods whose manifest a change rewrites (a manifest carries the hash of every file it reads)."""
    return sorted(
        path.removeprefix(MANIFESTS).removesuffix(".yaml")
        for path, digest in new.items()
        if path.startswith(MANIFESTS) and old.get(path) not in (None, digest)
    )


def node_restarts(steps: list[dict[str, Any]]) -> list[str]:
    """Per shoot and pool, what a change does to running nodes: the units that restart, or a roll of the pool."""
    lines = []
    for step in steps:
        new, old = step.get("newState") or {}, step.get("oldState") or {}
        if new.get("type") != OSC or step["op"] in ("same", "read", "refresh"):
            continue
        ni, oi = new.get("inputs") or {}, old.get("inputs") or {}
        where = f"`{_name(step['urn']).replace('-osc-', '` pool `')}`"
        if step["op"] == "create":
            lines.append(f"- {where}: new pool configuration")
        elif oi.get("secretName") != ni.get("secretName"):
            lines.append(f"- {where}: **rolls** (new OSC key {ni.get('secretName')}: machines are replaced)")
        else:
            units = sorted(
                u for u, h in (ni.get("unitHashes") or {}).items() if (oi.get("unitHashes") or {}).get(u) != h
            )
            gone = sorted(set(oi.get("unitHashes") or {}) - set(ni.get("unitHashes") or {}))
            pods = static_pods_changed(oi.get("fileHashes") or {}, ni.get("fileHashes") or {})
            lines.append(
                f"- {where}: restarts {', '.join(units) or 'nothing'}"
                + (f"; stops {', '.join(gone)}" if gone else "")
                + (f"; static pods restart: {', '.join(pods)}" if pods else "")
            )
    return lines


# The program logs network tables and rotation plans with these prefixes (components/plan/network.py, pki.py).
NETWORK_PLAN = "network plan of "
ROTATION = "credential rotation of "


def logged(preview: dict[str, Any], prefix: str) -> list[str]:
    """The info messages the program logged with `prefix`, without it."""
    return [
        str(d["message"]).strip().removeprefix(prefix)
        for d in preview.get("diagnostics") or []
        if d.get("severity") == "info" and str(d.get("message", "")).startswith(prefix)
    ]


def network_plans(preview: dict[str, Any]) -> list[str]:
    """The network tables the shoots logged."""
    return logged(preview, NETWORK_PLAN)


def render(preview: dict[str, Any], stack: str = "") -> str:
    """The Markdown summary of one preview."""
    steps = preview.get("steps") or []
    parents = {s["urn"]: _state(s).get("parent", "") for s in steps}
    types = {s["urn"]: _state(s).get("type", "") for s in steps}
    changes: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for step in steps:
        op = OP_ALIASES.get(step["op"], step["op"])
        if op:
            changes[_layer(step["urn"], parents, types)].append((op, step))

    title = f"## arbor preview{f': stack `{stack}`' if stack else ''}"
    plans = network_plans(preview)
    networks = ["", "### networks", "", *(f"```\n{p}\n```" for p in plans)] if plans else []
    if not changes:
        return "\n".join([title, "", "No changes.", *networks]) + "\n"
    lines = [title, "", "| layer | " + " | ".join(OPS) + " |", "|---|" + "---:|" * len(OPS)]
    for layer in sorted(changes):
        counts = Counter(op for op, _ in changes[layer])
        lines.append(f"| {layer} | " + " | ".join(str(counts.get(op, 0)) for op in OPS) + " |")
    replaced = sum(1 for items in changes.values() for op, _ in items if op in ("replace", "delete"))
    if replaced:
        lines += ["", f"**{replaced} replacement(s) or deletion(s): read them before merging.**"]
    restarts = node_restarts(steps)
    if restarts:
        lines += ["", "### node restarts", "", *restarts]
    rotations = logged(preview, ROTATION)
    if rotations:
        lines += ["", "### credential rotations", "", *(f"```\n{r}\n```" for r in rotations)]
    for layer in sorted(changes):
        lines += ["", f"### {layer}", ""]
        for op, step in sorted(changes[layer], key=lambda i: (OPS.index(i[0]) if i[0] in OPS else 9, i[1]["urn"])):
            flag = "**REPLACE**" if op == "replace" else "**DELETE**" if op == "delete" else op
            why = step.get("replaceReasons") if op == "replace" else step.get("diffReasons")
            reason = f" ({', '.join(why)})" if why else ""
            lines.append(f"- {flag} `{types[step['urn']]}` {_name(step['urn'])}{reason}")
    return "\n".join(lines + networks) + "\n"


def errors(preview: dict[str, Any]) -> list[str]:
    """The error diagnostics of a failed preview, as the lines the program wrote (e.g. spec problems)."""
    return [
        line
        for d in preview.get("diagnostics") or []
        if d.get("severity") == "error"
        for line in str(d.get("message", "")).strip().splitlines()
        if line.strip() and not line.startswith("an unhandled error occurred")
    ]


def main() -> None:
    """Reads the preview JSON file named on the command line and prints the summary, or its errors."""
    with open(sys.argv[1]) as f:
        preview = json.load(f)
    if "--errors" in sys.argv:
        print("\n".join(errors(preview)), file=sys.stderr)
        return
    print(render(preview, stack=sys.argv[2] if len(sys.argv) > 2 else ""), end="")


if __name__ == "__main__":
    main()
