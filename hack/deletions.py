"""Lifts the protection of what the landscape confirms to delete, so that the next `pulumi up` deletes it.

Pulumi refuses to delete a protected resource the program no longer registers, and a removed shoot's resources
are not registered (its spec is gone). `make up` runs this first: when the landscape passes every check
(components/checks, against the previous update's outputs), it clears the `protect` bit of the resources under
the components of

- each shoot named in `landscape.confirmDeletion.shoots` and no longer in the spec,
- each seed named in `landscape.confirmDeletion.seeds`, or recorded as hosting no shoot, no longer in the spec;

nothing else. A refused landscape changes nothing here: the program prints its lines. Unprotecting is idempotent;
if the update then fails, the confirmation is still in the spec and the next `make up` deletes what is left.

A preview must not change the state, so `make preview` asks the engine to preview protected deletions
(`--preview-flags` prints `--ignore-protect` when there are confirmed ones) and then `--verify` refuses the
preview if it deletes or replaces any protected resource other than those: what `up` would refuse, it refuses.

Usage: python hack/deletions.py <stack> [--dry-run | --preview-flags | --verify <preview.json>]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pulumi_cli import export, pulumi
from shards import COMPONENT_TYPES, ROOT, landscape_of, outputs_of

from components import checks
from components.layers.landscape import seed_component, shoot_component
from components.plan.values import LandscapePlan


def components_to_delete(plan: LandscapePlan, previous: Mapping[str, Any]) -> dict[str, str]:
    """Resource names of the components whose deletion the checked spec allows, with what each is."""
    current_shoots = {s.ref for s in plan.shoots}
    current_seeds = {s.name for s in plan.seeds}
    out = {}
    for key in plan.deletions.shoots:
        if key not in current_shoots:
            project, _, name = key.partition("/")
            out[shoot_component(ROOT, project, name)] = f"shoot {key}"
    recorded = previous.get("seeds") or {}
    empty = [name for name, record in recorded.items() if isinstance(record, Mapping) and not record.get("shoots")]
    for name in {*plan.deletions.seeds, *empty} - current_seeds:
        out[seed_component(ROOT, name)] = f"seed {name}"
    return out


def protected_under(resources: list[dict[str, Any]], components: Mapping[str, str]) -> dict[str, list[str]]:
    """The URNs of protected resources under each component (by its name), from `pulumi stack export`."""
    parents = {r["urn"]: r.get("parent") for r in resources}
    named = {
        r["urn"]: r["urn"].rsplit("::", 1)[-1]
        for r in resources
        if r.get("type") in COMPONENT_TYPES and r["urn"].rsplit("::", 1)[-1] in components
    }
    out: dict[str, list[str]] = {}
    for r in resources:
        if not r.get("protect"):
            continue
        urn: str | None = r["urn"]
        while urn is not None and urn not in named:
            urn = parents.get(urn)
        if urn is not None:
            out.setdefault(named[urn], []).append(r["urn"])
    return out


def confirmed(stack: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The components the checked landscape deletes, and the protected URNs under each ({} when it is refused)."""
    previous = json.loads(pulumi(stack, "stack", "output", "--json") or "{}")
    try:
        raw, shard = landscape_of(stack)
        plan = checks.check(raw, shard, lambda: previous, outputs_of).plan
    except checks.RefusalError:
        return {}, {}  # the program refuses it with its lines; nothing is unprotected
    components = components_to_delete(plan, previous)
    if not components:
        return {}, {}
    resources = export(stack, who="deletions")["deployment"].get("resources") or []
    return components, protected_under(resources, components)


def unexpected(preview: Mapping[str, Any], allowed: set[str]) -> list[str]:
    """Deletions and replacements of protected resources in a preview other than the confirmed ones."""
    return [
        f"{step['urn']}: {step['op']} of a protected resource; `up` refuses it (only confirmed deletions lift "
        "the protection, landscape.confirmDeletion)"
        for step in preview.get("steps") or []
        if step["op"] in ("delete", "replace", "delete-replaced", "create-replacement")
        and (step.get("oldState") or {}).get("protect")
        and step["urn"] not in allowed
    ]


def main() -> None:
    """Unprotects what the stack's landscape confirms to delete and says so, or the preview modes."""
    stack, mode = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
    components, protected = confirmed(stack)
    if mode == "--preview-flags":
        print("--ignore-protect" if protected else "")
        return
    if mode == "--verify":
        with open(sys.argv[3]) as f:
            problems = unexpected(json.load(f), {urn for urns in protected.values() for urn in urns})
        if problems:
            raise SystemExit("\n".join(problems))
        return
    for name, urns in sorted(protected.items()):
        if mode != "--dry-run":
            pulumi(stack, "state", "unprotect", "--yes", *urns)
        print(f"{components[name]}: unprotected {len(urns)} resources, deleted by this update as confirmed")


if __name__ == "__main__":
    main()
