"""Every refusal a landscape can get, registered here and run in one call (`check`) before anything is registered.

Three stages, each run only when the one before passed, so one mistake is reported once:

- spec: the fields (components/spec), the checks across them (landscape.py), the names derived from them
  (names.py), the bounds of what the plan sizes by them (capacity.py: node counts, what each range holds), so no
  plan is built from input that could blow up, and what the providers' cloud profiles offer (catalogue.py);
- plan: what arbor does not run yet (support.py) and pools whose machines could not start (workers.py);
- previous: changes the previous update's records do not allow (previous.py), and expired versions and images a
  shoot is created with or moved to (catalogue.py: a shoot keeps what it runs, as in Gardener).

Every check returns `landscape<path>: <reason>` lines, all problems at once; an empty list passes. A new refusal is
a function added to its stage's tuple below, nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from components.checks.capacity import capacity
from components.checks.catalogue import catalogue_problems, expired_versions, kept_expired
from components.checks.landscape import cross_checks
from components.checks.migration import migration_notices
from components.checks.names import name_checks
from components.checks.previous import (
    credential_outputs,
    deletion_notices,
    encryption_changes,
    encryption_outputs,
    network_changes,
    network_outputs,
    removed_seeds,
    removed_shoots,
    seed_outputs,
    shoot_changes,
    shoot_outputs,
    with_earlier_records,
    with_rotations,
)
from components.checks.shards import departing_shoots, garden_problems, moved_shoots
from components.checks.support import unsupported
from components.checks.workers import user_data_problems, worker_problems
from components.plan.planner import plan_landscape
from components.plan.shards import Shard, scope, seed_stack
from components.plan.values import LandscapePlan
from components.render.pki import rotation_message
from components.spec.fields import SpecError
from components.spec.landscape import LandscapeSpec, parse_fields

SpecCheck = Callable[[LandscapeSpec], list[str]]
PlanCheck = Callable[[LandscapePlan], list[str]]
PreviousCheck = Callable[[LandscapePlan, Mapping[str, Any]], list[str]]
PreviousSpecCheck = Callable[[LandscapeSpec, Mapping[str, Any]], list[str]]

# Capacity runs here, before the plan: the plan carves addresses and enumerates nodes by the counts it bounds.
SPEC_CHECKS: tuple[SpecCheck, ...] = (cross_checks, name_checks, capacity, catalogue_problems)
PLAN_CHECKS: tuple[PlanCheck, ...] = (unsupported, user_data_problems, worker_problems)
# Each against the stack output (a record of `records`) it reads; a stack with no such output yet passes.
PREVIOUS_CHECKS: tuple[tuple[str, PreviousCheck], ...] = (
    ("networks", network_changes),
    ("encryption", encryption_changes),
    ("shoots", shoot_changes),
    ("shoots", removed_shoots),
    ("seeds", removed_seeds),
)
# Against a record too, but of what the plan does not hold: the cloud profiles' expiration dates.
PREVIOUS_SPEC_CHECKS: tuple[tuple[str, PreviousSpecCheck], ...] = (("shoots", expired_versions),)


@dataclass
class RefusalError(Exception):
    """A landscape refused before any change: what kind of refusal (`heading`) and one line per problem."""

    heading: str
    lines: list[str]

    def __str__(self) -> str:
        """The heading and every line, as the program reports them."""
        return f"{self.heading}:\n" + "\n".join(self.lines)


def parse_landscape(raw: object) -> LandscapeSpec:
    """Validates the raw config object completely (fields, then across them); raises SpecError with every problem."""
    spec = parse_fields(raw)
    if lines := [line for check in SPEC_CHECKS for line in check(spec)]:
        raise SpecError(lines)
    return spec


@dataclass(frozen=True)
class Checked:
    """A landscape that passed every check: its plan, and what its allowed changes replace and restart."""

    plan: LandscapePlan
    notices: list[str]


def check(
    raw: object,
    shard: Shard | str,
    previous: Callable[[], Mapping[str, Any]],
    others: Callable[[str], Mapping[str, Any]] = lambda _: {},
) -> Checked:
    """The plan of the shard's part of a landscape that passes every check; raises RefusalError otherwise.

    `previous` reads the previous update's outputs, `others` another stack's (a seed stack reads its garden stack's
    and its sibling seed stacks'); they are called only once the spec and the plan passed.
    """
    try:
        spec = parse_landscape(raw)
    except SpecError as err:
        raise RefusalError("invalid landscape", err.lines) from None
    shard = shard if isinstance(shard, Shard) else Shard(shard)
    plan = plan_landscape(spec, shard.landscape)
    if lines := [line for check in PLAN_CHECKS for line in check(plan)]:
        raise RefusalError("landscape asks for what arbor does not run yet", lines)
    deployed = with_earlier_records(previous())
    shoots = deployed.get("shoots") or {}
    # The whole plan against this stack's records: a shoot or seed it recorded is compared wherever the document
    # now puts it (a move to another stack is a seed change), and each line names its index in the document.
    lines = [line for key, check in PREVIOUS_CHECKS for line in check(plan, deployed.get(key) or {})]
    lines += [line for key, spec_check in PREVIOUS_SPEC_CHECKS for line in spec_check(spec, deployed.get(key) or {})]
    lines += _shard_problems(plan, shard, deployed, others)
    if lines:
        raise RefusalError("refused change (compared with the stack's previous update)", lines)
    # A shoot keeps an expired version it runs (Gardener's maintenance force-updates it); the preview says so.
    kept = kept_expired(spec, shoots)
    part = scope(plan, shard)
    return Checked(with_rotations(part, deployed.get("credentials") or {}), notices(plan, deployed) + kept)


def _shard_problems(
    plan: LandscapePlan, shard: Shard, deployed: Mapping[str, Any], others: Callable[[str], Mapping[str, Any]]
) -> list[str]:
    """A seed stack's refusals across stacks: its garden stack's identity, shoots whose state is in another stack."""
    if shard.seed is None:
        return []
    if lines := garden_problems(plan, shard, others(shard.landscape), deployed):
        return lines
    recorded = deployed.get("shoots") or {}
    stacks = [seed_stack(shard.landscape, s.name) for s in plan.seeds if s.name != shard.seed]
    siblings = {stack: others(stack).get("shoots") or {} for stack in stacks}
    return departing_shoots(plan, shard, recorded) + moved_shoots(plan, shard, recorded, siblings)


def records(plan: LandscapePlan) -> dict[str, Any]:
    """The stack outputs the next update's checks read, by output name."""
    return {
        "networks": network_outputs(plan),
        "encryption": encryption_outputs(plan),
        "credentials": credential_outputs(plan),
        "shoots": shoot_outputs(plan),
        "seeds": seed_outputs(plan),
    }


def notices(plan: LandscapePlan, previous: Mapping[str, Any]) -> list[str]:
    """What an allowed change replaces and restarts (rotations), deletes (confirmed deletions) or moves (a new seed)."""
    rotated = previous.get("credentials") or {}
    rotations = [
        message
        for key, counters in credential_outputs(plan).items()
        if key in rotated and (message := rotation_message(key, rotated[key], counters))
    ]
    return rotations + deletion_notices(plan, previous) + migration_notices(plan, previous)
