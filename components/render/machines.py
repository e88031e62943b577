"""Worker machinery of a shoot, rendered pure: machine-controller-manager and a pool's machines.

MCM (one generic Deployment per shoot, in its seed namespace; a self-hosted shoot's in its own kube-system, reaching
it in-cluster and bound by ServiceAccount, as upstream runs it there) reconciles MachineDeployments into MachineSets and
Machines; the provider sidecar injected beside it (`Sidecar`, from components/render/machine_providers.py) creates the
VMs. Flags of both live here; their images are Gardener's pins (components/pins.py). What MCM may do:

- in the seed namespace (its ServiceAccount, in-cluster config): the machine objects, the Secrets they reference
  (credentials, user data), events, and its leader-election leases; a namespaced Role, since `--namespace` keeps
  MCM in the shoot's namespace (Gardener binds a cluster-wide role instead); a sidecar may add rules of its own.
- in the shoot (through its target kubeconfig: a client certificate of the shoot's client CA with the common name
  `MCM_USER`, mounted like the other controllers' kubeconfigs): nodes and what draining them needs (pods,
  evictions, volume attachments, workloads), and Secrets in kube-system; ClusterRole and Role objects for the
  shoot's API.

A pool's machines (MachineDeployment, MachineClass, user data) are components/render/machine_pools.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components import pins
from components.plan.values import ShootValues
from components.render import controlplane, pki
from components.render.machine_crds import GROUP

Object = dict[str, Any]
# Also the name of its client certificate's Secret, mounted where its kubeconfig's paths point.
MCM_NAME = pki.MACHINE_CONTROLLER_MANAGER
MCM_METRICS_PORT = 10258
PROVIDER_METRICS_PORT = 10259
# The user of MCM's client certificate in the shoot (components/render/pki.py issues it, as for the other controllers).
MCM_USER = pki.MCM_USER
KUBECONFIG = f"{MCM_NAME}-kubeconfig"
TARGET_KUBECONFIG = f"{controlplane.MOUNT_ROOT}/{KUBECONFIG}/kubeconfig"
# Workload identity: where Gardener's provider extensions mount the sidecar's token (provider-gcp's sidecar accepts
# this path only), and its lifetime (the kubelet renews it at 80 %).
IDENTITY_VOLUME = "workload-identity"
IDENTITY_DIR = "/var/run/secrets/gardener.cloud/workload-identity"
IDENTITY_TOKEN_FILE = f"{IDENTITY_DIR}/token"
IDENTITY_TOKEN_SECONDS = 3600
# Both containers reach the shoot's API with the same credentials: the kubeconfig and the files it points at.
TARGET_VOLUMES = ((KUBECONFIG, "configMap"), (MCM_NAME, "secret"), (pki.CA, "secret"))
MCM_FLAGS = (
    "--control-kubeconfig=inClusterConfig",
    "--machine-safety-overshooting-period=1m",
    "--safety-up=2",
    "--safety-down=1",
    "--v=3",
)
SIDECAR_FLAGS = (
    "--control-kubeconfig=inClusterConfig",
    "--kube-api-qps=100",
    "--kube-api-burst=200",
    "--machine-creation-timeout=20m",
    "--machine-drain-timeout=2h",
    "--machine-health-timeout=10m",
    "--machine-safety-apiserver-statuscheck-timeout=30s",
    "--machine-safety-apiserver-statuscheck-period=1m",
    "--machine-safety-orphan-vms-period=30m",
    "--v=3",
)
ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclass(frozen=True)
class Sidecar:
    """A provider's container beside MCM, its metrics port, and seed RBAC rules it needs beyond MCM's own."""

    provider: str
    container: Object
    metrics_port: int = PROVIDER_METRICS_PORT
    seed_rules: tuple[Object, ...] = ()


def _labels() -> dict[str, str]:
    """Gardener's labels of MCM's pods and Service."""
    return {"app": "kubernetes", "role": MCM_NAME}


def _metadata(shoot: ShootValues, name: str = MCM_NAME) -> Object:
    """Metadata in MCM's namespace (the seed namespace, or a self-hosted shoot's kube-system)."""
    return {"name": name, "namespace": shoot.machine_namespace, "labels": _labels()}


def _probe(port: int) -> Object:
    """A liveness probe on a container's metrics port, which serves /healthz."""
    return {
        "httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"},
        "initialDelaySeconds": 30,
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 3,
    }


def sidecar_container(provider: str, image: str, namespace: str) -> Object:
    """Gardener's standard sidecar `machine-controller-manager-provider-<provider>`, watching `namespace` only."""
    return {
        "name": f"{MCM_NAME}-provider-{provider}",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "args": [
            *SIDECAR_FLAGS,
            f"--namespace={namespace}",
            f"--port={PROVIDER_METRICS_PORT}",
            f"--target-kubeconfig={TARGET_KUBECONFIG}",
        ],
        "ports": [{"name": "providermetrics", "containerPort": PROVIDER_METRICS_PORT, "protocol": "TCP"}],
        "livenessProbe": _probe(PROVIDER_METRICS_PORT),
        "resources": {"requests": {"cpu": "10m", "memory": "20Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False},
    }


def _reaching_shoot(container: Object, shoot: ShootValues) -> Object:
    """A container of MCM's Deployment: reaching the shoot through its mounted kubeconfig, or in-cluster."""
    if not shoot.self_hosted:
        return _with_target_mounts(container)
    # Upstream's choice for a self-hosted shoot's MCM in kube-system: an empty target, the cluster it runs in.
    key = "command" if "command" in container else "args"
    flag = "--target-kubeconfig="
    return {**container, key: [flag if a.startswith(flag) else a for a in container[key]]}


def _mcm_container(shoot: ShootValues) -> Object:
    """The generic MCM container."""
    return {
        "name": MCM_NAME,
        "image": pins.MCM.ref,
        "imagePullPolicy": "IfNotPresent",
        "command": [
            "./machine-controller-manager",
            *MCM_FLAGS,
            f"--namespace={shoot.machine_namespace}",
            f"--port={MCM_METRICS_PORT}",
            f"--target-kubeconfig={TARGET_KUBECONFIG}",
        ],
        "ports": [{"name": "metrics", "containerPort": MCM_METRICS_PORT, "protocol": "TCP"}],
        "livenessProbe": _probe(MCM_METRICS_PORT),
        "resources": {"requests": {"cpu": "31m", "memory": "70Mi"}, "limits": {"memory": "1024Mi"}},
    }


def _with_identity_token(container: Object) -> Object:
    """The sidecar with MCM's ServiceAccount token where Gardener's provider webhooks mount it (workload identity).

    The `cloudprovider` Secret then names a role and this file (`workloadIdentityTokenFile`) instead of a key; the
    kubelet renews the token, and the sidecar reads the file again whenever it asks STS.
    """
    mount = {"name": IDENTITY_VOLUME, "mountPath": IDENTITY_DIR, "readOnly": True}
    return {**container, "volumeMounts": [*container.get("volumeMounts", []), mount]}


def _with_target_mounts(container: Object) -> Object:
    """The container with the shoot kubeconfig and its credentials mounted read-only under /srv/kubernetes."""
    mounts = [{"name": n, "mountPath": f"{controlplane.MOUNT_ROOT}/{n}", "readOnly": True} for n, _ in TARGET_VOLUMES]
    return {**container, "volumeMounts": [*container.get("volumeMounts", []), *mounts]}


def _target_volumes() -> list[Object]:
    """The volumes behind the target mounts."""
    return [
        {"name": n, "configMap": {"name": n}} if kind == "configMap" else {"name": n, "secret": {"secretName": n}}
        for n, kind in TARGET_VOLUMES
    ]


def mcm_deployment(shoot: ShootValues, sidecar: Sidecar) -> Object:
    """MCM's Deployment in its namespace with the provider's sidecar injected beside it."""
    provider = _reaching_shoot(sidecar.container, shoot)
    if shoot.machine_audience is not None:
        provider = _with_identity_token(provider)
    containers = [_reaching_shoot(_mcm_container(shoot), shoot), provider]
    labels = _labels()
    pod: Object = {"serviceAccountName": MCM_NAME, "terminationGracePeriodSeconds": 5, "containers": containers}
    if shoot.self_hosted:
        # Inside the shoot its first node may be the control-plane machine, which upstream's MCM tolerates. Upstream
        # also selects `worker.gardener.cloud/system-components` nodes; arbor's nodes carry no such label yet.
        pod["tolerations"] = [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]
    else:
        pod["volumes"] = _target_volumes()
    if shoot.machine_audience is not None:
        token = {"audience": shoot.machine_audience, "expirationSeconds": IDENTITY_TOKEN_SECONDS, "path": "token"}
        projected = {"name": IDENTITY_VOLUME, "projected": {"sources": [{"serviceAccountToken": token}]}}
        pod["volumes"] = [*pod.get("volumes", []), projected]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(shoot),
        "spec": {
            "replicas": 1,
            "revisionHistoryLimit": 2,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": pod,
            },
        },
    }


def target_kubeconfig(shoot: ShootValues) -> Object:
    """The ConfigMap with the kubeconfig both containers reach the shoot's API with."""
    return controlplane.kubeconfig(shoot, MCM_NAME, shoot.topology, pki.MACHINE_CONTROLLER_MANAGER)


def metrics_service(shoot: ShootValues, sidecar: Sidecar) -> Object:
    """A headless Service in front of both metrics ports, MCM's and the sidecar's."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(shoot),
        "spec": {
            "type": "ClusterIP",
            "clusterIP": "None",
            "selector": _labels(),
            "ports": [
                {"name": "metrics", "port": MCM_METRICS_PORT, "targetPort": MCM_METRICS_PORT, "protocol": "TCP"},
                {"name": "providermetrics", "port": sidecar.metrics_port, "targetPort": sidecar.metrics_port,
                 "protocol": "TCP"},
            ],
        },
    }  # fmt: skip


def service_account(shoot: ShootValues) -> Object:
    """MCM's ServiceAccount in the seed namespace."""
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _metadata(shoot)}


def _rule(group: str, resources: list[str], verbs: list[str], names: list[str] | None = None) -> Object:
    """An RBAC policy rule."""
    rule: Object = {"apiGroups": [group], "resources": resources, "verbs": verbs}
    if names:
        rule["resourceNames"] = names
    return rule


MACHINE_RESOURCES = [f"{r}{s}" for r in ("machineclasses", "machinedeployments", "machines", "machinesets")
                     for s in ("", "/status")]  # fmt: skip
SEED_RULES = (
    _rule(GROUP, MACHINE_RESOURCES, ALL_VERBS),
    _rule("", ["configmaps", "secrets", "events"], ALL_VERBS),
    _rule("coordination.k8s.io", ["leases"], ["create"]),
    # Leader election of MCM and of the sidecar's machine controller, by their lease names.
    _rule("coordination.k8s.io", ["leases"], ["get", "watch", "update"], ["machine-controller", MCM_NAME]),
)


def seed_role(shoot: ShootValues, sidecar: Sidecar) -> Object:
    """What MCM and its sidecar may do in the seed namespace."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": _metadata(shoot),
        "rules": [*SEED_RULES, *sidecar.seed_rules],
    }


def seed_role_binding(shoot: ShootValues) -> Object:
    """Binds the seed Role to MCM's ServiceAccount."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": _metadata(shoot),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": MCM_NAME},
        "subjects": [{"kind": "ServiceAccount", "name": MCM_NAME, "namespace": shoot.machine_namespace}],
    }


def seed_objects(shoot: ShootValues, sidecar: Sidecar) -> tuple[Object, ...]:
    """Everything of MCM in its namespace, in apply order (identity, rights, kubeconfig, workload, Service)."""
    kubeconfig = () if shoot.self_hosted else (target_kubeconfig(shoot),)
    identity = (service_account(shoot), seed_role(shoot, sidecar), seed_role_binding(shoot))
    return (*identity, *kubeconfig, mcm_deployment(shoot, sidecar), metrics_service(shoot, sidecar))


SHOOT_ROLE = f"gardener.cloud:target:{MCM_NAME}"
SHOOT_RULES = (
    _rule("", ["nodes", "nodes/status", "endpoints", "replicationcontrollers", "pods", "persistentvolumes",
               "persistentvolumeclaims"], ALL_VERBS),
    _rule("", ["pods/eviction"], ["create"]),
    _rule("apps", ["replicasets", "statefulsets", "daemonsets", "deployments"], ALL_VERBS),
    _rule("batch", ["jobs", "cronjobs"], ALL_VERBS),
    _rule("policy", ["poddisruptionbudgets"], ["list", "watch"]),
    _rule("storage.k8s.io", ["volumeattachments"], ["delete", "get", "list", "watch"]),
)  # fmt: skip


def _binding(shoot: ShootValues, kind: str, namespace: str | None = None) -> Object:
    """A (Cluster)RoleBinding of MCM's shoot role to its client-certificate user, or its ServiceAccount in the shoot."""
    metadata: Object = {"name": SHOOT_ROLE} | ({"namespace": namespace} if namespace else {})
    subject: Object = {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": MCM_USER}
    if shoot.self_hosted:
        subject = {"kind": "ServiceAccount", "name": MCM_NAME, "namespace": shoot.machine_namespace}
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": f"{kind}Binding",
        "metadata": metadata,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": SHOOT_ROLE},
        "subjects": [subject],
    }


def shoot_objects(shoot: ShootValues) -> tuple[Object, ...]:
    """MCM's rights in the shoot: nodes and draining, kube-system Secrets (through its target kubeconfig)."""
    cluster_role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": SHOOT_ROLE}, "rules": list(SHOOT_RULES)}  # fmt: skip
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": SHOOT_ROLE, "namespace": "kube-system"},
        "rules": [_rule("", ["secrets"], ["create", "delete", "get", "list"])],
    }
    return cluster_role, _binding(shoot, "ClusterRole"), role, _binding(shoot, "Role", "kube-system")
