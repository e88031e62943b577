"""Local backup secrets kept once: a bucket writes its user's keys to its seed, the store its root in the garden."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from components.reconciler import credential_secrets, local_process, object_store, store_bucket, store_identity
from components.reconciler.kube import Kube
from components.reconciler.object_store import ObjectStoreProvider
from components.reconciler.store_bucket import StoreBucketProvider
from components.render import backup
from tests.unit.test_credential_secrets import COLLECTION, NAMESPACE, Cluster
from tests.unit.test_local_backups import bucket_props, started, store_props

PROVIDER = StoreBucketProvider()
SECRET = backup.bucket_secret("b")


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Cluster:
    """A seed whose API is the in-memory Cluster, and a store that has what it should (nothing is reached)."""
    fake = Cluster()
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: fake))
    monkeypatch.setattr(store_bucket, "converge", lambda props: None)
    monkeypatch.setattr(store_bucket, "observe", store_bucket.desired)
    return fake


def inputs(namespace: str = NAMESPACE, **changed: Any) -> dict[str, Any]:
    """A bucket's inputs as the program sends them: writing the seed's Secret in `namespace`."""
    props = {k: v for k, v in bucket_props(**changed).items() if k not in ("wanted", "observed")}
    props |= dict.fromkeys((*store_bucket.GENERATED, "wanted", "observed"))
    where = {"kubeconfig": "k", "namespace": namespace, "secrets": store_bucket.secret_layout(SECRET),
             "cluster": "local:seed"}  # fmt: skip
    return credential_secrets.writing(props, where)


def created() -> dict[str, Any]:
    """A bucket made and refreshed: its outputs."""
    outs = PROVIDER.create(inputs()).outs or {}
    return PROVIDER.read("b", outs).outs or {}


def test_a_bucket_writes_its_users_keys_in_the_seed_and_keeps_them_once(cluster: Cluster) -> None:
    """GIVEN a seed's bucket WHEN made THEN the seed's Secret holds its `etcd-backup` data; the state, the key once."""
    outs = created()
    data = backup.store_bucket_data(
        "b", backup.store_credentials(outs["accessKey"], outs["secretKey"], outs["endpoint"], outs["caCert"])
    )
    assert cluster.data(SECRET) == data
    assert json.dumps(outs).count(outs["secretKey"]) == 1
    assert not [k for k in outs if k.startswith(store_bucket.DATA_FIELD)]
    found = cluster.objects[f"{COLLECTION}/{SECRET}"]["data"]
    assert outs[credential_secrets.OUTPUT] == {SECRET: credential_secrets.content_hash(found, data)}
    assert not PROVIDER.diff("b", outs, inputs()).changes


@pytest.mark.parametrize("edit", ["deleted", "edited"])
def test_a_secret_deleted_or_edited_in_the_seed_is_written_again_with_the_same_keys(
    cluster: Cluster, edit: str
) -> None:
    """GIVEN a bucket's Secret deleted or edited behind arbor's back WHEN refreshed THEN an update writes it again.

    The user's keys stay (the store has them): only the Secret is put right, as the preview says.
    """
    outs = created()
    written = cluster.data(SECRET)
    if edit == "deleted":
        cluster.delete(f"{COLLECTION}/{SECRET}")
    else:
        credential_secrets.put_secret(cluster, NAMESPACE, SECRET, {"secretAccessKey": "ZWRpdGVk"})  # type: ignore[arg-type]
    drifted = PROVIDER.read("b", outs).outs or {}
    diff = PROVIDER.diff("b", drifted, inputs())
    assert diff.changes and not diff.replaces and set(diff.stables or ()) == set(store_bucket.GENERATED)
    updated = PROVIDER.update("b", drifted, inputs()).outs or {}
    assert cluster.data(SECRET) == written
    assert (updated["accessKey"], updated["secretKey"]) == (outs["accessKey"], outs["secretKey"])
    assert not PROVIDER.diff("b", PROVIDER.read("b", updated).outs or {}, inputs()).changes


def test_an_older_bucket_starts_writing_the_secret_its_seeds_set_wrote(cluster: Cluster) -> None:
    """GIVEN a bucket an older arbor made (the seed's SecretSet wrote its Secret) WHEN updated THEN it writes it.

    One update, the keys kept: the Secret holds the same data the set wrote.
    """
    older = bucket_props()
    assert PROVIDER.diff("b", older, inputs()).changes
    updated = PROVIDER.update("b", older, inputs()).outs or {}
    assert (updated["accessKey"], updated["secretKey"]) == ("AKEY", "SKEY")
    assert cluster.data(SECRET) == backup.store_bucket_data(
        "b", backup.store_credentials("AKEY", "SKEY", older["endpoint"], older["caCert"])
    )


def test_a_deleted_bucket_takes_its_secret_along_even_when_its_store_is_gone(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a bucket whose store is already gone WHEN deleted THEN the seed's Secret of its keys is removed.

    A Secret someone else wrote since (not what the bucket wrote) stays.
    """

    @contextmanager
    def gone(props: dict[str, Any]) -> Iterator[Any]:
        raise store_bucket.BucketError("connection refused")
        yield

    monkeypatch.setattr(store_bucket, "clients", gone)
    outs = created()
    PROVIDER.delete("b", outs)
    assert f"{COLLECTION}/{SECRET}" not in cluster.objects
    outs = created()
    credential_secrets.put_secret(cluster, NAMESPACE, SECRET, {"other": "b3RoZXI="})  # type: ignore[arg-type]
    PROVIDER.delete("b", outs)
    assert cluster.data(SECRET) == {"other": "other"}


def test_a_secret_moved_to_another_namespace_leaves_the_old_one_first(cluster: Cluster) -> None:
    """GIVEN a bucket's Secret WHEN its namespace changes THEN the old Secret is removed and the new one written."""
    outs = created()
    moved = inputs(namespace="elsewhere")
    assert PROVIDER.diff("b", outs, moved).changes
    PROVIDER.update("b", outs, moved)
    assert f"{COLLECTION}/{SECRET}" not in cluster.objects
    assert f"/api/v1/namespaces/elsewhere/secrets/{SECRET}" in cluster.objects


ROOT = f"/api/v1/namespaces/{object_store.ROOT_SECRET_NAMESPACE}/secrets/{object_store.ROOT_SECRET}"
__all__ = ["started"]  # the fixture, imported for the store's tests


def garden_store(tmp_path: Path) -> dict[str, Any]:
    """A store's inputs, writing its root credentials in the garden."""
    where = {"kubeconfig": "garden", "namespace": object_store.ROOT_SECRET_NAMESPACE, "cluster": "local:garden",
             "secrets": {object_store.ROOT_SECRET: object_store.ROOT_KEYS}}  # fmt: skip
    return credential_secrets.writing(store_props(tmp_path), where)


def test_the_store_writes_its_root_credentials_to_the_garden_and_buckets_read_them_there(
    cluster: Cluster, tmp_path: Path, started: list[tuple[dict[str, Any], bool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN the store WHEN made THEN the garden's `garden/backup-local` holds its root user; a bucket reads it there.

    The store's outputs keep the password once; a bucket's inputs keep where it is, not what; the Secret deleted in
    the garden is drift the store's next update puts right.
    """
    monkeypatch.setattr(local_process, "running_pid", lambda props: 4242)  # it runs
    provider = ObjectStoreProvider()
    made = provider.read("s", provider.create(garden_store(tmp_path)).outs or {}).outs or {}
    data = cluster.objects[ROOT]["data"]
    found = {k: base64.b64decode(v).decode() for k, v in data.items()}
    assert found == {"accessKeyID": made["rootUser"], "secretAccessKey": made["rootPassword"]}
    assert json.dumps(made).count(made["rootPassword"]) == 1
    assert not provider.diff("s", made, garden_store(tmp_path)).changes
    where = object_store.root_reference("garden")
    assert store_bucket._root_password({**bucket_props(), "rootSecret": where}) == made["rootPassword"]
    cluster.delete(ROOT)
    drifted = provider.read("s", made).outs or {}
    assert provider.diff("s", drifted, garden_store(tmp_path)).changes
    provider.update("s", drifted, garden_store(tmp_path))
    assert cluster.objects[ROOT]["data"] == data
    # Gone from the garden as well, a bucket cannot reach the store: drift it reports, naming the Secret.
    cluster.delete(ROOT)
    with pytest.raises(store_bucket.BucketError, match="root credentials: Secret garden/backup-local is missing"):
        store_bucket._root_password({**bucket_props(), "rootSecret": where})


def test_a_bucket_that_kept_the_root_password_updates_once_and_keeps_it_no_more(cluster: Cluster) -> None:
    """GIVEN a bucket an older arbor made, with the root password among its inputs WHEN updated THEN it is dropped."""
    older = bucket_props()
    news = {k: v for k, v in inputs().items() if k != "rootPassword"} | {"rootSecret": object_store.root_reference("g")}
    assert PROVIDER.diff("b", older, news).changes
    updated = PROVIDER.update("b", older, news).outs or {}
    assert "rootPassword" not in updated and updated["rootSecret"]["name"] == object_store.ROOT_SECRET


def test_a_bucket_moved_to_workload_identity_names_its_role_and_holds_no_key(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a bucket with a user WHEN its seed's tokens are trusted (an audience) THEN the Secret names the role.

    The seed's Secret is written with the role before the user is removed, and neither key stays in the state; the
    way back makes a user again, then forgets the trust.
    """
    removed: list[bool] = []
    monkeypatch.setattr(store_bucket, "_remove_identity", lambda props: removed.append(store_bucket.by_role(props)))
    monkeypatch.setattr(store_identity, "desired", lambda props: ["trusted"])
    keys = created()
    news = {
        **inputs(audience="arbor-seed:local-1"),
        "secrets": store_bucket.secret_layout(SECRET, "arbor-seed:local-1"),
    }
    diff = PROVIDER.diff("b", keys, news)
    assert diff.changes and not diff.replaces and not diff.stables, "what the Secret holds changes"
    role = PROVIDER.update("b", keys, news).outs or {}
    arn = backup.store_role_arn("arbor-seed:local-1")
    assert cluster.data(SECRET) == backup.store_bucket_data(
        "b", backup.store_role_credentials(arn, "arbor-seed:local-1", role["endpoint"], role["caCert"])
    )
    assert removed == [False], "the user, after the Secret names the role"
    assert role["accessKey"] is None and role["secretKey"] is None and len(role["clientSecret"]) > 40
    assert keys["secretKey"] not in json.dumps(role)
    assert not PROVIDER.diff("b", PROVIDER.read("b", role).outs or {}, news).changes
    back = PROVIDER.update("b", role, inputs()).outs or {}
    assert removed == [False, True] and back["clientSecret"] is None
    assert back["accessKey"] and back["accessKey"] != keys["accessKey"], "a new user: the old keys are gone"
    assert cluster.data(SECRET)["accessKeyID"] == back["accessKey"]
