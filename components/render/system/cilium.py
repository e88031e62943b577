"""Cilium in a shoot, as Gardener's networking-cilium extension deploys it in overlay mode.

The agent on every node, the operator once; VXLAN tunnelling between nodes, each node's pod addresses from its
`podCIDRs` (Cilium's `kubernetes` IPAM, the ranges kube-controller-manager assigns), every family the shoot has.
kube-proxy stays (no kube-proxy replacement), as in Gardener's default. Cilium registers its own CRDs.
"""

from __future__ import annotations

from components import pins
from components.render.system.common import (
    CLUSTER_CRITICAL,
    NODE_CRITICAL,
    TOLERATE_ALL,
    Object,
    account_with_role,
    api_env,
    by_family,
    daemonset,
    deployment,
    meta,
    rule,
)

AGENT = "cilium"
OPERATOR = "cilium-operator"
CONFIG = "cilium-config"
CONFIG_DIR = "/tmp/cilium/config-map"
GROUPS = ["cilium.io"]


def settings(pods: tuple[str, ...]) -> dict[str, str]:
    """`cilium-config`: the overlay, IPAM from the nodes' ranges, the families of the shoot."""
    return {
        "routing-mode": "tunnel",
        "tunnel-protocol": "vxlan",
        "ipam": "kubernetes",
        "enable-ipv4": str(by_family(pods, False) is not None).lower(),
        "enable-ipv6": str(by_family(pods, True) is not None).lower(),
        "cluster-name": "default",
        "kube-proxy-replacement": "false",
        "enable-policy": "default",
        "cni-exclusive": "true",
    }


def objects(pods: tuple[str, ...], api_server: str, labels: dict[str, str]) -> list[Object]:
    """Cilium's ServiceAccounts, RBAC, configuration, agent DaemonSet and operator Deployment."""
    agent_labels = {**labels, "k8s-app": AGENT}
    operator_labels = {**labels, "io.cilium/app": "operator", "name": OPERATOR}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(CONFIG, agent_labels), "data": settings(pods)}
    read = ["get", "list", "watch"]
    agent_rules = [
        rule([""], ["pods", "nodes", "namespaces", "services", "endpoints"], read),
        rule([""], ["nodes/status", "pods"], ["patch", "update", "delete"]),
        rule(["discovery.k8s.io"], ["endpointslices"], read),
        rule(["networking.k8s.io"], ["networkpolicies"], read),
        rule(["apiextensions.k8s.io"], ["customresourcedefinitions"], read),
        rule(GROUPS, ["*"], ["*"]),
    ]
    operator_rules = [
        *agent_rules,
        rule(["apiextensions.k8s.io"], ["customresourcedefinitions"], ["create", "update", "patch"]),
        rule(["coordination.k8s.io"], ["leases"], ["create", "get", "update"]),
    ]
    return [
        *account_with_role(AGENT, agent_labels, agent_rules),
        *account_with_role(OPERATOR, operator_labels, operator_rules),
        config,
        _agent(api_server, agent_labels),
        _operator(api_server, operator_labels),
    ]


def _env(api_server: str) -> list[Object]:
    """What the agent and the operator are told: their node and namespace, where the API is."""
    return [
        {"name": "K8S_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "CILIUM_K8S_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        *api_env(api_server),
    ]


def _config_mount() -> Object:
    """`cilium-config` where the agent and the operator read it (`--config-dir`)."""
    return {"name": "cilium-config", "mountPath": CONFIG_DIR, "readOnly": True}


def _agent(api_server: str, labels: dict[str, str]) -> Object:
    """The agent on every node, its CNI plugin installed by an init container."""
    host = [("cni-path", "/opt/cni/bin"), ("etc-cni-netd", "/etc/cni/net.d"), ("lib-modules", "/lib/modules")]
    host += [("bpf-maps", "/sys/fs/bpf"), ("cilium-run", "/var/run/cilium")]
    install = {
        "name": "install-cni-binaries",
        "image": pins.CILIUM.ref,
        "command": ["/install-plugin.sh"],
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}},
        "securityContext": {"privileged": True},
        "volumeMounts": [{"name": "cni-path", "mountPath": "/host/opt/cni/bin"}],
    }
    agent = {
        "name": "cilium-agent",
        "image": pins.CILIUM.ref,
        "command": ["cilium-agent"],
        "args": [f"--config-dir={CONFIG_DIR}"],
        "env": _env(api_server),
        "readinessProbe": {"httpGet": {"host": "127.0.0.1", "path": "/healthz", "port": 9879}, "periodSeconds": 30},
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
        "securityContext": {"privileged": True},
        "volumeMounts": [
            _config_mount(),
            *({"name": n, "mountPath": p.replace("/etc/cni", "/host/etc/cni")} for n, p in host[1:]),
        ],
    }
    pod = {
        "serviceAccountName": AGENT,
        "hostNetwork": True,
        "priorityClassName": NODE_CRITICAL,
        "tolerations": TOLERATE_ALL,
        "initContainers": [install],
        "containers": [agent],
        "volumes": [
            {"name": "cilium-config", "configMap": {"name": CONFIG}},
            *({"name": n, "hostPath": {"path": p}} for n, p in host),
        ],
    }
    return daemonset(AGENT, labels, pod, max_unavailable=2)


def _operator(api_server: str, labels: dict[str, str]) -> Object:
    """The operator, once per shoot: CRDs, identities' garbage, on the host network (no pod network before it)."""
    container = {
        "name": OPERATOR,
        "image": pins.CILIUM_OPERATOR.ref,
        "command": ["cilium-operator-generic"],
        "args": [f"--config-dir={CONFIG_DIR}"],
        "env": _env(api_server),
        "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}},
        "volumeMounts": [_config_mount()],
    }
    pod = {
        "serviceAccountName": OPERATOR,
        "hostNetwork": True,
        "priorityClassName": CLUSTER_CRITICAL,
        "tolerations": TOLERATE_ALL,
        "containers": [container],
        "volumes": [{"name": "cilium-config", "configMap": {"name": CONFIG}}],
    }
    return deployment(OPERATOR, labels, pod, {"io.cilium/app": "operator", "name": OPERATOR})
