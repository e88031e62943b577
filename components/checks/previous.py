"""Changes checked against the stack's previous update, and the records (stack outputs) they are checked against.

Some changes are allowed only relative to what was deployed: a network's families and set ranges, an API server's
encryption. Each update records what the next one is checked against (`records`), and a change those records do
not allow is refused before anything is registered. A change of rotation counters is allowed and announced: the
preview says what it replaces and restarts (`notices`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

from components.checks.migration import migration_refusals
from components.kinds import KeyRotation
from components.plan.values import EncryptionValues, LandscapePlan, SeedValues, ShootValues
from components.render.pki import rotation_plan
from components.spec import cidrs


def network_outputs(plan: LandscapePlan) -> dict[str, dict[str, list[str]]]:
    """Each shoot's families and given ranges by `<project>/<name>`: the stack output later updates check against."""
    return {
        s.ref: {
            "ipFamilies": list(s.networking.ip_families),
            **{kind: list(getattr(s.networking, kind)) for kind in cidrs.RANGES},
        }
        for s in plan.shoots
    }


def credential_outputs(plan: LandscapePlan) -> dict[str, dict[str, int]]:
    """Each shoot's rotation counters by `<project>/<name>`: the stack output a rotation is planned against."""
    return {s.ref: dict(s.credentials.rotation) for s in plan.shoots}


def with_rotations(plan: LandscapePlan, previous: Mapping[str, Any]) -> LandscapePlan:
    """The plan with each shoot's credentials that its rotation counters replace, against `credential_outputs`."""
    shoots = list(plan.shoots)
    for i, s, before in _recorded(plan, previous):
        replacing = tuple(rotation_plan(before, s.credentials.rotation))
        shoots[i] = dataclasses.replace(s, credentials=dataclasses.replace(s.credentials, replacing=replacing))
    return dataclasses.replace(plan, shoots=tuple(shoots))


def _recorded(plan: LandscapePlan, previous: Mapping[str, Any]) -> Iterator[tuple[int, ShootValues, Mapping[str, Any]]]:
    """Each shoot the previous update recorded (by `ShootValues.ref`), with its index and record."""
    for i, shoot in enumerate(plan.shoots):
        if isinstance(before := previous.get(shoot.ref), Mapping):
            yield i, shoot, before


def _recorded_networks(before: Mapping[str, Any]) -> cidrs.Networks:
    """The families and ranges of a shoot's or seed's record (`network_outputs`, `seed_outputs`)."""
    return cidrs.Networks(tuple(before.get("ipFamilies") or ()), {k: tuple(before.get(k) or ()) for k in cidrs.RANGES})


def network_changes(plan: LandscapePlan, previous: Mapping[str, Any]) -> list[str]:
    """Network changes the previous update's outputs (`network_outputs`) do not allow, one line each."""
    lines = []
    for i, shoot, before in _recorded(plan, previous):
        net = shoot.networking
        new = cidrs.Networks(net.ip_families, {"nodes": net.nodes, "pods": net.pods, "services": net.services})
        lines += cidrs.check_change(
            f"landscape.shoots[{i}].networking", _recorded_networks(before), new, net.provider.value
        )
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


# --- what each shoot is, where it runs, and what may be deleted

HOSTED, SELF_HOSTED = "hosted", "self-hosted"
# What the deletion of a shoot or seed destroys, as a refusal and a notice say it.
SHOOT_DATA = "its cluster, etcd data, CAs, keys and admin credentials"
SEED_DATA = "its cluster and the control planes of the shoots it hosted"


def _hosting(shoot: ShootValues) -> str:
    """`self-hosted` or `hosted`, as the record keeps it."""
    return SELF_HOSTED if shoot.self_hosted else HOSTED


def shoot_outputs(plan: LandscapePlan) -> dict[str, dict[str, Any]]:
    """Each shoot's Kubernetes version, its pools' versions and images, hosting, network plugin, seed, etcd volumes."""
    return {
        s.ref: {
            "kubernetesVersion": s.kubernetes_version,
            "workers": {p.name: p.kubernetes_version for p in s.workers},
            # What each pool's machines run: an expired image is kept only where it already runs (catalogue.py).
            "images": {p.name: [p.image, p.image_version] for p in s.workers},
            "hosting": _hosting(s),
            "networkType": s.network_type,
            # A hosted shoot's rotation counters too: a migration waits for a rotation to be done (`_migration`).
            **({"seed": s.seed, "rotation": dict(s.credentials.rotation)} if s.seed else {}),
            **({"etcdVolumes": _etcd_volumes(s)} if s.etcd_volumes else {}),
        }
        for s in plan.shoots
    }


def _etcd_volumes(shoot: ShootValues) -> dict[str, str]:
    """Each etcd's volume as recorded, `<capacity> on <StorageClass>` by role (none: emptyDir)."""
    return {role: f"{v.capacity} on {v.storage_class}" for role, v in shoot.etcd_volumes.items()}


def _etcd_volume_changes(i: int, shoot: ShootValues, before: Mapping[str, Any]) -> list[str]:
    """A changed etcd volume of a hosted shoot: its StatefulSet's claim cannot change, a new one starts empty."""
    if before.get("hosting") != HOSTED or shoot.self_hosted or before.get("seed") != shoot.seed:
        return []  # a placement change has its own line
    old, new = before.get("etcdVolumes") or {}, _etcd_volumes(shoot)
    return [
        f"landscape.shoots[{i}].seed: etcd {role}'s volume would change from {old.get(role, 'emptyDir')} to "
        f"{new.get(role, 'emptyDir')} (this arbor version's default): a StatefulSet's volume claims cannot change "
        "and a new claim starts etcd empty; keep the arbor version that made it until etcd backups can move the data"
        for role in sorted({*old, *new})
        if old.get(role) != new.get(role)
    ]


def seed_outputs(plan: LandscapePlan) -> dict[str, dict[str, list[str]]]:
    """Each seed's hosted shoots (`<project>/<name>`) and its own families and ranges (stack output `seeds`)."""
    hosted = {s.name: [sh.ref for sh in plan.shoots if sh.seed == s.name] for s in plan.seeds}
    return {
        s.name: {
            "shoots": hosted[s.name],
            "ipFamilies": list(s.ip_families),
            **{kind: list(s.networks.get(kind, ())) for kind in cidrs.RANGES},
        }
        for s in plan.seeds
    }


def _release(version: str) -> tuple[int, int, int]:
    """`1.34.4` -> (1, 34, 4); a recorded version that is not one reads as (0, 0, 0), older than any."""
    parts = version.split(".")
    if len(parts) != 3 or not all(p.isascii() and p.isdigit() for p in parts):
        return (0, 0, 0)
    return int(parts[0]), int(parts[1]), int(parts[2])


# Why a downgrade is refused, for a control plane and for a worker pool.
CONTROL_PLANE_DOWNGRADE = (
    "Kubernetes does not support downgrading a control plane (etcd data is written by the newer version)"
)
POOL_DOWNGRADE = "Kubernetes does not support downgrading a kubelet (its node's state is written by the newer version)"


def version_change(path: str, before: str, after: str, why: str = CONTROL_PLANE_DOWNGRADE) -> list[str]:
    """A control plane's version change the previous version does not allow: a downgrade or a skipped minor.

    A worker pool (`why` = POOL_DOWNGRADE) may skip minors: a new minor replaces its machines.
    """
    old, new = _release(before), _release(after)
    if old == (0, 0, 0):
        return []
    if new < old:
        return [f"{path}: {before} -> {after} is a downgrade; {why}: keep {before} or set a later version"]
    if why == CONTROL_PLANE_DOWNGRADE and new[:1] == old[:1] and new[1] > old[1] + 1:
        step = f"{old[0]}.{old[1] + 1}"
        return [
            f"{path}: {before} -> {after} skips a minor; a control plane updates one minor at a time, as Gardener "
            f"allows: set {step}.x, run up, then {after}"
        ]
    return []


def _pool_versions(i: int, shoot: ShootValues, before: Mapping[str, Any]) -> list[str]:
    """Downgrades of pools that set their own version (the control plane's line covers the others)."""
    lines = []
    for j, pool in enumerate(shoot.workers):
        old = before.get(pool.name) if isinstance(before, Mapping) else None
        if isinstance(old, str) and pool.kubernetes_version != shoot.kubernetes_version:
            path = f"landscape.shoots[{i}].workers[{j}].kubernetesVersion"
            lines += version_change(path, old, pool.kubernetes_version, POOL_DOWNGRADE)
    return lines


def _control_plane_image(i: int, shoot: ShootValues, before: Mapping[str, Any]) -> list[str]:
    """A self-hosted cloud shoot's control-plane machine keeps the image it was made with: nothing replaces it.

    It holds the shoot's only etcd member, as a Gardener self-hosted shoot's one control-plane node does (its
    validation allows minimum and maximum 1), and a new image would need a new machine; a machine type rolls in place.
    """
    if shoot.control_plane_machine is None or not isinstance(before, Mapping):
        return []
    for j, pool in enumerate(shoot.workers):
        old = before.get(pool.name)
        if pool.control_plane and isinstance(old, list) and len(old) == 2 and old != [pool.image, pool.image_version]:
            return [
                f"landscape.shoots[{i}].workers[{j}].machine.image: the control-plane machine of a self-hosted shoot "
                f"on {shoot.cluster.provider.value} runs {old[0]} {old[1]} and is not replaced (it holds the shoot's "
                f"only etcd member): keep {old[0]} {old[1]}"
            ]
    return []


def _placement(i: int, shoot: ShootValues, before: Mapping[str, Any], seeds: Mapping[str, SeedValues]) -> list[str]:
    """A hosting-mode or seed change of one shoot, which would rebuild its control plane with an empty etcd."""
    at = f"landscape.shoots[{i}]"
    old_hosting, old_seed = before.get("hosting"), before.get("seed")
    if old_hosting in (HOSTED, SELF_HOSTED) and old_hosting != _hosting(shoot):
        where = f"hosted on seed {old_seed}" if old_seed else old_hosting
        field = "selfHosted" if shoot.self_hosted else "seed"
        return [
            f"{at}.{field}: cannot change from {where} to {_hosting(shoot)}: the control plane would be rebuilt "
            f"with an empty etcd; keep it {old_hosting}, or create a new shoot and move the workloads"
        ]
    if old_seed and shoot.seed and old_seed != shoot.seed:
        return migration_refusals(at, shoot, old_seed, before, seeds)
    return []


def shoot_changes(plan: LandscapePlan, previous: Mapping[str, Any]) -> list[str]:
    """Changes the previous outputs (`shoot_outputs`) forbid: versions, placement, images, etcd volumes, plugin."""
    lines, seeds = [], {s.name: s for s in plan.seeds}
    for i, shoot, before in _recorded(plan, previous):
        if isinstance(old := before.get("kubernetesVersion"), str):
            lines += version_change(f"landscape.shoots[{i}].kubernetes.version", old, shoot.kubernetes_version)
        lines += _pool_versions(i, shoot, before.get("workers") or {})
        lines += _control_plane_image(i, shoot, before.get("images") or {})
        lines += _placement(i, shoot, before, seeds)
        lines += _etcd_volume_changes(i, shoot, before)
        lines += _network_type(i, shoot, before.get("networkType"))
    return lines


def _network_type(i: int, shoot: ShootValues, old: object) -> list[str]:
    """A network plugin change, which Gardener forbids: pods keep the old plugin's interfaces until nodes roll."""
    if not isinstance(old, str) or old == shoot.network_type:
        return []
    return [
        f"landscape.shoots[{i}].networking.type: cannot change from {old} to {shoot.network_type}: running pods keep "
        f"the {old} network until their nodes are replaced (Gardener forbids it too); keep {old}, or create a new shoot"
    ]


def _confirm(kind: str, name: str) -> str:
    """The YAML that confirms a deletion, as a refusal tells it."""
    return f"to delete it, add to the landscape `confirmDeletion: {{{kind}: [{name}]}}`"


def removed_shoots(plan: LandscapePlan, previous: Mapping[str, Any]) -> list[str]:
    """Shoots of the previous update (`shoot_outputs`) gone from the spec unconfirmed; confirmations still in it.

    A confirmation of a shoot still in the spec is refused: left there, it would delete the shoot the day it is
    removed by mistake.
    """
    current = [s.ref for s in plan.shoots]
    confirmed = plan.deletions.shoots
    lines = [
        f"landscape.shoots: {key} was removed; deleting it destroys {SHOOT_DATA}: put it back, or "
        + _confirm("shoots", key)
        for key in previous
        if key not in current and key not in confirmed
    ]
    lines += [
        f"landscape.confirmDeletion.shoots[{i}]: {key} is still in landscape.shoots[{current.index(key)}]; "
        "remove this confirmation, or the shoot too to delete it"
        for i, key in enumerate(confirmed)
        if key in current
    ]
    return lines


def removed_seeds(plan: LandscapePlan, previous: Mapping[str, Any]) -> list[str]:
    """Seeds that hosted shoots (`seed_outputs`) gone from the spec unconfirmed; confirmations still in it.

    Also a seed's ranges, immutable once set as in Gardener's seed validation.
    """
    current = [s.name for s in plan.seeds]
    confirmed = plan.deletions.seeds
    lines = []
    for name, before in previous.items():
        if not isinstance(before, Mapping) or name in current:
            continue
        if (hosted := list(before.get("shoots") or [])) and name not in confirmed:
            lines.append(
                f"landscape.seeds: {name} was removed while it hosted {', '.join(hosted)}; deleting it destroys "
                f"{SEED_DATA}: put it back, or {_confirm('seeds', name)}"
            )
    lines += [
        f"landscape.confirmDeletion.seeds[{i}]: {name} is still in landscape.seeds[{current.index(name)}]; "
        "remove this confirmation, or the seed too to delete it"
        for i, name in enumerate(confirmed)
        if name in current
    ]
    return lines + _seed_network_changes(plan, previous)


def _seed_network_changes(plan: LandscapePlan, previous: Mapping[str, Any]) -> list[str]:
    """A seed's families and set ranges against the previous update's (its shoots' routes and nodes use them)."""
    lines = []
    for i, seed in enumerate(plan.seeds):
        before = previous.get(seed.name)
        if not isinstance(before, Mapping) or "ipFamilies" not in before:
            continue
        new = cidrs.Networks(seed.ip_families, {k: tuple(seed.networks.get(k, ())) for k in cidrs.RANGES})
        old = _recorded_networks(before)
        lines += cidrs.check_change(f"landscape.seeds[{i}].networks", old, new, seed.cluster.provider.value)
    return lines


def deletion_notices(plan: LandscapePlan, previous: Mapping[str, Any]) -> list[str]:
    """What a confirmed deletion deletes, and confirmations with nothing left to delete (to be removed)."""
    lines = []
    kinds = (("shoots", plan.deletions.shoots, SHOOT_DATA), ("seeds", plan.deletions.seeds, SEED_DATA))
    for kind, confirmed, data in kinds:
        if kind not in previous:
            continue  # a stack recorded before these outputs: nothing known to compare with
        recorded = previous[kind] or {}
        for i, name in enumerate(confirmed):
            at = f"landscape.confirmDeletion.{kind}[{i}]"
            if name in recorded:
                lines.append(f"{at}: this update deletes {name} and {data}")
            else:
                lines.append(f"{at}: {name} is not in the previous update, nothing to delete; remove this line")
    return lines


def with_earlier_records(previous: Mapping[str, Any]) -> Mapping[str, Any]:
    """The previous outputs, with a `shoots` record taken from `networks` when the stack predates `shoot_outputs`.

    Every shoot has had a `networks` record from the start, so the first update after an upgrade still refuses an
    unconfirmed removal; version, hosting and seed are unknown until that update records them.
    """
    networks = previous.get("networks")
    if "shoots" in previous or not isinstance(networks, Mapping):
        return previous
    return {**previous, "shoots": {key: {} for key in networks}}
