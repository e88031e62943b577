"""Renders `pulumi preview --json` as a Markdown summary per layer, fit for a pull-request comment.

Usage: python hack/preview_summary.py PREVIEW [STACK] [--digest out/preview.json] [--errors]
       python hack/preview_summary.py - --landscape LANDSCAPE --part STACK=PREVIEW [--part ...]

PREVIEW is the digest of `pulumi preview --json`, or the event stream of the same command with
PULUMI_ENABLE_STREAMING_JSON_PREVIEW=true (what `make preview` writes: only it carries the policy pack's
findings). A failed preview (an error, or a mandatory policy violated) renders as its errors and violations;
`--errors` prints just those lines to stderr; `--digest` writes the digest of a stream to a file.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from typing import Any

from preview_events import Violation, digest, is_stream, parse, violations
from state_moves import moved

# What a preview's JSON holds for a value known only after `up` (Pulumi's unknown sentinel).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

# Layer components by type token; a resource belongs to its nearest ancestor of one of these.
LAYERS = {"arbor:garden:Garden": "garden", "arbor:seed:Seed": "seed", "arbor:shoot:Shoot": "shoot"}
OPS = ("create", "update", "replace", "delete")
# A resource whose object `make up` hands over to another first (hack/state_moves.py): a column only when there is one.
MOVE = "move"
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
        elif oi.get("secretName") != ni.get("secretName") and ni.get("secretName") != UNKNOWN:
            lines.append(f"- {where}: **rolls** (new OSC key {ni.get('secretName')}: machines are replaced)")
        elif not all(isinstance(ni.get(k), dict) for k in ("unitHashes", "fileHashes")):
            lines.append(f"- {where}: known after `up` (its configuration is made from what the update changes)")
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


# The program logs network tables and rotation plans with these prefixes (components/plan/network.py, pki.py),
# and the checks' notices (a confirmed deletion, a control-plane migration, an expired version kept) by field.
NETWORK_PLAN = "network plan of "
ROTATION = "credential rotation of "
NOTICE = "landscape."


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


Changes = dict[str, list[tuple[str, dict[str, Any]]]]


def _changes(preview: dict[str, Any]) -> tuple[Changes, dict[str, str], dict[str, str]]:
    """The preview's operations per layer, each resource's type, and what `make up` hands over first."""
    steps = preview.get("steps") or []
    parents = {s["urn"]: _state(s).get("parent", "") for s in steps}
    types = {s["urn"]: _state(s).get("type", "") for s in steps}
    # What `make up` hands over to another resource first (hack/state_moves.py): no delete, the object stays.
    handed = moved({**_state(s), "urn": s["urn"]} for s in steps)
    changes: Changes = defaultdict(list)
    for step in steps:
        op = OP_ALIASES.get(step["op"], step["op"])
        if op == "delete" and step["urn"] in handed:
            op = MOVE
        if op:
            changes[_layer(step["urn"], parents, types)].append((op, step))
    return changes, types, handed


def render(preview: dict[str, Any], stack: str = "") -> str:
    """The Markdown summary of one preview."""
    steps = preview.get("steps") or []
    changes, types, handed = _changes(preview)
    title = f"## arbor preview{f': stack `{stack}`' if stack else ''}"
    plans = network_plans(preview)
    networks = ["", "### networks", "", *(f"```\n{p}\n```" for p in plans)] if plans else []
    if not changes:
        return "\n".join([title, "", "No changes.", *networks]) + "\n"
    ops = (*OPS, MOVE) if any(op == MOVE for layer in changes.values() for op, _ in layer) else OPS
    lines = [title, "", "| layer | " + " | ".join(ops) + " |", "|---|" + "---:|" * len(ops)]
    for layer in sorted(changes):
        counts = Counter(op for op, _ in changes[layer])
        lines.append(f"| {layer} | " + " | ".join(str(counts.get(op, 0)) for op in ops) + " |")
    replaced = sum(1 for items in changes.values() for op, _ in items if op in ("replace", "delete"))
    if replaced:
        lines += ["", f"**{replaced} replacement(s) or deletion(s): read them before merging.**"]
    restarts = node_restarts(steps)
    if restarts:
        lines += ["", "### node restarts", "", *restarts]
    rotations = logged(preview, ROTATION)
    if rotations:
        lines += ["", "### credential rotations", "", *(f"```\n{r}\n```" for r in rotations)]
    notices = logged(preview, NOTICE)
    if notices:
        lines += ["", "### notices", "", *(f"- {NOTICE}{n}" for n in notices)]
    for layer in sorted(changes):
        lines += ["", f"### {layer}", ""]
        for op, step in sorted(changes[layer], key=lambda i: (OPS.index(i[0]) if i[0] in OPS else 9, i[1]["urn"])):
            flag = "**REPLACE**" if op == "replace" else "**DELETE**" if op == "delete" else op
            why = step.get("replaceReasons") if op == "replace" else step.get("diffReasons")
            reason = f" ({', '.join(why)})" if why else ""
            if op == MOVE:
                reason = f" (handed over to {handed[step['urn']]} before the update; the object stays)"
            lines.append(f"- {flag} `{types[step['urn']]}` {_name(step['urn'])}{reason}")
    return "\n".join(lines + networks) + "\n"


def errors(preview: dict[str, Any], found: list[Violation] | None = None) -> list[str]:
    """The error lines of a failed preview (e.g. spec problems), then each mandatory policy violation."""
    lines = [
        line
        for d in preview.get("diagnostics") or []
        if d.get("severity") == "error"
        for line in str(d.get("message", "")).strip().removeprefix("error: ").splitlines()
        if line.strip() and not line.startswith(("an unhandled error occurred", "preview failed"))
    ]
    return lines + [f"[mandatory] {v.policy}: {v.resource}: {v.message}" for v in found or [] if v.level == "mandatory"]


# What a preview that wrote nothing (the CLI stopped before the engine ran) amounts to.
NOTHING = {"diagnostics": [{"severity": "error", "message": "pulumi preview wrote nothing: see its output above"}]}
# Per policy, how many findings the summary lists before it counts the rest.
SHOWN_PER_POLICY = 5


def policy_section(found: list[Violation]) -> list[str]:
    """The policy pack's findings per policy (mandatory first), and how many resources it could not check yet."""
    if not found:
        return []
    by_policy: dict[tuple[str, str], list[Violation]] = defaultdict(list)
    for v in found:
        if v.checked:
            by_policy[(v.level, v.policy)].append(v)
    lines = ["", "### policies", ""]
    for (level, policy), items in sorted(by_policy.items(), key=lambda i: (i[0][0] != "mandatory", i[0][1])):
        lines.append(f"- **[{level}] {policy}**: {len(items)} resource(s)")
        shown = sorted(items, key=lambda v: v.resource)
        lines += [f"  - `{v.resource}`: {v.message}" for v in shown[:SHOWN_PER_POLICY]]
        if len(shown) > SHOWN_PER_POLICY:
            lines.append(f"  - and {len(shown) - SHOWN_PER_POLICY} more")
    unchecked = len({v.resource for v in found if not v.checked})
    if unchecked:
        lines.append(f"- {unchecked} resource(s) not checked by some policies: their values are known only after `up`")
    return lines


def failed(preview: dict[str, Any], found: list[Violation]) -> bool:
    """Whether the preview stopped: an error, or a mandatory policy violated."""
    error = any(d.get("severity") == "error" for d in preview.get("diagnostics") or [])
    return error or any(v.level == "mandatory" for v in found)


def failure(preview: dict[str, Any], found: list[Violation], stack: str = "") -> str:
    """The Markdown of a failed preview: what stopped it, and nothing else changes."""
    title = f"## arbor preview{f': stack `{stack}`' if stack else ''}: failed"
    lines = [title, "", "The preview stopped; fix these before merging:", "", "```", *errors(preview, found), "```"]
    return "\n".join(lines + policy_section([v for v in found if v.level != "mandatory"])) + "\n"


def summary(preview: dict[str, Any], found: list[Violation], stack: str = "") -> str:
    """The Markdown of a preview: its failure, or the change per layer and the policy pack's findings."""
    if failed(preview, found):
        return failure(preview, found, stack)
    section = policy_section(found)
    return render(preview, stack) + ("\n".join(section) + "\n" if section else "")


def landscape_summary(landscape: str, parts: list[tuple[str, dict[str, Any], list[Violation]]]) -> str:
    """One summary of a sharded landscape: each stack's changes in a row, the totals, then each stack's summary."""
    ops = (*OPS, MOVE)
    rows, total = [], Counter[str]()
    for stack, preview, found in parts:
        if failed(preview, found):
            rows.append(f"| `{stack}` | " + " | ".join("failed" if op == OPS[0] else "" for op in ops) + " |")
            continue
        counts = Counter(op for items in _changes(preview)[0].values() for op, _ in items)
        total += counts
        rows.append(f"| `{stack}` | " + " | ".join(str(counts.get(op, 0)) for op in ops) + " |")
    lines = [
        f"## arbor preview: landscape `{landscape}`, {len(parts)} stacks",
        "",
        "The garden stack, then each seed's stack (docs/shards.md); each stack's changes per layer follow.",
        "",
        "| stack | " + " | ".join(ops) + " |",
        "|---|" + "---:|" * len(ops),
        *rows,
        "| **landscape** | " + " | ".join(f"**{total.get(op, 0)}**" for op in ops) + " |",
        "",
    ]
    return "\n".join(lines) + "\n" + "\n".join(summary(preview, found, stack) for stack, preview, found in parts)


def _read(path: str) -> tuple[dict[str, Any], list[Violation]]:
    """A preview file: its digest (rebuilt from an event stream) and the policy findings the stream carries."""
    with open(path) as f:
        text = f.read()
    events = parse(text) if is_stream(text) else []
    return (digest(events) if events else json.loads(text) if text.strip() else NOTHING), violations(events)


def main() -> None:
    """Reads the preview file named on the command line and prints the summary, or its errors."""
    parser = argparse.ArgumentParser(description="The Markdown summary of a pulumi preview.")
    parser.add_argument("preview", help="the digest of `pulumi preview --json`, or its event stream")
    parser.add_argument("stack", nargs="?", default="", help="the stack's name, for the title")
    parser.add_argument("--digest", help="also write the preview's digest (one JSON object) to this file")
    parser.add_argument("--errors", action="store_true", help="print only the errors, to stderr")
    parser.add_argument("--landscape", help="the summary of a sharded landscape; then PREVIEW and STACK are ignored")
    parser.add_argument("--part", action="append", default=[], help="with --landscape: STACK=PREVIEW, in order")
    args = parser.parse_args()
    if args.landscape:
        parts = [(stack, *_read(path)) for stack, _, path in (p.partition("=") for p in args.part)]
        print(landscape_summary(args.landscape, parts), end="")
        return
    preview, found = _read(args.preview)
    if args.digest:
        with open(args.digest, "w") as out:
            json.dump(preview, out, indent=2)
    if args.errors:
        print("\n".join(errors(preview, found)), file=sys.stderr)
    else:
        print(summary(preview, found, args.stack), end="")


if __name__ == "__main__":
    main()
