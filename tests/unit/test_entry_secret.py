"""A hosted shoot's `etcd-backup` Secret, written from its seed's bucket Secret: the state keeps no bucket key."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from pulumi.output import Unknown
from pulumi.runtime import rpc

from components.reconciler import entry_secret, entry_store
from components.reconciler.kube import Kube, secret_path
from tests.unit.test_credential_secrets import Cluster

HELD = {"bucketName": "b", "accessKeyID": "id", "secretAccessKey": "s3cret", "region": "us-east-1"}
PREFIX = "shoot--dev--web--u/etcd-main"
WANTED = {**HELD, "storePrefix": PREFIX}
PROVIDER = entry_secret.EntrySecretProvider()


@pytest.fixture
def seed(monkeypatch: pytest.MonkeyPatch) -> Cluster:
    """A seed holding its bucket's Secret in `garden`."""
    fake = Cluster()
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in HELD.items()}
    fake.objects[secret_path("garden", "bucket-b")] = {"metadata": {"name": "bucket-b"}, "data": encoded}
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: fake))
    return fake


def inputs(namespace: str = "shoot--dev--web", data: dict[str, str] = WANTED) -> dict[str, Any]:
    """The resource's inputs as the program sends them."""
    source = entry_store.reference("k", "garden", data, "bucket-b")
    return {"source": source, "kubeconfig": "k", "namespace": namespace, "cluster": "local:local-1",
            "version": entry_secret.PROVIDER_VERSION, "written": None}  # fmt: skip


def written(seed: Cluster, namespace: str = "shoot--dev--web") -> dict[str, str]:
    """The shoot's `etcd-backup` data, decoded."""
    raw = seed.objects[f"{secret_path(namespace)}/etcd-backup"]["data"]
    return {k: base64.b64decode(v).decode() for k, v in raw.items()}


def test_the_shoots_secret_is_the_seeds_with_the_entry_and_the_state_keeps_no_key(seed: Cluster) -> None:
    """GIVEN the seed's bucket Secret WHEN written THEN the shoot's holds it with the prefix; no key in the state."""
    outs = PROVIDER.create(inputs()).outs or {}
    assert written(seed) == WANTED
    assert "s3cret" not in json.dumps(outs) and outs["written"] == entry_store.data_digest(WANTED)
    read = PROVIDER.read("id", outs).outs or {}
    assert read == outs and not PROVIDER.diff("id", read, inputs()).changes


@pytest.mark.parametrize("change", ["deleted", "edited"])
def test_a_secret_changed_in_the_seed_is_drift_and_written_again(seed: Cluster, change: str) -> None:
    """GIVEN the shoot's Secret WHEN deleted or edited in the seed THEN drift, and the update writes it again."""
    outs = PROVIDER.create(inputs()).outs or {}
    path = f"{secret_path('shoot--dev--web')}/etcd-backup"
    if change == "deleted":
        del seed.objects[path]
    else:
        seed.objects[path]["data"]["secretAccessKey"] = "eA=="
    read = PROVIDER.read("id", outs).outs or {}
    assert read["written"] == entry_secret.DRIFTED and PROVIDER.diff("id", read, inputs()).changes
    PROVIDER.update("id", read, inputs())
    assert written(seed) == WANTED


def test_a_seed_secret_holding_other_credentials_is_refused_naming_both(seed: Cluster) -> None:
    """GIVEN the seed's Secret with other credentials than the program computed WHEN written THEN refused, unwritten."""
    rotated = {**WANTED, "secretAccessKey": "new"}
    with pytest.raises(entry_store.StoreError, match=r"shoot--dev--web/etcd-backup: .*garden/bucket-b holds other"):
        PROVIDER.create(inputs(data=rotated))
    assert f"{secret_path('shoot--dev--web')}/etcd-backup" not in seed.objects


def test_new_credentials_are_an_update_and_a_new_namespace_leaves_none_behind(seed: Cluster) -> None:
    """GIVEN a written Secret WHEN the data's digest or the namespace changes THEN an update; the old one is gone."""
    outs = PROVIDER.create(inputs()).outs or {}
    assert PROVIDER.diff("id", outs, inputs(data={**WANTED, "secretAccessKey": "new"})).changes
    moved = inputs(namespace="shoot--dev--other")
    assert PROVIDER.diff("id", outs, moved).changes
    PROVIDER.update("id", outs, moved)
    assert f"{secret_path('shoot--dev--web')}/etcd-backup" not in seed.objects
    assert written(seed, "shoot--dev--other") == WANTED
    PROVIDER.delete("id", moved)
    assert f"{secret_path('shoot--dev--other')}/etcd-backup" not in seed.objects


def test_a_source_the_preview_does_not_know_yet_is_an_update_not_an_error(seed: Cluster) -> None:
    """GIVEN a written Secret WHEN a preview does not know the source (the seed's bucket updated) THEN an update."""
    outs = PROVIDER.create(inputs()).outs or {}
    assert PROVIDER.diff("id", outs, {**inputs(), "source": rpc.UNKNOWN}).changes
    assert PROVIDER.diff("id", outs, {**inputs(), "source": Unknown()}).changes  # type: ignore[no-untyped-call]
