"""What the system components' renderers share: object headers, labels, workloads, the API address pods use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

Object = dict[str, Any]


@dataclass(frozen=True)
class SystemPool:
    """A worker pool as kube-proxy is rendered for it: its name and Kubernetes version."""

    name: str
    kubernetes_version: str


NAMESPACE = "kube-system"
# Gardener labels what it runs in a shoot's kube-system as a system component.
SYSTEM_LABELS = {"gardener.cloud/role": "system-component", "origin": "gardener"}
RBAC = "rbac.authorization.k8s.io"


def meta(name: str, labels: dict[str, str] | None = None, namespaced: bool = True) -> Object:
    """`metadata` of a system component's object, in kube-system unless cluster-scoped."""
    out: Object = {"name": name}
    if namespaced:
        out["namespace"] = NAMESPACE
    if labels:
        out["labels"] = dict(labels)
    return out


def daemonset(
    name: str,
    labels: dict[str, str],
    pod: Object,
    max_unavailable: int,
    selector: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Object:
    """A DaemonSet in kube-system, rolling `max_unavailable` nodes at a time; `labels` are its own and its pods'.

    Its pods are selected by `k8s-app: <name>` unless `selector` says otherwise; `annotations` are the pods'.
    """
    template: Object = {"metadata": {"labels": labels}, "spec": pod}
    if annotations:
        template["metadata"]["annotations"] = annotations
    spec = {
        "selector": {"matchLabels": selector or {"k8s-app": name}},
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable}},
        "template": template,
    }
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta(name, labels), "spec": spec}


def deployment(
    name: str,
    labels: dict[str, str],
    pod: Object,
    selector: dict[str, str],
    replicas: int = 1,
    strategy: Object | None = None,
    revision_history: int | None = None,
) -> Object:
    """A Deployment in kube-system; `labels` are its own and its pods', `selector` picks its pods.

    Without a `strategy` the API server's default (RollingUpdate) applies, likewise without `revision_history`.
    """
    spec: Object = {"replicas": replicas}
    if revision_history is not None:
        spec["revisionHistoryLimit"] = revision_history
    spec["selector"] = {"matchLabels": selector}
    if strategy:
        spec["strategy"] = strategy
    spec["template"] = {"metadata": {"labels": labels}, "spec": pod}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(name, labels), "spec": spec}


def service_account(name: str, labels: dict[str, str]) -> Object:
    """A ServiceAccount in kube-system."""
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(name, labels)}


def cluster_role(name: str, labels: dict[str, str], rules: list[Object]) -> Object:
    """A ClusterRole."""
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": meta(name, labels, False), "rules": rules}


def binding(name: str, labels: dict[str, str], role: str, account: str) -> Object:
    """A ClusterRoleBinding of a ClusterRole to a kube-system ServiceAccount."""
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": meta(name, labels, False),
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}],
    }


def account_with_role(name: str, labels: dict[str, str], rules: list[Object]) -> list[Object]:
    """A ServiceAccount in kube-system, a ClusterRole of `rules` and their binding, all three named `name`."""
    return [service_account(name, labels), cluster_role(name, labels, rules), binding(name, labels, name, name)]


def rule(groups: list[str], resources: list[str], verbs: list[str]) -> Object:
    """One RBAC rule."""
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


def api_env(api_server: str) -> list[Object]:
    """Where host-network pods reach the API before kube-proxy programs the `kubernetes` Service: the nodes' address.

    In-cluster clients read these two variables; pointing them at the address the kubelets use breaks the cycle
    (kube-proxy and the network plugin would otherwise need themselves to reach the API).
    """
    parts = urlsplit(api_server)
    return [
        {"name": "KUBERNETES_SERVICE_HOST", "value": parts.hostname or ""},
        {"name": "KUBERNETES_SERVICE_PORT", "value": str(parts.port or 443)},
    ]


def by_family(ranges: tuple[str, ...], ipv6: bool) -> str | None:
    """The range of one family, if the shoot has it."""
    return next((r for r in ranges if (":" in r) == ipv6), None)


NODE_CRITICAL = "system-node-critical"
CLUSTER_CRITICAL = "system-cluster-critical"
# Every node's DaemonSet pod runs whatever taints a node carries, as Gardener's node-critical components do. The
# network plugin selects no OS either: every arbor node is Linux, and kwok's nodes carry no `kubernetes.io/os`.
TOLERATE_ALL = [{"operator": "Exists"}]
