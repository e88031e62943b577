"""ObjectSet: a control-plane component's objects applied as one resource, each kept once in the state."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pulumi.runtime import rpc

from components.reconciler import applied, apply, object_set
from components.reconciler.kube import Kube
from components.render import objects
from tests.unit.test_system_objects import Cluster

NAMESPACE = "shoot--dev--web"
CONFIG = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "etcd-config", "namespace": NAMESPACE},
          "data": {"etcd.yaml": "name: etcd-main"}}  # fmt: skip
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "etcd-main-client", "namespace": NAMESPACE},
           "spec": {"ports": [{"port": 2379}]}}  # fmt: skip


def etcd(image: str = "etcd:v3.6") -> dict[str, Any]:
    """Etcd main's StatefulSet running `image`."""
    template = {"spec": {"containers": [{"name": "etcd", "image": image}]}}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "etcd-main", "namespace": NAMESPACE},
            "spec": {"replicas": 1, "template": template}}  # fmt: skip


ETCD = etcd()
MANIFESTS = [CONFIG, SERVICE, ETCD]


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Cluster:
    """A seed whose API is the in-memory Cluster."""
    fake = Cluster()
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: fake))
    return fake


def inputs(manifests: list[dict[str, Any]] = MANIFESTS) -> dict[str, Any]:
    """The resource's inputs as the program sends them."""
    return {"kubeconfig": "k", "cluster": "local:local-1", "manifests": manifests,
            "objects": objects.hashes(manifests), "version": object_set.PROVIDER_VERSION}  # fmt: skip


def as_engine_sends(value: Any) -> Any:
    """A value as the engine hands it to a provider: every number a float."""
    if isinstance(value, bool) or not isinstance(value, int | dict | list):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dict):
        return {k: as_engine_sends(v) for k, v in value.items()}
    return [as_engine_sends(v) for v in value]


def test_the_objects_are_applied_in_order_and_the_state_keeps_where_they_are_not_what(cluster: Cluster) -> None:
    """GIVEN a component's objects WHEN created THEN each is applied as sent, and the outputs hold none of them."""
    provider = object_set.ObjectSetProvider()
    outs = provider.create(as_engine_sends(inputs())).outs or {}
    assert list(cluster.objects) == [
        f"/api/v1/namespaces/{NAMESPACE}/configmaps/etcd-config",
        f"/api/v1/namespaces/{NAMESPACE}/services/etcd-main-client",
        f"/apis/apps/v1/namespaces/{NAMESPACE}/statefulsets/etcd-main",
    ]
    applied = cluster.objects[f"/apis/apps/v1/namespaces/{NAMESPACE}/statefulsets/etcd-main"]
    assert applied["spec"]["replicas"] == 1 and isinstance(applied["spec"]["replicas"], int)
    assert "manifests" not in outs and "etcd:v3.6" not in json.dumps(outs)
    assert outs["refs"] == [f"v1 ConfigMap {NAMESPACE}/etcd-config", f"v1 Service {NAMESPACE}/etcd-main-client",
                            f"apps/v1 StatefulSet {NAMESPACE}/etcd-main"]  # fmt: skip
    assert not provider.diff("id", provider.read("id", outs).outs or {}, inputs()).changes


@pytest.mark.parametrize("change", ["edited", "deleted", "image", "service dropped", "another cluster"])
def test_drift_or_a_change_is_an_update_that_applies_them_again(cluster: Cluster, change: str) -> None:
    """GIVEN applied objects WHEN one is edited or deleted in the cluster, or the objects change THEN `up` applies."""
    provider = object_set.ObjectSetProvider()
    outs = provider.create(inputs()).outs or {}
    news = inputs()
    path = f"/apis/apps/v1/namespaces/{NAMESPACE}/statefulsets/etcd-main"
    if change == "edited":
        cluster.objects[path]["spec"]["replicas"] = 3
    elif change == "deleted":
        del cluster.objects[path]
    elif change == "image":
        container = {"name": "etcd", "image": "etcd:v3.7"}
        news = inputs(
            [CONFIG, SERVICE, {**ETCD, "spec": {**ETCD["spec"], "template": {"spec": {"containers": [container]}}}}]
        )
    elif change == "another cluster":
        news = {**inputs(), "cluster": "local:local-2"}  # a migration: the same objects, on the new seed
    else:
        news = inputs([CONFIG, ETCD])
    read = provider.read("id", outs).outs or {}
    assert provider.diff("id", read, news).changes
    updated = provider.update("id", read, news).outs or {}
    assert len(cluster.objects) == len(news["manifests"])
    assert cluster.objects[path]["spec"] == news["manifests"][-1]["spec"]
    assert not provider.diff("id", provider.read("id", updated).outs or {}, news).changes


def test_a_statefulset_not_ready_in_time_fails_the_update_naming_it(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN etcd whose replica never gets ready WHEN applied THEN the update fails and names it."""
    cluster.stuck.add("etcd-main")
    monkeypatch.setattr(apply, "ROLLOUT_TIMEOUT_S", 0)
    with pytest.raises(TimeoutError, match=f"StatefulSet {NAMESPACE}/etcd-main"):
        object_set.ObjectSetProvider().create(inputs())


POOL_NAME = "shoot--dev--web-pool-a-z1"
POOL: dict[str, Any] = {"apiVersion": "machine.sapcloud.io/v1alpha1", "kind": "MachineDeployment",
                        "metadata": {"name": POOL_NAME, "namespace": NAMESPACE}, "spec": {"replicas": 2}}  # fmt: skip


def test_machines_are_awaited_until_each_joined_and_a_rolls_old_ones_are_gone(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a pool whose machines MCM is still making WHEN applied THEN the update ends once all joined, no sooner.

    What follows the machines (the shoot state) reads them settled, as Gardener's worker waits for its deployments.
    """
    cluster.stuck.add(POOL_NAME)
    path = f"/apis/machine.sapcloud.io/v1alpha1/namespaces/{NAMESPACE}/machinedeployments/{POOL_NAME}"
    progress = [  # MCM's status after each poll: one joined, both joined beside an old one, the old one gone
        {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 1},
        {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 2, "availableReplicas": 2},
        {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 2},
    ]
    polls: list[dict[str, Any]] = []

    def poll(_seconds: float) -> None:
        polls.append(progress[len(polls)])
        cluster.objects[path]["status"] = polls[-1]

    monkeypatch.setattr("components.reconciler.apply.time.sleep", poll)
    object_set.ObjectSetProvider().create(inputs([POOL]))
    assert polls == progress


def test_machines_that_never_join_fail_the_update_naming_their_pool(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a pool whose machines never join WHEN applied THEN the update fails in time and names the pool."""
    cluster.stuck.add(POOL_NAME)
    monkeypatch.setattr(apply, "MACHINES_TIMEOUT_S", 0)
    with pytest.raises(TimeoutError, match=f"MachineDeployment {NAMESPACE}/{POOL_NAME}"):
        object_set.ObjectSetProvider().create(inputs([POOL]))


def test_check_adds_each_objects_hash_and_knows_none_while_the_manifests_are_unknown() -> None:
    """GIVEN the program's inputs (no hashes) WHEN checked THEN each object's hash by key; unknown in a preview."""
    provider = object_set.ObjectSetProvider()
    sent = {k: v for k, v in inputs().items() if k != "objects"}
    assert provider.check({}, sent).inputs["objects"] == inputs()["objects"]
    assert provider.check({}, {**sent, "manifests": rpc.UNKNOWN}).inputs["objects"] == rpc.UNKNOWN


def test_objects_that_differ_from_their_checked_hashes_are_refused_before_anything_is_applied(cluster: Cluster) -> None:
    """GIVEN manifests that do not match the checked hashes WHEN created THEN nothing is applied."""
    wrong = {**inputs(), "objects": {**inputs()["objects"], "statefulset-etcd-main": "0" * 16}}
    with pytest.raises(ValueError, match="differ from their checked hashes"):
        object_set.ObjectSetProvider().create(wrong)
    assert cluster.objects == {}


@pytest.mark.parametrize("kept", ["lines", "whole"])
def test_delete_removes_every_object_last_first(cluster: Cluster, kept: str) -> None:
    """GIVEN applied objects, their refs kept as lines or whole (an older state) WHEN deleted THEN none is left."""
    provider = object_set.ObjectSetProvider()
    outs = provider.create(inputs()).outs or {}
    if kept == "whole":
        outs["refs"] = [objects.ref(o) for o in (CONFIG, SERVICE, ETCD)]
    assert not provider.diff("id", provider.read("id", outs).outs or {}, inputs()).changes
    provider.delete("id", outs)
    assert cluster.objects == {}


def test_a_changed_pod_is_deleted_and_made_anew_an_unchanged_one_is_left(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a node's mirror pods WHEN one's manifest changes THEN that one is deleted first (a pod's spec is fixed)."""
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{c}-node-0", "namespace": "kube-system"},
             "spec": {"containers": [{"name": c, "image": f"{c}:v1"}]}} for c in ("etcd", "apiserver")]  # fmt: skip
    deleted: list[str] = []
    gone = cluster.delete

    def delete(path: str) -> None:
        deleted.append(path)
        gone(path)

    monkeypatch.setattr(cluster, "delete", delete)
    provider = object_set.ObjectSetProvider()
    outs = provider.create(inputs(pods)).outs or {}
    changed = [pods[0], {**pods[1], "spec": {"containers": [{"name": "apiserver", "image": "apiserver:v2"}]}}]
    provider.update("id", outs, inputs(changed))
    assert deleted == ["/api/v1/namespaces/kube-system/pods/apiserver-node-0"]
    assert cluster.objects["/api/v1/namespaces/kube-system/pods/apiserver-node-0"]["spec"] == changed[1]["spec"]


# Kubernetes names (DNS subdomains, dots and dashes within), API versions with and without a group, and kinds.
NAMES = st.from_regex(r"[a-z0-9]([a-z0-9.-]{0,40}[a-z0-9])?", fullmatch=True)


@given(
    api_version=st.sampled_from(["v1", "apps/v1", "machine.sapcloud.io/v1alpha1", "rbac.authorization.k8s.io/v1"]),
    kind=st.from_regex(r"[A-Z][A-Za-z]{0,30}", fullmatch=True),
    name=NAMES,
    namespace=st.none() | NAMES,
)
def test_a_ref_kept_as_a_line_finds_the_same_object(
    api_version: str, kind: str, name: str, namespace: str | None
) -> None:
    """GIVEN any object, namespaced or not WHEN its ref is kept as a line and read back THEN it is the same ref."""
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {**meta, "labels": {"a": "b"}}, "data": {"k": "v"}}
    assert objects.ref_of(objects.ref_text(obj)) == objects.ref(obj)
    assert objects.ref_of(objects.ref(obj)) == objects.ref(obj)


@pytest.mark.parametrize("form", ["line", "map"])
def test_fingerprints_kept_as_one_line_or_an_older_states_map_tell_drift_alike(cluster: Cluster, form: str) -> None:
    """GIVEN applied objects, their fingerprints as one line or an older state's map WHEN read THEN no drift.

    An edited object drifts in either form.
    """
    provider = object_set.ObjectSetProvider()
    outs = provider.create(inputs()).outs or {}
    assert isinstance(outs["fingerprints"], str) and len(outs["fingerprints"].split()) == len(outs["objects"])
    if form == "map":
        outs = {**outs, "fingerprints": applied.fingerprints_of(outs)}
    assert not provider.diff("id", provider.read("id", outs).outs or {}, inputs()).changes
    cluster.objects[f"/apis/apps/v1/namespaces/{NAMESPACE}/statefulsets/etcd-main"]["spec"]["replicas"] = 3
    assert provider.diff("id", provider.read("id", outs).outs or {}, inputs()).changes
    # A line that does not match the keys reads as no fingerprint: every object drifts, none is taken as applied.
    assert applied.fingerprints_of({**outs, "fingerprints": "abc"}) == {}
