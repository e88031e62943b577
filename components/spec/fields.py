"""The landscape spec's field rules: patterns, validators, the `Model` base, and `SpecError` with its lines.

Every spec model (components/spec/shoot.py, components/spec/landscape.py) builds on these, so a field is checked,
and its problem worded as `landscape<path>: <reason>`, the same way wherever it appears. No Pulumi import here.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from components.kinds import SUPPORTED_MINORS, IPFamily
from components.spec import cidrs

# Whole ASCII strings only: fullmatch (a `$` would accept a trailing newline) and [0-9] (`\d` takes any Unicode digit).
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", re.ASCII)
VERSION = re.compile(r"([0-9]{1,9})\.([0-9]{1,9})\.([0-9]{1,9})", re.ASCII)  # digits bounded before int()
LABEL_KEY = re.compile(r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", re.ASCII)
LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?", re.ASCII)
DURATION = re.compile(r"(?:([0-9]{1,9})h)?(?:([0-9]{1,9})m)?(?:([0-9]{1,9})s)?", re.ASCII)


class SpecError(ValueError):
    """A landscape spec that is invalid; `lines` holds one `<path>: <reason>` per problem."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def dns_label(value: str) -> str:
    """A DNS-1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric."""
    if not DNS_LABEL.fullmatch(value):
        raise ValueError(f"'{value}' is not a DNS-1123 label (lower-case letters, digits and '-')")
    return value


def duration_seconds(value: str) -> int | None:
    """`1h30m` -> 5400; None when `value` is not hours, minutes and seconds in that order."""
    match = DURATION.fullmatch(value)
    if not value or not match:
        return None
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def _version(value: str) -> str:
    """A Kubernetes version `<major>.<minor>.<patch>` of a supported minor."""
    match = VERSION.fullmatch(value)
    if not match:
        raise ValueError(f"'{value}' is not a version <major>.<minor>.<patch>")
    if (int(match[1]), int(match[2])) not in SUPPORTED_MINORS:
        supported = ", ".join(f"{a}.{b}" for a, b in SUPPORTED_MINORS)
        raise ValueError(f"Kubernetes {value} is not supported (supported minors: {supported})")
    return value


def _cidr(value: str) -> str:
    """A canonical CIDR: the network address itself, as Kubernetes and the clouds expect."""
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise ValueError(f"'{value}' is not a CIDR") from None
    if str(network) != value:
        raise ValueError(f"'{value}' is not canonical, use {network}")
    return value


def _one_or_more(value: object) -> object:
    """A single CIDR is a range of one family: `pods: 10.0.0.0/12` reads as `pods: [10.0.0.0/12]`."""
    return [value] if isinstance(value, str) else value


def _cidrs(value: tuple[str, ...]) -> tuple[str, ...]:
    """Each entry a canonical CIDR, at most one per family."""
    if len(value) > len(IPFamily):
        raise ValueError(f"{len(value)} ranges, at most one per IP family")
    for cidr in value:
        _cidr(cidr)
    return value


def _labels(value: dict[str, str]) -> dict[str, str]:
    """Kubernetes label keys (optional DNS prefix, name up to 63) and values (up to 63)."""
    for key, val in value.items():
        name = key.rsplit("/", 1)[-1]
        if not LABEL_KEY.fullmatch(key) or len(name) > 63:
            raise ValueError(f"'{key}' is not a valid label key")
        if not LABEL_VALUE.fullmatch(val) or len(val) > 63:
            raise ValueError(f"'{val}' is not a valid label value (key '{key}')")
    return value


def unique(values: list[str]) -> list[str]:
    """A list without duplicates."""
    dupes = sorted({v for v in values if values.count(v) > 1})
    if dupes:
        raise ValueError(f"duplicate {', '.join(repr(d) for d in dupes)}")
    return values


DnsLabel = Annotated[str, Field(min_length=1, max_length=63), AfterValidator(dns_label)]
KubernetesVersion = Annotated[str, AfterValidator(_version)]
Cidr = Annotated[str, AfterValidator(_cidr)]
# One CIDR per IP family, in the order of ipFamilies; one CIDR alone may be written as a string.
Ranges = Annotated[tuple[str, ...], BeforeValidator(_one_or_more), AfterValidator(_cidrs)]
Labels = Annotated[dict[str, str], AfterValidator(_labels)]
Zones = Annotated[list[str], AfterValidator(unique)]


class Model(BaseModel):
    """Base of every spec model: immutable, unknown fields refused, camelCase as in the stack file."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def plain_networks(families: tuple[IPFamily, ...], **ranges: tuple[str, ...]) -> cidrs.Networks:
    """Plain values of a network for the CIDR rules."""
    return cidrs.Networks(tuple(f.value for f in families), ranges)


def _path(loc: tuple[int | str, ...]) -> str:
    """`('seeds', 1, 'name')` -> `landscape.seeds[1].name`."""
    out = "landscape"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _reason(error: Any) -> str:
    """A pydantic error as a short reason, with the refused value where that helps."""
    kind, msg = error["type"], str(error["msg"])
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "required field is missing"
    if kind == "enum":
        return f"'{error['input']}' is not one of {error['ctx']['expected']}"
    return msg[0].lower() + msg[1:]


def error_lines(err: ValidationError) -> list[str]:
    """Every problem pydantic found, one `landscape<path>: <reason>` line each."""
    return [f"{_path(e['loc'])}: {_reason(e)}" for e in err.errors()]
