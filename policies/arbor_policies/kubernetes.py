"""Rules about Kubernetes providers, workloads, Services and Namespaces."""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from arbor_policies.resource import Resource, containers, items, mapping, pod_metadata, pod_spec

KUBERNETES_PROVIDER = "pulumi:providers:kubernetes"
SERVICE = "kubernetes:core/v1:Service"
NAMESPACE = "kubernetes:core/v1:Namespace"
STATEFUL_SET = "kubernetes:apps/v1:StatefulSet"
# arbor names every cluster's identity `<provider>:<name>` (components/naming.py); local ones start so.
LOCAL_IDENTIFIER_PREFIX = "local:"
# etcd's pods carry Gardener's label app=etcd-statefulset (components/render/controlplane.py).
ETCD_APP = "etcd-statefulset"
WORLD = ("0.0.0.0/0", "::/0")


def missing_cluster_identifier(resource_type: str, props: Mapping[str, Any]) -> str | None:
    """A Kubernetes provider must name its cluster, or a new kubeconfig would replace every object it manages."""
    if resource_type == KUBERNETES_PROVIDER and not props.get("clusterIdentifier"):
        return (
            "Kubernetes provider without cluster_identifier: a changed kubeconfig (a rotated credential, a new "
            "endpoint) would replace every object it manages; set cluster_identifier to the cluster's identity"
        )
    return None


def load_balancer_on_local(resource_type: str, props: Mapping[str, Any], provider: Mapping[str, Any]) -> str | None:
    """A LoadBalancer Service on a local cluster would hold the update forever.

    Nothing on loopback assigns load-balancer addresses. Local clusters are known by their provider's
    `local:` cluster identifier.
    """
    local = str(provider.get("clusterIdentifier") or "").startswith(LOCAL_IDENTIFIER_PREFIX)
    if resource_type == SERVICE and local and (props.get("spec") or {}).get("type") == "LoadBalancer":
        return "Service of type LoadBalancer in a local stack: no load balancer exists on loopback; use ClusterIP"
    return None


def _where(r: Resource) -> str:
    """`<namespace>/<name>` of a workload's pods, as the allow lists match them."""
    meta = pod_metadata(r)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


def _allowed(r: Resource, patterns: Any) -> bool:
    """Whether the workload's `<namespace>/<name>` matches one of the shell patterns."""
    return any(fnmatchcase(_where(r), str(p)) for p in items(patterns))


def privileged_containers(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """No privileged container, except in workloads the config allows (`allowed`: `<namespace>/<name>` patterns)."""
    spec = pod_spec(r)
    if spec is None or _allowed(r, config.get("allowed")):
        return []
    return [
        f"{r.label()} container {c.get('name')} runs privileged: remove securityContext.privileged, or add "
        f"'{_where(r)}' to this policy's `allowed` list if it must reach the host"
        for c in containers(spec)
        if mapping(c.get("securityContext")).get("privileged") is True
    ]


def host_network(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """Pods share the host's network only where the config allows it (`allowed`: `<namespace>/<name>` patterns)."""
    spec = pod_spec(r)
    if spec is None or spec.get("hostNetwork") is not True or _allowed(r, config.get("allowed")):
        return []
    return [
        f"{r.label()} uses hostNetwork: run it on the pod network, or add '{_where(r)}' to this policy's `allowed` "
        "list (static control-plane pods are allowed by default)"
    ]


def resource_requests(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """Every container requests the resources in `resources` (cpu and memory), so the scheduler can place it."""
    spec = pod_spec(r)
    if spec is None:
        return []
    wanted = [str(k) for k in items(config.get("resources"))] or ["cpu", "memory"]
    problems = []
    for c in containers(spec):
        requests = mapping(mapping(c.get("resources")).get("requests"))
        missing = [k for k in wanted if not requests.get(k)]
        if missing:
            problems.append(
                f"{r.label()} container {c.get('name')} requests no {' or '.join(missing)}: set "
                f"resources.requests.{missing[0]} (what it needs at rest)"
            )
    return problems


def _tag(image: str) -> str:
    """The tag of an image reference (`repo:tag`), empty when it has none; a digest counts as its tag."""
    if "@" in image:
        return image.split("@", 1)[1]
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else ""


def images_pinned(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """Every image names a version (a tag other than `latest`, or a digest), so a restart runs what was reviewed."""
    spec = pod_spec(r)
    if spec is None:
        return []
    return [
        f"{r.label()} container {c.get('name')} image '{c.get('image')}' is not pinned: name a version tag or a "
        "digest (@sha256:...), never latest"
        for c in containers(spec)
        if isinstance(c.get("image"), str) and _tag(str(c.get("image"))) in ("", "latest")
    ]


def image_registries(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """Images come only from the registries in `registries` (prefixes), mirrored and scanned by the platform."""
    spec = pod_spec(r)
    registries = [str(p) for p in items(config.get("registries"))]
    if spec is None or not registries:
        return []
    return [
        f"{r.label()} container {c.get('name')} image '{c.get('image')}' is not from an allowed registry: take it "
        f"from {', '.join(registries)}, or add its registry to this policy's `registries`"
        for c in containers(spec)
        if isinstance(c.get("image"), str) and not str(c.get("image")).startswith(tuple(registries))
    ]


def load_balancer_restricted(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """A LoadBalancer Service is internal (an annotation of `internal`) or limits its source ranges."""
    if r.type != SERVICE:
        return []
    spec = mapping(r.props.get("spec"))
    if spec.get("type") != "LoadBalancer":
        return []
    annotations = mapping(r.metadata.get("annotations"))
    internal = mapping(config.get("internal"))
    if any(str(annotations.get(k, "")).lower() == str(v).lower() for k, v in internal.items()):
        return []
    ranges = [str(s) for s in items(spec.get("loadBalancerSourceRanges"))]
    if ranges and not any(s in WORLD for s in ranges):
        return []
    return [
        f"{r.label()} is a LoadBalancer open to the internet: set spec.loadBalancerSourceRanges to the clients' "
        f"ranges, or make it internal with one of the annotations {', '.join(f'{k}: {v}' for k, v in internal.items())}"
    ]


def etcd_without_volume(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """A cloud seed's etcd keeps its data on a persistent volume: an emptyDir is lost with its node."""
    if r.type != STATEFUL_SET or mapping(r.metadata.get("labels")).get("app") != ETCD_APP:
        return []
    if str(r.provider.get("clusterIdentifier") or "").startswith(LOCAL_IDENTIFIER_PREFIX):
        return []  # a local seed has no disks to lose; its etcd lives as long as the process
    if items(mapping(r.props.get("spec")).get("volumeClaimTemplates")):
        return []
    return [
        f"{r.label()} keeps etcd's data in an emptyDir on a cloud seed: give it a volumeClaimTemplate "
        "(a persistent volume), or a node loss deletes the shoot's state"
    ]


def namespace_labels(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """Every Namespace carries one of the `anyOf` labels, which name who owns it (a project or a seed's shoot)."""
    wanted = [str(k) for k in items(config.get("anyOf"))]
    if r.type != NAMESPACE or not wanted:
        return []
    labels = mapping(r.metadata.get("labels"))
    if any(labels.get(k) for k in wanted):
        return []
    return [f"{r.label()} has none of the labels {', '.join(wanted)}: label it with its owner"]


def apiserver_sidecars(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """A kube-apiserver pod runs kube-apiserver alone: no sidecar, except container names in `allowed`."""
    spec = pod_spec(r)
    names = [str(mapping(c).get("name")) for c in items((spec or {}).get("containers"))]
    if "kube-apiserver" not in names:
        return []
    allowed = {str(n) for n in items(config.get("allowed"))}
    return [
        f"{r.label()} runs container {name} beside kube-apiserver: webhooks and helpers run as workloads of their "
        "own (KUBERNETES_SERVICE_HOST comes from gardener-resource-manager's webhook), never in the API server's pod"
        for name in names
        if name != "kube-apiserver" and name not in allowed
    ]
