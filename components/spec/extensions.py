"""A seed's extension installations (Gardener's ControllerInstallation): the spec of `seeds[].extensions`.

An installation runs its workloads in the seed namespace `extension-<name>`. With `gardenAccess`, it gets its own
identity in the garden (ServiceAccount `extension-<name>` in `seed-<seed>`), a token requested for it, and the generic
garden kubeconfig injected into its workloads, unless a workload opts out (docs/extensions.md).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, model_validator

from components.spec.fields import DnsLabel, Model, shown, unique
from components.spec.shoot import QUANTITY

# `extension-` before the name makes the seed namespace and the garden ServiceAccount: a DNS label of at most 63.
EXTENSION_NAME_MAX = 63 - len("extension-")
# An image reference as the container runtime reads it: [registry[:port]/]path[:tag][@sha256:digest], lower-case path.
IMAGE = re.compile(
    r"(?:[a-zA-Z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?"
)


def image_reference(value: str) -> str:
    """A container image reference with a tag or a digest (a bare repository would float with `latest`)."""
    if len(value) > 512 or not IMAGE.fullmatch(value):
        raise ValueError(f"{shown(value)} is not an image reference (e.g. registry.example/extension:v1.2.3)")
    last = value.rsplit("/", 1)[-1]
    if ":" not in last and "@" not in value:
        raise ValueError(f"{shown(value)} names no tag or digest: pin the version (e.g. {value}:v1.2.3)")
    return value


def quantity(value: str) -> str:
    """A Kubernetes quantity (100m, 128Mi, 1)."""
    if not QUANTITY.fullmatch(value):
        raise ValueError(f"{shown(value)} is not a quantity like 100m or 128Mi")
    return value


def extension_name(value: str) -> str:
    """A name that leaves room for the `extension-` prefix of its namespace and ServiceAccount."""
    if len(value) > EXTENSION_NAME_MAX:
        why = f"extension-<name> must fit a DNS label: at most {EXTENSION_NAME_MAX} characters, not {len(value)}"
        raise ValueError(f"{shown(value)} is too long: {why}")
    return value


ImageReference = Annotated[str, AfterValidator(image_reference)]
Quantity = Annotated[str, AfterValidator(quantity)]


class Requests(Model):
    """What a workload's container requests at rest, so the scheduler can place it."""

    cpu: Quantity = "50m"
    memory: Quantity = "128Mi"


class ExtensionWorkload(Model):
    """A Deployment the installation runs in its seed namespace."""

    name: DnsLabel
    image: ImageReference
    replicas: int = Field(1, ge=0, le=10, description="Pods of the Deployment.")
    requests: Requests = Requests()
    inject_garden_kubeconfig: bool = Field(
        True,
        alias="injectGardenKubeconfig",
        description="With the installation's garden access: mount the generic garden kubeconfig and set "
        "GARDEN_KUBECONFIG (false: upstream's opt-out label instead).",
    )


class ExtensionSpec(Model):
    """One extension installation on a seed."""

    name: Annotated[DnsLabel, AfterValidator(extension_name)]
    type: DnsLabel = Field(description="The extension's type, as its ControllerRegistration names it (provider-local).")
    garden_access: bool = Field(
        False,
        alias="gardenAccess",
        description="Its own garden identity and token, limited to its seed's objects, injected into its workloads.",
    )
    workloads: list[ExtensionWorkload] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_workloads(self) -> ExtensionSpec:
        """Workload names are Deployment names in one namespace."""
        unique([w.name for w in self.workloads])
        return self


def unique_extensions(value: list[ExtensionSpec]) -> list[ExtensionSpec]:
    """Installation names are unique on a seed (each is a namespace there and an identity in the garden)."""
    unique([e.name for e in value])
    return value


Extensions = Annotated[list[ExtensionSpec], AfterValidator(unique_extensions)]
