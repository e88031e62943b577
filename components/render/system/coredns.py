"""CoreDNS in a shoot, as Gardener deploys it: the `coredns` Deployment behind the `kube-dns` Service.

Gardener's convention: the Service takes the 10th address of each of the shoot's service ranges (the kubelets'
`clusterDNS`), CoreDNS listens on 8053 (no privileged port), serves `cluster.local` and forwards the rest to the
node's resolvers.
"""

from __future__ import annotations

from components import pins
from components.plan.network import CLUSTER_DOMAIN, kube_dns_ips
from components.render.system.common import (
    CLUSTER_CRITICAL,
    Object,
    binding,
    cluster_role,
    deployment,
    meta,
    rule,
    service_account,
)

NAME = "coredns"
SERVICE = "kube-dns"
LABELS = {"k8s-app": SERVICE}
PORT = 8053
METRICS_PORT = 9153
REPLICAS = 2
COREFILE = f""".:{PORT} {{
    errors
    health {{
        lameduck 15s
    }}
    ready
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }}
    prometheus :{METRICS_PORT}
    forward . /etc/resolv.conf
    cache 30
    loop
    reload
    loadbalance round_robin
}}
"""


def objects(services: tuple[str, ...], labels: dict[str, str], fixed: bool = True) -> list[Object]:
    """CoreDNS's ServiceAccount, RBAC, Corefile, Deployment and the `kube-dns` Service.

    `fixed`: whether kube-dns takes Gardener's addresses; where the shoot's API does not serve the shoot's service
    ranges (local: a kwokctl cluster on kube-apiserver's default range), the API server allocates them.
    """
    own = {**labels, **LABELS}
    role = "system:coredns"
    rules = [
        rule([""], ["endpoints", "services", "pods", "namespaces"], ["list", "watch"]),
        rule(["discovery.k8s.io"], ["endpointslices"], ["list", "watch"]),
    ]
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(NAME, own), "data": {"Corefile": COREFILE}}
    return [
        service_account(NAME, own),
        cluster_role(role, own, rules),
        binding(role, own, role, NAME),
        config,
        _deployment(own),
        _service(services if fixed else (), own),
    ]


def _service(services: tuple[str, ...], labels: dict[str, str]) -> Object:
    """`kube-dns` at the 10th address of every service range (both families on a dual-stack shoot)."""
    ips = kube_dns_ips(services)
    ports = [
        {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": PORT},
        {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": PORT},
        {"name": "metrics", "port": METRICS_PORT, "protocol": "TCP", "targetPort": METRICS_PORT},
    ]
    spec: Object = {"selector": dict(LABELS), "ports": ports}
    if ips:  # none where the API server allocates them
        spec |= {"clusterIP": ips[0], "clusterIPs": ips}
        spec["ipFamilyPolicy"] = "RequireDualStack" if len(ips) > 1 else "SingleStack"
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta(SERVICE, labels), "spec": spec}


def _deployment(labels: dict[str, str]) -> Object:
    """Two CoreDNS replicas, spread over nodes, unprivileged."""
    probe = {"initialDelaySeconds": 10, "timeoutSeconds": 5}
    container = {
        "name": NAME,
        "image": pins.COREDNS.ref,
        "args": ["-conf", "/etc/coredns/Corefile"],
        "ports": [
            {"name": "dns-udp", "containerPort": PORT, "protocol": "UDP"},
            {"name": "dns-tcp", "containerPort": PORT, "protocol": "TCP"},
            {"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"},
        ],
        "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}, **probe},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8181}, **probe},
        "resources": {"requests": {"cpu": "50m", "memory": "15Mi"}, "limits": {"memory": "1500Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True},
        "volumeMounts": [{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True}],
    }
    pod = {
        "serviceAccountName": NAME,
        "priorityClassName": CLUSTER_CRITICAL,
        "dnsPolicy": "Default",
        "securityContext": {"runAsNonRoot": True, "runAsUser": 65534},
        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": dict(LABELS)},
            }
        ],
        "containers": [container],
        "volumes": [{"name": "config-volume", "configMap": {"name": NAME}}],
    }
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"}}
    return deployment(NAME, labels, pod, dict(LABELS), replicas=REPLICAS, strategy=strategy, revision_history=2)
