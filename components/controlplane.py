"""Pure rendering of a shoot's control-plane workloads as plain Kubernetes objects (dicts).

The workloads are etcd (main, events), kube-apiserver, kube-controller-manager and kube-scheduler. One
renderer serves both ways of running a control plane: hosted shoots register the objects as StatefulSets,
Deployments and Services in their seed namespace; self-hosted shoots (the control-plane issue) turn the same
pod specs into static pod manifests. Names, labels and ports follow Gardener's (`etcd-main`, `etcd-events`,
`kube-apiserver`, labels `app` and `role`). Certificates, TLS flags and the encryption configuration arrive
with the control-plane issue (PKI); etcd keeps its data in an emptyDir until backups and volumes do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components import naming
from components.plan import ShootValues

Object = dict[str, Any]
ETCD_CLIENT_PORT = 2379
ETCD_PEER_PORT = 2380
APISERVER_PORT = 443
ETCD_IMAGE = "registry.k8s.io/etcd:3.6.5-0"
# Kubernetes images are the control plane's version, from the project's registry.
KUBE_IMAGE = "registry.k8s.io/{component}:v{version}"


@dataclass(frozen=True)
class Workload:
    """One control-plane component: its controller kind and object, and the Service in front of it."""

    component: str
    kind: str  # StatefulSet or Deployment
    object: Object
    service: Object | None = None
    depends_on: tuple[str, ...] = field(default=())

    @property
    def pod_spec(self) -> Object:
        """The pod spec, shared by both ways of running the component."""
        spec: Object = self.object["spec"]["template"]["spec"]
        return spec


def _labels(shoot: ShootValues, app: str, role: str) -> dict[str, str]:
    """Gardener's labels of a control-plane pod (app, role), and the shoot it belongs to."""
    return {"app": app, "role": role, naming.label("shoot"): shoot.technical_id}


def _metadata(shoot: ShootValues, name: str, labels: dict[str, str]) -> Object:
    """Metadata in the shoot's seed namespace."""
    return {"name": name, "namespace": shoot.seed_namespace, "labels": dict(labels)}


def _container(
    name: str,
    image: str,
    command: list[str],
    ports: dict[str, int],
    probe_port: int,
    probe_path: str,
    scheme: str = "HTTPS",
) -> Object:
    """A control-plane container with ports, a readiness probe and modest requests."""
    return {
        "name": name,
        "image": image,
        "command": command,
        "ports": [{"name": n, "containerPort": p, "protocol": "TCP"} for n, p in ports.items()],
        "readinessProbe": {
            "httpGet": {"path": probe_path, "port": probe_port, "scheme": scheme},
            "periodSeconds": 10,
            "failureThreshold": 3,
        },
        "resources": {"requests": {"cpu": "50m", "memory": "128Mi"}},
    }


def etcd(shoot: ShootValues, role: str) -> Workload:
    """Etcd `main` (the cluster's objects) or `events`, a one-member StatefulSet with a client Service."""
    name = f"etcd-{role}"
    labels = _labels(shoot, "etcd-statefulset", role)
    command = [
        "etcd",
        f"--name={name}-0",
        "--data-dir=/var/etcd/data",
        f"--listen-client-urls=http://0.0.0.0:{ETCD_CLIENT_PORT}",
        f"--advertise-client-urls=http://{name}-client.{shoot.seed_namespace}.svc:{ETCD_CLIENT_PORT}",
        f"--listen-peer-urls=http://0.0.0.0:{ETCD_PEER_PORT}",
        "--listen-metrics-urls=http://0.0.0.0:2381",
        "--quota-backend-bytes=8589934592",
    ]
    container = _container(
        "etcd",
        ETCD_IMAGE,
        command,
        {"client": ETCD_CLIENT_PORT, "peer": ETCD_PEER_PORT},
        2381,
        "/health",
        scheme="HTTP",
    )
    container["volumeMounts"] = [{"name": "data", "mountPath": "/var/etcd/data"}]
    statefulset = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": _metadata(shoot, name, labels),
        "spec": {
            "replicas": 1,
            "serviceName": f"{name}-peer",
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"containers": [container], "volumes": [{"name": "data", "emptyDir": {}}]},
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(shoot, f"{name}-client", labels),
        "spec": {
            "type": "ClusterIP",
            "selector": dict(labels),
            "ports": [{"name": "client", "port": ETCD_CLIENT_PORT, "targetPort": ETCD_CLIENT_PORT}],
        },
    }
    return Workload(component=name, kind="StatefulSet", object=statefulset, service=service)


def _deployment(shoot: ShootValues, name: str, labels: dict[str, str], container: Object, replicas: int) -> Object:
    """A control-plane Deployment that never has fewer than `replicas` ready pods during a rollout."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(shoot, name, labels),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {"metadata": {"labels": dict(labels)}, "spec": {"containers": [container]}},
        },
    }


def kube_apiserver(shoot: ShootValues) -> Workload:
    """kube-apiserver, reading etcd main (and events for events), behind a ClusterIP Service."""
    labels = _labels(shoot, "kubernetes", "apiserver")
    ns = shoot.seed_namespace
    command = [
        "kube-apiserver",
        f"--etcd-servers=http://etcd-main-client.{ns}.svc:{ETCD_CLIENT_PORT}",
        f"--etcd-servers-overrides=/events#http://etcd-events-client.{ns}.svc:{ETCD_CLIENT_PORT}",
        f"--service-cluster-ip-range={','.join(shoot.networking.services)}",
        f"--secure-port={APISERVER_PORT}",
        "--allow-privileged=true",
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NodeRestriction",
        "--profiling=false",
    ]
    image = KUBE_IMAGE.format(component="kube-apiserver", version=shoot.kubernetes_version)
    container = _container("kube-apiserver", image, command, {"https": APISERVER_PORT}, APISERVER_PORT, "/readyz")
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(shoot, "kube-apiserver", labels),
        "spec": {
            "type": "ClusterIP",
            "selector": dict(labels),
            "ports": [{"name": "kube-apiserver", "port": APISERVER_PORT, "targetPort": APISERVER_PORT}],
        },
    }
    return Workload(
        "kube-apiserver",
        "Deployment",
        _deployment(shoot, "kube-apiserver", labels, container, 2),
        service,
        depends_on=("etcd-main", "etcd-events"),
    )


def _controller(shoot: ShootValues, component: str, role: str, flags: list[str], port: int) -> Workload:
    """A controller of the control plane: one replica with leader election, started after kube-apiserver."""
    command = [component, *flags, "--leader-elect=true", f"--secure-port={port}"]
    image = KUBE_IMAGE.format(component=component, version=shoot.kubernetes_version)
    container = _container(component, image, command, {"metrics": port}, port, "/healthz")
    labels = _labels(shoot, "kubernetes", role)
    deployment = _deployment(shoot, component, labels, container, 1)
    return Workload(component, "Deployment", deployment, depends_on=("kube-apiserver",))


def kube_controller_manager(shoot: ShootValues) -> Workload:
    """kube-controller-manager with the shoot's pod and service ranges."""
    net = shoot.networking
    masks = net.node_masks
    # kube-controller-manager takes one mask size single-stack and one per family dual-stack.
    mask_flags = (
        [f"--node-cidr-mask-size-{f.lower()}={masks[f]}" for f in net.ip_families]
        if len(net.ip_families) > 1
        else [f"--node-cidr-mask-size={masks[f]}" for f in net.ip_families]
    )
    flags = [
        f"--cluster-cidr={','.join(net.pods)}",
        f"--service-cluster-ip-range={','.join(net.services)}",
        "--allocate-node-cidrs=true",
        *mask_flags,
        "--controllers=*,bootstrapsigner,tokencleaner",
        f"--cluster-name={shoot.technical_id}",
    ]
    return _controller(shoot, "kube-controller-manager", "controller-manager", flags, 10257)


def kube_scheduler(shoot: ShootValues) -> Workload:
    """kube-scheduler."""
    return _controller(shoot, "kube-scheduler", "scheduler", ["--profiling=false"], 10259)


def control_plane(shoot: ShootValues) -> tuple[Workload, ...]:
    """Every control-plane workload of a shoot, in the order of the reconciliation flow."""
    return (
        etcd(shoot, "main"),
        etcd(shoot, "events"),
        kube_apiserver(shoot),
        kube_controller_manager(shoot),
        kube_scheduler(shoot),
    )
