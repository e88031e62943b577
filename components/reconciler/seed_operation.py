"""SeedOperation: a Seed record's `gardener.cloud/operation` annotation, carried out and then removed.

Operators annotate a Seed to ask gardenlet for a one-off operation, and gardenlet removes the annotation once it is
done. arbor knows `renew-garden-access-secrets`: every garden access token of the seed's extensions is renewed at
once. Each AccessToken of the seed reads the annotation in its check() (`requested_operation`), so the preview shows
the renewal and `up` requests new tokens; this resource depends on those tokens and removes the annotation after
them: its check() reads the annotation into the input `operation`, and a non-empty one is an update that removes it,
only while it still holds the value read (a JSON patch with a test).

The engine stores the provider pickled by reference to this module: moving or renaming it needs a shim.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import CheckResult, CreateResult, DiffResult, Resource, UpdateResult
from pulumi.runtime import rpc

from components.naming import API_GROUP
from components.reconciler.kube import Kube, KubeError
from components.reconciler.provider import Provider

OPERATION = "gardener.cloud/operation"
RENEW_GARDEN_ACCESS_SECRETS = "renew-garden-access-secrets"
# The operations this resource carries out; any other value of the annotation is left to whoever set it.
KNOWN = (RENEW_GARDEN_ACCESS_SECRETS,)


def seed_path(seed: str) -> str:
    """The Seed record in the garden."""
    return f"/apis/{API_GROUP}/v1alpha1/seeds/{seed}"


def requested_operation(kubeconfig: object, seed: object) -> str:
    """The known operation the Seed record's annotation asks for, or "" (also while the garden is unknown or gone)."""
    if not isinstance(kubeconfig, str) or not isinstance(seed, str) or kubeconfig == rpc.UNKNOWN or not seed:
        return ""
    try:
        record = Kube.from_kubeconfig(kubeconfig).find(seed_path(seed))
    except KubeError:
        return ""
    value = (((record or {}).get("metadata") or {}).get("annotations") or {}).get(OPERATION, "")
    return value if value in KNOWN else ""


def remove_operation(kubeconfig: str, seed: str, operation: str) -> None:
    """Removes the annotation while it still asks for `operation`; a record changed or gone meanwhile is left be."""
    key = "/metadata/annotations/" + OPERATION.replace("~", "~0").replace("/", "~1")
    patch = [{"op": "test", "path": key, "value": operation}, {"op": "remove", "path": key}]
    try:
        Kube.from_kubeconfig(kubeconfig).json_patch(seed_path(seed), patch)
    except KubeError as err:
        # 422: the test failed (another value or none); 404: no record.
        if err.status not in (404, 422):
            raise


class SeedOperationProvider(Provider):
    """Reads a Seed's operation annotation in check() and removes it in an update once the seed's work is done."""

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        """The inputs with `operation`: what the annotation asks for now."""
        return CheckResult({**news, "operation": requested_operation(news.get("kubeconfig"), news.get("seed"))}, [])

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Carries out a requested operation (its dependencies did the work) by removing the annotation."""
        self._done(props)
        return CreateResult(id_=str(props["seed"]), outs=props)

    def diff(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """An update while an operation is requested, never a replacement."""
        return DiffResult(changes=bool(news.get("operation")), replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Removes the annotation of the operation carried out."""
        self._done(news)
        return UpdateResult(outs=news)

    @staticmethod
    def _done(props: dict[str, Any]) -> None:
        """Removes the annotation when an operation was requested."""
        if props.get("operation"):
            remove_operation(props["kubeconfig"], props["seed"], props["operation"])


class SeedOperation(Resource, module="arbor", name="SeedOperation"):
    """Removes a Seed record's known `gardener.cloud/operation` annotation once the resources it depends on acted."""

    def __init__(
        self, name: str, *, kubeconfig: pulumi.Input[str], seed: str, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        props = {"kubeconfig": kubeconfig, "seed": seed, "operation": None}
        super().__init__(SeedOperationProvider(), name, props, opts)
