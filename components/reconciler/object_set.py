"""ObjectSet: objects applied as one resource (server-side, as Gardener's resource manager applies a ManagedResource).

A pulumi-kubernetes resource keeps an object three times in the state (its inputs, `__inputs` and the live object
with its managed fields). Here the objects are an input, kept once and packed (gzip-compressed, as Gardener keeps a
ManagedResource's objects in its Secret); the outputs keep where each one is (`refs`, a line each),
its hash and its fingerprint in the cluster (components/reconciler/applied.py), all that diff, drift and delete
need. Used for each hosted control-plane component (its ConfigMaps, Service and workload), a local self-hosted
node's mirror pods, machine-controller-manager's objects and gardener-resource-manager's.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import Resource

from components.reconciler import apply
from components.reconciler.applied import AppliedObjectsProvider
from components.reconciler.gather import lifted
from components.render import objects
from components.render.packing import pack, unpacked

PROVIDER_VERSION = "1"
# Its type in the state, the name an alias of a resource that was one gives.
TYPE = "pulumi-python:dynamic/arbor:ObjectSet"


def _integral(value: Any) -> Any:
    """A value as the program sent it: the engine passes every number as a float, and Kubernetes' are integers."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


class ObjectSetProvider(AppliedObjectsProvider):
    """Keeps the objects it is given applied."""

    resource_id = "object-set"
    sources = ("manifests",)

    def objects_of(self, props: dict[str, Any]) -> list[apply.Object]:
        """The objects given (inputs), or what finds them again (outputs)."""
        if "manifests" not in props:
            return [objects.ref_of(r) for r in props.get("refs") or []]
        return [_integral(o) for o in unpacked(props["manifests"])]

    def outputs(self, props: dict[str, Any], fingerprints: str) -> dict[str, Any]:
        """Where each object is, its hash and fingerprint: not the objects."""
        kept = {k: v for k, v in props.items() if k != "manifests"}
        refs = [objects.ref_text(o) for o in unpacked(props["manifests"])]
        return {**kept, "refs": refs, "fingerprints": fingerprints}


class ObjectSet(Resource, module="arbor", name="ObjectSet"):
    """Objects applied to a cluster as one resource, in the order given."""

    def __init__(
        self,
        name: str,
        *,
        kubeconfig: pulumi.Input[str],
        cluster: str,
        manifests: pulumi.Input[list[dict[str, Any]]],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "kubeconfig": kubeconfig,
            # The cluster's identity (`<provider>:<name>`), shown in the preview and read by policies.
            "cluster": cluster,
            # Kept packed (render/packing.py): only this provider and the policy pack read them.
            "manifests": lifted(manifests).apply(pack),
            # Each object's hash, computed by the provider's check(): they reveal nothing of secret objects, so the
            # preview names what changes even in a secret set.
            "objects": None,
            "version": PROVIDER_VERSION,
            "refs": None,
            "fingerprints": None,
        }
        super().__init__(ObjectSetProvider(), name, props, opts)
