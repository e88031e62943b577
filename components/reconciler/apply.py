"""Rendered objects applied to a cluster as Gardener's resource manager applies a ManagedResource's.

Server-side apply under one field manager (`arbor`, conflicts forced), each object's API path found by discovery;
after applying, a fingerprint of each object as the API server keeps it (`fingerprint`), so a later read tells an
object edited or deleted in the cluster from one left alone; workloads are awaited until rolled out, as the
Kubernetes provider awaits them, and MachineDeployments until their machines joined, as Gardener's worker waits.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from components.naming import json_hash
from components.reconciler.kube import Kube, KubeError

FIELD_MANAGER = "arbor"
ROLLOUT_TIMEOUT_S = 300
POLL_S = 2.0
# Annotations a controller writes on the objects it manages: not an edit.
CONTROLLER_ANNOTATIONS = ("deployment.kubernetes.io/revision", "deprecated.daemonset.template.generation")

Object = dict[str, Any]
# Kinds whose spec cannot change: a changed one is deleted and made anew, as kubelet makes a new mirror pod.
REPLACED = ("Pod",)
GONE_TIMEOUT_S = 60
# Kinds whose deletion a resource waits out: a MachineDeployment is gone once MCM has deleted its machines (as
# Gardener's worker flow waits for a removed pool's machines), so `up` ends with the pool's nodes gone.
AWAITED_DELETION = ("MachineDeployment",)
DELETION_TIMEOUT_S = 600
# The kinds whose rollout an apply waits for.
WORKLOADS = ("Deployment", "DaemonSet", "StatefulSet")
# A MachineDeployment is rolled out once each of its machines joined as a node (MCM counts it available); until
# then the machine state moves (provider ID, node), so what comes after (the shoot state) waits, as Gardener's
# worker reconciliation waits for its MachineDeployments. A cloud machine may take as long as MCM's default
# creation timeout.
MACHINE_DEPLOYMENT = "MachineDeployment"
MACHINES_TIMEOUT_S = 1200
AWAITED_ROLLOUT = (*WORKLOADS, MACHINE_DEPLOYMENT)


def _base(api_version: str) -> str:
    """The API path of a group version: `/api/v1`, `/apis/apps/v1`."""
    return f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"


class Paths:
    """API paths of objects, from the cluster's discovery (one request per group version)."""

    def __init__(self, kube: Kube) -> None:
        self.kube = kube
        self.found: dict[str, dict[str, tuple[str, bool]]] = {}

    def _resources(self, api_version: str) -> dict[str, tuple[str, bool]]:
        """Each kind of a group version: its resource name and whether it is namespaced."""
        if api_version not in self.found:
            listed = self.kube.get(_base(api_version))["resources"]
            self.found[api_version] = {r["kind"]: (r["name"], r["namespaced"]) for r in listed if "/" not in r["name"]}
        return self.found[api_version]

    def of(self, obj: Object) -> str:
        """The path of an object."""
        api_version, meta = obj["apiVersion"], obj["metadata"]
        resource, namespaced = self._resources(api_version)[obj["kind"]]
        scope = f"/namespaces/{meta['namespace']}" if namespaced else ""
        return f"{_base(api_version)}{scope}/{resource}/{meta['name']}"


def fingerprint(live: Object) -> str:
    """A hash of an object as the API server keeps it, without what the server and controllers change on their own."""
    meta = live.get("metadata") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in CONTROLLER_ANNOTATIONS}
    kept = {k: v for k, v in live.items() if k not in ("metadata", "status")}
    kept["metadata"] = {"labels": meta.get("labels") or {}, "annotations": annotations}
    # 64 bits tell an edited object from the same one.
    return json_hash(kept)


def apply(kube: Kube, paths: Paths, obj: Object) -> Object:
    """Server-side applies `obj` (conflicts forced, as the sole owner of what it sets); the object as applied."""
    query = f"?fieldManager={FIELD_MANAGER}&force=true"
    return dict(kube.apply_patch(paths.of(obj) + query, obj))


def rolled_out(live: Object) -> bool:
    """Whether a workload or a MachineDeployment runs its current template everywhere; anything else: done."""
    if live["kind"] not in AWAITED_ROLLOUT:
        return True
    spec, status = live.get("spec") or {}, live.get("status") or {}
    if status.get("observedGeneration", 0) < (live.get("metadata") or {}).get("generation", 0):
        return False  # its controller has not seen the current template yet
    if live["kind"] in ("Deployment", MACHINE_DEPLOYMENT):
        wanted = spec.get("replicas", 1)
        if live["kind"] == MACHINE_DEPLOYMENT and status.get("replicas", 0) != wanted:
            return False  # a roll's old machines are still there
        return bool(status.get("updatedReplicas", 0) == wanted == status.get("availableReplicas", 0))
    if live["kind"] == "StatefulSet":  # every replica ready on the current revision
        wanted = spec.get("replicas", 1)
        current = status.get("currentRevision") == status.get("updateRevision")
        return bool(current and status.get("readyReplicas", 0) == wanted)
    wanted = status.get("desiredNumberScheduled", 0)
    return bool(status.get("updatedNumberScheduled", 0) == wanted == status.get("numberAvailable", 0))


def _rollout_timeout(kind: str) -> int:
    """How long an apply waits for an object of `kind` to roll out."""
    return MACHINES_TIMEOUT_S if kind == MACHINE_DEPLOYMENT else ROLLOUT_TIMEOUT_S


def await_rollouts(kube: Kube, paths: Paths, objs: Iterable[Object]) -> None:
    """Waits until every workload among `objs` has rolled out; fails naming those that did not in time."""
    pending = [o for o in objs if o["kind"] in AWAITED_ROLLOUT]
    timeout = max((_rollout_timeout(o["kind"]) for o in pending), default=0)
    deadline = time.monotonic() + timeout
    while pending:
        pending = [o for o in pending if not rolled_out(kube.get(paths.of(o)))]
        if not pending:
            return
        if time.monotonic() > deadline:
            names = ", ".join(
                f"{o['kind']} {o['metadata'].get('namespace', '')}/{o['metadata']['name']}" for o in pending
            )
            raise TimeoutError(f"not rolled out in {timeout} s: {names}")
        time.sleep(POLL_S)


def remove(kube: Kube, paths: Paths, objs: Iterable[Object]) -> None:
    """Deletes the objects, an object already gone (or a kind the cluster no longer serves) being fine."""
    for obj in objs:
        try:
            kube.delete(paths.of(obj))
        except KeyError:
            continue
        except KubeError as err:
            if err.status != 404:
                raise


def _wait_gone(kube: Kube, path: str, deadline: float, poll_s: float, late: str) -> None:
    """Polls until the object at `path` is gone; TimeoutError(`late`) once past `deadline` (monotonic)."""
    while kube.find(path) is not None:
        if time.monotonic() > deadline:
            raise TimeoutError(late)
        time.sleep(poll_s)


def await_gone(kube: Kube, paths: Paths, objs: Iterable[Object]) -> None:
    """Waits until the deleted objects of an AWAITED_DELETION kind are gone (a kind no longer served: gone)."""
    deadline = time.monotonic() + DELETION_TIMEOUT_S
    for obj in [o for o in objs if o["kind"] in AWAITED_DELETION]:
        try:
            path = paths.of(obj)
        except KeyError:
            continue
        _wait_gone(
            kube, path, deadline, POLL_S, f"{obj['kind']} {obj['metadata']['name']} not gone in {DELETION_TIMEOUT_S} s"
        )


def replace_changed(kube: Kube, paths: Paths, changed: Iterable[Object]) -> None:
    """Deletes the objects of a REPLACED kind among `changed`, waiting until they are gone, to be made anew."""
    for obj in [o for o in changed if o["kind"] in REPLACED]:
        path = paths.of(obj)
        kube.delete(path)
        where = f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"
        late = f"{obj['kind']} {where} not gone in {GONE_TIMEOUT_S} s, so it cannot be made anew"
        _wait_gone(kube, path, time.monotonic() + GONE_TIMEOUT_S, POLL_S / 4, late)
