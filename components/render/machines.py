"""Worker machinery of a hosted shoot, rendered pure: machine-controller-manager and a pool's machines.

MCM (one generic Deployment per shoot, in its seed namespace) reconciles MachineDeployments into MachineSets and
Machines; the provider sidecar injected beside it (`Sidecar`, from components/render/machine_providers.py) creates the
VMs. Flags of both live here; their images are Gardener's pins (components/pins.py). What MCM may do:

- in the seed namespace (its ServiceAccount, in-cluster config): the machine objects, the Secrets they reference
  (credentials, user data), events, and its leader-election leases; a namespaced Role, since `--namespace` keeps
  MCM in the shoot's namespace (Gardener binds a cluster-wide role instead); a sidecar may add rules of its own.
- in the shoot (through its target kubeconfig: a client certificate of the shoot's client CA with the common name
  `MCM_USER`, mounted like the other controllers' kubeconfigs): nodes and what draining them needs (pods,
  evictions, volume attachments, workloads), and Secrets in kube-system; ClusterRole and Role objects for the
  shoot's API.

Per worker pool and zone there is one MachineDeployment `<technical id>-<pool>-z<N>` and one MachineClass named
`<deployment>-<hash>` (Gardener's names). The user-data Secret is named like the class, as Gardener's workers
name it (not `user-data-<pool>`): a rolled class brings its own user data, and old machines keep theirs.

The plan derives these names (plan/nodes.py). The hash (five hex digits of Gardener's WorkerPoolHashV2 scheme:
sha256 of the concatenated sha256s) covers exactly what must replace machines, so such a change rolls the pool
and nothing else does:

- rolls: everything node-agent's OSC key covers (secret_name: Kubernetes minor, machine type, image
  name and version, CRI, CA rotation, kubelet reservations, eviction thresholds, CPU manager policy), the zone
  name (arbor's addition: reordering a pool's zones moves `z<N>` to another zone, and its machines must follow),
  and the root volume's size, type and encryption.
- does not roll: minimum, maximum, maxSurge, maxUnavailable (the deployment scales or rolls by its strategy),
  the Kubernetes patch version, maxPods and other kubelet settings, registry mirrors, sysctls, node-agent's
  version (node-agent applies these in place), and the infrastructure a class points at (subnet, security
  group, instance profile, service account, tags, the image ID a name and version map to): the class is
  updated in place and new machines get them.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from components import naming, pins
from components.plan.nodes import POOL_LABEL, ZONE_LABEL
from components.plan.values import ShootValues, ZoneDeployment
from components.render import controlplane, pki
from components.render.machine_crds import GROUP, VERSION

Object = dict[str, Any]
# Also the name of its client certificate's Secret, mounted where its kubeconfig's paths point.
MCM_NAME = pki.MACHINE_CONTROLLER_MANAGER
MCM_METRICS_PORT = 10258
PROVIDER_METRICS_PORT = 10259
# The user of MCM's client certificate in the shoot (components/render/pki.py issues it, as for the other controllers).
MCM_USER = pki.MCM_USER
KUBECONFIG = f"{MCM_NAME}-kubeconfig"
TARGET_KUBECONFIG = f"{controlplane.MOUNT_ROOT}/{KUBECONFIG}/kubeconfig"
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
# The Secret in the seed namespace with the cloud credentials every class of the shoot uses (Gardener's name).
CREDENTIALS_SECRET = "cloudprovider"
# A rolled pool's old class and user data stay in use until MCM has replaced their machines: MCM holds them with a
# finalizer meanwhile. The update deletes them without waiting for that, and MCM lets them go once the roll is done.
RETIRED_BY_MCM = {"pulumi.com/skipAwait": "true"}
# Deleted in the background, as Gardener does. With foreground (the provider's default), MCM v0.62.1 keeps retrying
# to write back the `foregroundDeletion` finalizer it had cached, which the API server refuses (422) once the
# object is being deleted: the deletion would never end.
DELETED_IN_BACKGROUND = {"pulumi.com/deletionPropagationPolicy": "background"}
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
    """Metadata in the shoot's seed namespace."""
    return {"name": name, "namespace": shoot.seed_namespace, "labels": _labels()}


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


def _mcm_container(shoot: ShootValues) -> Object:
    """The generic MCM container."""
    return {
        "name": MCM_NAME,
        "image": pins.MCM.ref,
        "imagePullPolicy": "IfNotPresent",
        "command": [
            "./machine-controller-manager",
            *MCM_FLAGS,
            f"--namespace={shoot.seed_namespace}",
            f"--port={MCM_METRICS_PORT}",
            f"--target-kubeconfig={TARGET_KUBECONFIG}",
        ],
        "ports": [{"name": "metrics", "containerPort": MCM_METRICS_PORT, "protocol": "TCP"}],
        "livenessProbe": _probe(MCM_METRICS_PORT),
        "resources": {"requests": {"cpu": "31m", "memory": "70Mi"}, "limits": {"memory": "1024Mi"}},
    }


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
    """MCM's Deployment in the seed namespace with the provider's sidecar injected beside it."""
    containers = [_with_target_mounts(_mcm_container(shoot)), _with_target_mounts(sidecar.container)]
    labels = _labels()
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
                "spec": {
                    "serviceAccountName": MCM_NAME,
                    "terminationGracePeriodSeconds": 5,
                    "containers": containers,
                    "volumes": _target_volumes(),
                },
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
        "subjects": [{"kind": "ServiceAccount", "name": MCM_NAME, "namespace": shoot.seed_namespace}],
    }


def seed_objects(shoot: ShootValues, sidecar: Sidecar) -> tuple[Object, ...]:
    """Everything of MCM in the seed namespace, in apply order (identity, rights, kubeconfig, workload, Service)."""
    return (
        service_account(shoot),
        seed_role(shoot, sidecar),
        seed_role_binding(shoot),
        target_kubeconfig(shoot),
        mcm_deployment(shoot, sidecar),
        metrics_service(shoot, sidecar),
    )


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


def _binding(kind: str, namespace: str | None = None) -> Object:
    """A (Cluster)RoleBinding of MCM's shoot role to its client-certificate user."""
    metadata: Object = {"name": SHOOT_ROLE} | ({"namespace": namespace} if namespace else {})
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": f"{kind}Binding",
        "metadata": metadata,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": SHOOT_ROLE},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": MCM_USER}],
    }


def shoot_objects() -> tuple[Object, ...]:
    """MCM's rights in the shoot, reached through its target kubeconfig: nodes and draining, kube-system Secrets."""
    cluster_role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": SHOOT_ROLE}, "rules": list(SHOOT_RULES)}  # fmt: skip
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": SHOOT_ROLE, "namespace": "kube-system"},
        "rules": [_rule("", ["secrets"], ["create", "delete", "get", "list"])],
    }
    return cluster_role, _binding("ClusterRole"), role, _binding("Role", "kube-system")


# --- a pool's machines ----------------------------------------------------------------------------------


def machine_deployment(namespace: str, d: ZoneDeployment) -> Object:
    """The MachineDeployment of a pool in one zone, at its minimum, rolling by the pool's budget.

    Its replicas are the pool's minimum in this zone (arbor runs no cluster-autoscaler); minimum and maximum are
    recorded as annotations, where an autoscaler would read them.
    """
    selector = {"name": d.name}
    annotations = {naming.label("minimum"): str(d.minimum), naming.label("maximum"): str(d.maximum)}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "MachineDeployment",
        "metadata": {
            "name": d.name,
            "namespace": namespace,
            "labels": {POOL_LABEL: d.pool},
            "annotations": {**annotations, **DELETED_IN_BACKGROUND},
        },
        "spec": {
            "replicas": d.minimum,
            "minReadySeconds": d.min_ready_seconds,
            "selector": {"matchLabels": dict(selector)},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": d.max_surge, "maxUnavailable": d.max_unavailable},
            },
            "template": {
                "metadata": {"labels": {**selector, POOL_LABEL: d.pool}},
                "spec": {
                    "class": {"kind": "MachineClass", "name": d.class_name},
                    # No taints: an empty spec, which MCM writes when absent (applied as kept: no drift).
                    "nodeTemplate": {"metadata": {"labels": dict(d.labels)}, "spec": {}},
                },
            },
        },
    }


def machine_class(namespace: str, d: ZoneDeployment, provider: str, provider_spec: Any) -> Object:
    """A MachineClass: the provider's spec, the shoot's credentials and the class's own user-data Secret.

    `provider_spec` is an object, or whatever stands for one until the cloud's IDs in it are known.
    """
    name, version = d.image
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "MachineClass",
        "metadata": {
            "name": d.class_name,
            "namespace": namespace,
            # Gardener's labels: the OS the machines boot, their zone (the GA label; Gardener writes the beta one).
            "labels": {"operatingSystemName": name, "operatingSystemVersion": version.replace("+", "_"),
                       ZONE_LABEL: d.zone},
            "annotations": dict(RETIRED_BY_MCM),
        },
        "provider": provider,
        "providerSpec": provider_spec,
        "credentialsSecretRef": {"name": CREDENTIALS_SECRET, "namespace": namespace},
        "secretRef": {"name": d.class_name, "namespace": namespace},
    }  # fmt: skip


def credentials_secret(namespace: str) -> Object:
    """The Secret every class of the shoot references for the cloud's credentials (its data is added where wired)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": CREDENTIALS_SECRET, "namespace": namespace,
                     "labels": {"gardener.cloud/purpose": "cloudprovider"}},
        "type": "Opaque",
    }  # fmt: skip


def user_data_secret(namespace: str, d: ZoneDeployment, user_data: str) -> Object:
    """The Secret a class's machines boot from: the provision OSC's script (bootstrap.user_data) as `userData`."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": d.class_name, "namespace": namespace,
                     "labels": {"gardener.cloud/purpose": "machineclass"}, "annotations": dict(RETIRED_BY_MCM)},
        "type": "Opaque",
        "data": {"userData": base64.b64encode(user_data.encode()).decode()},
    }  # fmt: skip
