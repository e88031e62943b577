"""The catalogue of Kubernetes versions and machine images per provider: Gardener's CloudProfile, as spec models.

`landscape.cloudProfiles.<provider>` follows a CloudProfile's `spec` (kubernetes.versions with classification and
expirationDate; machineImages[].versions[] with cri, architectures and kubeletVersionConstraint; machineTypes with
their architecture) and its provider extension's CloudProfileConfig under `providerConfig` (aws: an AMI per region,
gcp: an image), with one addition: a `lookups` entry names an image the way a user finds one (aws: owner and name
filter, gcp: project and family) and is resolved when the landscape is registered. The profiles arbor ships are in
`cloudprofiles.yaml` beside this module; a landscape's own entries extend them and replace entries of the same
version (components/plan/catalogue.py merges them). No Pulumi import here.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from components import yaml_text
from components.kinds import ProviderType
from components.spec.fields import Model, shown, unique

Architecture = Literal["amd64", "arm64"]
Classification = Literal["preview", "supported", "deprecated"]
# One comparison of a kubeletVersionConstraint: `>= 1.30`, `< 1.33.0`.
AMI = re.compile(r"ami-[0-9a-f]{8,17}", re.ASCII)
COMPARISON = re.compile(r"\s*(>=|<=|!=|=|>|<)?\s*v?([0-9]{1,4})\.([0-9]{1,4})(?:\.([0-9]{1,4}))?\s*", re.ASCII)
BUILT_IN = Path(__file__).with_name("cloudprofiles.yaml")


def comparisons(constraint: str) -> list[tuple[str, tuple[int, int, int]]]:
    """The comparisons of a constraint (`>= 1.30, < 1.34`), each an operator and a version; [] if it is not one."""
    parts = []
    for part in constraint.split(","):
        match = COMPARISON.fullmatch(part)
        if not match:
            return []
        parts.append((match[1] or "=", (int(match[2]), int(match[3]), int(match[4] or 0))))
    return parts


def _constraint(value: str) -> str:
    """A constraint of comparisons with versions, `>= 1.30, < 1.34`."""
    if not comparisons(value):
        raise ValueError(f"{shown(value)} is not a version constraint like '>= 1.30, < 1.34'")
    return value


def _amd64() -> list[Architecture]:
    """Gardener's default architecture of an image version."""
    return ["amd64"]


def _date(value: object) -> datetime:
    """An expirationDate: a date and time (UTC unless it says), as YAML reads one quoted or not."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{shown(value)} is not a date like 2026-12-31T23:59:59Z") from None
    elif isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if not isinstance(value, datetime):
        raise ValueError("must be a date like 2026-12-31T23:59:59Z")
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _ami(value: str) -> str:
    """An AMI ID, `ami-` and 8 or 17 hexadecimal digits."""
    if not AMI.fullmatch(value):
        raise ValueError(f"{shown(value)} is not an AMI ID like ami-0123456789abcdef0")
    return value


class ExpirableVersion(Model):
    """A version offered, how far it is trusted, and when it stops being offered."""

    version: str = Field(min_length=1, max_length=64)
    classification: Classification | None = None
    expiration_date: Annotated[datetime, BeforeValidator(_date)] | None = Field(None, alias="expirationDate")


class KubernetesSettings(Model):
    """The Kubernetes versions shoots may run; none listed means every version arbor supports."""

    versions: list[ExpirableVersion] = Field(default_factory=list)


class ImageCri(Model):
    """A container runtime an image version comes with."""

    name: Literal["containerd"]


class MachineImageVersion(ExpirableVersion):
    """One version of a machine image: its runtimes, architectures and the kubelets it runs."""

    cri: list[ImageCri] = Field(default_factory=lambda: [ImageCri(name="containerd")])
    architectures: Annotated[list[Architecture], AfterValidator(unique)] = Field(default_factory=_amd64)
    kubelet_version_constraint: Annotated[str, AfterValidator(_constraint)] | None = Field(
        None, alias="kubeletVersionConstraint"
    )


class MachineImage(Model):
    """A machine image (an operating system) and its versions."""

    name: str = Field(min_length=1, max_length=63)
    versions: list[MachineImageVersion] = Field(default_factory=list)


class MachineType(Model):
    """A machine type and the architecture of its CPUs (pools of other types run amd64)."""

    name: str = Field(min_length=1, max_length=63)
    architecture: Architecture = "amd64"


class RegionImage(Model):
    """aws: the AMI of an image version in one region, for one architecture."""

    name: str = Field(min_length=1, max_length=63)
    ami: Annotated[str, AfterValidator(_ami)]
    architecture: Architecture = "amd64"


class ImageLookup(Model):
    """An image found as a user finds it: aws by owner and name filter, gcp by project and family."""

    architecture: Architecture = "amd64"
    owner: str | None = Field(None, min_length=1, description="aws: the account (or alias) that owns the AMI.")
    name: str | None = Field(None, min_length=1, description="aws: the AMI name, `*` matching any characters.")
    project: str | None = Field(None, min_length=1, description="gcp: the project that publishes the image.")
    family: str | None = Field(None, min_length=1, description="gcp: the image family; its newest image is taken.")

    @model_validator(mode="after")
    def _one_kind(self) -> ImageLookup:
        """Either aws's owner and name, or gcp's project and family."""
        aws, gcp = (self.owner, self.name), (self.project, self.family)
        if not ((all(aws) and not any(gcp)) or (all(gcp) and not any(aws))):
            raise ValueError("a lookup names owner and name (aws) or project and family (gcp)")
        return self


class ProviderImageVersion(Model):
    """Where the cloud keeps one image version: AMIs per region (aws), an image (gcp), or lookups."""

    version: str = Field(min_length=1, max_length=64)
    regions: list[RegionImage] = Field(default_factory=list)
    image: str | None = Field(None, min_length=1, description="gcp: projects/<project>/global/images/<image>.")
    architecture: Architecture = Field("amd64", description="gcp: the architecture of `image`.")
    lookups: list[ImageLookup] = Field(default_factory=list)


class ProviderImage(Model):
    """A machine image's versions as the cloud keeps them."""

    name: str = Field(min_length=1, max_length=63)
    versions: list[ProviderImageVersion] = Field(default_factory=list)


class ProviderConfig(Model):
    """The provider extension's CloudProfileConfig: the cloud's images of each image version."""

    machine_images: list[ProviderImage] = Field(default_factory=list, alias="machineImages")


class CloudProfileSpec(Model):
    """A provider's catalogue: Kubernetes versions, machine images and types, and where the cloud keeps the images."""

    kubernetes: KubernetesSettings = KubernetesSettings()
    machine_images: list[MachineImage] = Field(default_factory=list, alias="machineImages")
    machine_types: list[MachineType] = Field(default_factory=list, alias="machineTypes")
    provider_config: ProviderConfig = Field(ProviderConfig(), alias="providerConfig")


CloudProfiles = dict[ProviderType, CloudProfileSpec]


@functools.cache
def _shipped() -> tuple[tuple[ProviderType, CloudProfileSpec], ...]:
    """cloudprofiles.yaml, read once (its models are frozen)."""
    raw = yaml_text.load(BUILT_IN.read_text())
    return tuple((ProviderType(k), CloudProfileSpec.model_validate(v)) for k, v in raw.items())


def built_in() -> CloudProfiles:
    """The profiles arbor ships (cloudprofiles.yaml), which a landscape's `cloudProfiles` extend."""
    return dict(_shipped())
