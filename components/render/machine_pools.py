"""A pool's machines, rendered pure: per zone its MachineDeployment, MachineClass and user-data Secret.

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
from typing import Any

from components import naming
from components.plan.nodes import POOL_LABEL, ZONE_LABEL
from components.plan.values import ZoneDeployment
from components.render.machine_crds import GROUP, VERSION
from components.render.machines import Object

# The Secret in the seed namespace with the cloud credentials every class of the shoot uses (Gardener's name).
CREDENTIALS_SECRET = "cloudprovider"
# A rolled pool's old class and user data stay in use until MCM has replaced their machines: MCM holds them with a
# finalizer meanwhile. The update deletes them without waiting for that, and MCM lets them go once the roll is done.
RETIRED_BY_MCM = {"pulumi.com/skipAwait": "true"}
# Deleted in the background, as Gardener does. With foreground (the provider's default), MCM v0.62.1 keeps retrying
# to write back the `foregroundDeletion` finalizer it had cached, which the API server refuses (422) once the
# object is being deleted: the deletion would never end.
DELETED_IN_BACKGROUND = {"pulumi.com/deletionPropagationPolicy": "background"}


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


def _user_data(metadata: Object, user_data: str) -> Object:
    """A Secret holding a boot script as `userData`."""
    data = {"userData": base64.b64encode(user_data.encode()).decode()}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": metadata, "type": "Opaque", "data": data}


def user_data_secret(namespace: str, d: ZoneDeployment, user_data: str) -> Object:
    """The Secret a class's machines boot from: the provision OSC's script (bootstrap.user_data) as `userData`."""
    return _user_data({"name": d.class_name, "namespace": namespace,
                       "labels": {"gardener.cloud/purpose": "machineclass"}, "annotations": dict(RETIRED_BY_MCM)},
                      user_data)  # fmt: skip


def self_hosted_user_data_secret(pool: str, user_data: str) -> Object:
    """A self-hosted pool's user data in its own kube-system (`user-data-<pool>`): what its machines boot from."""
    metadata = {"name": f"user-data-{pool}", "namespace": "kube-system", "labels": {POOL_LABEL: pool}}
    return _user_data(metadata, user_data)
