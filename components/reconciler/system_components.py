"""SystemComponents: a shoot's network plugin, kube-proxy and CoreDNS, applied as one resource that keeps hashes.

The inputs are the values the objects are rendered from (components/render/system: small) and each object's hash
by key (added by the provider's check()); the provider renders the objects again from the values where it applies
them (components/reconciler/applied.py). The state therefore holds no object, only what renders it.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import Resource

from components.reconciler import apply
from components.reconciler.applied import AppliedObjectsProvider
from components.render import system

PROVIDER_VERSION = "1"


class SystemComponentsProvider(AppliedObjectsProvider):
    """Keeps a shoot's system components applied, rendered from their values."""

    resource_id = "system-components"
    compared = ("values",)
    sources = ("values",)

    def objects_of(self, props: dict[str, Any]) -> list[apply.Object]:
        """The objects the values in `props` render."""
        return system.render(system.SystemValues.from_object(props["values"]))


class SystemComponents(Resource, module="arbor", name="SystemComponents"):
    """A shoot's system components in its kube-system, as one resource."""

    def __init__(
        self,
        name: str,
        *,
        kubeconfig: pulumi.Input[str],
        values: pulumi.Input[dict[str, Any]],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "kubeconfig": kubeconfig,
            "values": values,
            "objects": None,  # each object's hash, by the provider's check()
            "version": PROVIDER_VERSION,
            "fingerprints": None,
        }
        super().__init__(SystemComponentsProvider(), name, props, opts)
