"""Calico in a shoot, as Gardener's networking-calico extension deploys it in overlay mode.

calico-node on every node (the CNI binary and configuration installed by its init container), kube-controllers
once, Kubernetes as the datastore (Calico's resources as CRDs of `crd.projectcalico.org`), and a VXLAN overlay for
every family the shoot has (calico's IPIP carries IPv4 only). Pod addresses come from each node's `podCIDRs`
(host-local IPAM), which kube-controller-manager assigns from the shoot's pod ranges.
"""

from __future__ import annotations

import json

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

NODE = "calico-node"
CONTROLLERS = "calico-kube-controllers"
CONFIG = "calico-config"
GROUP = "crd.projectcalico.org"
# Calico's resources by kind, cluster-scoped and namespaced. Calico keeps their schemas itself (its
# API server validates), so arbor declares them open: the API server stores whatever calico writes.
CLUSTER_KINDS = (
    *("BGPConfiguration", "BGPFilter", "BGPPeer", "BlockAffinity", "CalicoNodeStatus", "ClusterInformation"),
    *("FelixConfiguration", "GlobalNetworkPolicy", "GlobalNetworkSet", "HostEndpoint", "IPAMBlock", "IPAMConfig"),
    *("IPAMHandle", "IPPool", "IPReservation", "KubeControllersConfiguration", "StagedGlobalNetworkPolicy", "Tier"),
)
NAMESPACED_KINDS = ("NetworkPolicy", "NetworkSet", "StagedKubernetesNetworkPolicy", "StagedNetworkPolicy")


def cni_config(pods: tuple[str, ...]) -> str:
    """The CNI configuration calico-node's init container writes on each node: host-local IPAM per family."""
    ranges = [[{"subnet": "usePodCidr" if ":" not in r else "usePodCidrIPv6"}] for r in pods]
    plugins = [
        {
            "type": "calico",
            "datastore_type": "kubernetes",
            "nodename": "__KUBERNETES_NODE_NAME__",
            "mtu": "__CNI_MTU__",
            "ipam": {"type": "host-local", "ranges": ranges},
            "policy": {"type": "k8s"},
            "kubernetes": {"kubeconfig": "__KUBECONFIG_FILEPATH__"},
        },
        {"type": "portmap", "snat": True, "capabilities": {"portMappings": True}},
    ]
    return json.dumps({"name": "k8s-pod-network", "cniVersion": "0.3.1", "plugins": plugins}, indent=2)


def crds(labels: dict[str, str]) -> list[Object]:
    """Calico's CRDs, each with an open schema."""
    kinds = [(k, "Cluster") for k in CLUSTER_KINDS] + [(k, "Namespaced") for k in NAMESPACED_KINDS]
    return [_crd(kind, scope, labels) for kind, scope in kinds]


def _plural(kind: str) -> str:
    """A kind's plural as calico names it (`IPPool` -> `ippools`, `NetworkPolicy` -> `networkpolicies`)."""
    lower = kind.lower()
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + ("es" if lower.endswith("s") else "s")


def _crd(kind: str, scope: str, labels: dict[str, str]) -> Object:
    """One of calico's CRDs."""
    plural = _plural(kind)
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    spec = {
        "group": GROUP,
        "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower()},
        "scope": scope,
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema}],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": meta(f"{plural}.{GROUP}", labels, False),
        "spec": spec,
    }


def objects(pods: tuple[str, ...], api_server: str, labels: dict[str, str]) -> list[Object]:
    """Calico's CRDs, ServiceAccounts, RBAC, CNI configuration, calico-node and kube-controllers."""
    node_labels = {**labels, "k8s-app": NODE}
    controller_labels = {**labels, "k8s-app": CONTROLLERS}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(CONFIG, node_labels)}
    config["data"] = {"cni_network_config": cni_config(pods), "veth_mtu": "0"}
    return [
        *crds(labels),
        *account_with_role(NODE, node_labels, _node_rules()),
        *account_with_role(CONTROLLERS, controller_labels, _controller_rules()),
        config,
        _node(pods, api_server, node_labels),
        _controllers(api_server, controller_labels),
    ]


def _node_rules() -> list[Object]:
    """What calico-node reads and writes: its CRDs, nodes' addresses, endpoints of pods."""
    read = ["get", "list", "watch"]
    return [
        rule([""], ["pods", "nodes", "namespaces", "services", "endpoints", "serviceaccounts"], read),
        rule([""], ["nodes/status", "pods/status"], ["patch", "update"]),
        rule([""], ["serviceaccounts/token"], ["create"]),
        rule(["discovery.k8s.io"], ["endpointslices"], read),
        rule(["networking.k8s.io"], ["networkpolicies"], read),
        rule([GROUP], ["*"], ["*"]),
    ]


def _controller_rules() -> list[Object]:
    """What kube-controllers reconciles: nodes, pods and policies into calico's resources, IPAM garbage."""
    read = ["get", "list", "watch"]
    return [
        rule([""], ["nodes", "pods", "namespaces", "serviceaccounts"], read),
        rule(["networking.k8s.io"], ["networkpolicies"], read),
        rule([GROUP], ["*"], ["*"]),
    ]


def _env(pods: tuple[str, ...], api_server: str) -> list[Object]:
    """calico-node's settings: the overlay and the pools of every family the shoot has."""
    ipv4, ipv6 = by_family(pods, False), by_family(pods, True)
    env: list[Object] = [
        {"name": "DATASTORE_TYPE", "value": "kubernetes"},
        {"name": "NODENAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "CLUSTER_TYPE", "value": "k8s,vxlan"},
        {"name": "CALICO_NETWORKING_BACKEND", "value": "vxlan"},
        {"name": "CALICO_DISABLE_FILE_LOGGING", "value": "true"},
        {"name": "FELIX_DEFAULTENDPOINTTOHOSTACTION", "value": "ACCEPT"},
        {"name": "FELIX_HEALTHENABLED", "value": "true"},
        {"name": "IP", "value": "autodetect" if ipv4 else "none"},
        {"name": "IP6", "value": "autodetect" if ipv6 else "none"},
        {"name": "FELIX_IPV6SUPPORT", "value": "true" if ipv6 else "false"},
        *api_env(api_server),
    ]
    if ipv4:
        env += [{"name": "CALICO_IPV4POOL_CIDR", "value": ipv4}, {"name": "CALICO_IPV4POOL_VXLAN", "value": "Always"}]
        env += [{"name": "CALICO_IPV4POOL_IPIP", "value": "Never"}]
    if ipv6:
        env += [{"name": "CALICO_IPV6POOL_CIDR", "value": ipv6}, {"name": "CALICO_IPV6POOL_VXLAN", "value": "Always"}]
    if not ipv4:
        # BGP's router ID is an IPv4 address; an IPv6-only node derives one from its name.
        env += [{"name": "CALICO_ROUTER_ID", "value": "hash"}]
    return env


def _node(pods: tuple[str, ...], api_server: str, labels: dict[str, str]) -> Object:
    """calico-node on every node: the CNI installed by its init container, then felix and the VXLAN overlay."""
    host = [("cni-bin-dir", "/opt/cni/bin"), ("cni-net-dir", "/etc/cni/net.d"), ("lib-modules", "/lib/modules")]
    host += [("var-run-calico", "/var/run/calico"), ("var-lib-calico", "/var/lib/calico")]
    install = {
        "name": "install-cni",
        "image": pins.CALICO_CNI.ref,
        "command": ["/opt/cni/bin/install"],
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}},
        "env": [
            {"name": "CNI_CONF_NAME", "value": "10-calico.conflist"},
            {
                "name": "CNI_NETWORK_CONFIG",
                "valueFrom": {"configMapKeyRef": {"name": CONFIG, "key": "cni_network_config"}},
            },
            {"name": "CNI_MTU", "valueFrom": {"configMapKeyRef": {"name": CONFIG, "key": "veth_mtu"}}},
            {"name": "KUBERNETES_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            *api_env(api_server),
        ],
        "securityContext": {"privileged": True},
        "volumeMounts": [
            {"name": "cni-bin-dir", "mountPath": "/host/opt/cni/bin"},
            {"name": "cni-net-dir", "mountPath": "/host/etc/cni/net.d"},
        ],
    }
    node = {
        "name": NODE,
        "image": pins.CALICO_NODE.ref,
        "env": _env(pods, api_server),
        "livenessProbe": {"exec": {"command": ["/bin/calico-node", "-felix-live"]}, "periodSeconds": 10},
        "readinessProbe": {"exec": {"command": ["/bin/calico-node", "-felix-ready"]}, "periodSeconds": 10},
        "resources": {"requests": {"cpu": "250m", "memory": "100Mi"}},
        "securityContext": {"privileged": True},
        "volumeMounts": [{"name": n, "mountPath": p} for n, p in host[2:]],
    }
    pod = {
        "serviceAccountName": NODE,
        "hostNetwork": True,
        "priorityClassName": NODE_CRITICAL,
        "tolerations": TOLERATE_ALL,
        "terminationGracePeriodSeconds": 0,
        "initContainers": [install],
        "containers": [node],
        "volumes": [{"name": n, "hostPath": {"path": p}} for n, p in host],
    }
    return daemonset(NODE, labels, pod, max_unavailable=1)


def _controllers(api_server: str, labels: dict[str, str]) -> Object:
    """calico-kube-controllers, once per shoot."""
    container = {
        "name": CONTROLLERS,
        "image": pins.CALICO_KUBE_CONTROLLERS.ref,
        "env": [
            {"name": "DATASTORE_TYPE", "value": "kubernetes"},
            {"name": "ENABLED_CONTROLLERS", "value": "node"},
            *api_env(api_server),
        ],
        "readinessProbe": {"exec": {"command": ["/usr/bin/check-status", "-r"]}, "periodSeconds": 10},
        "resources": {"requests": {"cpu": "10m", "memory": "50Mi"}},
    }
    pod = {
        "serviceAccountName": CONTROLLERS,
        "priorityClassName": CLUSTER_CRITICAL,
        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
        "containers": [container],
    }
    return deployment(CONTROLLERS, labels, pod, {"k8s-app": CONTROLLERS}, strategy={"type": "Recreate"})
