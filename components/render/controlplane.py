"""Pure rendering of a shoot's control-plane workloads as plain Kubernetes objects (dicts).

The workloads are etcd (main, events), kube-apiserver, kube-controller-manager and kube-scheduler. One
renderer serves both ways of running a control plane: hosted shoots register the objects as StatefulSets,
Deployments and Services in their seed namespace; self-hosted shoots turn the same pod specs into static pod
manifests (components/render/staticpods.py). The two differ only in their `Topology` (components/plan/topology.py):
where the components reach each other. Names, labels and ports follow Gardener's (`etcd-main`, `etcd-events`,
`kube-apiserver`, labels `app` and `role`). Every connection is TLS with the shoot's PKI: each credential is a
Secret volume named as in components/render/pki.py, mounted at `/srv/kubernetes/<secret>`; the controllers'
kubeconfigs are ConfigMaps. etcd keeps its data on a persistent volume on a cloud seed (render/storage.py), in an
emptyDir on a local seed, and on the node (static).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from components import naming, yaml_text
from components.plan.topology import APISERVER_PORT, Topology
from components.plan.values import ShootValues
from components.render import backup_restore, exposure, objects, pki, service_account_issuer, storage

Object = dict[str, Any]
KCM_PORT, SCHEDULER_PORT = 10257, 10259
# Where a credential Secret (or a ConfigMap) is mounted: `/srv/kubernetes/<name>/<key>`.
MOUNT_ROOT = "/srv/kubernetes"
# The encryption configuration kube-apiserver reads (components/render/encryption.py renders it).
ENCRYPTION_SECRET, ENCRYPTION_KEY = "etcd-encryption-secret", "encryption-configuration.yaml"
ETCD_IMAGE = "registry.k8s.io/etcd:3.6.5-0"
# Kubernetes images are the control plane's version, from the project's registry.
KUBE_IMAGE = "registry.k8s.io/{component}:v{version}"


def _path(volume: str, key: str) -> str:
    """The file of a mounted Secret or ConfigMap key."""
    return f"{MOUNT_ROOT}/{volume}/{key}"


def _mount(container: Object, pod: Object, volume: str, kind: str = "secret") -> None:
    """Mounts the Secret (or ConfigMap) `volume` read-only at /srv/kubernetes/<volume>."""
    source = {"secret": {"secretName": volume}} if kind == "secret" else {"configMap": {"name": volume}}
    pod.setdefault("volumes", []).append({"name": volume, **source})
    container.setdefault("volumeMounts", []).append(
        {"name": volume, "mountPath": f"{MOUNT_ROOT}/{volume}", "readOnly": True}
    )


@dataclass(frozen=True)
class Workload:
    """One control-plane component: its controller kind and object, its Service and the ConfigMaps it mounts."""

    component: str
    kind: str  # StatefulSet or Deployment
    object: Object
    service: Object | None = None
    depends_on: tuple[str, ...] = field(default=())
    config_maps: tuple[Object, ...] = field(default=())

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


def _pod(container: Object, topology: Topology) -> Object:
    """A pod spec around one container; on a node it shares the host's network, as static pods do."""
    pod: Object = {"containers": [container]}
    if topology.static:
        pod.update(hostNetwork=True, priorityClassName="system-node-critical")
    return pod


def etcd(shoot: ShootValues, role: str, topology: Topology) -> Workload:
    """Etcd `main` (the cluster's objects) or `events`, a one-member StatefulSet with a client Service."""
    name = f"etcd-{role}"
    labels = _labels(shoot, "etcd-statefulset", role)
    client, peer, metrics = topology.etcd_ports[role]
    host = topology.etcd_hosts[role]
    tls = {"server": pki.ETCD_SERVER, "peer": pki.ETCD_PEER, "ca": pki.CA_ETCD}
    volume = shoot.etcd_volumes.get(role)
    command = [
        "etcd",
        f"--name={name}-0",
        f"--data-dir={storage.DATA_DIR if volume else storage.MOUNT_PATH}",
        f"--listen-client-urls=https://0.0.0.0:{client}",
        f"--advertise-client-urls=https://{host}:{client}",
        f"--listen-peer-urls=https://0.0.0.0:{peer}",
        f"--initial-advertise-peer-urls=https://{host}:{peer}",
        f"--initial-cluster={name}-0=https://{host}:{peer}",
        f"--listen-metrics-urls=http://0.0.0.0:{metrics}",
        f"--cert-file={_path(tls['server'], 'tls.crt')}",
        f"--key-file={_path(tls['server'], 'tls.key')}",
        "--client-cert-auth=true",
        f"--trusted-ca-file={_path(tls['ca'], 'ca.crt')}",
        f"--peer-cert-file={_path(tls['peer'], 'tls.crt')}",
        f"--peer-key-file={_path(tls['peer'], 'tls.key')}",
        "--peer-client-cert-auth=true",
        f"--peer-trusted-ca-file={_path(tls['ca'], 'ca.crt')}",
        "--quota-backend-bytes=8589934592",
    ]
    container = _container("etcd", ETCD_IMAGE, command, {"client": client, "peer": peer}, metrics, "/health", "HTTP")
    container["volumeMounts"] = [{"name": volume.claim if volume else "data", "mountPath": storage.MOUNT_PATH}]
    pod = _pod(container, topology)
    if volume:
        pod["securityContext"] = storage.security_context()
    else:
        pod["volumes"] = [{"name": "data", "emptyDir": {}}]
    for secret in tls.values():
        _mount(container, pod, secret)
    if role == "main" and shoot.backup is not None:  # Gardener backs up etcd main only
        _mount(backup_restore.add_sidecar(pod, container, shoot, client, _path), pod, pki.ETCD_CLIENT)
    statefulset = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": _metadata(shoot, name, labels),
        "spec": {
            "replicas": 1,
            "serviceName": f"{name}-peer",
            "selector": {"matchLabels": dict(labels)},
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod},
            **(storage.claim_templates(volume) if volume else {}),
        },
    }
    return Workload(
        component=name, kind="StatefulSet", object=statefulset, service=_client(shoot, name, labels, client)
    )


def _client(shoot: ShootValues, etcd: str, labels: dict[str, str], port: int) -> Object:
    """The ClusterIP Service `<etcd>-client` that kube-apiserver reaches an etcd at."""
    spec = {
        "type": "ClusterIP",
        "selector": dict(labels),
        "ports": [{"name": "client", "port": port, "targetPort": port}],
    }
    return {"apiVersion": "v1", "kind": "Service", "metadata": _metadata(shoot, f"{etcd}-client", labels), "spec": spec}


def _deployment(shoot: ShootValues, name: str, labels: dict[str, str], pod: Object, replicas: int) -> Object:
    """A control-plane Deployment that never has fewer than `replicas` ready pods during a rollout."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(shoot, name, labels),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod},
        },
    }


# kube-apiserver's credentials: what it serves with, how it reaches etcd, whom it trusts, what it signs with.
APISERVER_SECRETS = (
    pki.CA,
    pki.CA_CLIENT,
    pki.CA_ETCD,
    pki.CA_FRONT_PROXY,
    pki.ETCD_CLIENT,
    pki.KUBE_APISERVER,
    pki.KUBE_APISERVER_KUBELET,
    pki.FRONT_PROXY_CLIENT,
    pki.SERVICE_ACCOUNT_KEY,
)


def kube_apiserver(shoot: ShootValues, topology: Topology) -> Workload:
    """kube-apiserver, reading etcd main (and events for events) over TLS, behind a ClusterIP Service."""
    labels = _labels(shoot, "kubernetes", "apiserver")
    command = [
        "kube-apiserver",
        f"--etcd-servers={topology.etcd_url('main')}",
        f"--etcd-servers-overrides=/events#{topology.etcd_url('events')}",
        f"--etcd-cafile={_path(pki.CA_ETCD, 'ca.crt')}",
        f"--etcd-certfile={_path(pki.ETCD_CLIENT, 'tls.crt')}",
        f"--etcd-keyfile={_path(pki.ETCD_CLIENT, 'tls.key')}",
        f"--service-cluster-ip-range={','.join(shoot.networking.services)}",
        f"--secure-port={APISERVER_PORT}",
        f"--tls-cert-file={_path(pki.KUBE_APISERVER, 'tls.crt')}",
        f"--tls-private-key-file={_path(pki.KUBE_APISERVER, 'tls.key')}",
        f"--client-ca-file={_path(pki.CA_CLIENT, 'ca.crt')}",
        f"--kubelet-client-certificate={_path(pki.KUBE_APISERVER_KUBELET, 'tls.crt')}",
        f"--kubelet-client-key={_path(pki.KUBE_APISERVER_KUBELET, 'tls.key')}",
        f"--requestheader-client-ca-file={_path(pki.CA_FRONT_PROXY, 'ca.crt')}",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-username-headers=X-Remote-User",
        f"--proxy-client-cert-file={_path(pki.FRONT_PROXY_CLIENT, 'tls.crt')}",
        f"--proxy-client-key-file={_path(pki.FRONT_PROXY_CLIENT, 'tls.key')}",
        f"--service-account-key-file={_path(pki.SERVICE_ACCOUNT_KEY, pki.KEY_RSA_PUBLIC)}",
        f"--service-account-signing-key-file={_path(pki.SERVICE_ACCOUNT_KEY, pki.KEY_RSA_PRIVATE)}",
        *service_account_issuer.apiserver_flags(service_account_issuer.published(shoot), topology.apiserver),
        f"--encryption-provider-config={_path(ENCRYPTION_SECRET, ENCRYPTION_KEY)}",
        "--encryption-provider-config-automatic-reload=true",
        "--enable-bootstrap-token-auth=true",
        "--allow-privileged=true",
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NodeRestriction",
        "--profiling=false",
        *exposure.apiserver_flags(shoot.dns),
    ]
    image = KUBE_IMAGE.format(component="kube-apiserver", version=shoot.kubernetes_version)
    container = _container("kube-apiserver", image, command, {"https": APISERVER_PORT}, APISERVER_PORT, "/readyz")
    pod = _pod(container, topology)
    for secret in (*APISERVER_SECRETS, ENCRYPTION_SECRET):
        _mount(container, pod, secret)
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
    service = exposure.load_balancer(service, shoot.networking.provider.value) if shoot.dns else service
    return Workload(
        "kube-apiserver",
        "Deployment",
        _deployment(shoot, "kube-apiserver", labels, pod, 2),
        service,
        depends_on=("etcd-main", "etcd-events"),
    )


def kubeconfig(shoot: ShootValues, component: str, topology: Topology, credential: str) -> Object:
    """A ConfigMap with the kubeconfig a controller reaches kube-apiserver with: its client certificate's files."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "shoot", "cluster": {"server": topology.apiserver,
                                                   "certificate-authority": _path(pki.CA, "ca.crt")}}],
        "users": [{"name": component, "user": {"client-certificate": _path(credential, "tls.crt"),
                                               "client-key": _path(credential, "tls.key")}}],
        "contexts": [{"name": "shoot", "context": {"cluster": "shoot", "user": component}}],
        "current-context": "shoot",
    }  # fmt: skip
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _metadata(shoot, f"{component}-kubeconfig", _labels(shoot, "kubernetes", component)),
        "data": {"kubeconfig": yaml_text.dump(config, sort_keys=False)},
    }


def _controller(
    shoot: ShootValues,
    component: str,
    role: str,
    flags: list[str],
    port: int,
    topology: Topology,
    credential: str,
    secrets: list[str],
) -> Workload:
    """A controller of the control plane: one replica with leader election, started after kube-apiserver.

    `credential` is its client certificate, which its kubeconfig names; `secrets` are the others it mounts.
    """
    config = f"{component}-kubeconfig"
    command = [
        component,
        *flags,
        f"--kubeconfig={_path(config, 'kubeconfig')}",
        f"--authentication-kubeconfig={_path(config, 'kubeconfig')}",
        f"--authorization-kubeconfig={_path(config, 'kubeconfig')}",
        "--leader-elect=true",
        f"--secure-port={port}",
    ]
    image = KUBE_IMAGE.format(component=component, version=shoot.kubernetes_version)
    container = _container(component, image, command, {"metrics": port}, port, "/healthz")
    pod = _pod(container, topology)
    _mount(container, pod, config, kind="configMap")
    for secret in (credential, *secrets):
        _mount(container, pod, secret)
    labels = _labels(shoot, "kubernetes", role)
    deployment = _deployment(shoot, component, labels, pod, 1)
    configs = (kubeconfig(shoot, component, topology, credential),)
    return Workload(component, "Deployment", deployment, depends_on=("kube-apiserver",), config_maps=configs)


def kube_controller_manager(shoot: ShootValues, topology: Topology) -> Workload:
    """kube-controller-manager with the shoot's pod and service ranges; it signs with the cluster CA."""
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
        f"--cluster-signing-cert-file={_path(pki.CA_CLIENT_SIGNER, 'ca.crt')}",
        f"--cluster-signing-key-file={_path(pki.CA_CLIENT_SIGNER, 'ca.key')}",
        f"--root-ca-file={_path(pki.CA, 'ca.crt')}",
        f"--service-account-private-key-file={_path(pki.SERVICE_ACCOUNT_KEY, pki.KEY_RSA_PRIVATE)}",
        "--use-service-account-credentials=true",
    ]
    secrets = [pki.CA, pki.CA_CLIENT_SIGNER, pki.SERVICE_ACCOUNT_KEY]
    credential = pki.KUBE_CONTROLLER_MANAGER
    return _controller(
        shoot, "kube-controller-manager", "controller-manager", flags, KCM_PORT, topology, credential, secrets
    )


def kube_scheduler(shoot: ShootValues, topology: Topology) -> Workload:
    """kube-scheduler."""
    flags = ["--profiling=false"]
    return _controller(
        shoot, "kube-scheduler", "scheduler", flags, SCHEDULER_PORT, topology, pki.KUBE_SCHEDULER, [pki.CA]
    )


def mounted(workload: Workload) -> tuple[str, ...]:
    """The Secrets and ConfigMaps a workload's pods mount, by name."""
    names = []
    for volume in workload.pod_spec.get("volumes", []):
        if "secret" in volume:
            names.append(volume["secret"]["secretName"])
        elif "configMap" in volume:
            names.append(volume["configMap"]["name"])
        # A projected volume's Secrets and ConfigMaps (its ServiceAccount token is no object).
        for source in volume.get("projected", {}).get("sources", []):
            names += [source[kind]["name"] for kind in ("secret", "configMap") if kind in source]
    return tuple(names)


def with_checksums(workload: Workload, contents: Mapping[str, Mapping[str, str]]) -> Object:
    """The workload's object with a `checksum/<name>` pod annotation per mounted Secret or ConfigMap.

    A changed credential then changes the pod template, so exactly the components that mount it roll (and the
    preview names them), as Gardener's checksum annotations do.
    """
    obj = copy.deepcopy(workload.object)
    annotations = obj["spec"]["template"]["metadata"].setdefault("annotations", {})
    for name in mounted(workload):
        annotations[f"checksum/{name}"] = objects.checksum(contents[name])
    return obj


def control_plane(shoot: ShootValues) -> tuple[Workload, ...]:
    """Every control-plane workload of a shoot, in the order of the reconciliation flow, where its topology says."""
    where = shoot.topology
    return (
        etcd(shoot, "main", where),
        etcd(shoot, "events", where),
        kube_apiserver(shoot, where),
        kube_controller_manager(shoot, where),
        kube_scheduler(shoot, where),
    )
