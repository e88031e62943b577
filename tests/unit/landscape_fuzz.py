"""Generated landscapes and the property each must keep, for tests/unit/test_fuzz_properties.py and bench/fuzz.py.

Landscapes are spec_cases' base with valid variations, then mutated at generated paths: wrong types, numbers out
of range, odd strings (unicode, newlines, huge), missing and unknown fields, copied list entries, and ranges near
the edges of the address space. The property (`judge`): `checks.check` either accepts, and the plan registers
under Pulumi mocks with unique URNs and names the API server takes, or refuses with lines that each name a path
and a reason. Anything else is a crash.
"""

from __future__ import annotations

import copy
import ipaddress
import re
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pulumi
from hypothesis import strategies as st

from components.checks import RefusalError, check
from tests.unit.landscape_mocks import Built, Mocks, registered
from tests.unit.spec_cases import base

# A refusal line: `landscape`, a path, a reason.
PATHED = re.compile(r"^landscape(\.|\[)\S* ?.*: .+", re.S)
# Words of arbor's internals (pydantic's wording, Python's types) a user never wrote: a line with one (in any case)
# is unclear.
INTERNAL = ("instance of", "tuple", ".[", "input should", "sys.")
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", re.ASCII)
DNS_1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?", re.ASCII)
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", re.ASCII)
LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", re.ASCII)
# Kinds whose names are DNS labels (namespaces) or RFC 1035 labels (services); RBAC names are path segments.
LABEL_NAMED = {"Namespace": DNS_LABEL, "Service": DNS_1035_LABEL}
PATH_SEGMENT_NAMED = {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}

# A given seed's kubeconfig (a kwokctl cluster's, its files named).
GIVEN_KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: s, cluster: {server: 'https://127.0.0.1:32000', certificate-authority: /tmp/given/ca.crt}}]
users: [{name: s, user: {client-certificate: /tmp/given/admin.crt, client-key: /tmp/given/admin.key}}]
contexts: [{name: s, context: {cluster: s, user: s}}]
current-context: s
"""
RANGE_KEYS = {"nodes", "pods", "services"}
NUMBER_KEYS = {"minimum", "maximum", "maxSurge", "maxUnavailable", "maxPods", "nodes", "ca", "etcdCA", "IPv4", "IPv6"}
EDGE_CIDRS = [
    "0.0.0.0/0", "255.255.255.255/32", "255.255.255.254/31", "255.255.255.0/24", "255.255.0.0/16", "254.0.0.0/8",
    "245.0.0.0/8", "10.0.0.0/8", "10.0.0.0/30", "10.0.0.0/31", "10.0.0.0/32", "100.64.0.0/26", "100.64.0.64/26",
    "100.64.0.0/28", "100.104.0.0/29", "100.104.0.0/30", "10.250.0.0/29", "::/0", "::/1", "fd00::/8",
    "fd00:10::/64", "fd00:20::/120", "fd00:20::/124", "fd00:30::/125", "fd00:30::/126",
    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fff0/124", "fe80::/10", "2001:db8::/32",
]  # fmt: skip
ODD_STRINGS = [
    "", " ", "\n", "a\n", "dev\n", "1.30", "1.34.4\n", "1.34", "v1.34.4", "\u0661.\u0663\u0664.\u0664", "Ünïcödé",
    "名前", "a" * 64,
    "a" * 300, "9" * 5000 + "Gi", "0Gi", "65537Gi", "50Gi", "-", "a--b", "a-", "-a", "a.b", "a_b", "A",
    "null", "~", "yes", "1e400", "NaN", "${x}", "a/b", "a:b", "x" * 100_000,
]  # fmt: skip
FIELD_NAMES = [
    "shots", "seed", "minimun", "ipFamily", "extra", "", "名前", "\n", "selfhosted", "nodeMaskSize", "issuer",
    "oidcProvider", "uri",
]  # fmt: skip


def _cidr(version: int) -> st.SearchStrategy[str]:
    """A canonical CIDR of one IP version, anywhere in its space, of any prefix."""
    bits = 32 if version == 4 else 128
    return st.builds(
        lambda address, prefix: str(ipaddress.ip_network((address, prefix), strict=False)),
        st.integers(0, 2**bits - 1) | st.sampled_from([0, 2**bits - 1, 2**bits - 2**8]),
        st.integers(0, bits),
    )


CIDRS = st.sampled_from(EDGE_CIDRS) | _cidr(4) | _cidr(6)
NUMBERS: st.SearchStrategy[Any] = (
    st.integers(-3, 70)
    | st.sampled_from([50, 51, 4999, 5000, 5001, 65536, 2**31 - 1, 2**31, 2**63, 10**30, -(10**30), 10**5000])
    | st.floats()
    | st.booleans()
)
STRINGS: st.SearchStrategy[Any] = st.sampled_from(ODD_STRINGS) | st.text(max_size=40)
CHOICES = st.sampled_from(
    ["local", "gcp", "aws", "IPv4", "IPv6", "1.32.0", "1.33.6", "1.34.4", "1.35.0", "admin", "viewer", "static"]
)
SCALARS: st.SearchStrategy[Any] = NUMBERS | STRINGS | CIDRS | CHOICES | st.none()
VALUES: st.SearchStrategy[Any] = (
    SCALARS
    | st.lists(SCALARS, max_size=3)
    | st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=6), SCALARS, max_size=3)
    | st.sampled_from([["IPv4", "IPv6"], ["IPv6", "IPv4"], ["IPv6"], ["IPv4", "IPv4"], {"IPv4": 16}, {"IPv6": 64}])
)

Path = tuple[str | int, ...]


def paths(doc: Any, at: Path = ()) -> Iterator[Path]:
    """Every path into a document: its keys and indices, depth first."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield (*at, key)
            yield from paths(value, (*at, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield (*at, i)
            yield from paths(value, (*at, i))


def _parent(doc: Any, path: Path) -> Any:
    """The container holding the last step of `path`."""
    for step in path[:-1]:
        doc = doc[step]
    return doc


def _value_for(path: Path) -> st.SearchStrategy[Any]:
    """Values to put at `path`: ranges near edges for range fields, numbers for counts, anything else too."""
    key = path[-1] if path and isinstance(path[-1], str) else ""
    parent = next((p for p in reversed(path[:-1]) if isinstance(p, str)), "")
    if key in RANGE_KEYS or parent in RANGE_KEYS:
        return CIDRS | st.lists(CIDRS, min_size=1, max_size=2) | VALUES
    if key in NUMBER_KEYS:
        return NUMBERS | VALUES
    return VALUES


@st.composite
def valid_landscapes(draw: st.DrawFn) -> dict[str, Any]:
    """spec_cases' base with valid variations: which shoots, pool sizes, versions, dual-stack, labels, node masks."""
    doc = base()
    keep = draw(st.lists(st.sampled_from(range(len(doc["shoots"]))), unique=True, max_size=3))
    doc["shoots"] = [doc["shoots"][i] for i in sorted(keep)]
    for shoot in doc["shoots"]:
        shoot["kubernetes"]["version"] = draw(st.sampled_from(["1.32.5", "1.33.6", "1.34.4"]))
        for pool in shoot["workers"]:
            pool["minimum"] = draw(st.integers(1 if pool.get("controlPlane") else 0, 3))
            pool["maximum"] = pool["minimum"] + draw(st.integers(0, 3))
        if draw(st.booleans()):
            shoot["networking"] |= {
                "ipFamilies": ["IPv4", "IPv6"],
                "nodes": [shoot["networking"]["nodes"], "fd00:10:250::/56"],
                "pods": [shoot["networking"]["pods"], "fd00:10:64::/56"],
                "services": [shoot["networking"]["services"], "fd00:10:104::/108"],
            }
            # A dual-stack shoot's seed has IPv6 too (ranges clear of the shoots').
            doc["seeds"][0]["networks"] = {"ipFamilies": ["IPv4", "IPv6"], "pods": ["10.0.0.0/12", "fd00:20::/56"],
                                           "services": ["10.16.0.0/16", "fd00:30::/108"]}  # fmt: skip
        if draw(st.booleans()):
            shoot["networking"]["nodeMaskSizes"] = {"IPv4": draw(st.integers(20, 25))}
        shoot["labels"] = draw(st.dictionaries(st.from_regex(LABEL_NAME, fullmatch=True).filter(lambda k: len(k) < 64),
                                               st.sampled_from(["a", "team-1", ""]), max_size=2))  # fmt: skip
    if draw(st.booleans()):
        # The seed given by kubeconfig, its issuer named (and with it, mutations of those fields).
        doc["seeds"][0]["cluster"] = {
            "kubeconfigSecret": "seedKubeconfig",
            "issuer": {"url": "https://127.0.0.1:32000"},
        }
    return doc


@st.composite
def mutated(draw: st.DrawFn, doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` with one to three mutations at generated paths."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(paths(doc)) or [("garden",)]))
        kind = draw(st.sampled_from(["set", "set", "set", "delete", "extra", "copy"]))
        holder = _parent(doc, path)
        # Drawn values are copied: a later mutation must not change a strategy's constant in place.
        if kind == "set":
            holder[path[-1]] = copy.deepcopy(draw(_value_for(path)))
        elif kind == "delete":
            del holder[path[-1]]
        elif kind == "extra" and isinstance(holder, dict):
            holder[draw(st.sampled_from(FIELD_NAMES) | st.text(max_size=8))] = copy.deepcopy(draw(VALUES))
        elif kind == "copy" and isinstance(holder, list) and isinstance(path[-1], int):
            holder.append(copy.deepcopy(holder[path[-1]]))
    return doc


def landscapes() -> st.SearchStrategy[dict[str, Any]]:
    """Valid landscapes and mutations of them, mutations the more often."""
    valid = valid_landscapes()
    return valid | valid.flatmap(mutated) | valid.flatmap(mutated)


@dataclass
class Verdict:
    """What `check` made of one landscape: accepted, refused or crashed, with what is wrong with the outcome."""

    outcome: str
    lines: list[str] = field(default_factory=list)
    # Refusal lines without a path and a reason, or with internal words; registration problems of an accepted one.
    unpathed: list[str] = field(default_factory=list)
    unclear: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def judge(raw: object, register: bool = True, run: Callable[[object], Any] | None = None) -> Verdict:
    """The property of one landscape (module docstring); a crash's traceback is in `problems`."""
    try:
        checked = (run or (lambda r: check(r, "local", dict)))(raw)
    except RefusalError as err:
        unpathed = [line for line in err.lines if not PATHED.match(line)]
        unclear = [line for line in err.lines if any(word in line.lower() for word in INTERNAL)]
        return Verdict("refused", err.lines, unpathed, unclear)
    except Exception:
        return Verdict("crash", problems=[traceback.format_exc()])
    if not register:
        return Verdict("accepted")
    # The stack's secret config holds every kubeconfig the landscape names, as its user set it.
    given = {f"arbor:{s.cluster.kubeconfig_secret}" for s in checked.plan.seeds if s.cluster.kubeconfig_secret}
    pulumi.runtime.set_all_config(dict.fromkeys(given, GIVEN_KUBECONFIG), list(given))
    try:
        built, mocks = registered(checked.plan)
    except Exception:
        return Verdict("crash", problems=["registration: " + traceback.format_exc()])
    return Verdict("accepted", problems=registration_problems(built, mocks))


def _labels_problems(where: str, labels: Any) -> list[str]:
    """Label keys and values the API server refuses."""
    problems = []
    for key, value in (labels or {}).items():
        prefix, _, name = key.rpartition("/")
        if (prefix and not (DNS_SUBDOMAIN.fullmatch(prefix) and len(prefix) <= 253)) or not (
            LABEL_NAME.fullmatch(name) and len(name) <= 63
        ):
            problems.append(f"{where}: label key {key!r}")
        if not isinstance(value, str) or (value and not LABEL_NAME.fullmatch(value)) or len(value) > 63:
            problems.append(f"{where}: label value {value!r} of {key!r}")
    return problems


def _label_maps(inputs: Any) -> Iterator[Any]:
    """Every `labels` and `matchLabels` map in a resource's inputs."""
    if isinstance(inputs, dict):
        for key, value in inputs.items():
            if key in ("labels", "matchLabels") and isinstance(value, dict):
                yield value
            elif key != "openAPIV3Schema":  # a CRD's schema describes labels, it has none
                yield from _label_maps(value)
    elif isinstance(inputs, list):
        for value in inputs:
            yield from _label_maps(value)


def _name_problem(kind: str, name: Any) -> bool:
    """Whether the API server refuses `name` for an object of `kind`."""
    if not isinstance(name, str):
        return True
    if kind in PATH_SEGMENT_NAMED:
        return name in ("", ".", "..") or "/" in name or "%" in name
    if kind in LABEL_NAMED:
        return not (LABEL_NAMED[kind].fullmatch(name) and len(name) <= 63)
    return not (DNS_SUBDOMAIN.fullmatch(name) and len(name) <= 253)


def registration_problems(built: Built, mocks: Mocks) -> list[str]:
    """Duplicate URNs, and Kubernetes objects whose name, namespace or labels the API server refuses."""
    urns = built.urns()
    problems = [f"duplicate URN {urn}" for urn in sorted({u for u in urns if urns.count(u) > 1})]
    for name, inputs in mocks.inputs.items():
        typ = mocks.types[name]
        if not typ.startswith("kubernetes:") or not isinstance(inputs.get("metadata"), dict):
            continue
        kind, metadata = typ.rsplit(":", 1)[-1], inputs["metadata"]
        if "name" in metadata and _name_problem(kind, metadata["name"]):
            problems.append(f"{name}: {kind} name {metadata['name']!r}")
        namespace = metadata.get("namespace")
        if namespace is not None and _name_problem("Namespace", namespace):
            problems.append(f"{name}: namespace {namespace!r}")
        for labels in _label_maps(inputs):
            problems += _labels_problems(name, labels)
    return problems
