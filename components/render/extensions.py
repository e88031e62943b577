"""An extension installation's objects, as gardenlet's ControllerInstallation reconciler makes them (pure).

In the seed: the namespace `extension-<name>`; with garden access, the access Secret `garden-access-extension` that
the token requestor fills, the generic garden kubeconfig `generic-garden-kubeconfig-<checksum>` (immutable, named by
its content) and the workloads with both projected at `/var/run/secrets/gardener.cloud/garden/generic-kubeconfig`.
In the garden: the seed's namespace `seed-<seed>` and the installation's ServiceAccount `extension-<name>` there.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from components import naming
from components.plan.values import ExtensionValues, ExtensionWorkloadValues
from components.render.token_kubeconfig import token_file_kubeconfig

ACCESS_SECRET = "garden-access-extension"
GENERIC_KUBECONFIG = "generic-garden-kubeconfig"
MOUNT_PATH = "/var/run/secrets/gardener.cloud/garden/generic-kubeconfig"
VOLUME = "garden-kubeconfig"
# A workload labelled with "false" is left without the garden kubeconfig (upstream: absent or "true" injects).
INJECT_LABEL = "extensions.gardener.cloud/inject-garden-kubeconfig"
REGISTRATION_LABEL = "controllerregistration.core.gardener.cloud/name"
GC_LABEL = "resources.gardener.cloud/garbage-collectable-reference"
REFERENCE_PREFIX = "reference.resources.gardener.cloud/"


def reference_annotation(kind: str, name: str) -> str:
    """The key gardener-resource-manager's garbage collector reads a referenced object by."""
    return f"{REFERENCE_PREFIX}{kind}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def garden_namespace(seed: str, namespace: str) -> dict[str, Any]:
    """The seed's namespace in the garden, where its extensions' identities live."""
    labels = {"gardener.cloud/role": "seed", naming.label("seed"): seed}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}}


def service_account(ext: ExtensionValues) -> dict[str, Any]:
    """The installation's own identity in the garden (SeedAuthorizer's `extension-*` of `seed-<seed>`)."""
    metadata = {
        "name": ext.service_account,
        "namespace": ext.garden_namespace,
        "labels": {REGISTRATION_LABEL: ext.type},
    }
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata}


def seed_namespace(ext: ExtensionValues) -> dict[str, Any]:
    """The installation's namespace in the seed, labelled as gardenlet labels it."""
    labels = {
        "gardener.cloud/role": "extension",
        REGISTRATION_LABEL: ext.type,
        naming.label("seed"): ext.seed,
        "high-availability-config.resources.gardener.cloud/consider": "true",
    }
    annotations = {"high-availability-config.resources.gardener.cloud/zones": ",".join(ext.zones)}
    metadata = {"name": ext.namespace, "labels": labels, "annotations": annotations}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}


def access_secret(ext: ExtensionValues) -> dict[str, Any]:
    """The Secret the token requestor keeps the garden token in, for the ServiceAccount its annotations name."""
    metadata = {
        "name": ACCESS_SECRET,
        "namespace": ext.namespace,
        "labels": {"resources.gardener.cloud/purpose": "token-requestor", "resources.gardener.cloud/class": "garden"},
        "annotations": {
            "serviceaccount.resources.gardener.cloud/name": ext.service_account,
            "serviceaccount.resources.gardener.cloud/namespace": ext.garden_namespace,
        },
    }
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": metadata}


def generic_kubeconfig(server: str, ca_pem: str) -> str:
    """A kubeconfig of the garden whose user reads the token projected beside it."""
    return token_file_kubeconfig(server, ca_pem, f"{MOUNT_PATH}/token", cluster="garden", user="extension")


def generic_kubeconfig_secret(ext: ExtensionValues, server: str, ca_pem: str) -> dict[str, Any]:
    """The immutable Secret of the generic kubeconfig, named by its content's checksum as gardenlet names it."""
    kubeconfig = generic_kubeconfig(server, ca_pem).encode()
    metadata = {
        # Gardener's checksum of a Secret's data: its values in key order (one key here).
        "name": f"{GENERIC_KUBECONFIG}-{naming.checksum([kubeconfig])[:8]}",
        "namespace": ext.namespace,
        "labels": {GC_LABEL: "true"},
    }
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "immutable": True, "metadata": metadata,
            "data": {"kubeconfig": _b64(kubeconfig)}}  # fmt: skip


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _garden_volume(generic_secret: str) -> dict[str, Any]:
    """The projected volume of the generic kubeconfig and the access token."""

    def source(secret: str, key: str) -> dict[str, Any]:
        return {"secret": {"name": secret, "items": [{"key": key, "path": key}], "optional": False}}

    sources = [source(generic_secret, "kubeconfig"), source(ACCESS_SECRET, "token")]
    return {"name": VOLUME, "projected": {"defaultMode": 420, "sources": sources}}


def workload(ext: ExtensionValues, w: ExtensionWorkloadValues, generic_secret: str | None) -> dict[str, Any]:
    """A Deployment of the installation; with `generic_secret` and `w.inject`, the garden kubeconfig injected."""
    inject = ext.garden_access and w.inject and generic_secret is not None
    env: list[dict[str, str]] = [{"name": "SEED_NAME", "value": ext.seed}]
    container: dict[str, Any] = {"name": w.name, "image": w.image, "resources": {"requests": dict(w.requests)}}
    pod: dict[str, Any] = {"containers": [container]}
    annotations: dict[str, str] = {}
    if inject and generic_secret is not None:
        env.append({"name": "GARDEN_KUBECONFIG", "value": f"{MOUNT_PATH}/kubeconfig"})
        container["volumeMounts"] = [{"name": VOLUME, "mountPath": MOUNT_PATH, "readOnly": True}]
        pod["volumes"] = [_garden_volume(generic_secret)]
        annotations = {reference_annotation("secret", s): s for s in (generic_secret, ACCESS_SECRET)}
    container["env"] = env
    labels = {"app": w.name, REGISTRATION_LABEL: ext.type}
    # Upstream's opt-out: a workload labelled "false" is not injected (only one with garden access says so).
    deployment_labels = labels | ({INJECT_LABEL: "false"} if ext.garden_access and not w.inject else {})
    template = {"metadata": {"labels": labels, **({"annotations": annotations} if annotations else {})}, "spec": pod}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": w.name, "namespace": ext.namespace, "labels": deployment_labels},
        "spec": {"replicas": w.replicas, "selector": {"matchLabels": {"app": w.name}}, "template": template},
    }
