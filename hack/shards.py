"""The stacks of a landscape sharded per seed (docs/shards.md): which to run, and moving a seed's state into its own.

With `stacks: perSeed`, the landscape's stack keeps the garden and each seed with its shoots has a stack
`<landscape>.<seed>` (components/plan/shards.py). `make up` runs `split` first: it makes each missing seed stack
(its config names its landscape and seed, and keeps the landscape stack's secrets settings, so the state's secrets
stay readable) and hands the seed's components with everything under them over from the landscape's stack, as
`pulumi state move` would, but keeping every URN's parents (the engine's `--include-parents` fails its own
integrity check here, and without it the URNs would change). Ancestors and providers the moved resources need
are copied; the Kubernetes provider of the garden stays in both. Nothing in a cluster or cloud changes, and a
landscape with nothing to move is left as it is.

`migrate` then hands a shoot that the document moved to another seed over to that seed's stack, whose update
migrates its control plane as one stack does (hack/shoot_moves.py).

Usage: python hack/shards.py stacks <landscape>    the stacks to run, garden first, one per line
       python hack/shards.py split <landscape>     make the seed stacks and move their state
       python hack/shards.py migrate <landscape>   hand shoots moved to another seed over to its stack
       python hack/shards.py pending <landscape>   the seeds and shoots yet to move, a line each
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import shoot_moves
from pulumi_cli import export, import_state, pulumi
from state_moves import without

from components import stacks
from components.checks import parse_landscape
from components.kinds import StackLayout
from components.layers.landscape import seed_component, shoot_component
from components.plan.planner import plan_landscape
from components.plan.shards import SEPARATOR, Shard, seed_stack
from components.plan.values import LandscapePlan
from components.spec.fields import SpecError
from components.spec.landscape import LandscapeSpec

PROJECT = "arbor"
ROOT = "arbor"  # the Landscape's name in __main__.py
# The components a seed's part is made of (hack/deletions.py unprotects under the same ones).
COMPONENT_TYPES = ("arbor:shoot:Shoot", "arbor:seed:Seed")
# What a seed stack keeps of its landscape stack's config file: the secrets settings its state is encrypted with.
SECRETS_SETTINGS = ("secretsprovider", "encryptedkey", "encryptionsalt")


def config_file(stack: str) -> Path:
    """A stack's config file."""
    return stacks.config_dir() / f"Pulumi.{stack}.yaml"


def read_config(stack: str) -> dict[str, Any]:
    """A stack's config file as data ({} when it has none)."""
    path = config_file(stack)
    return dict(yaml.safe_load(path.read_text()) or {}) if path.exists() else {}


def landscape_of(stack: str) -> tuple[Any, Shard]:
    """The landscape document a stack reads, and its shard (as the program finds them)."""
    config = read_config(stack).get("config") or {}
    shard = stacks.shard_of(config.get("arbor:shard"), stack)
    return (config.get(stacks.LANDSCAPE_KEY) if shard.seed is None else stacks.document(shard)), shard


def outputs_of(stack: str) -> dict[str, Any]:
    """A stack's outputs ({} for a stack that does not exist)."""
    cmd = ["pulumi", "stack", "output", "--json", "--stack", stack, "--non-interactive"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return dict(json.loads(proc.stdout or "{}")) if proc.returncode == 0 else {}


def existing_stacks() -> list[str]:
    """Every stack of the project in the backend."""
    return [str(s["name"]) for s in json.loads(subprocess.run(
        ["pulumi", "stack", "ls", "--json", "--non-interactive"], capture_output=True, text=True, check=True
    ).stdout or "[]")]  # fmt: skip


def spec_of(landscape: str) -> LandscapeSpec | None:
    """The landscape's document, validated; None when invalid (the garden stack's program says why)."""
    try:
        return parse_landscape(landscape_of(landscape)[0])
    except SpecError:
        return None


def seeds_of(spec: LandscapeSpec | None, landscape: str, existing: Iterable[str]) -> list[str]:
    """The seeds with a stack: those of a sharded document, and those whose stack is left (removed from it)."""
    named = [s.name for s in spec.seeds] if spec and spec.stacks is StackLayout.PER_SEED else []
    prefix = f"{landscape}{SEPARATOR}"
    left = sorted(s.removeprefix(prefix) for s in existing if s.startswith(prefix))
    return [*named, *(s for s in left if s not in named)]


def _is_root(urn: str, roots: set[str]) -> bool:
    """Whether the URN is a Seed or Shoot component named in `roots`."""
    return shoot_moves.urn_type(urn) in COMPONENT_TYPES and shoot_moves.urn_name(urn) in roots


def subtree(resources: Sequence[Mapping[str, Any]], roots: set[str]) -> set[str]:
    """The URNs of the Seed and Shoot components named `roots` and of every resource under them."""
    parents = {str(r["urn"]): r.get("parent") for r in resources}
    found = set()
    for urn in parents:
        at: str | None = urn
        while at is not None and not _is_root(at, roots):
            at = parents.get(at)
        if at is not None:
            found.add(urn)
    return found


def needed(resources: Sequence[Mapping[str, Any]], moved: set[str]) -> set[str]:
    """What moved resources need besides themselves: their ancestors and providers, and those's ancestors."""
    by_urn = {str(r["urn"]): r for r in resources}
    out: set[str] = set()
    todo = list(moved)
    while todo:
        r = by_urn.get(todo.pop())
        if r is None:
            continue
        provider = str(r.get("provider") or "").rsplit("::", 1)[0]
        for urn in (r.get("parent"), provider):
            if urn and urn in by_urn and urn not in moved and urn not in out:
                out.add(str(urn))
                todo.append(str(urn))
    return out


def renamed(value: Any, source: str, dest: str) -> Any:
    """`value` with every URN of the source stack made the destination's (the stack resource's name too)."""
    text = json.dumps(value)
    text = text.replace(f"urn:pulumi:{source}::{PROJECT}::", f"urn:pulumi:{dest}::{PROJECT}::")
    text = text.replace(f'pulumi:pulumi:Stack::{PROJECT}-{source}"', f'pulumi:pulumi:Stack::{PROJECT}-{dest}"')
    return json.loads(text)


def split(
    deployment: Mapping[str, Any], moved: set[str], source: str, dest: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The source deployment without `moved`, and the destination's: `moved` with what it needs, renamed."""
    resources = list(deployment.get("resources") or [])
    kept = moved | needed(resources, moved)
    taken = [r for r in resources if r["urn"] in kept or r.get("type") == "pulumi:pulumi:Stack"]
    # What the destination lacks (the garden's own resources) is dropped from every reference, as a move does.
    left = {r["urn"] for r in resources} - {r["urn"] for r in taken}
    dest_deployment = without({**deployment, "resources": taken, "pending_operations": []}, left)
    return without(deployment, moved), renamed(dest_deployment, source, dest)


def holds(present: Sequence[Mapping[str, Any]], dest: Mapping[str, Any]) -> bool:
    """Whether a seed stack's resources are exactly the part a move gives it (same URNs, same IDs)."""
    return {(r["urn"], r.get("id")) for r in present} == {(r["urn"], r.get("id")) for r in dest["resources"]}


def seed_roots(spec: LandscapeSpec, seed: str) -> set[str]:
    """The components of a seed's part: the Seed and the Shoots it hosts (by the document)."""
    hosted = {shoot_component(ROOT, s.project, s.name) for s in spec.shoots if s.seed == seed}
    return {seed_component(ROOT, seed), *hosted}


def ensure_stack(landscape: str, seed: str, existing: Iterable[str]) -> str:
    """The seed's stack, made when missing: its config names its shard and keeps the landscape's secrets settings."""
    stack = seed_stack(landscape, seed)
    if stack not in existing:
        provider = read_config(landscape).get("secretsprovider") or "passphrase"
        pulumi(stack, "stack", "init", "--secrets-provider", str(provider), who="shards")
    data = read_config(stack)
    source = read_config(landscape)
    data.update({k: source[k] for k in SECRETS_SETTINGS if k in source})
    data["config"] = {**(data.get("config") or {}), "arbor:shard": {"landscape": landscape, "seed": seed}}
    text = f"# The stack of seed {seed} of the landscape {landscape} (docs/shards.md), made by hack/shards.py.\n"
    config_file(stack).write_text(text + yaml.safe_dump(data, sort_keys=False))
    return stack


def move(landscape: str) -> None:
    """Makes the seed stacks of a sharded landscape and moves each seed's part of the state into its stack."""
    existing, spec = existing_stacks(), spec_of(landscape)
    if spec is None or spec.stacks is not StackLayout.PER_SEED:
        return
    # The landscape's state, read once and kept as each move leaves it.
    exported = export(landscape, who="shards")
    for seed in seeds_of(spec, landscape, existing):
        stack = ensure_stack(landscape, seed, existing)
        moving = subtree(exported.get("deployment", {}).get("resources") or [], seed_roots(spec, seed))
        if not moving:
            continue
        if exported["deployment"].get("pending_operations"):
            raise SystemExit(f"shards: {landscape} has operations pending; `make up` clears them first")
        source, dest = split(exported["deployment"], moving, landscape, stack)
        present = export(stack, who="shards").get("deployment", {}).get("resources") or []
        if present and not holds(present, dest):
            raise SystemExit(f"shards: {stack} already has resources; {len(moving)} of seed {seed} are in {landscape}")
        if not present:
            import_state(stack, {**exported, "deployment": dest}, who="shards")
        # Else an earlier move stopped between the two imports: the seed's stack holds its part, the rest follows.
        exported = {**exported, "deployment": source}
        import_state(landscape, exported, who="shards")
        print(f"shards: moved {len(moving)} resources of seed {seed} from {landscape} to {stack}")


def sharded_plan(landscape: str) -> LandscapePlan | None:
    """The plan of a landscape sharded per seed (None for one in one stack, or an invalid document)."""
    spec = spec_of(landscape)
    return plan_landscape(spec, landscape) if spec and spec.stacks is StackLayout.PER_SEED else None


def seed_states(plan: LandscapePlan, landscape: str) -> dict[str, dict[str, Any]]:
    """The exported state of each seed stack of the plan that exists, by stack."""
    existing = set(existing_stacks())
    names = (seed_stack(landscape, s.name) for s in plan.seeds)
    return {stack: export(stack, who="shards") for stack in names if stack in existing}


def shoot_moves_of(
    plan: LandscapePlan, landscape: str, states: dict[str, dict[str, Any]]
) -> list[shoot_moves.ShootMove]:
    """The shoots whose state a seed stack holds while the document puts them on another seed."""
    return shoot_moves.moves(plan, landscape, {k: v.get("deployment") or {} for k, v in states.items()}, ROOT)


def hand_over(move: shoot_moves.ShootMove, states: dict[str, dict[str, Any]], landscape: str) -> None:
    """Moves one shoot's resources and records from its source seed stack into its target's (two imports)."""
    source, target = seed_stack(landscape, move.source), seed_stack(landscape, move.target)
    src, dst = states[source]["deployment"], states[target]["deployment"]
    if src.get("pending_operations") or dst.get("pending_operations"):
        raise SystemExit(f"shards: {source} or {target} has operations pending; `make up` clears them first")
    resources = src.get("resources") or []
    # The Shoot component with everything under it, and its namespace under any seed's component.
    moving = subtree(resources, {shoot_component(ROOT, move.shoot.project, move.shoot.name)})
    moving |= shoot_moves.seed_namespaces(resources, move.shoot)
    left, given = split(src, moving, source, target)
    dst = shoot_moves.started(dst, given)
    left, with_records = shoot_moves.with_records(left, dst, move.shoot)
    own = set(renamed(sorted(moving), source, target))
    present = {r["urn"]: r.get("id") for r in dst.get("resources") or []}
    ids = {r["urn"]: r.get("id") for r in given["resources"] if r["urn"] in own}
    if own <= present.keys() and all(present[u] == ids[u] for u in own):
        pass  # an earlier hand-over stopped between the two imports: the target holds the shoot, the rest follows
    elif own & present.keys():
        raise SystemExit(f"shards: {target} holds other resources of {move.shoot.ref}; {source} holds it too")
    elif extra := shoot_moves.foreign(dst, given, own):
        raise SystemExit(f"shards: moving {move.shoot.ref} into {target} would take {extra[0]} along; not moved")
    else:
        states[target] = {**states[target], "deployment": shoot_moves.merged(with_records, given)}
        import_state(target, states[target], who="shards")
    states[source] = {**states[source], "deployment": left}
    import_state(source, states[source], who="shards")
    print(
        f"shards: moved {len(moving)} resources of shoot {move.shoot.ref} from {source} to {target}, whose update "
        f"migrates its control plane from seed {move.source} to {move.target}"
    )


def migrate(landscape: str) -> None:
    """Hands each shoot the document moved to another seed over to that seed's stack (hack/shoot_moves.py)."""
    plan = sharded_plan(landscape)
    if plan is None:
        return
    states = seed_states(plan, landscape)
    for move in shoot_moves_of(plan, landscape, states):
        if seed_stack(landscape, move.target) not in states:
            continue  # `split` makes it first
        if lines := shoot_moves.refusals(plan, move, states[seed_stack(landscape, move.source)]["deployment"]):
            print(f"shards: {move.shoot.ref} stays in its stack: {lines[0]}", file=sys.stderr)
            continue
        hand_over(move, states, landscape)


def pending(landscape: str) -> list[str]:
    """What `split` and `migrate` have yet to move, a line each.

    Seeds whose stack is missing or whose part the landscape's stack holds, and shoots a seed stack holds while
    the document puts them on another seed.
    """
    existing, spec = existing_stacks(), spec_of(landscape)
    if spec is None or spec.stacks is not StackLayout.PER_SEED:
        return []
    resources = export(landscape, who="shards").get("deployment", {}).get("resources") or []
    lines = [
        f"seed {s.name}: its part of the state is still in {landscape}; `make up` moves it to its stack"
        for s in spec.seeds
        if seed_stack(landscape, s.name) not in existing or subtree(resources, seed_roots(spec, s.name))
    ]
    plan = plan_landscape(spec, landscape)
    states = seed_states(plan, landscape)
    return lines + [
        f"shoot {m.shoot.ref}: its state is still in {seed_stack(landscape, m.source)}; `make up` moves it to "
        f"{seed_stack(landscape, m.target)}"
        for m in shoot_moves_of(plan, landscape, states)
    ]


def main() -> None:
    """`stacks`, `split`, `migrate` or `pending`, for the landscape named on the command line."""
    if len(sys.argv) != 3 or sys.argv[1] not in ("stacks", "split", "migrate", "pending"):
        raise SystemExit("usage: shards.py stacks|split|migrate|pending <landscape>")
    verb, landscape = sys.argv[1:]
    if verb in ("split", "migrate"):
        (move if verb == "split" else migrate)(landscape)
        return
    if verb == "pending":
        for line in pending(landscape):
            print(line)
        return
    seeds = seeds_of(spec_of(landscape), landscape, existing_stacks())
    print("\n".join([landscape, *(seed_stack(landscape, s) for s in seeds)]))


if __name__ == "__main__":
    main()
