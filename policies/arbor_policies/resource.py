"""The resource a rule reads, as plain values: type, name, properties, its provider's properties and `protect`.

The policy engine hands properties over as mappings that raise on a value unknown during a preview; rules read
them with `.get`, so such a value skips the rule for that resource (the SDK reports it as not checked), and
`has` tells whether a key is set without reading its value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# Workload kinds whose pod template a rule reads, by the kubernetes provider's type token.
POD = "kubernetes:core/v1:Pod"
TEMPLATED = (
    "kubernetes:apps/v1:Deployment",
    "kubernetes:apps/v1:StatefulSet",
    "kubernetes:apps/v1:DaemonSet",
    "kubernetes:apps/v1:ReplicaSet",
    "kubernetes:batch/v1:Job",
)


@dataclass(frozen=True)
class Resource:
    """One resource as a policy sees it."""

    type: str
    props: Mapping[str, Any]
    name: str = ""
    provider: Mapping[str, Any] = field(default_factory=dict)
    protect: bool = False

    @property
    def kind(self) -> str:
        """The last part of the type token: `Deployment`, `Certificate`."""
        return self.type.rsplit(":", 1)[-1].rsplit("/", 1)[-1]

    @property
    def metadata(self) -> Mapping[str, Any]:
        """A Kubernetes object's metadata (empty for other resources)."""
        return mapping(self.props.get("metadata"))

    def label(self) -> str:
        """How a message names the resource: `Deployment shoot--dev--web/kube-apiserver`, or its Pulumi name."""
        meta = self.metadata
        path = "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if p)
        return f"{self.kind} {path}" if path else f"{self.kind} {self.name}".strip()


def has(props: Mapping[str, Any], key: str) -> bool:
    """Whether `key` is set, without reading its value (which may be unknown during a preview)."""
    return key in list(props)


def mapping(value: Any) -> Mapping[str, Any]:
    """`value` if it is a mapping, else an empty one (a missing or malformed field)."""
    return value if isinstance(value, Mapping) else {}


def items(value: Any) -> list[Any]:
    """`value` as a list if it is a sequence of values (not a string), else an empty list."""
    return list(value) if isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping) else []


def pod_spec(r: Resource) -> Mapping[str, Any] | None:
    """The pod spec of a Pod or of a workload's template; None for other resources."""
    if r.type == POD:
        return mapping(r.props.get("spec"))
    if r.type in TEMPLATED:
        return mapping(mapping(mapping(r.props.get("spec")).get("template")).get("spec"))
    return None


def pod_metadata(r: Resource) -> Mapping[str, Any]:
    """The metadata of a Pod, or of a workload's pod template merged over the workload's own."""
    if r.type == POD:
        return r.metadata
    template = mapping(mapping(mapping(r.props.get("spec")).get("template")).get("metadata"))
    return {**r.metadata, **template}


def containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every container of a pod spec, init containers included."""
    return [mapping(c) for key in ("initContainers", "containers") for c in items(spec.get(key))]
