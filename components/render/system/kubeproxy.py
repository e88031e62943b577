"""kube-proxy in a shoot, as Gardener deploys it: one DaemonSet per worker pool, at that pool's Kubernetes version.

Gardener names each `kube-proxy-<pool>-v<version>` and selects the pool's nodes, so a pool's Kubernetes upgrade
rolls its kube-proxy with it. `clusterCIDR` holds every pod range (both families on a dual-stack shoot), which
kube-proxy needs to tell traffic from pods apart from traffic from outside (masquerading).
"""

from __future__ import annotations

import hashlib

from components import pins
from components.plan.nodes import POOL_LABEL, VERSION_LABEL
from components.render.system.common import (
    NODE_CRITICAL,
    TOLERATE_ALL,
    Object,
    SystemPool,
    api_env,
    binding,
    daemonset,
    meta,
    service_account,
)
from components.yaml_text import dump

NAME = "kube-proxy"
CONFIG = "kube-proxy-config"
CONFIG_KEY = "config.yaml"
LABELS = {"app": "kubernetes", "role": "proxy"}
MODE = "iptables"
METRICS_PORT = 10249


def configuration(pods: tuple[str, ...]) -> Object:
    """The KubeProxyConfiguration: the pod ranges, iptables mode, the in-cluster client the pod mounts."""
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "clusterCIDR": ",".join(pods),
        "mode": MODE,
        "metricsBindAddress": f"0.0.0.0:{METRICS_PORT}",
        "conntrack": {"maxPerCore": 524288},
    }


def daemonset_name(pool: SystemPool) -> str:
    """`kube-proxy-<pool>-v<version>`, Gardener's name of a pool's kube-proxy."""
    return f"{NAME}-{pool.name}-v{pool.kubernetes_version}"


def objects(
    pools: tuple[SystemPool, ...], pods: tuple[str, ...], api_server: str, labels: dict[str, str]
) -> list[Object]:
    """kube-proxy's ServiceAccount, its binding to `system:node-proxier`, the configuration, a DaemonSet per pool."""
    own = {**labels, **LABELS}
    text = dump(configuration(pods), sort_keys=False)
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(CONFIG, own), "data": {CONFIG_KEY: text}}
    checksum = hashlib.sha256(text.encode()).hexdigest()
    return [
        service_account(NAME, own),
        binding("gardener.cloud:target:node-proxier", own, "system:node-proxier", NAME),
        config,
        *(_daemonset(p, api_server, checksum, own) for p in pools),
    ]


def _daemonset(pool: SystemPool, api_server: str, checksum: str, labels: dict[str, str]) -> Object:
    """The pool's kube-proxy: host network, privileged (it writes iptables), on every node of the pool."""
    selector = {**LABELS, "pool": pool.name, "version": pool.kubernetes_version}
    container = {
        "name": NAME,
        "image": pins.kube_proxy(pool.kubernetes_version).ref,
        "command": ["/usr/local/bin/kube-proxy", f"--config=/var/lib/kube-proxy-config/{CONFIG_KEY}", "--v=2"],
        "env": api_env(api_server),
        "ports": [{"name": "metrics", "containerPort": METRICS_PORT, "hostPort": METRICS_PORT, "protocol": "TCP"}],
        "resources": {"requests": {"cpu": "20m", "memory": "64Mi"}},
        "securityContext": {"privileged": True},
        "volumeMounts": [
            {"name": "kube-proxy-config", "mountPath": "/var/lib/kube-proxy-config"},
            {"name": "lib-modules", "mountPath": "/lib/modules", "readOnly": True},
            {"name": "xtables-lock", "mountPath": "/run/xtables.lock"},
        ],
    }
    pod = {
        "serviceAccountName": NAME,
        "hostNetwork": True,
        "priorityClassName": NODE_CRITICAL,
        # Gardener's: a version's kube-proxy on that version's nodes (plan/nodes.py's node_labels).
        "nodeSelector": {POOL_LABEL: pool.name, VERSION_LABEL: pool.kubernetes_version},
        "tolerations": TOLERATE_ALL,
        "containers": [container],
        "volumes": [
            {"name": "kube-proxy-config", "configMap": {"name": CONFIG}},
            {"name": "lib-modules", "hostPath": {"path": "/lib/modules"}},
            {"name": "xtables-lock", "hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}},
        ],
    }
    # A new configuration rolls the pods: kube-proxy reads it at start only.
    annotations = {"checksum/config": checksum}
    own = {**labels, **selector}
    return daemonset(daemonset_name(pool), own, pod, max_unavailable=1, selector=selector, annotations=annotations)
