"""A resource that keeps a set of objects applied, its state holding a hash per object rather than the object.

`check()` adds each object's hash by key (`objects`, components/render/objects.py) to the inputs, so the preview
names the objects a change touches (`objects.deployment-kube-apiserver`); computed here rather than sent by the
program, they carry no dependency list of their own in the state. A subclass says where the objects come from: a
resource that renders them again from small values (SystemComponents), or one that is given them (ObjectSet). The
provider checks them against those hashes, applies them (components/reconciler/apply.py), waits for the
workloads to roll out, and deletes what it applied before and no longer has. The outputs keep the hashes and each
object's fingerprint in the cluster (one line, in the order of their keys): `read()` marks an object edited or
deleted there as drift (its hash becomes ""), and the next `up` applies it again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi.dynamic import CheckResult, CreateResult, DiffResult, ReadResult, UpdateResult
from pulumi.runtime import rpc

from components.reconciler import apply, unknowns
from components.reconciler.kube import Kube, KubeError
from components.reconciler.provider import Provider
from components.render import objects

# A new cluster (a control plane moved to another seed) is an update too: its objects are applied there.
INPUTS = ("objects", "version", "cluster")
DRIFTED = ""


class AppliedObjectsProvider(Provider):
    """Keeps a set of objects applied; a subclass says which."""

    resource_id = "objects"
    # Inputs beside the hashes and the version that, changed, make an update (e.g. the values rendered from).
    compared: tuple[str, ...] = ()
    # The inputs the objects come from: while a preview does not know one of them, it does not know the hashes.
    sources: tuple[str, ...] = ()

    def objects_of(self, props: dict[str, Any]) -> list[apply.Object]:
        """The objects the inputs in `props` stand for, in the order they are applied."""
        raise NotImplementedError

    def refs_of(self, props: dict[str, Any]) -> list[apply.Object]:
        """What finds the objects of `props` (inputs or outputs) again."""
        return [objects.ref(o) for o in self.objects_of(props)]

    def outputs(self, props: dict[str, Any], fingerprints: str) -> dict[str, Any]:
        """The outputs: the inputs to keep, and each object's fingerprint."""
        return {**props, "fingerprints": fingerprints}

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        """The inputs with each object's hash by key; unknown while what the objects come from is."""
        known = all(unknowns.known(news.get(k)) for k in self.sources)
        hashes = objects.hashes(self.objects_of(news)) if known else rpc.UNKNOWN
        return CheckResult(inputs={**news, "objects": hashes}, failures=[])

    def _checked(self, props: dict[str, Any]) -> list[apply.Object]:
        """The objects, checked against the hashes the program computed."""
        objs = self.objects_of(props)
        if objects.hashes(objs) != props["objects"]:
            raise ValueError("the objects to apply differ from their checked hashes: run `up` again from one checkout")
        return objs

    def _converge(self, props: dict[str, Any], previous: dict[str, Any] | None = None) -> dict[str, Any]:
        """Applies every object, removes those `previous` had that are gone now, awaits the rollouts."""
        objs = self._checked(props)
        kube = Kube.from_kubeconfig(props["kubeconfig"])
        paths = apply.Paths(kube)
        if previous is not None:  # what cannot change in place (a pod) and changed is made anew
            apply.replace_changed(kube, paths, _changed(objs, previous.get("objects") or {}, props["objects"]))
        applied = {objects.key(o): apply.fingerprint(apply.apply(kube, paths, o)) for o in objs}
        if previous is not None:
            gone = [o for o in reversed(self.refs_of(previous)) if objects.key(o) not in applied]
            apply.remove(kube, paths, gone)
        apply.await_rollouts(kube, paths, objs)
        return self.outputs(props, fingerprints_text(applied))

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Applies every object."""
        return CreateResult(id_=self.resource_id, outs=self._converge(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """An in-place update when an object changed (or drifted), or what it is rendered from, or the logic."""
        changed = any(olds.get(k) != news.get(k) for k in (*INPUTS, *self.compared))
        return DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Applies every object again, and deletes those no longer there."""
        return UpdateResult(outs=self._converge(news, previous=olds))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The objects as the cluster has them: one edited or deleted there is drift (hash ""); all gone, gone."""
        kube = Kube.from_kubeconfig(props["kubeconfig"])
        paths = apply.Paths(kube)
        try:
            live = {objects.key(o): kube.find(paths.of(o)) for o in self.refs_of(props)}
        except KeyError:  # a kind the cluster does not serve: its objects are gone
            live = {}
        except KubeError as err:  # discovery failed: gone when the cluster is
            if err.status not in (0, 404):
                raise
            return ReadResult(id_="", outs={})
        if not any(live.values()):  # none left (or the cluster cannot be reached)
            return ReadResult(id_="", outs={})
        fingerprints = fingerprints_of(props)
        hashes = {
            k: h if _unchanged(live.get(k), fingerprints.get(k)) else DRIFTED for k, h in props["objects"].items()
        }
        return ReadResult(id_=id_, outs={**props, "objects": hashes})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Deletes the objects, last applied first; waits for those of an awaited kind (apply.AWAITED_DELETION)."""
        kube = Kube.from_kubeconfig(props["kubeconfig"])
        try:
            paths, refs = apply.Paths(kube), list(reversed(self.refs_of(props)))
            apply.remove(kube, paths, refs)
            apply.await_gone(kube, paths, refs)
        except KubeError as err:
            if err.status != 0:  # a cluster that cannot be reached took its objects with it
                raise


def fingerprints_text(applied: Mapping[str, str]) -> str:
    """Each object's fingerprint in the order of its key, on one line: `objects` holds the keys already."""
    return " ".join(applied[k] for k in sorted(applied))


def fingerprints_of(props: Mapping[str, Any]) -> dict[str, str]:
    """Each object's fingerprint by key, from the line against `objects`' keys (an older state kept a map)."""
    kept = props.get("fingerprints")
    if isinstance(kept, Mapping):
        return dict(kept)
    keys, values = sorted(props.get("objects") or {}), str(kept or "").split()
    return dict(zip(keys, values, strict=True)) if len(keys) == len(values) else {}


def _changed(objs: list[apply.Object], before: dict[str, str], now: dict[str, str]) -> list[apply.Object]:
    """The objects applied before whose hash is another now (a drifted one's is "")."""
    return [o for o in objs if objects.key(o) in before and before[objects.key(o)] != now[objects.key(o)]]


def _unchanged(live: apply.Object | None, fingerprint: str | None) -> bool:
    """Whether an object is in the cluster as it was applied."""
    return live is not None and apply.fingerprint(live) == fingerprint
