"""Rendered Kubernetes objects (plain dicts, as the pure renderers return them) as kubernetes provider resources.

The typed classes of pulumi-kubernetes take an object apart field by field; a renderer's object goes in whole
here, under the same type token (`kubernetes:<group>/<version>:<Kind>`), so the provider diffs and awaits it as
it does the typed resource. It serves every rendered object: arbor's CRDs and records, the InternalSecret (its
`data` sits beside `spec`, which pulumi-kubernetes' CustomResource cannot send), machine.sapcloud.io's kinds and
MCM's objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pulumi

from components.render.objects import type_token


class KubeObject(pulumi.CustomResource):
    """One Kubernetes object, registered as rendered."""

    def __init__(self, name: str, obj: Mapping[str, Any], opts: pulumi.ResourceOptions) -> None:
        super().__init__(type_token(obj["apiVersion"], obj["kind"]), name, dict(obj), opts)


def secret_object(name: str, obj: Mapping[str, Any], opts: pulumi.ResourceOptions) -> KubeObject:
    """A Secret whose `data` and `stringData` stay secret in the state, as the typed Secret keeps them."""
    sealed = {k: pulumi.Output.secret(v) if k in SECRET_FIELDS else v for k, v in obj.items()}
    secrets = pulumi.ResourceOptions(additional_secret_outputs=SECRET_FIELDS)
    return KubeObject(name, sealed, pulumi.ResourceOptions.merge(opts, secrets))


# A Secret's fields that hold its content.
SECRET_FIELDS = ["data", "stringData"]


class LoadBalancerService(KubeObject):
    """A Service of type LoadBalancer, with the status its cloud writes (the balancer's address), as an output."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        status: pulumi.Output[dict[str, Any]]

    def __init__(self, name: str, obj: Mapping[str, Any], opts: pulumi.ResourceOptions) -> None:
        # An output property is asked for as None, as the typed Service does; the provider awaits the address.
        super().__init__(name, {**obj, "status": None}, opts)


class Record(KubeObject):
    """An object whose metadata the API server completes (its uid) is read back, e.g. a Shoot record's owner uid."""

    if TYPE_CHECKING:
        metadata: pulumi.Output[dict[str, Any]]
