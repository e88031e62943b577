"""A value a preview does not know yet is no change; a known one that differs is."""

from __future__ import annotations

from pulumi.runtime import rpc

from components.reconciler import local_cluster, unknowns


def test_a_value_unknown_at_any_depth_is_not_known() -> None:
    """GIVEN the engine's sentinel or a non-plain object, nested or not WHEN asked THEN not known."""
    assert unknowns.known({"a": ["x", 1, None, {"b": True}]})
    assert not unknowns.known(rpc.UNKNOWN)
    assert not unknowns.known({"a": [rpc.UNKNOWN]})
    assert not unknowns.known({"a": object()})


def test_only_a_known_new_value_of_a_recorded_key_is_a_change() -> None:
    """GIVEN old and new inputs WHEN compared THEN a known, different value changes; unknown or unrecorded do not."""
    olds = {"restore": {"bucketName": "a"}, "kubeconfig": "k"}
    assert unknowns.changed(olds, {"restore": {"bucketName": "b"}}, ("restore",)) == ["restore"]
    assert unknowns.changed(olds, {"restore": {"bucketName": rpc.UNKNOWN}}, ("restore",)) == []
    assert unknowns.changed(olds, {"restore": rpc.UNKNOWN}, ("restore",)) == []
    assert unknowns.changed({}, {"restore": {"bucketName": "b"}}, ("restore",)) == []


def test_a_cluster_whose_entry_a_preview_does_not_know_yet_is_not_updated() -> None:
    """GIVEN a shoot cluster WHEN a preview restarts its seed (entry unknown) THEN no update; a new entry updates."""
    olds = {"clusterName": "c", "workdir": "w", "kubernetesVersion": "v", "version": local_cluster.PROVIDER_VERSION,
            "running": True, "restore": {"bucketName": "a", "storePrefix": "e/etcd-main"}}  # fmt: skip
    provider = local_cluster.LocalClusterProvider()
    assert not provider.diff("c", olds, {**olds, "restore": rpc.UNKNOWN}).changes
    assert not provider.diff("c", olds, {**olds, "restore": {"bucketName": rpc.UNKNOWN, "storePrefix": "x"}}).changes
    assert provider.diff("c", olds, {**olds, "restore": {"bucketName": "b", "storePrefix": "e/etcd-main"}}).changes
