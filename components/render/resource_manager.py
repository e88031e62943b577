"""A hosted shoot's gardener-resource-manager as it serves the KUBERNETES_SERVICE_HOST webhook (pure).

Upstream runs one per hosted shoot in its seed namespace; its pod webhook sets `KUBERNETES_SERVICE_HOST` to the
shoot API's internal domain name in every container of a new pod, so in-cluster clients skip the `kubernetes`
Service hop. arbor runs it for that webhook only: every optional controller off, and rights to match, where upstream
binds cluster-admin in the shoot. Source cluster: the seed, the shoot's namespace only (ManagedResources and Secrets
there; the CRD must exist though none is used). Target: the shoot, `kube-system` only (the pods and workloads its
always-on health controllers watch). The registration in the shoot is upstream's: `gardener-resource-manager-shoot`
with the webhook `kubernetes-service-host.resources.gardener.cloud`, its serving certificate issued by the shoot's
CA. Never a sidecar of kube-apiserver (policy `no-kube-apiserver-sidecars`), never for self-hosted shoots.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components import yaml_text
from components.render.token_kubeconfig import token_file_kubeconfig

Object = dict[str, Any]
NAME = "gardener-resource-manager"
CONFIG_API = "resourcemanager.config.gardener.cloud/v1alpha1"
WEBHOOK_CONFIGURATION = "gardener-resource-manager-shoot"
WEBHOOK = "kubernetes-service-host.resources.gardener.cloud"
WEBHOOK_PATH = "/webhooks/kubernetes-service-host"
# A namespace or pod labelled `disable` gets no KUBERNETES_SERVICE_HOST.
OPT_OUT_LABEL = "apiserver-proxy.networking.gardener.cloud/inject"
TIMEOUT_S = 2
# The webhook server's port in the pod, and its Service's (upstream: 443 -> 10250).
SERVER_PORT, SERVICE_PORT, HEALTH_PORT, METRICS_PORT = 10250, 443, 8081, 8080
# The shoot's namespaces whose pods and workloads the health controllers watch: only arbor's own.
TARGET_NAMESPACES = ("kube-system",)
# Where a pod reads its configuration, serving certificate and shoot kubeconfig (upstream's paths).
CONFIG_DIR = "/etc/gardener-resource-manager-config"
CERT_DIR = "/etc/gardener-resource-manager-tls"
SHOOT_ACCESS_DIR = "/var/run/secrets/gardener.cloud/shoot/generic-kubeconfig"
SHOOT_ACCESS_SECRET = "shoot-access-gardener-resource-manager"
TARGET_ROLE = "gardener.cloud:target:resource-manager"
CRD_FILE = Path(__file__).parent / "resource-manager-crds" / "10-crd-resources.gardener.cloud_managedresources.yaml"
RBAC = "rbac.authorization.k8s.io"


@dataclass(frozen=True)
class Server:
    """Where the process listens: address and ports of the webhook server, health probes and metrics."""

    bind_address: str
    port: int = SERVER_PORT
    health_port: int = HEALTH_PORT
    metrics_port: int = METRICS_PORT
    # The metrics server's own address (None: `bind_address`).
    metrics_address: str | None = None


def config(namespace: str, host: str, source: str, target: str, cert_dir: str, server: Server) -> Object:
    """Its ResourceManagerConfiguration: the webhook on, every optional controller off, each cluster one namespace.

    `source` and `target` are kubeconfig paths (seed, shoot); `host` the value the webhook injects.
    """
    connection = {"qps": 100, "burst": 130}
    return {
        "apiVersion": CONFIG_API,
        "kind": "ResourceManagerConfiguration",
        "sourceClientConnection": {**connection, "kubeconfig": source, "namespaces": [namespace]},
        "targetClientConnection": {**connection, "kubeconfig": target, "namespaces": list(TARGET_NAMESPACES)},
        # One replica: no leader election, so no Lease to write (the namespace is required all the same).
        "leaderElection": {"leaderElect": False, "resourceNamespace": namespace},
        "logLevel": "info",
        "logFormat": "json",
        "server": {
            "webhooks": {"bindAddress": server.bind_address, "port": server.port, "tls": {"serverCertDir": cert_dir}},
            "healthProbes": {"bindAddress": server.bind_address, "port": server.health_port},
            "metrics": {"bindAddress": server.metrics_address or server.bind_address, "port": server.metrics_port},
        },
        "controllers": {
            "clusterID": "",
            "resourceClass": "resources",
            **{c: {"enabled": False} for c in OPTIONAL_CONTROLLERS},
        },
        "webhooks": {"kubernetesServiceHost": {"enabled": True, "host": host}},
    }


# The controllers a configuration can switch off; health and managedResource always run.
OPTIONAL_CONTROLLERS = (
    "garbageCollector", "csrApprover", "networkPolicy", "nodeCriticalComponents", "nodeAgentReconciliationDelay",
    "tokenRequestor",
)  # fmt: skip


def config_text(*args: Any, **kwargs: Any) -> str:
    """`config(...)` as the YAML file the process reads."""
    return yaml_text.dump(config(*args, **kwargs), sort_keys=False)


def service_url(namespace: str) -> str:
    """The webhook's URL for a shoot whose kube-apiserver runs in the seed namespace beside it (upstream's)."""
    return f"https://{NAME}.{namespace}:{SERVICE_PORT}{WEBHOOK_PATH}"


def local_url(port: int) -> str:
    """The webhook's URL on loopback, where a local shoot's kube-apiserver runs."""
    return f"https://127.0.0.1:{port}{WEBHOOK_PATH}"


def webhook_configuration(url: str, ca_bundle_b64: str) -> Object:
    """The MutatingWebhookConfiguration in the shoot: pods CREATE, the opt-out label, Ignore, 2 s (upstream's)."""

    def opted_in() -> Object:
        return {"matchExpressions": [{"key": OPT_OUT_LABEL, "operator": "NotIn", "values": ["disable"]}]}

    webhook = {
        "name": WEBHOOK,
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "operations": ["CREATE"]}],
        "namespaceSelector": opted_in(),
        "objectSelector": opted_in(),
        "admissionReviewVersions": ["v1beta1", "v1"],
        "reinvocationPolicy": "Never",
        "failurePolicy": "Ignore",
        "matchPolicy": "Exact",
        "sideEffects": "None",
        "timeoutSeconds": TIMEOUT_S,
        "clientConfig": {"url": url, "caBundle": ca_bundle_b64},
    }
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": WEBHOOK_CONFIGURATION},
        "webhooks": [webhook],
    }


def service_account(namespace: str) -> Object:
    """Its identity in a cluster: `gardener-resource-manager` (the seed's shoot namespace, the shoot's kube-system)."""
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": NAME, "namespace": namespace},
            "automountServiceAccountToken": False}  # fmt: skip


def _role(name: str, namespace: str, rules: list[Object]) -> list[Object]:
    """A Role and its RoleBinding to the ServiceAccount `gardener-resource-manager` of the same namespace."""
    subject = {"kind": "ServiceAccount", "name": NAME, "namespace": namespace}

    def metadata() -> Object:
        return {"name": name, "namespace": namespace}

    return [
        {"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": metadata(), "rules": rules},
        {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": metadata(),
         "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": name}, "subjects": [subject]},
    ]  # fmt: skip


def source_rights(namespace: str) -> list[Object]:
    """In the seed: the shoot namespace's ManagedResources and Secrets its controllers watch; events (upstream's)."""
    watch_update = ("get", "list", "watch", "update", "patch")
    return _role(NAME, namespace, [
        {"apiGroups": ["resources.gardener.cloud"], "resources": ["managedresources", "managedresources/status"],
         "verbs": list(watch_update)},
        {"apiGroups": [""], "resources": ["secrets"], "verbs": list(watch_update)},
        {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create"]},
    ])  # fmt: skip


def target_rights() -> list[Object]:
    """In the shoot: read the pods and workloads of kube-system, all its always-on controllers watch there."""
    read = ("get", "list", "watch")
    return _role(TARGET_ROLE, TARGET_NAMESPACES[0], [
        {"apiGroups": [""], "resources": ["pods"], "verbs": list(read)},
        {"apiGroups": ["apps"], "resources": ["deployments", "statefulsets", "daemonsets"], "verbs": list(read)},
    ])  # fmt: skip


@functools.cache
def _crd() -> str:
    """The ManagedResource CRD file, read once."""
    return CRD_FILE.read_text()


def managed_resource_crd() -> Object:
    """The CRD its always-on controllers watch in the source cluster, upstream's file as it is."""
    crd: Object = yaml_text.load(_crd())
    return crd


# --- in a cloud seed: upstream's Deployment, Service and Secrets in the shoot's namespace ------------------------

SERVER_SECRET = "gardener-resource-manager-server"
GENERIC_KUBECONFIG = "generic-token-kubeconfig"
TOKEN_REQUESTOR = {"resources.gardener.cloud/purpose": "token-requestor", "resources.gardener.cloud/class": "shoot"}


def _labels() -> dict[str, str]:
    """Gardener's labels of the shoot's resource manager pod."""
    return {"app": NAME, "gardener.cloud/role": "controlplane"}


def config_map(namespace: str, host: str) -> Object:
    """Its configuration: the seed in-cluster (its ServiceAccount), the shoot through the token kubeconfig."""
    text = config_text(namespace, host, "", f"{SHOOT_ACCESS_DIR}/kubeconfig", CERT_DIR, Server(""))
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{NAME}-config", "namespace": namespace,
            "labels": _labels()}, "data": {"config.yaml": text}}  # fmt: skip


def shoot_access_metadata(namespace: str) -> dict[str, dict[str, str]]:
    """The labels and annotations of the Secret its shoot token is kept in (gardener-resource-manager's own)."""
    annotations = {"serviceaccount.resources.gardener.cloud/name": NAME,
                   "serviceaccount.resources.gardener.cloud/namespace": TARGET_NAMESPACES[0]}  # fmt: skip
    return {"labels": dict(TOKEN_REQUESTOR), "annotations": annotations}


def generic_kubeconfig_secret(namespace: str, server: str, ca_pem: str) -> Object:
    """The kubeconfig of the shoot whose user reads the token projected beside it."""
    text = token_file_kubeconfig(server, ca_pem, f"{SHOOT_ACCESS_DIR}/token", "shoot", NAME)
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {"name": GENERIC_KUBECONFIG,
            "namespace": namespace}, "stringData": {"kubeconfig": text}}  # fmt: skip


def _volumes() -> list[Object]:
    """Its configuration, serving certificate, and the shoot kubeconfig with the token beside it."""

    def item(secret: str, key: str) -> Object:
        return {"secret": {"name": secret, "items": [{"key": key, "path": key}]}}

    shoot_access = [item(GENERIC_KUBECONFIG, "kubeconfig"), item(SHOOT_ACCESS_SECRET, "token")]
    return [
        {"name": "config", "configMap": {"name": f"{NAME}-config"}},
        {"name": "tls", "secret": {"secretName": SERVER_SECRET, "defaultMode": 0o400}},
        {"name": "shoot-access", "projected": {"defaultMode": 0o400, "sources": shoot_access}},
    ]


def deployment(namespace: str, image: str, checksum: str) -> Object:
    """One replica (no leader election), its probes, requests and mounts as upstream renders them."""
    container = {
        "name": NAME,
        "image": image,
        "args": [f"--config={CONFIG_DIR}/config.yaml"],
        "ports": [{"name": "metrics", "containerPort": METRICS_PORT}, {"name": "health", "containerPort": HEALTH_PORT},
                  {"name": "server", "containerPort": SERVER_PORT}],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": HEALTH_PORT}, "initialDelaySeconds": 30,
                          "periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 5},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": HEALTH_PORT}, "initialDelaySeconds": 10},
        "resources": {"requests": {"cpu": "10m", "memory": "30M"}},
        "volumeMounts": [{"name": "config", "mountPath": CONFIG_DIR, "readOnly": True},
                         {"name": "tls", "mountPath": CERT_DIR, "readOnly": True},
                         {"name": "shoot-access", "mountPath": SHOOT_ACCESS_DIR, "readOnly": True}],
    }  # fmt: skip
    template = {
        "metadata": {"labels": _labels(), "annotations": {"checksum/config": checksum}},
        "spec": {"serviceAccountName": NAME, "automountServiceAccountToken": True, "containers": [container],
                 "volumes": _volumes()},
    }  # fmt: skip
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": NAME, "namespace": namespace, "labels": _labels()},
            "spec": {"replicas": 1, "selector": {"matchLabels": _labels()}, "template": template}}  # fmt: skip


def service(namespace: str) -> Object:
    """The Service kube-apiserver calls the webhook at: 443 to the server port."""
    ports = [{"name": "server", "port": SERVICE_PORT, "targetPort": SERVER_PORT, "protocol": "TCP"},
             {"name": "metrics", "port": METRICS_PORT, "protocol": "TCP"},
             {"name": "health", "port": HEALTH_PORT, "protocol": "TCP"}]  # fmt: skip
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": NAME, "namespace": namespace,
            "labels": _labels()}, "spec": {"type": "ClusterIP", "selector": _labels(), "ports": ports}}  # fmt: skip
