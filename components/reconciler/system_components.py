"""SystemComponents: a shoot's network plugin, kube-proxy and CoreDNS, applied as one resource that keeps hashes.

The inputs are the values the objects are rendered from (components/render/system: small) and each object's hash
by key (`objects`), computed by the program, so the preview names the objects a change touches
(`objects.daemonset-calico-node`). The provider renders the objects again from the values, checks them against
those hashes (the program and the provider must agree), applies them (components/reconciler/apply.py), waits for
the workloads to roll out, and deletes what is no longer rendered. The outputs keep the values, the hashes and each
object's fingerprint in the cluster: `read()` marks an object edited or deleted there as drift (its hash becomes
""), and the next `up` applies it again. The state therefore holds no object, only what renders it.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider, UpdateResult

from components.reconciler import apply
from components.reconciler.kube import Kube, KubeError
from components.render import system

PROVIDER_VERSION = "1"
INPUTS = ("values", "objects", "version")
DRIFTED = ""


def _render(props: dict[str, Any]) -> list[apply.Object]:
    """The objects the values in `props` render."""
    return system.render(system.SystemValues.from_object(props["values"]))


def _rendered(props: dict[str, Any]) -> list[apply.Object]:
    """The objects the values render, checked against the hashes the program computed."""
    objs = _render(props)
    if system.hashes(objs) != props["objects"]:
        raise ValueError(
            "the system components rendered here differ from the program's: run `up` again from one checkout"
        )
    return objs


def _converge(props: dict[str, Any], previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """Applies every object, removes those `previous` rendered that are gone now, awaits the rollouts."""
    objs = _rendered(props)
    kube = Kube.from_kubeconfig(props["kubeconfig"])
    paths = apply.Paths(kube)
    applied = {system.key(o): apply.fingerprint(apply.apply(kube, paths, o)) for o in objs}
    if previous is not None:
        kept = set(applied)
        apply.remove(kube, paths, [o for o in reversed(_render(previous)) if system.key(o) not in kept])
    apply.await_rollouts(kube, paths, objs)
    return {**props, "fingerprints": applied}


def _unchanged(live: apply.Object | None, fingerprint: str | None) -> bool:
    """Whether an object is in the cluster as it was applied."""
    return live is not None and apply.fingerprint(live) == fingerprint


class SystemComponentsProvider(ResourceProvider):
    """Keeps a shoot's system components applied."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Applies every object."""
        return CreateResult(id_="system-components", outs=_converge(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """An in-place update when the values, an object (or its drift) or the logic version changed."""
        changed = any(olds.get(k) != news.get(k) for k in INPUTS)
        return DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Applies every object again, and deletes those no longer rendered."""
        return UpdateResult(outs=_converge(news, previous=olds))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The objects as the cluster has them: one edited or deleted there is drift (hash ""); all gone, gone."""
        kube = Kube.from_kubeconfig(props["kubeconfig"])
        paths = apply.Paths(kube)
        try:
            live = {system.key(o): kube.find(paths.of(o)) for o in _render(props)}
        except KeyError:  # a kind the cluster does not serve: its objects are gone
            live = {}
        except KubeError as err:  # discovery failed: gone when the cluster is
            if err.status not in (0, 404):
                raise
            return ReadResult(id_="", outs={})
        if not any(live.values()):  # none left (or the cluster cannot be reached)
            return ReadResult(id_="", outs={})
        fingerprints = props.get("fingerprints") or {}
        hashes = {
            k: h if _unchanged(live.get(k), fingerprints.get(k)) else DRIFTED for k, h in props["objects"].items()
        }
        return ReadResult(id_=id_, outs={**props, "objects": hashes})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Deletes the objects, last rendered first."""
        kube = Kube.from_kubeconfig(props["kubeconfig"])
        try:
            apply.remove(kube, apply.Paths(kube), list(reversed(_render(props))))
        except KubeError as err:
            if err.status != 0:  # a cluster that cannot be reached took its objects with it
                raise


class SystemComponents(Resource, module="arbor", name="SystemComponents"):
    """A shoot's system components in its kube-system, as one resource."""

    def __init__(
        self,
        name: str,
        *,
        kubeconfig: pulumi.Input[str],
        values: pulumi.Input[dict[str, Any]],
        objects: pulumi.Input[dict[str, str]],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "kubeconfig": kubeconfig,
            "values": values,
            "objects": objects,
            "version": PROVIDER_VERSION,
            "fingerprints": None,
        }
        secrets = pulumi.ResourceOptions(additional_secret_outputs=["kubeconfig"])
        super().__init__(SystemComponentsProvider(), name, props, pulumi.ResourceOptions.merge(opts, secrets))
