"""Refusals across the stacks of a landscape sharded per seed (components/plan/shards.py), run before registration.

A seed stack converges only against its own landscape's garden stack, and a shoot's control plane never moves
from one seed stack to another by being deleted in one and created in the other (that would start it with an
empty etcd): its state moves first (`make up` runs `hack/shards.py migrate`), and the target stack's update then
migrates the control plane as one stack does (reconciler/shoot_migration.py). A seed stack run alone, before that
move, is refused on both sides.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.checks.migration import migration_refusals
from components.kinds import StackLayout
from components.plan.shards import Shard, scope, seed_stack
from components.plan.values import LandscapePlan

# The output a garden stack records its landscape's identity in, and the one a seed stack records it ran against.
LANDSCAPE, SHARD = "landscape", "shard"


def landscape_record(name: str, previous: Mapping[str, Any], new_uid: str) -> dict[str, object]:
    """A garden stack's identity: the landscape's name and the uid its first update drew (`new_uid`) and keeps."""
    before = previous.get(LANDSCAPE)
    uid = before.get("uid") if isinstance(before, Mapping) else None
    return {"name": name, "uid": uid if isinstance(uid, str) and uid else new_uid}


def shard_record(shard: Shard, garden_uid: object) -> dict[str, object]:
    """What a seed stack records: its landscape, its seed and the uid of the garden it converged against."""
    return {"landscape": shard.landscape, "seed": shard.seed, "garden": garden_uid}


def garden_problems(
    plan: LandscapePlan, shard: Shard, garden: Mapping[str, Any], previous: Mapping[str, Any]
) -> list[str]:
    """A seed stack that does not belong to the landscape, or whose garden stack is not its landscape's garden."""
    if shard.seed is None:
        return []
    if plan.layout is not StackLayout.PER_SEED:
        return [
            f"landscape.stacks: {plan.layout.value}, but {shard.stack} is a seed stack of {shard.landscape}: set "
            f"stacks: {StackLayout.PER_SEED.value} (or remove the seed stack once it holds nothing)"
        ]
    identity = garden.get(LANDSCAPE)
    if not isinstance(identity, Mapping) or not identity.get("uid"):
        return [
            f"arbor:shard.landscape: the garden stack {shard.landscape} has not run yet: run it first (make up does)"
        ]
    if identity.get("name") != shard.landscape:
        return [
            f"arbor:shard.landscape: the stack {shard.landscape} is the garden stack of landscape "
            f"{identity.get('name')}, not of {shard.landscape}"
        ]
    before = previous.get(SHARD)
    if isinstance(before, Mapping) and before.get("garden") not in (None, identity["uid"]):
        return [
            f"arbor:shard.landscape: {shard.stack} was converged against the garden {before.get('garden')}, but "
            f"{shard.landscape}'s garden is {identity['uid']}: a seed stack runs only against its own landscape's "
            "garden (another landscape's would adopt its seed's control planes)"
        ]
    return []


# What a seed stack run alone is told when a shoot's state has yet to move between seed stacks.
RUN_MAKE_UP = "run `make up` (hack/up.sh), which moves its state first (hack/shards.py migrate), not one stack alone"


def departing_shoots(plan: LandscapePlan, shard: Shard, recorded: Mapping[str, Any]) -> list[str]:
    """Shoots this seed stack runs that the document puts on another seed: their state has not moved yet.

    A move another check refuses (migration.py: the seeds, their backups, a rotation) is left to its line.
    """
    if shard.seed is None:
        return []
    seeds, lines = {s.name: s for s in plan.seeds}, []
    for i, shoot in enumerate(plan.shoots):
        before = recorded.get(shoot.ref)
        if not isinstance(before, Mapping) or before.get("seed") != shard.seed or shoot.seed in (None, shard.seed):
            continue
        at = f"landscape.shoots[{i}]"
        if not migration_refusals(at, shoot, shard.seed, before, seeds):
            lines.append(
                f"{at}.seed: {shard.seed} -> {shoot.seed}: its control plane moves to the seed stack "
                f"{seed_stack(shard.landscape, str(shoot.seed))}, whose update migrates it; {RUN_MAKE_UP}"
            )
    return lines


def moved_shoots(
    plan: LandscapePlan, shard: Shard, recorded: Mapping[str, Any], siblings: Mapping[str, Any]
) -> list[str]:
    """Shoots new to this seed stack whose state another seed stack still holds: `make up` moves it here first.

    `siblings` maps each other seed stack to its `shoots` record.
    """
    if shard.seed is None:
        return []
    lines, own = [], {s.ref for s in scope(plan, shard).shoots}
    for i, shoot in enumerate(plan.shoots):
        if shoot.ref not in own or shoot.ref in recorded:
            continue
        for stack, shoots in sorted(siblings.items()):
            before = shoots.get(shoot.ref) if isinstance(shoots, Mapping) else None
            if isinstance(before, Mapping) and before.get("seed") not in (None, shard.seed):
                lines.append(
                    f"landscape.shoots[{i}].seed: {shoot.ref} runs on seed {before['seed']} (stack {stack}), whose "
                    f"state holds it; {RUN_MAKE_UP}"
                )
    return lines
