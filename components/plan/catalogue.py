"""The catalogue a landscape runs with: arbor's cloud profiles extended by its own, and what they say of a pool.

`profiles` merges the built-in profiles (components/spec/cloudprofiles.yaml) with `landscape.cloudProfiles`: an
entry of the same name or version is replaced, others are added. The checks (components/checks/catalogue.py)
refuse what a profile does not offer; the planner records each cloud pool's `ImageSource`, which the aws and gcp
providers turn into the AMI or image of its machine class, looking it up where the profile names a lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from components.kinds import ProviderType
from components.spec.catalogue import (
    CloudProfiles,
    CloudProfileSpec,
    MachineImage,
    MachineImageVersion,
    ProviderImage,
    ProviderImageVersion,
    built_in,
)

# Gardener's default where a machine type names no architecture.
DEFAULT_ARCHITECTURE = "amd64"
Entry = TypeVar("Entry")


@dataclass(frozen=True)
class ImageSource:
    """Where a pool's cloud image comes from: pinned (an AMI, an image path), or a lookup resolved on registration."""

    pinned: str = ""
    architecture: str = DEFAULT_ARCHITECTURE
    # aws: the AMI's owner and name filter; gcp: the image's project and family.
    owner: str = ""
    name: str = ""
    project: str = ""
    family: str = ""


def _merged(base: Sequence[Entry], over: Sequence[Entry], key: Callable[[Entry], str],
            merge: Callable[[Entry, Entry], Entry] | None = None) -> list[Entry]:  # fmt: skip
    """`base` with the entries of `over` replacing (or merged into) those of the same key, new ones appended."""
    result = {key(e): e for e in base}
    for entry in over:
        k = key(entry)
        result[k] = merge(result[k], entry) if merge and k in result else entry
    return list(result.values())


def _image(base: MachineImage, over: MachineImage) -> MachineImage:
    """An image with the versions of both, `over`'s replacing those of the same version."""
    versions = _merged(base.versions, over.versions, lambda v: v.version)
    return base.model_copy(update={"versions": versions})


def _provider_image(base: ProviderImage, over: ProviderImage) -> ProviderImage:
    """A provider image with the versions of both, `over`'s replacing those of the same version."""
    versions = _merged(base.versions, over.versions, lambda v: v.version)
    return base.model_copy(update={"versions": versions})


def _profile(base: CloudProfileSpec, over: CloudProfileSpec) -> CloudProfileSpec:
    """One provider's profile extended by a landscape's."""
    kubernetes = base.kubernetes.model_copy(
        update={"versions": _merged(base.kubernetes.versions, over.kubernetes.versions, lambda v: v.version)}
    )
    provider_images = _merged(
        base.provider_config.machine_images, over.provider_config.machine_images, lambda i: i.name, _provider_image
    )
    return base.model_copy(
        update={
            "kubernetes": kubernetes,
            "machine_images": _merged(base.machine_images, over.machine_images, lambda i: i.name, _image),
            "machine_types": _merged(base.machine_types, over.machine_types, lambda t: t.name),
            "provider_config": base.provider_config.model_copy(update={"machine_images": provider_images}),
        }
    )


def profiles(landscape: CloudProfiles) -> CloudProfiles:
    """The built-in profiles extended by a landscape's `cloudProfiles`, by provider."""
    result = built_in()
    for provider, profile in landscape.items():
        result[provider] = _profile(result[provider], profile) if provider in result else profile
    return result


def architecture(profile: CloudProfileSpec | None, machine_type: str) -> str:
    """The architecture of a machine type: the profile's, else amd64."""
    types = {t.name: t.architecture for t in profile.machine_types} if profile else {}
    return types.get(machine_type, DEFAULT_ARCHITECTURE)


def image_version(profile: CloudProfileSpec, name: str, version: str) -> MachineImageVersion | None:
    """The profile's entry of an image version, if it offers it."""
    for image in profile.machine_images:
        if image.name == name:
            return next((v for v in image.versions if v.version == version), None)
    return None


def _provider_version(profile: CloudProfileSpec, name: str, version: str) -> ProviderImageVersion | None:
    """Where the profile's cloud keeps an image version, if it says."""
    for image in profile.provider_config.machine_images:
        if image.name == name:
            return next((v for v in image.versions if v.version == version), None)
    return None


def image_source(
    provider: ProviderType, profile: CloudProfileSpec, region: str, image: tuple[str, str], arch: str
) -> ImageSource | None:
    """The cloud image of an image version in a region for an architecture: pinned if the profile pins one."""
    entry = _provider_version(profile, *image)
    if entry is None:
        return None
    if provider is ProviderType.AWS:
        pinned = next((r.ami for r in entry.regions if r.name == region and r.architecture == arch), None)
    else:
        pinned = entry.image if entry.architecture == arch else None
    if pinned:
        return ImageSource(pinned=pinned, architecture=arch)
    for lookup in entry.lookups:
        kind = lookup.owner if provider is ProviderType.AWS else lookup.project
        if lookup.architecture == arch and kind:
            found = (lookup.owner, lookup.name, lookup.project, lookup.family)
            return ImageSource("", arch, *(value or "" for value in found))
    return None


def pool_images(
    provider: ProviderType, profile: CloudProfileSpec | None, region: str, pools: Sequence[tuple[str, str, str, str]]
) -> dict[str, ImageSource]:
    """Each cloud pool's image source by pool name (pool, machine type, image, version); local pools need none."""
    if provider is ProviderType.LOCAL or profile is None:
        return {}
    sources = {}
    for pool, machine_type, name, version in pools:
        source = image_source(provider, profile, region, (name, version), architecture(profile, machine_type))
        if source is not None:
            sources[pool] = source
    return sources
