"""A shoot's state handed from one seed stack to another when the document moves it to another seed (docs/shards.md).

Within one stack, a new seed is a control-plane migration (components/reconciler/shoot_migration.py): the update
of the shoot's ShootMigration runs the migrate half on the old seed, the shoot's resources restore it on the new
one, and the engine deletes its namespace on the old seed last. Across seed stacks, `make up` first hands the
target stack exactly what one stack would hold: the Shoot component with everything under it, every seed
namespace of the shoot (the source seed's, under a copy of that seed's component and provider, which the target's
update deletes once the migration is done) and the shoot's records (its seed among them), so that the target
stack's update is that same migration and the source stack no longer knows the shoot. Nothing in a cluster
changes here. A move the checks would refuse (a seed without backups, a rotation) is left for the source stack to
refuse; a killed hand-over is finished by the next.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.checks.migration import migration_refusals
from components.layers.landscape import shoot_component
from components.plan.shards import seed_stack
from components.plan.values import LandscapePlan, ShootValues

SHOOT, SEED, NAMESPACE = "arbor:shoot:Shoot", "arbor:seed:Seed", "kubernetes:core/v1:Namespace"
# The stack outputs keyed by a shoot's ref that the next update's checks read (components/checks/previous.py).
BY_REF = ("shoots", "networks", "credentials")


@dataclass(frozen=True)
class ShootMove:
    """A shoot whose state is in `source`'s seed stack while the document puts it on `target`."""

    index: int
    shoot: ShootValues
    source: str
    target: str


def urn_name(urn: str) -> str:
    """A resource's name, the last part of its URN."""
    return urn.rsplit("::", 1)[-1]


def urn_type(urn: str) -> str:
    """A resource's own type, the last of its URN's type chain."""
    return urn.split("::")[-2].rsplit("$", 1)[-1]


def _stack_outputs(deployment: Mapping[str, Any]) -> dict[str, Any]:
    """The outputs of a deployment's Stack resource ({} when it has none)."""
    root: Mapping[str, Any] = next(
        (r for r in deployment.get("resources") or [] if r.get("type") == "pulumi:pulumi:Stack"), {}
    )
    return dict(root.get("outputs") or {})


def moves(plan: LandscapePlan, landscape: str, states: Mapping[str, Mapping[str, Any]], root: str) -> list[ShootMove]:
    """The shoots a seed stack's state holds that the document puts on another seed (with its own stack).

    `root` is the Landscape component's name, which a Shoot component's name starts with.
    """
    by_component = {shoot_component(root, s.project, s.name): (i, s) for i, s in enumerate(plan.shoots)}
    seeds = {s.name for s in plan.seeds}
    found = []
    for seed in sorted(seeds):
        resources = states.get(seed_stack(landscape, seed), {}).get("resources") or []
        for r in resources:
            if urn_type(r["urn"]) != SHOOT or urn_name(r["urn"]) not in by_component:
                continue
            i, shoot = by_component[urn_name(r["urn"])]
            if shoot.seed is not None and shoot.seed != seed and shoot.seed in seeds:
                found.append(ShootMove(i, shoot, seed, shoot.seed))
    return found


def refusals(plan: LandscapePlan, move: ShootMove, source: Mapping[str, Any]) -> list[str]:
    """Why the checks refuse this move (the source stack's `source` deployment holds the shoot's record)."""
    before = (_stack_outputs(source).get("shoots") or {}).get(move.shoot.ref)
    seeds = {s.name: s for s in plan.seeds}
    at = f"landscape.shoots[{move.index}]"
    return migration_refusals(at, move.shoot, move.source, before if isinstance(before, Mapping) else {}, seeds)


def seed_namespaces(resources: Sequence[Mapping[str, Any]], shoot: ShootValues) -> set[str]:
    """The shoot's namespace under any seed's component (`<seed component>-<seed namespace>`)."""
    return {
        str(r["urn"]) for r in resources
        if (parent := r.get("parent")) and urn_type(r["urn"]) == NAMESPACE and urn_type(parent) == SEED
        and urn_name(r["urn"]) == f"{urn_name(parent)}-{shoot.seed_namespace}"
    }  # fmt: skip


def with_records(
    source: dict[str, Any], dest: dict[str, Any], shoot: ShootValues
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both deployments with the shoot's records (by ref; its encryption by cluster key) moved to `dest`'s."""
    taken: dict[str, dict[str, Any]] = {}

    def outputs_without(outputs: dict[str, Any]) -> dict[str, Any]:
        out = dict(outputs)
        for name, key in [*((n, shoot.ref) for n in BY_REF), ("encryption", shoot.cluster.key)]:
            record = dict(out.get(name) or {})
            if key in record:
                taken.setdefault(name, {})[key] = record.pop(key)
                out[name] = record
        return out

    def outputs_with(outputs: dict[str, Any]) -> dict[str, Any]:
        return {**outputs, **{name: {**(outputs.get(name) or {}), **got} for name, got in taken.items()}}

    def edited(deployment: dict[str, Any], edit: Any) -> dict[str, Any]:
        return {**deployment, "resources": [
            {**r, "outputs": edit(dict(r.get("outputs") or {}))} if r.get("type") == "pulumi:pulumi:Stack" else r
            for r in deployment.get("resources") or []
        ]}  # fmt: skip

    source = edited(source, outputs_without)
    return source, edited(dest, outputs_with)


def started(present: dict[str, Any], moved: Mapping[str, Any]) -> dict[str, Any]:
    """The target's deployment, or for a stack that never ran, the moved one's settings and an empty Stack resource.

    A seed added in the same update has an empty stack: it takes the source's secrets settings (both are the
    garden stack's) and manifest, and starts with its Stack resource only, which the records then go into.
    """
    if present.get("resources"):
        return present
    root = next(r for r in moved.get("resources") or [] if r.get("type") == "pulumi:pulumi:Stack")
    return {**moved, "resources": [{**root, "outputs": {}}], "pending_operations": []}


def merged(present: dict[str, Any], moved: dict[str, Any]) -> dict[str, Any]:
    """The target's deployment with the moved resources added; what it holds already (its ancestors) is its own.

    A moved resource's provider that the target has (the garden's) becomes the target's, by URN (a provider
    reference carries the provider's id, which differs between stacks).
    """
    have = {str(r["urn"]): r for r in present.get("resources") or []}
    added = [r for r in moved.get("resources") or [] if r["urn"] not in have]
    ids = {urn: r.get("id") for urn, r in have.items()}

    def provider(ref: str | None) -> str | None:
        urn = (ref or "").rsplit("::", 1)[0]
        return f"{urn}::{ids[urn]}" if urn in ids else ref

    return {**present, "resources": [
        *(present.get("resources") or []),
        *({**r, "provider": provider(r.get("provider"))} if r.get("provider") else r for r in added),
    ]}  # fmt: skip


def foreign(present: Mapping[str, Any], moved: Mapping[str, Any], own: set[str]) -> list[str]:
    """What the move would add besides the shoot's own resources that is neither a component nor a provider."""
    have = {r["urn"] for r in present.get("resources") or []}
    return [
        str(r["urn"]) for r in moved.get("resources") or []
        if r["urn"] not in have | own and r.get("custom")
        and not str(r.get("type", "")).startswith("pulumi:providers:")
    ]  # fmt: skip
