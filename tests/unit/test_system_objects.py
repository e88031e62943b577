"""A shoot's system components as one resource: applied from its values, hashes in the state, drift, pruning."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from pulumi.runtime import rpc

from components.reconciler import applied, apply, system_components
from components.reconciler.kube import Kube
from components.render import objects, system
from tests.unit.test_system_components import PLAN

CLUSTER_SCOPED = ("ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition")


class Cluster:
    """An API server's objects by path, with discovery; every workload rolls out at once unless told otherwise."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.stuck: set[str] = set()

    def get(self, path: str) -> Any:
        if path.count("/") <= 3:  # discovery: /api/v1, /apis/<group>/<version>
            workloads = ("DaemonSet", "Deployment", "StatefulSet")
            kinds = {"v1": ("ServiceAccount", "ConfigMap", "Service", "Pod"), "apps/v1": workloads}
            version = path.removeprefix("/api/").removeprefix("/apis/")
            names = (
                kinds.get(version)
                or {
                    "rbac.authorization.k8s.io/v1": ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"),
                    "apiextensions.k8s.io/v1": ("CustomResourceDefinition",),
                    "policy/v1": ("PodDisruptionBudget",),
                    "machine.sapcloud.io/v1alpha1": ("MachineDeployment",),
                }[version]
            )
            return {"resources": [{"kind": k, "name": f"{k.lower()}s", "namespaced": k not in CLUSTER_SCOPED}
                                  for k in names]}  # fmt: skip
        return self.objects[path]

    def find(self, path: str) -> Any:
        return self.objects.get(path)

    def apply_patch(self, path: str, body: Any) -> Any:
        path = path.split("?")[0]
        live = {**copy.deepcopy(body), "metadata": {**body["metadata"], "generation": 1}}
        if body["kind"] in ("Deployment", "DaemonSet") and body["metadata"]["name"] not in self.stuck:
            replicas = body["spec"].get("replicas", 1)
            rolled = {"updatedReplicas": replicas, "availableReplicas": replicas, "desiredNumberScheduled": 2}
            live["status"] = {**rolled, "observedGeneration": 1, "updatedNumberScheduled": 2, "numberAvailable": 2}
        if body["kind"] == "MachineDeployment" and body["metadata"]["name"] not in self.stuck:
            replicas = body["spec"].get("replicas", 1)
            joined = {"replicas": replicas, "updatedReplicas": replicas, "availableReplicas": replicas}
            live["status"] = {**joined, "observedGeneration": 1}
        if body["kind"] == "StatefulSet" and body["metadata"]["name"] not in self.stuck:
            ready = {"readyReplicas": body["spec"].get("replicas", 1), "currentRevision": "r1", "updateRevision": "r1"}
            live["status"] = {**ready, "observedGeneration": 1}
        self.objects[path] = live
        return live

    def delete(self, path: str) -> None:
        self.objects.pop(path, None)


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Cluster:
    """A shoot whose API is the in-memory Cluster."""
    fake = Cluster()
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: fake))
    return fake


def inputs(version: str | None = None) -> dict[str, Any]:
    """The resource's inputs for the first shoot of the local plan (its pools at `version`, if given)."""
    shoot = PLAN.shoots[0]
    values = system.values_of(shoot, shoot.networking.pods, shoot.networking.services)
    if version:
        values = system.SystemValues(**{**values.__dict__, "pools": tuple(
            system.SystemPool(p.name, version) for p in values.pools)})  # fmt: skip
    hashes = objects.hashes(system.render(values))
    return {"kubeconfig": "k", "values": values.to_object(), "objects": hashes, "version": "1"}


def test_every_object_is_applied_and_the_state_keeps_only_what_renders_them(cluster: Cluster) -> None:
    """GIVEN the values WHEN created THEN every object is in the cluster, and the outputs hold no object."""
    provider = system_components.SystemComponentsProvider()
    outs = provider.create(inputs()).outs or {}
    rendered = system.render(system.SystemValues.from_object(inputs()["values"]))
    assert len(cluster.objects) == len(rendered) > 20
    assert set(applied.fingerprints_of(outs)) == set(outs["objects"]) == {objects.key(o) for o in rendered}
    assert len(outs["fingerprints"].split()) == len(rendered)  # one line: the keys are `objects`' already
    assert "calico-node" not in json.dumps(outs["values"]) and "image" not in json.dumps(outs)
    assert not provider.diff("id", provider.read("id", outs).outs or {}, inputs()).changes


@pytest.mark.parametrize("change", ["edited", "deleted", "status only"])
def test_an_object_edited_or_deleted_is_drift_that_up_applies_again(cluster: Cluster, change: str) -> None:
    """GIVEN applied components WHEN an object is edited or deleted THEN read marks it; update applies it again.

    What a controller writes (status) is no edit.
    """
    provider = system_components.SystemComponentsProvider()
    outs = provider.create(inputs()).outs or {}
    path = next(p for p in cluster.objects if p.endswith("/daemonsets/calico-node"))
    if change == "edited":
        cluster.objects[path]["spec"]["template"]["spec"]["hostNetwork"] = False
    elif change == "deleted":
        del cluster.objects[path]
    else:
        cluster.objects[path]["status"] = {"numberAvailable": 0}
    read = provider.read("id", outs).outs or {}
    drifted = change != "status only"
    assert (read["objects"]["daemonset-calico-node"] == "") is drifted
    assert provider.diff("id", read, inputs()).changes is drifted
    if drifted:
        updated = provider.update("id", read, inputs()).outs or {}
        assert cluster.objects[path]["spec"]["template"]["spec"]["hostNetwork"] is True
        assert not provider.diff("id", provider.read("id", updated).outs or {}, inputs()).changes


def test_an_upgrade_applies_the_new_kube_proxy_and_deletes_the_old(cluster: Cluster) -> None:
    """GIVEN the pools at a new version WHEN updated THEN the new kube-proxy DaemonSet is there, the old one gone."""
    provider = system_components.SystemComponentsProvider()
    outs = provider.create(inputs()).outs or {}
    old = {p for p in cluster.objects if "/daemonsets/kube-proxy-" in p}
    provider.update("id", outs, inputs("1.35.0"))
    new = {p for p in cluster.objects if "/daemonsets/kube-proxy-" in p}
    assert old and new and not old & new and all(p.endswith("-v1.35.0") for p in new)


def test_check_renders_the_hashes_from_the_values_and_knows_none_while_they_are_unknown() -> None:
    """GIVEN the program's inputs (values, no hashes) WHEN checked THEN the rendering's hashes; unknown in a preview."""
    provider = system_components.SystemComponentsProvider()
    sent = {k: v for k, v in inputs().items() if k != "objects"}
    assert provider.check({}, sent).inputs["objects"] == inputs()["objects"]
    assert provider.check({}, {**sent, "values": rpc.UNKNOWN}).inputs["objects"] == rpc.UNKNOWN


def test_a_rendering_that_differs_from_the_checked_hashes_is_refused(cluster: Cluster) -> None:
    """GIVEN hashes the provider's renderer does not produce WHEN created THEN nothing is applied, and it says why."""
    wrong = {**inputs(), "objects": {**inputs()["objects"], "daemonset-calico-node": "0" * 64}}
    with pytest.raises(ValueError, match="differ from their checked hashes"):
        system_components.SystemComponentsProvider().create(wrong)
    assert cluster.objects == {}


def test_a_workload_that_does_not_roll_out_fails_the_update_naming_it(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN calico-node never ready WHEN created THEN it fails after the timeout, naming the DaemonSet."""
    cluster.stuck.add("calico-node")
    monkeypatch.setattr(apply, "ROLLOUT_TIMEOUT_S", 0)
    monkeypatch.setattr(apply, "POLL_S", 0)
    with pytest.raises(TimeoutError, match="DaemonSet kube-system/calico-node"):
        system_components.SystemComponentsProvider().create(inputs())
