"""The landscape spec: pydantic models of the stack config key `arbor:landscape`, and all input validation.

Validation is complete before anything is registered: `parse_landscape` collects every problem and reports
them at once, one line each, as `<path>: <reason>` (for example `landscape.seeds[1].name: duplicate seed
name 'local-1'`). No Pulumi import here, so the models are usable from tests, policies and tools alike.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class SpecError(ValueError):
    """A landscape spec that is invalid; `lines` holds one `<path>: <reason>` per problem."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def _dns_label(value: str) -> str:
    """A DNS-1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric."""
    if not DNS_LABEL.match(value):
        raise ValueError(f"'{value}' is not a DNS-1123 label (lower-case letters, digits and '-')")
    return value


DnsLabel = Annotated[str, Field(min_length=1, max_length=63), AfterValidator(_dns_label)]


class Model(BaseModel):
    """Base of every spec model: immutable, unknown fields refused, camelCase as in the stack file."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class ProviderType(StrEnum):
    """Where a cluster runs."""

    LOCAL = "local"
    GCP = "gcp"
    AWS = "aws"


class ClusterSpec(Model):
    """A cluster that arbor creates for a layer."""

    nodes: int = Field(1, ge=0, le=50, description="Nodes of the cluster (kwok nodes on local).")


class GardenSpec(Model):
    """The garden: the API where projects, seeds and shoots are recorded."""

    provider: ProviderType = ProviderType.LOCAL
    cluster: ClusterSpec = ClusterSpec()


class SeedSpec(Model):
    """A seed: a cluster that hosts shoot control planes."""

    name: DnsLabel
    provider: ProviderType
    cluster: ClusterSpec = ClusterSpec()


class LandscapeSpec(Model):
    """A whole landscape: one garden and its seeds."""

    garden: GardenSpec
    seeds: list[SeedSpec] = Field(default_factory=list)


def _path(loc: tuple[int | str, ...]) -> str:
    """`('seeds', 1, 'name')` -> `landscape.seeds[1].name`."""
    out = "landscape"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _reason(error: Any) -> str:
    """A pydantic error as a short reason, with the refused value where that helps."""
    kind, msg = error["type"], error["msg"]
    if kind == "value_error":
        return str(msg).removeprefix("Value error, ")
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "required field is missing"
    if kind == "enum":
        return f"'{error['input']}' is not one of {error['ctx']['expected']}"
    return str(msg)[0].lower() + str(msg)[1:]


def _cross_checks(spec: LandscapeSpec) -> list[str]:
    """Checks across fields: unique names."""
    lines: list[str] = []
    seen: set[str] = set()
    for i, seed in enumerate(spec.seeds):
        if seed.name in seen:
            lines.append(f"landscape.seeds[{i}].name: duplicate seed name '{seed.name}'")
        seen.add(seed.name)
    return lines


def parse_landscape(raw: object) -> LandscapeSpec:
    """Validates the raw config object completely; raises SpecError with every problem found."""
    if not isinstance(raw, dict):
        raise SpecError([f"landscape: expected an object, got {type(raw).__name__}"])
    try:
        spec = LandscapeSpec.model_validate(raw)
    except ValidationError as err:
        raise SpecError([f"{_path(e['loc'])}: {_reason(e)}" for e in err.errors()]) from None
    lines = _cross_checks(spec)
    if lines:
        raise SpecError(lines)
    return spec
