"""What a shoot asks of its provider's cloud profile: offered, unexpired Kubernetes versions and machine images.

As Gardener's admission of a Shoot against its CloudProfile: the Kubernetes version is one the profile lists (when
it lists any) and not expired; each pool's image version is offered, not expired, built for the architecture of
the pool's machine type, with the pool's runtime and a kubelet its constraint admits; and on aws and gcp the
profile says where the cloud keeps it (an AMI in the shoot's region, an image, or a lookup). The profiles are
arbor's, extended by `landscape.cloudProfiles` (components/plan/catalogue.py).

Expiration is Gardener's admission rule too: an expired version or image is refused only where a shoot is created
with it or moved to it. A shoot the previous update recorded running it keeps it (Gardener's maintenance would
force-update it), so `expired_versions` runs with the previous stage, against `previous.shoot_outputs`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from components.kinds import ProviderType
from components.plan.catalogue import architecture, image_source, image_version, profiles
from components.spec.catalogue import CloudProfileSpec, ExpirableVersion, comparisons
from components.spec.fields import shown
from components.spec.landscape import LandscapeSpec
from components.spec.shoot import ShootSpec, WorkerPool

CLOUDS = (ProviderType.AWS, ProviderType.GCP)
WHERE = {ProviderType.AWS: "AMI in", ProviderType.GCP: "image for"}
COMPARE = {
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def _semver(version: str) -> tuple[int, ...]:
    """`1.34.4` -> (1, 34, 4); the spec has validated Kubernetes versions as such."""
    return tuple(int(part) for part in version.split(".")[:3])


def admits(constraint: str, version: str) -> bool:
    """Whether a kubelet version satisfies every comparison of a kubeletVersionConstraint."""
    return all(COMPARE[op](_semver(version), bound) for op, bound in comparisons(constraint))


def _expired(entry: ExpirableVersion, now: datetime) -> str:
    """`expired on <date>` if the entry's expirationDate has passed, else empty."""
    date = entry.expiration_date
    return f"expired on {date.date().isoformat()}" if date is not None and date <= now else ""


def _offered(entries: Sequence[ExpirableVersion], now: datetime, where: str, *, given: bool = False) -> str:
    """What to do instead: pick a version still offered or add one (`given`: the refused one) to `where`."""
    names = [e.version for e in entries if not _expired(e, now)]
    add = f"add it to {where}" if given else f"add one to {where}"
    if not names:
        return add if given else f"no version is offered: {add}"
    return f"pick one of {', '.join(names)}" + (f", or {add}" if given else "")


def _kubernetes(at: str, version: str, profile: CloudProfileSpec, provider: str, now: datetime) -> list[str]:
    """A Kubernetes version against the profile's list (none listed: every version arbor supports); expiry aside."""
    versions = profile.kubernetes.versions
    if not versions:
        return []
    entry = next((v for v in versions if v.version == version), None)
    where = f"landscape.cloudProfiles.{provider}.kubernetes.versions"
    if entry is None:
        return [f"{at}: {shown(version)} is not offered on {provider}: "
                f"{_offered(versions, now, where, given=True)}"]  # fmt: skip
    return []


def _kubernetes_expired(at: str, version: str, profile: CloudProfileSpec, provider: str, now: datetime) -> list[str]:
    """A listed Kubernetes version that has expired, with what is still offered."""
    versions = profile.kubernetes.versions
    entry = next((v for v in versions if v.version == version), None)
    if entry is None or not (expired := _expired(entry, now)):
        return []
    where = f"landscape.cloudProfiles.{provider}.kubernetes.versions"
    return [f"{at}: {version} {expired} on {provider}: {_offered(versions, now, where)}"]


def _image_expired(at: str, pool: WorkerPool, provider: ProviderType, profile: CloudProfileSpec,
                   now: datetime) -> list[str]:  # fmt: skip
    """A pool's offered image version that has expired, with what is still offered."""
    name, version = pool.machine.image.name, pool.machine.image.version
    entry = image_version(profile, name, version)
    if entry is None or not (expired := _expired(entry, now)):
        return []
    offered = next(i.versions for i in profile.machine_images if i.name == name)
    where = f"landscape.cloudProfiles.{provider.value}.machineImages"
    return [f"{at}.machine.image.version: {name} {version} {expired}: {_offered(offered, now, where)}"]


def _image(at: str, shoot: ShootSpec, pool: WorkerPool, provider: ProviderType, region: str,
           profile: CloudProfileSpec, now: datetime) -> list[str]:  # fmt: skip
    """A pool's machine image against the profile: offered, its architecture, runtime, kubelet, cloud."""
    name, version = pool.machine.image.name, pool.machine.image.version
    images = [i.name for i in profile.machine_images]
    where = f"landscape.cloudProfiles.{provider.value}"
    if name not in images:
        return [f"{at}.machine.image.name: {shown(name)} is not an image offered on {provider.value}: pick one of "
                f"{', '.join(images) or 'none'}, or add it to {where}.machineImages"]  # fmt: skip
    entry = image_version(profile, name, version)
    offered = next(i.versions for i in profile.machine_images if i.name == name)
    if entry is None:
        return [f"{at}.machine.image.version: {shown(version)} of {name} is not offered on {provider.value}: "
                f"{_offered(offered, now, where + '.machineImages', given=True)}"]  # fmt: skip
    lines = []
    arch = architecture(profile, pool.machine.type)
    if arch not in entry.architectures:
        lines.append(f"{at}.machine.image.version: {name} {version} is built for {', '.join(entry.architectures)}, "
                     f"not for {arch} (machine type {shown(pool.machine.type)})")  # fmt: skip
    if pool.cri.name not in [c.name for c in entry.cri]:
        lines.append(f"{at}.cri.name: {name} {version} does not come with {pool.cri.name}")
    kubelet = pool.kubernetes_version or shoot.kubernetes.version
    constraint = entry.kubelet_version_constraint
    if constraint and not admits(constraint, kubelet):
        lines.append(f"{at}.machine.image.version: {name} {version} runs kubelets {constraint}, not {kubelet}")
    if provider in CLOUDS and arch in entry.architectures and not image_source(provider, profile, region,
                                                                               (name, version), arch):  # fmt: skip
        lines.append(f"{at}.machine.image.version: {name} {version} has no {WHERE[provider]} {shown(region)} "
                     f"({arch}): add one to {where}.providerConfig.machineImages")  # fmt: skip
    return lines


def _lookups(provider: ProviderType, profile: CloudProfileSpec) -> list[str]:
    """Provider images written for another cloud: gcp lookups on aws, AMIs on gcp, and so on."""
    lines = []
    for k, image in enumerate(profile.provider_config.machine_images):
        for m, entry in enumerate(image.versions):
            at = f"landscape.cloudProfiles.{provider.value}.providerConfig.machineImages[{k}].versions[{m}]"
            for n, lookup in enumerate(entry.lookups):
                if provider is ProviderType.AWS and not lookup.owner:
                    lines.append(f"{at}.lookups[{n}]: aws looks an AMI up by owner and name, not project and family")
                if provider is ProviderType.GCP and not lookup.project:
                    lines.append(f"{at}.lookups[{n}]: gcp looks an image up by project and family, not owner and name")
            if provider is not ProviderType.AWS and entry.regions:
                lines.append(f"{at}.regions: AMIs per region are aws's; {provider.value} takes an image or lookups")
            if provider is not ProviderType.GCP and entry.image:
                lines.append(f"{at}.image: an image path is gcp's; {provider.value} takes AMIs per region or lookups")
    return lines


def _profiled(spec: LandscapeSpec) -> Iterator[tuple[int, ShootSpec, ProviderType, str, CloudProfileSpec]]:
    """Each shoot with a profile to check against: index, spec, provider, region and the merged profile."""
    catalogue = profiles(spec.cloud_profiles)
    seeds = {s.name: s for s in spec.seeds}
    for i, shoot in enumerate(spec.shoots):
        where = spec.garden if shoot.self_hosted else seeds.get(shoot.seed or "")
        profile = catalogue.get(where.provider) if where else None
        if where is not None and profile is not None:
            # No seed: cross_checks names it; no profile (local, unless given): nothing offered to check.
            yield i, shoot, where.provider, where.region, profile


def catalogue_problems(spec: LandscapeSpec, now: datetime | None = None) -> list[str]:
    """Every shoot's Kubernetes versions and machine images against its provider's profile, one line each.

    Expired ones are `expired_versions`' to refuse: whether that is allowed depends on what the shoot runs.
    """
    when = now or datetime.now(UTC)
    # The landscape's own entries, at the paths the user wrote (arbor's are right by construction).
    lines = [line for provider, profile in spec.cloud_profiles.items() for line in _lookups(provider, profile)]
    for i, shoot, provider, region, profile in _profiled(spec):
        at = f"landscape.shoots[{i}]"
        lines += _kubernetes(f"{at}.kubernetes.version", shoot.kubernetes.version, profile, provider.value, when)
        for j, pool in enumerate(shoot.workers):
            if pool.kubernetes_version:
                path = f"{at}.workers[{j}].kubernetesVersion"
                lines += _kubernetes(path, pool.kubernetes_version, profile, provider.value, when)
            if profile.machine_images or provider in CLOUDS:
                lines += _image(f"{at}.workers[{j}]", shoot, pool, provider, region, profile, when)
    return lines


def _expiry(spec: LandscapeSpec, previous: Mapping[str, Any], now: datetime | None) -> list[tuple[bool, str]]:
    """Each expired version and image a shoot asks for, and whether its record says the shoot runs it (kept)."""
    when = now or datetime.now(UTC)
    found: list[tuple[bool, str]] = []
    for i, shoot, provider, _, profile in _profiled(spec):
        before = previous.get(f"{shoot.project}/{shoot.name}")
        record: Mapping[str, Any] = before if isinstance(before, Mapping) else {}
        workers, images = record.get("workers") or {}, record.get("images") or {}
        at = f"landscape.shoots[{i}]"
        kept = shoot.kubernetes.version == record.get("kubernetesVersion")
        found += [(kept, line) for line in _kubernetes_expired(f"{at}.kubernetes.version", shoot.kubernetes.version,
                                                               profile, provider.value, when)]  # fmt: skip
        for j, pool in enumerate(shoot.workers):
            if pool.kubernetes_version:
                kept = pool.kubernetes_version == workers.get(pool.name)
                path = f"{at}.workers[{j}].kubernetesVersion"
                lines = _kubernetes_expired(path, pool.kubernetes_version, profile, provider.value, when)
                found += [(kept, line) for line in lines]
            kept = [pool.machine.image.name, pool.machine.image.version] == images.get(pool.name)
            found += [(kept, line) for line in _image_expired(f"{at}.workers[{j}]", pool, provider, profile, when)]
    return found


def expired_versions(spec: LandscapeSpec, previous: Mapping[str, Any], now: datetime | None = None) -> list[str]:
    """Expired Kubernetes versions and images a shoot is created with or moved to (Gardener's admission).

    `previous`: the previous update's shoot records by `<project>/<name>` (`previous.shoot_outputs`); a version or
    image its shoot's record says it runs is kept. A record from before images were recorded keeps no image.
    """
    return [line for kept, line in _expiry(spec, previous, now) if not kept]


def kept_expired(spec: LandscapeSpec, previous: Mapping[str, Any], now: datetime | None = None) -> list[str]:
    """A notice for each expired version or image a shoot keeps because it runs it already."""
    return [f"{line} (kept: the shoot runs it)" for kept, line in _expiry(spec, previous, now) if kept]
