"""A hosted shoot's new seed: a control-plane migration, what refuses one and what the preview says it does.

The migration itself is components/reconciler/shoot_migration.py; docs/backups.md walks through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.kinds import KeyRotation, ProviderType
from components.plan.values import LandscapePlan, SeedValues, ShootValues


def migration_refusals(
    at: str, shoot: ShootValues, source: str, before: Mapping[str, Any], seeds: Mapping[str, SeedValues]
) -> list[str]:
    """A seed change is a control-plane migration: between local seeds with backups, and nothing else at once."""
    move = f"{at}.seed: {source} -> {shoot.seed}"
    old, new = seeds.get(source), seeds.get(str(shoot.seed))
    if old is None or new is None:
        return [f"{move}: both seeds must stay in landscape.seeds while the control plane moves (a seed removed at "
                f"once has no cluster to move from or to); keep seed {source} until both are"]  # fmt: skip
    clouds = sorted({s.cluster.provider.value for s in (old, new) if s.cluster.provider is not ProviderType.LOCAL})
    if clouds:
        return [f"{move}: a migration restores etcd from its backup, which etcd-backup-restore v0.39.0 cannot do for "
                f"etcd 3.6 on {' and '.join(clouds)} seeds yet; keep seed {source}"]  # fmt: skip
    if without := [s.name for s in (old, new) if s.backup is None]:
        named = f"seed {without[0]} has" if len(without) == 1 else f"seeds {' and '.join(without)} have"
        return [f"{move}: a migration moves etcd and the shoot's state through the seeds' buckets, and {named} no "
                "backup; add it first"]  # fmt: skip
    rotated = isinstance(old_rotation := before.get("rotation"), Mapping) and old_rotation != shoot.credentials.rotation
    if rotated or shoot.encryption.key_rotation == KeyRotation.PREPARE:
        return [f"{move}: cannot move while credentials or encryption keys rotate; finish the rotation in one "
                "update and move the control plane in another"]  # fmt: skip
    return []


def migration_notices(plan: LandscapePlan, previous: Mapping[str, Any]) -> list[str]:
    """The steps of each control-plane migration this update runs (a hosted shoot's new seed), in their order."""
    lines, shoots = [], previous.get("shoots") or {}
    for i, shoot in enumerate(plan.shoots):
        before = shoots.get(shoot.ref)
        source = before.get("seed") if isinstance(before, Mapping) else None
        if isinstance(source, str) and shoot.seed and source != shoot.seed:
            lines.append(
                f"landscape.shoots[{i}].seed: this update migrates {shoot.ref}'s control plane from seed {source} to "
                f"{shoot.seed}: 1. a final snapshot of its etcd, its API stopped first; 2. its state (persisted "
                f"secrets, machines) uploaded; 3. stopped on {source} (machine-controller-manager, then etcd; its "
                f"machines run on); 4. restored on {shoot.seed} (etcd from that snapshot, its machine objects before "
                f"its MachineDeployments, no Node replaced); 5. its namespace on {source} deleted"
            )
    return lines
