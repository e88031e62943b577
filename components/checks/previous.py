"""Changes checked against the stack's previous update, and the records (stack outputs) they are checked against.

Some changes are allowed only relative to what was deployed: a network's families and set ranges, an API server's
encryption. Each update records what the next one is checked against (`records`), and a change those records do
not allow is refused before anything is registered. A change of rotation counters is allowed and announced: the
preview says what it replaces and restarts (`notices`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.kinds import KeyRotation
from components.plan.values import EncryptionValues, LandscapePlan
from components.spec import cidrs


def network_outputs(plan: LandscapePlan) -> dict[str, dict[str, list[str]]]:
    """Each shoot's families and given ranges by `<project>/<name>`: the stack output later updates check against."""
    return {
        f"{s.project}/{s.name}": {
            "ipFamilies": list(s.networking.ip_families),
            **{kind: list(getattr(s.networking, kind)) for kind in cidrs.RANGES},
        }
        for s in plan.shoots
    }


def credential_outputs(plan: LandscapePlan) -> dict[str, dict[str, int]]:
    """Each shoot's rotation counters by `<project>/<name>`: the stack output a rotation is planned against."""
    return {f"{s.project}/{s.name}": dict(s.credentials.rotation) for s in plan.shoots}


def network_changes(plan: LandscapePlan, previous: Mapping[str, Any]) -> list[str]:
    """Network changes the previous update's outputs (`network_outputs`) do not allow, one line each."""
    lines = []
    for i, shoot in enumerate(plan.shoots):
        before = previous.get(f"{shoot.project}/{shoot.name}")
        if not isinstance(before, Mapping):
            continue
        old = cidrs.Networks(tuple(before.get("ipFamilies", ())), {k: tuple(before.get(k, ())) for k in cidrs.RANGES})
        net = shoot.networking
        new = cidrs.Networks(net.ip_families, {"nodes": net.nodes, "pods": net.pods, "services": net.services})
        lines += cidrs.check_change(f"landscape.shoots[{i}].networking", old, new, net.provider.value)
    return lines


def _targets(plan: LandscapePlan) -> list[tuple[str, str, EncryptionValues | None]]:
    """Each API server arbor encrypts: its spec path, cluster key and values (None: none for the garden)."""
    garden = [("landscape.garden.encryption", plan.garden.cluster.key, plan.garden.encryption)]
    shoots = [(f"landscape.shoots[{i}].encryption", s.cluster.key, s.encryption) for i, s in enumerate(plan.shoots)]
    return [*garden, *shoots]


def _output(values: EncryptionValues) -> dict[str, Any]:
    """One API server's encryption as recorded for the next update."""
    return {"resources": list(values.resources), "provider": values.provider, "keyRotation": values.key_rotation}


def encryption_outputs(plan: LandscapePlan) -> dict[str, dict[str, Any]]:
    """Each encrypted API server's resources, provider and rotation phase by cluster key (stack output `encryption`)."""
    return {key: _output(values) for _, key, values in _targets(plan) if values}


def change_problems(path: str, before: Mapping[str, Any], after: EncryptionValues) -> list[str]:
    """What a change from the previous update's `before` to `after` does not allow, one line each."""
    old_resources = list(before.get("resources") or [])
    old_provider = before.get("provider", after.provider)
    old_phase = before.get("keyRotation", KeyRotation.COMPLETE)
    resources_changed = sorted(old_resources) != sorted(after.resources)
    provider_changed = old_provider != after.provider
    starts_rotation = old_phase == KeyRotation.COMPLETE and after.key_rotation == KeyRotation.PREPARE
    if resources_changed and provider_changed:
        return [f"{path}: resources and provider change in one update; change one, run `up`, then the other"]
    lines = []
    if provider_changed and not starts_rotation:
        lines.append(
            f"{path}.provider: {old_provider} -> {after.provider} only when a key rotation starts "
            "(keyRotation: prepare; its new key uses the new provider), then keyRotation: complete"
        )
    if resources_changed and KeyRotation.PREPARE in (old_phase, after.key_rotation):
        lines.append(f"{path}.resources: cannot change during a key rotation; set keyRotation: complete first")
    return lines


def encryption_changes(plan: LandscapePlan, previous: Mapping[str, Any]) -> list[str]:
    """Encryption changes the previous update's outputs (`encryption_outputs`) do not allow, one line each."""
    lines = []
    for path, key, values in _targets(plan):
        before = previous.get(key)
        if not isinstance(before, Mapping):
            continue
        if values is None:
            lines.append(
                f"{path}: cannot be removed once set, the objects in etcd are encrypted; keep it "
                "(with resources: [] it encrypts secrets only)"
            )
            continue
        lines += change_problems(path, before, values)
    return lines
