"""What Gardener's node-agent consumes, rendered pure: node components, the reconcile OSC and its Secret key.

Each node component (containerd, kubelet, node-agent, sysctl, journald) is a function of a pool's NodeValues
returning its units and files (osc.Part); `reconcile_osc` merges them. The plan's `secret_name` (plan/bootstrap.py)
is Gardener's worker-pool key: a hash of exactly what must roll the pool's machines (Kubernetes minor, machine
type, image, CRI, CA rotation, kubelet reservations and eviction), so anything else reaches running nodes in
place. Names, paths and keys follow Gardener's (docs/gardener/node-agent.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from components import yaml_text
from components.plan.bootstrap import NODE_AGENT_IMAGE, node_agent_files, secret_name
from components.plan.network import CLUSTER_DOMAIN
from components.plan.nodeagent_release import NODE_AGENT_DIR
from components.plan.nodes import POOL_LABEL, VERSION_LABEL
from components.plan.osc import (
    Command,
    File,
    ImageRef,
    Inline,
    OperatingSystemConfig,
    Part,
    Purpose,
    Unit,
    merge,
)
from components.plan.quantity import canonical
from components.plan.values import NodeValues
from components.render import pki

HYPERKUBE_IMAGE = "europe-docker.pkg.dev/gardener-project/releases/hyperkube"
ROOT_CERTS = "/var/lib/ca-certificates-local/ROOTcerts.crt"
SYSCTL_DEFAULTS = {"fs.inotify.max_user_watches": "524288", "net.ipv4.ip_forward": "1", "vm.max_map_count": "135217728"}


def containerd(v: NodeValues) -> Part:
    """Containerd and the node's root certificates; the unit restarts only when the CAs change."""
    certs = File(path=ROOT_CERTS, content=Inline(v.root_certs), permissions=0o644)
    unit = Unit(name="containerd.service", file_paths=(ROOT_CERTS,))
    return Part(units=(unit,), files=(certs,))


# containerd's hosts.toml names the registry's own server; Docker Hub's is not its name.
REGISTRY_SERVERS = {"docker.io": "https://registry-1.docker.io"}


def cri_config(v: NodeValues) -> dict[str, Any]:
    """The OSC's `criConfig`: the runtime and, as Gardener's `containerd.registries`, each registry mirror.

    node-agent writes a registry's hosts.toml into containerd's hosts directory (`config_path`), which containerd
    reads at each pull: a mirror reaches nodes without a containerd restart.
    """
    config: dict[str, Any] = {"name": v.cri}
    if v.registry_mirrors:
        registries = [
            {
                "upstream": upstream,
                "server": REGISTRY_SERVERS.get(upstream, f"https://{upstream}"),
                "hosts": [{"url": url, "capabilities": ["pull", "resolve"]}],
            }
            for upstream, url in sorted(v.registry_mirrors.items())
        ]
        config["containerd"] = {"registries": registries}
    return config


def _kubelet_config(v: NodeValues) -> str:
    """The KubeletConfiguration the pool's kubelets run with."""
    config: dict[str, object] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "authentication": {"x509": {"clientCAFile": "/var/lib/kubelet/ca.crt"}, "webhook": {"enabled": True}},
        "authorization": {"mode": "Webhook"},
        "cgroupDriver": "systemd",
        # Pods resolve through kube-dns (Gardener's `clusterDNS`/`clusterDomain`).
        "clusterDNS": list(v.cluster_dns),
        "clusterDomain": CLUSTER_DOMAIN,
        "protectKernelDefaults": True,
        # kubelet renews its client certificate before it expires (the CSR is approved by the join RBAC).
        "rotateCertificates": True,
        # Rendered by value (as Kubernetes prints a Quantity), so `1024Mi` for `1Gi` restarts nothing.
        "kubeReserved": {k: canonical(q) for k, q in v.kube_reserved.items()},
        "evictionHard": {k: canonical(q) for k, q in v.eviction_hard.items()},
        **dict(v.kubelet),
    }
    return yaml_text.dump(config, sort_keys=True)


def kubelet(v: NodeValues) -> Part:
    """kubelet: its binary from the hyperkube image of the pool's version, its config and its client CA."""
    files = (
        File("/opt/bin/kubelet", ImageRef(f"{HYPERKUBE_IMAGE}:v{v.kubernetes_version}", "/kubelet"), 0o755),
        File("/var/lib/kubelet/config/kubelet", Inline(_kubelet_config(v))),
        File("/var/lib/kubelet/ca.crt", Inline(v.kubelet_ca), 0o644),
    )
    content = (
        "[Unit]\nDescription=kubelet daemon\nAfter=containerd.service\n[Install]\nWantedBy=multi-user.target\n"
        "[Service]\nRestart=always\nRestartSec=5\nEnvironmentFile=/etc/environment\n"
        "EnvironmentFile=-/var/lib/kubelet/extra_args\n"
        "ExecStart=/opt/bin/kubelet --config=/var/lib/kubelet/config/kubelet "
        "--kubeconfig=/var/lib/kubelet/kubeconfig-real --bootstrap-kubeconfig=/var/lib/kubelet/kubeconfig-bootstrap "
        f"--node-labels={VERSION_LABEL}={v.kubernetes_version} $KUBELET_EXTRA_ARGS\n"
    )
    unit = Unit("kubelet.service", content=content, file_paths=(*(f.path for f in files), ROOT_CERTS))
    return Part(units=(unit,), files=files)


def node_agent(v: NodeValues) -> Part:
    """gardener-node-agent: its binary from its image and its config; a new version touches only these."""
    files = (
        File(
            "/opt/bin/gardener-node-agent",
            ImageRef(f"{NODE_AGENT_IMAGE}:{v.node_agent_version}", "/gardener-node-agent"),
            0o755,
        ),
        *node_agent_files(v),
    )
    content = (
        "[Unit]\nDescription=Gardener Node Agent\nAfter=network-online.target\n[Install]\nWantedBy=multi-user.target\n"
        f"[Service]\nLimitMEMLOCK=infinity\nLimitNOFILE=1048576\nRestart=always\nRestartSec=5\n"
        f"ExecStart=/opt/bin/gardener-node-agent --config-dir={NODE_AGENT_DIR}\n"
    )
    return Part(
        units=(Unit("gardener-node-agent.service", content, file_paths=tuple(f.path for f in files)),), files=files
    )


def sysctl(v: NodeValues) -> Part:
    """Kernel settings: Gardener's defaults, then the pool's; systemd-sysctl re-applies them on change."""
    settings = {**SYSCTL_DEFAULTS, **v.sysctls}
    conf = File(
        "/etc/sysctl.d/99-k8s-general.conf", Inline("".join(f"{k} = {settings[k]}\n" for k in sorted(settings))), 0o644
    )
    return Part(
        units=(Unit("systemd-sysctl.service", command=Command.RESTART, file_paths=(conf.path,)),), files=(conf,)
    )


def journald(v: NodeValues) -> Part:
    """Journald retention; the journal restarts when it changes (no restart of anything else)."""
    settings = {"MaxFileSec": "24h", "MaxRetentionSec": "14day", **v.journald}
    conf = File(
        "/etc/systemd/journald.conf.d/gardener.conf",
        Inline("[Journal]\n" + "".join(f"{k}={settings[k]}\n" for k in sorted(settings))),
        0o644,
    )
    unit = Unit("systemd-journald.service", command=Command.RESTART, file_paths=(conf.path,))
    return Part(units=(unit,), files=(conf,))


COMPONENTS = (containerd, journald, sysctl, kubelet, node_agent)


def reconcile_osc(v: NodeValues, extra: Iterable[Part] = ()) -> OperatingSystemConfig:
    """The configuration node-agent keeps applied on every node of the pool (plus `extra`: static pods, say)."""
    parts = [*(c(v) for c in COMPONENTS), *extra]
    return merge(secret_name(v), Purpose.RECONCILE, parts, {"criConfig": cri_config(v)})


def osc_secret(config: OperatingSystemConfig, pool: str) -> dict[str, object]:
    """The Secret node-agent reads for a pool's reconcile OSC: its name (the pool key), `osc.yaml`, labels."""
    spec = config.to_object()["spec"]
    data = yaml_text.dump({"spec": {k: spec[k] for k in ("units", "files", "criConfig")}}, sort_keys=False)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": config.name,
            "namespace": "kube-system",
            "labels": {"gardener.cloud/role": "operating-system-config", POOL_LABEL: pool},
            "annotations": {"checksum/data-script": hashlib.sha256(data.encode()).hexdigest()},
        },
        "stringData": {"osc.yaml": data},
    }


# node-agent's ServiceAccount (and its access token Secret) in the shoot's kube-system, as Gardener names it.
NODE_AGENT_ACCESS = "gardener-node-agent"
BOOTSTRAPPERS = "system:bootstrappers"
NODES = pki.NODES_GROUP
CSR_ROLE = "system:certificates.k8s.io:certificatesigningrequests:"


def _group(name: str) -> dict[str, str]:
    """A group as an RBAC subject."""
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name}


def _binding(kind: str, name: str, role_kind: str, subjects: list[dict[str, str]], **meta: str) -> dict[str, Any]:
    """A (Cluster)RoleBinding `name` of the role of the same name, to `subjects`."""
    role = {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name}
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": {"name": name, **meta},
            "roleRef": role, "subjects": subjects}  # fmt: skip


def join_rbac(osc_secrets: Iterable[str]) -> list[dict[str, Any]]:
    """What lets machines join (Gardener's node-agent RBAC): bootstrap tokens post CSRs, approved as node clients.

    node-agent, by bootstrap token and then by its ServiceAccount, reads its pools' OSC Secrets and its access
    Secret, keeps a lease and patches its node; kubelets renew their own client certificates.
    """
    account = {"kind": "ServiceAccount", "name": NODE_AGENT_ACCESS, "namespace": "kube-system"}
    rbac_v1 = "rbac.authorization.k8s.io/v1"
    node_rules = [
        {
            "apiGroups": [""],
            "resources": ["nodes", "nodes/status"],
            "verbs": ["get", "list", "watch", "patch", "update"],
        },
        {"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list", "watch", "create", "patch", "update"]},
    ]
    secrets = sorted({NODE_AGENT_ACCESS, *osc_secrets})
    role_rules = [
        {"apiGroups": [""], "resources": ["secrets"], "resourceNames": secrets, "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
         "verbs": ["get", "list", "watch", "create", "update"]},
    ]  # fmt: skip
    system = {"namespace": "kube-system"}
    return [
        {"apiVersion": rbac_v1, "kind": "ClusterRole", "metadata": {"name": NODE_AGENT_ACCESS}, "rules": node_rules},
        _binding("ClusterRoleBinding", NODE_AGENT_ACCESS, "ClusterRole", [account]),
        {"apiVersion": rbac_v1, "kind": "Role", "metadata": {"name": NODE_AGENT_ACCESS, **system}, "rules": role_rules},
        _binding("RoleBinding", NODE_AGENT_ACCESS, "Role", [_group(BOOTSTRAPPERS), account], **system),
        _binding("ClusterRoleBinding", "system:node-bootstrapper", "ClusterRole", [_group(BOOTSTRAPPERS)]),
        _binding("ClusterRoleBinding", CSR_ROLE + "nodeclient", "ClusterRole", [_group(BOOTSTRAPPERS)]),
        _binding("ClusterRoleBinding", CSR_ROLE + "selfnodeclient", "ClusterRole", [_group(NODES)]),
    ]


def bootstrap_token_secret(token_id: str, token_secret: str) -> dict[str, Any]:
    """`kube-system/bootstrap-token-<id>`: a token kube-apiserver authenticates as `system:bootstrappers`."""
    data = {
        "token-id": token_id,
        "token-secret": token_secret,
        "usage-bootstrap-authentication": "true",
        "usage-bootstrap-signing": "true",
        "description": "arbor: node-agent of a self-hosted shoot's first control-plane machine",
    }
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "bootstrap.kubernetes.io/token",
        "metadata": {"name": f"bootstrap-token-{token_id}", "namespace": "kube-system"},
        "stringData": data,
    }
