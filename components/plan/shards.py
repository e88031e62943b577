"""Which part of a landscape a stack converges, as Gardener shards a landscape by seed (one gardenlet per seed).

A landscape with `stacks: one` is converged whole by its stack. With `stacks: perSeed`, its stack (the garden stack,
named by the landscape) keeps the garden, its projects and the self-hosted shoots, and each seed with the control
planes and workers of the shoots it hosts has a stack `<landscape>.<seed>` (docs/shards.md). Every stack reads the
same landscape document and plans it whole, so each refuses what the others refuse and names stay the same.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from components.kinds import StackLayout
from components.plan.values import LandscapePlan

# What separates a seed stack's name from its landscape's: `<landscape>.<seed>` (stack names allow dots).
SEPARATOR = "."


@dataclass(frozen=True)
class Shard:
    """A stack's part of a landscape: `landscape` names the garden stack, `seed` a seed stack's seed (else None)."""

    landscape: str
    seed: str | None = None

    @property
    def stack(self) -> str:
        """The stack that converges this part."""
        return seed_stack(self.landscape, self.seed) if self.seed else self.landscape


def seed_stack(landscape: str, seed: str) -> str:
    """The stack of a seed of a landscape sharded per seed."""
    return f"{landscape}{SEPARATOR}{seed}"


def scope(plan: LandscapePlan, shard: Shard) -> LandscapePlan:
    """What of the plan the shard's stack registers: the whole, the garden's part, or one seed's part."""
    if shard.seed is not None:
        return dataclasses.replace(
            plan,
            seeds=tuple(s for s in plan.seeds if s.name == shard.seed),
            shoots=tuple(s for s in plan.shoots if s.seed == shard.seed),
        )
    if plan.layout is StackLayout.PER_SEED:
        return dataclasses.replace(plan, seeds=(), shoots=tuple(s for s in plan.shoots if s.seed is None))
    return plan
