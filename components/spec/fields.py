"""The landscape spec's field rules: patterns, validators, the `Model` base, and `SpecError` with its lines.

Every spec model (components/spec/shoot.py, components/spec/landscape.py) builds on these, so a field is checked,
and its problem worded as `landscape<path>: <reason>`, the same way wherever it appears. No Pulumi import here.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
import types
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from components.kinds import SUPPORTED_MINORS, IPFamily
from components.spec import cidrs

# Whole ASCII strings only: fullmatch (a `$` would accept a trailing newline) and [0-9] (`\d` takes any Unicode digit).
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", re.ASCII)
VERSION = re.compile(r"([0-9]{1,9})\.([0-9]{1,9})\.([0-9]{1,9})", re.ASCII)  # digits bounded before int()
LABEL_KEY = re.compile(r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", re.ASCII)
LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?", re.ASCII)
DURATION = re.compile(r"(?:([0-9]{1,9})h)?(?:([0-9]{1,9})m)?(?:([0-9]{1,9})s)?", re.ASCII)
# The name of a config key of this stack (`pulumi config set --secret arbor:<key>`), without its namespace.
CONFIG_KEY = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", re.ASCII)
CONFIG_KEY_MAX = 63
# What gives away a credential pasted where a name belongs: kubeconfigs, PEM blocks, JSON keys, tokens.
CREDENTIAL_MARKS = ("-----BEGIN", "apiVersion", "clusters:", "client-key-data", "token:", "private_key")
CREDENTIAL_STARTS = ("{", "eyJ", "AKIA", "ASIA", "ghp_", "glpat-", "ya29.")
# A long run of base64 with upper and lower case and digits: a key or token (names and URLs have other characters).
TOKEN = re.compile(r"(?=.*[A-Z])(?=.*[a-z])(?=.*[0-9])[A-Za-z0-9+/=_-]{32,}", re.ASCII)
# A refused value is quoted in its line only when it is this short, on one line, and no credential.
SHOWN_MAX = 40


class SpecError(ValueError):
    """A landscape spec that is invalid; `lines` holds one `<path>: <reason>` per problem."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def looks_like_credential(value: str) -> bool:
    """Whether a string is more likely a kubeconfig, key or token than a name: several lines, PEM, JSON, a token."""
    return (
        "\n" in value
        or "\r" in value
        or any(mark in value for mark in CREDENTIAL_MARKS)
        or value.lstrip().startswith(CREDENTIAL_STARTS)
        or bool(TOKEN.fullmatch(value))
    )


def shown(value: object) -> str:
    """A refused value as its line may show it: quoted when short and plain, otherwise only what kind it is."""
    if isinstance(value, str):
        if "\n" in value or "\r" in value:
            return "a value with a line break"
        if looks_like_credential(value):
            return "a value that looks like a credential (not shown)"
        if not value.isprintable():
            return "a value with a control character"
        return f"'{value}'" if len(value) <= SHOWN_MAX else f"a value of {len(value)} characters"
    if isinstance(value, bool):
        return "true" if value else "false"
    if (isinstance(value, int) and abs(value) < 10**SHOWN_MAX) or isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        # str() of a huge int raises (Python's 4300-digit limit); its size is all a reader needs.
        return f"a number of more than {SHOWN_MAX} digits"
    return yaml_kind(value)


def yaml_kind(value: object) -> str:
    """What YAML made of a value, in YAML's words: a mapping, a list, a string, a number, true/false, empty."""
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return "true/false"
    kinds = {dict: "a mapping", list: "a list", tuple: "a list", str: "a string", int: "a number", float: "a number"}
    return next((kind for typ, kind in kinds.items() if isinstance(value, typ)), "a value of another kind")


def dns_label(value: str) -> str:
    """A DNS-1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric."""
    if not DNS_LABEL.fullmatch(value):
        raise ValueError(f"{shown(value)} is not a DNS-1123 label (lower-case letters, digits and '-')")
    return value


def dns_subdomain(value: str) -> str:
    """A DNS-1123 subdomain of at least two labels (a zone's domain such as example.com)."""
    labels = value.split(".")
    if len(labels) < 2 or not all(DNS_LABEL.fullmatch(label) for label in labels):
        raise ValueError(f"{shown(value)} is not a domain (DNS-1123 labels joined by '.', e.g. example.com)")
    return value


def _region(value: str) -> str:
    """A cloud region's name (or `local`): lower-case letters, digits and '-', as gcp and aws name them."""
    if not DNS_LABEL.fullmatch(value):
        raise ValueError(
            f"{shown(value)} is not a region name (lower-case letters, digits and '-', e.g. europe-west1 or "
            "eu-central-1)"
        )
    return value


# Names S3 and Cloud Storage reserve (prefixes and suffixes of AWS's access points, Google's own names).
BUCKET_RESERVED_PREFIXES = ("xn--", "sthree-", "goog", "amzn-s3-demo-")
BUCKET_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", "--x-s3")


def bucket_name(value: str) -> str:
    """An object-store bucket's name both S3 and Cloud Storage accept: a DNS label of 3 to 63 characters."""
    if not (3 <= len(value) <= 63) or not DNS_LABEL.fullmatch(value):
        raise ValueError(
            f"{shown(value)} is not a bucket name (3 to 63 lower-case letters, digits and '-', starting and ending "
            "with a letter or digit)"
        )
    if value.startswith(BUCKET_RESERVED_PREFIXES) or value.endswith(BUCKET_RESERVED_SUFFIXES) or "google" in value:
        raise ValueError(f"{shown(value)} is a bucket name the object stores reserve (e.g. 'goog…', 'xn--…')")
    return value


def secret_key(value: str) -> str:
    """The name of a secret config key of this stack; its content (a kubeconfig, a key) is refused unshown."""
    if not value:
        raise ValueError("is empty: name the secret config key, or leave the field out")
    if looks_like_credential(value):
        raise ValueError(
            "looks like a kubeconfig or credential (not shown): give the name of the secret config key that "
            "holds it, not its content (set with pulumi config set --secret arbor:<key>)"
        )
    if value.startswith("arbor:"):
        raise ValueError("give the key's name without the 'arbor:' namespace")
    if len(value) > CONFIG_KEY_MAX or not CONFIG_KEY.fullmatch(value):
        raise ValueError(
            f"is not the name of a config key (letters, digits, '-', '_' and '.', at most {CONFIG_KEY_MAX} "
            "characters; the value is not shown)"
        )
    return value


def label_value(label: str, plus: str = "") -> Any:
    """A validator of a field whose value becomes the value of `label` on nodes or machine objects.

    `plus` stands in for a '+' in the label (Gardener writes an image version's '+' as '_').
    """

    def check(value: str) -> str:
        if not value:
            raise ValueError("must not be empty")
        labelled = value.replace("+", plus) if plus else value
        if len(labelled) > 63 or not LABEL_VALUE.fullmatch(labelled):
            raise ValueError(
                f"{shown(value)} cannot be the value of label {label}: at most 63 letters, digits, '-', '_' and "
                "'.', starting and ending with a letter or digit"
            )
        return value

    return AfterValidator(check)


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
        raise ValueError(f"{shown(value)} is not a version <major>.<minor>.<patch>")
    if (int(match[1]), int(match[2])) not in SUPPORTED_MINORS:
        supported = ", ".join(f"{a}.{b}" for a, b in SUPPORTED_MINORS)
        raise ValueError(f"Kubernetes {value} is not supported (supported minors: {supported})")
    return value


def _cidr(value: str) -> str:
    """A canonical CIDR: the network address itself, as Kubernetes and the clouds expect."""
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise ValueError(f"{shown(value)} is not a CIDR") from None
    if str(network) != value:
        raise ValueError(f"{shown(value)} is not canonical, use {network}")
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
            raise ValueError(f"{shown(key)} is not a valid label key")
        if not LABEL_VALUE.fullmatch(val) or len(val) > 63:
            raise ValueError(f"{shown(val)} is not a valid label value (key {shown(key)})")
    return value


def unique(values: list[str]) -> list[str]:
    """A list without duplicates."""
    dupes = sorted({v for v in values if values.count(v) > 1})
    if dupes:
        raise ValueError(f"duplicate {', '.join(shown(d) for d in dupes)}")
    return values


DnsLabel = Annotated[str, Field(min_length=1, max_length=63), AfterValidator(dns_label)]
# 253 less `api.<shoot>.<project>.internal.` leaves room for Gardener's longest names; the checks hold the rest.
DnsSubdomain = Annotated[str, Field(min_length=3, max_length=200), AfterValidator(dns_subdomain)]
KubernetesVersion = Annotated[str, AfterValidator(_version)]
Cidr = Annotated[str, AfterValidator(_cidr)]
# One CIDR per IP family, in the order of ipFamilies; one CIDR alone may be written as a string.
Ranges = Annotated[tuple[str, ...], BeforeValidator(_one_or_more), AfterValidator(_cidrs)]
Labels = Annotated[dict[str, str], AfterValidator(_labels)]
# A zone labels nodes and machine classes (topology.kubernetes.io/zone).
Zone = Annotated[str, label_value("topology.kubernetes.io/zone")]
Zones = Annotated[list[Zone], AfterValidator(unique)]
SecretKey = Annotated[str, AfterValidator(secret_key)]
Region = Annotated[str, Field(min_length=1, max_length=63), AfterValidator(_region)]
BucketName = Annotated[str, AfterValidator(bucket_name)]


class Model(BaseModel):
    """Base of every spec model: immutable, unknown fields refused, camelCase as in the stack file."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def plain_networks(families: tuple[IPFamily, ...], **ranges: tuple[str, ...]) -> cidrs.Networks:
    """Plain values of a network for the CIDR rules."""
    return cidrs.Networks(tuple(f.value for f in families), ranges)


# Pydantic's type errors in YAML's words: what the field must be.
MUST_BE = {
    "model_type": "must be a mapping (key: value)",
    "model_attributes_type": "must be a mapping (key: value)",
    "dict_type": "must be a mapping (key: value)",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "string_type": "must be a string",
}


def _inner(tp: Any) -> Any:
    """`X | None` -> X: the type of a field that may be left out."""
    if get_origin(tp) in (Union, types.UnionType):
        return next(a for a in get_args(tp) if a is not type(None))
    return tp


def _fields(model: type[BaseModel]) -> dict[str, Any]:
    """A model's fields by the name a user writes (the alias), each with its field info."""
    return {field.alias or name: field for name, field in model.model_fields.items()}


def _model_at(root: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model of the object at `loc` (fields by alias, list items, mapping values), or None."""
    tp: Any = root
    for part in loc:
        tp = _inner(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            field = _fields(tp).get(str(part))
            tp = field.annotation if field else None
        elif get_args(tp):
            tp = get_args(tp)[-1] if get_origin(tp) is dict else get_args(tp)[0]
        else:
            return None
    tp = _inner(tp)
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _path(loc: tuple[int | str, ...]) -> str:
    """`('seeds', 1, 'name')` -> `landscape.seeds[1].name`; a mapping's key as written, pydantic's markers left out."""
    out = "landscape"
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part != "[key]":
            out += f".{part}" if shown(part) == f"'{part}'" else ".<key not shown>"
    return out


def _unknown(root: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """An unknown field, with the known field nearest to it (YAML names), or the known ones."""
    model = _model_at(root, loc[:-1])
    known = sorted(_fields(model)) if model else []
    by_lower = {name.lower(): name for name in known}
    near = difflib.get_close_matches(str(loc[-1]).lower().replace("_", ""), list(by_lower), n=1, cutoff=0.6)
    if near:
        return f"unknown field; did you mean '{by_lower[near[0]]}'?"
    return f"unknown field; the fields here are {', '.join(known)}" if known else "unknown field"


def _missing(root: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """A required field left out, with its description where it has one."""
    model = _model_at(root, loc[:-1])
    field = _fields(model).get(str(loc[-1])) if model else None
    if not field or not field.description:
        return "required field is missing"
    return f"required field is missing: {field.description[0].lower()}{field.description[1:].rstrip('.')}"


def _not_a_string(value: object, loc: tuple[int | str, ...]) -> str:
    """A number or true/false where a string belongs: YAML read an unquoted value; say to quote it."""
    if isinstance(value, bool):
        return (
            f"must be a string, but YAML reads an unquoted {shown(value)} (and yes, no, on, off) as true or false: "
            "write the value in quotes"
        )
    number = shown(value)
    if not number[-1].isdigit():  # too long to show ("a number of more than ... digits"): no example
        return "must be a string, but YAML reads an unquoted number as a number: write the value in quotes"
    # The example as the user would write it: `key: "1.3"`, or `- "1.3"` for an entry of a list.
    example = f'- "{number}"' if isinstance(loc[-1], int) else f'{loc[-1]}: "{number}"'
    lost = " (unquoted, trailing zeros are lost: 1.30 reads as 1.3)" if isinstance(value, float) else ""
    quote = f"write the value in quotes, e.g. {example}{lost}"
    return f"must be a string, but YAML reads an unquoted {number} as a number: {quote}"


# pydantic's number bounds, as the reason says them: error type -> (words, its context key).
NUMBER_BOUNDS = {
    "greater_than_equal": ("at least", "ge"),
    "less_than_equal": ("at most", "le"),
    "greater_than": ("more than", "gt"),
    "less_than": ("less than", "lt"),
}


def _reason(root: type[BaseModel], error: Any) -> str:
    """A pydantic error as a short reason in YAML's words, with the refused value only where it is safe to show."""
    kind, msg, loc, value = error["type"], str(error["msg"]), error["loc"], error.get("input")
    ctx = error.get("ctx") or {}
    scalar = isinstance(value, (str, int, float))
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    if kind == "extra_forbidden":
        return _unknown(root, loc)
    if kind == "missing":
        return _missing(root, loc)
    if kind == "string_type" and isinstance(value, (int, float)):
        return _not_a_string(value, loc)
    if kind in MUST_BE:
        return f"{MUST_BE[kind]}, not {shown(value) if scalar else yaml_kind(value)}"
    if kind == "enum":
        return f"{shown(value)} is not one of {ctx['expected']}"
    if kind == "literal_error":
        return f"must be {ctx['expected']}, not {shown(value) if scalar else yaml_kind(value)}"
    if kind == "string_too_short" and ctx.get("min_length") == 1:
        return "must not be empty"
    if kind in NUMBER_BOUNDS:
        word, key = NUMBER_BOUNDS[kind]
        return f"must be {word} {ctx[key]}, not {shown(value) if scalar else yaml_kind(value)}"
    if kind in ("string_too_short", "string_too_long") and isinstance(value, str):
        least = kind == "string_too_short"
        bound = ctx["min_length"] if least else ctx["max_length"]
        return f"must have at {'least' if least else 'most'} {bound} characters, not {len(value)}"
    if kind in ("too_short", "too_long"):
        least = kind == "too_short"
        bound = ctx["min_length"] if least else ctx["max_length"]
        entries = "entry" if bound == 1 else "entries"
        return f"must have at {'least' if least else 'most'} {bound} {entries}, not {ctx['actual_length']}"
    return msg[0].lower() + msg[1:]


def error_lines(err: ValidationError, root: type[BaseModel]) -> list[str]:
    """Every problem pydantic found in a `root` document, one `landscape<path>: <reason>` line each, in order."""
    lines = [f"{_path(e['loc'])}: {_reason(root, e)}" for e in err.errors()]
    return list(dict.fromkeys(lines))
