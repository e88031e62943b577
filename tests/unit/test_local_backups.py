"""Local backups without a store: the providers' decisions, the settings' comparison, the wiring under mocks.

The real MinIO server, a real bucket and its user are exercised in tests/integration/test_backups.py.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pulumi
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from hypothesis import given
from hypothesis import strategies as st

from components.checks import parse_landscape
from components.kinds import ProviderType
from components.plan.planner import plan_landscape
from components.plan.shards import Shard, scope
from components.providers.snapshot_step import RISKY_ENV
from components.reconciler import etcd_snapshot, object_store, ports, secret_set, signing, store_bucket
from components.reconciler.kube import Kube, KubeError
from components.reconciler.object_store import ObjectStoreProvider
from components.reconciler.store_bucket import StoreBucketProvider
from components.render import backup
from tests.unit.landscape_mocks import Mocks, registered
from tests.unit.spec_cases import base
from tests.unit.test_cloud_credentials import SECRET_SIG
from tests.unit.test_cloud_stacks import GARDEN_KUBECONFIG as GIVEN_KUBECONFIG

STORE = "local-object-store"

BUCKETS = st.from_regex(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]", fullmatch=True)


def echoed(policy: dict[str, Any]) -> dict[str, Any]:
    """A policy as MinIO writes it back: single values as lists, `"*"` as `{"AWS": ["*"]}`, statements reordered."""

    def listed(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: listed(v) for k, v in value.items()}
        return value if isinstance(value, list) else [value]

    out = []
    for s in reversed(policy["Statement"]):
        s = {**s, **{k: listed(s[k]) for k in ("Action", "Resource", "Condition") if k in s}}
        if s.get("Principal") == "*":
            s["Principal"] = {"AWS": ["*"]}
        out.append(dict(reversed(list(s.items()))))
    return {**policy, "Statement": out}


@given(BUCKETS)
def test_a_policy_echoed_by_the_store_compares_equal_and_an_edited_one_does_not(bucket: str) -> None:
    """GIVEN the bucket and identity policies WHEN read back in MinIO's form THEN they equal what arbor wrote.

    With one action taken away (an edit behind arbor's back) they differ.
    """
    for policy in (backup.store_bucket_policy(bucket), backup.aws_identity_policy(backup.STORE_PARTITION, bucket)):
        assert store_bucket.statements(echoed(policy)) == store_bucket.statements(json.dumps(policy))
        edited = echoed(policy)
        edited["Statement"][0]["Action"] = edited["Statement"][0]["Action"][1:] or ["s3:GetObject"]
        assert store_bucket.statements(edited) != store_bucket.statements(policy)


@given(BUCKETS)
def test_the_store_gets_awss_settings_less_only_what_minio_does_not_know(bucket: str) -> None:
    """GIVEN a bucket WHEN its store settings are rendered THEN they are aws's less what MinIO does not know.

    That is the TLS version condition and the multipart rule, and nothing else.
    """
    aws = backup.aws_bucket_policy(backup.STORE_PARTITION, bucket)["Statement"]
    store = backup.store_bucket_policy(bucket)["Statement"]
    assert [s["Sid"] for s in store] == ["DenyInsecureTransport"]
    assert store == [s for s in aws if s["Sid"] != "DenyOutdatedTLS"]
    assert backup.store_lifecycle_rules() == [
        r for r in backup.aws_lifecycle_rules() if r["id"] != "abort-incomplete-multipart-uploads"
    ]


def test_the_etcd_backup_data_of_a_local_bucket_is_s3s_with_the_store() -> None:
    """GIVEN a local bucket's user WHEN its `etcd-backup` data is made THEN it is S3's with the store's reach.

    etcd-backup-restore's S3 keys, with the store's endpoint, path-style addressing and CA.
    """
    creds = backup.store_credentials("AKEY", "SKEY", "https://127.0.0.1:20000", "CA")
    data = backup.etcd_backup_data(ProviderType.LOCAL, "b", backup.STORE_REGION, creds)
    assert data == {
        "accessKeyID": "AKEY", "secretAccessKey": "SKEY", "endpoint": "https://127.0.0.1:20000",
        "s3ForcePathStyle": "true", "trustedCaCert": "CA", "bucketName": "b", "region": "us-east-1",
    }  # fmt: skip


def outs(result: Any) -> dict[str, Any]:
    """A provider call's outputs."""
    assert result.outs is not None
    return dict(result.outs)


def bucket_props(**changes: Any) -> dict[str, Any]:
    """A bucket's outputs as the state keeps them, settings as wanted."""
    props = {
        "endpoint": "https://127.0.0.1:20000", "caCert": "CA", "rootUser": "r", "rootPassword": "p", "bucket": "b",
        "bucketPolicy": json.dumps(backup.store_bucket_policy("b")),
        "identityPolicy": json.dumps(backup.aws_identity_policy("aws", "b")),
        "lifecycle": backup.store_lifecycle_rules(), "version": store_bucket.PROVIDER_VERSION,
        "accessKey": "AKEY", "secretKey": "SKEY",
    }  # fmt: skip
    wanted = store_bucket.fingerprint(store_bucket.desired(props))
    return {**props, "wanted": wanted, "observed": wanted, **changes}


def test_a_bucket_as_wanted_has_no_diff_drift_updates_and_a_new_name_replaces() -> None:
    """GIVEN a bucket's state WHEN diffed THEN only drift (an update) or a new name (a replacement) changes it."""
    provider, olds = StoreBucketProvider(), bucket_props()
    news = {k: v for k, v in olds.items() if k not in ("accessKey", "secretKey", "wanted", "observed")}
    assert not provider.diff("b", olds, news).changes
    drifted = provider.diff("b", {**olds, "observed": "0" * 16}, news)
    assert drifted.changes and not drifted.replaces
    assert provider.diff("b", olds, {**news, "bucket": "c"}).replaces == ["bucket"]


def test_a_store_that_does_not_answer_reads_as_drift(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN a bucket whose store is stopped WHEN refresh reads it THEN it is drift, not a failed refresh."""

    def unreachable(props: dict[str, Any]) -> dict[str, Any]:
        raise store_bucket.BucketError("connection refused")

    monkeypatch.setattr(store_bucket, "observe", unreachable)
    read = outs(StoreBucketProvider().read("b", bucket_props()))
    assert read["observed"] != read["wanted"]


def test_a_bucket_update_keeps_the_users_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN a bucket WHEN updated THEN its settings are written again with the keys it was made with."""
    written: list[dict[str, Any]] = []
    monkeypatch.setattr(store_bucket, "converge", written.append)
    monkeypatch.setattr(store_bucket, "observe", store_bucket.desired)
    olds = bucket_props()
    news = {**olds, "accessKey": None, "secretKey": None, "version": "next"}
    updated = outs(StoreBucketProvider().update("b", olds, news))
    assert (written[0]["accessKey"], written[0]["secretKey"]) == ("AKEY", "SKEY")
    assert updated["observed"] == updated["wanted"]


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[tuple[dict[str, Any], bool]]:
    """`object_store.run` recorded instead of starting MinIO."""
    runs: list[tuple[dict[str, Any], bool]] = []

    def run(props: dict[str, Any], restart: bool) -> dict[str, Any]:
        runs.append((props, restart))
        return {**props, "port": props.get("port") or 20000, "running": True}

    monkeypatch.setattr(object_store, "run", run)
    return runs


def store_props(tmp_path: Path) -> dict[str, Any]:
    """A store's inputs."""
    return {"name": "s", "workdir": str(tmp_path), "dir": str(tmp_path / "processes" / "t-minio"),
            "dataDir": str(tmp_path / "object-store" / "t"), "version": object_store.PROVIDER_VERSION}  # fmt: skip


def test_a_store_keeps_what_it_generated_and_renews_its_certificate_when_due(
    tmp_path: Path, started: list[tuple[dict[str, Any], bool]]
) -> None:
    """GIVEN a store made once WHEN updated THEN what it generated stays, but a certificate due is renewed.

    Root password, KMS key, CA and port stay; once the certificate is due the diff says so and the update issues a
    new one from the same CA and restarts the server.
    """
    provider, news = ObjectStoreProvider(), store_props(tmp_path)
    olds = outs(provider.create(news))
    assert olds["kmsKey"].startswith(f"{object_store.KMS_KEY_NAME}:") and len(olds["rootPassword"]) >= 30
    assert not provider.diff("s", olds, news).changes
    kept = outs(provider.update("s", olds, {**news, "version": "next"}))
    assert {k: kept[k] for k in object_store.GENERATED} == {k: olds[k] for k in object_store.GENERATED}
    due = {**olds, "notBefore": time.time() - 100 * 86400, "notAfter": time.time() + 86400}
    assert provider.diff("s", due, news).changes
    renewed = outs(provider.update("s", due, news))
    assert started[-1][1] is True
    assert renewed["cert"] != olds["cert"] and renewed["caCert"] == olds["caCert"]
    assert renewed["kmsKey"] == olds["kmsKey"] and renewed["notAfter"] > due["notAfter"]


def test_a_new_stores_ca_and_certificate_are_ecdsa_and_an_older_rsa_ca_still_renews(
    tmp_path: Path, started: list[tuple[dict[str, Any], bool]]
) -> None:
    """GIVEN a new store WHEN made THEN an ECDSA P-256 CA and certificate (MinIO's own tool's), the chain verifying.

    A store an older arbor made keeps its RSA CA: its certificate renews from it.
    """
    provider, news = ObjectStoreProvider(), store_props(tmp_path)
    made = outs(provider.create(news))
    ca, cert = (x509.load_pem_x509_certificate(made[k].encode()) for k in ("caCert", "cert"))
    assert isinstance(ca.public_key(), ec.EllipticCurvePublicKey) and isinstance(
        cert.public_key(), ec.EllipticCurvePublicKey
    )
    cert.verify_directly_issued_by(ca)
    assert len(made["caCert"]) < 800  # a third of a 3072-bit RSA CA's: every shoot's backup data carries it
    older = signing.self_signed_ca("arbor-object-store-ca", 3600)
    due = {**made, "caCert": older.cert, "caKey": older.key, "notBefore": time.time() - 100 * 86400,
           "notAfter": time.time() + 86400}  # fmt: skip
    renewed = outs(provider.update("s", due, news))
    x509.load_pem_x509_certificate(renewed["cert"].encode()).verify_directly_issued_by(
        x509.load_pem_x509_certificate(older.cert.encode())
    )
    assert renewed["caCert"] == older.cert


def test_a_stopped_store_is_drift_and_its_process_runs_minio_over_tls(
    tmp_path: Path, started: list[tuple[dict[str, Any], bool]]
) -> None:
    """GIVEN a store WHEN refresh finds it stopped THEN that is a change, and its process is MinIO over TLS.

    It serves TLS on its port from its own certificates directory, its data elsewhere, its secrets only in the
    environment.
    """
    provider, news = ObjectStoreProvider(), store_props(tmp_path)
    olds = outs(provider.create(news))
    assert provider.diff("s", {**olds, "running": False}, news).changes
    process = object_store._process({**olds, "port": 20000.0})
    assert process["args"] == ["server", news["dataDir"], "--address", "127.0.0.1:20000", "--certs-dir", "{dir}",
                               "--quiet"]  # fmt: skip
    assert set(process["files"]) == {"public.crt", "private.key"}
    assert olds["rootPassword"] not in json.dumps(process)
    env = object_store._environment(olds)
    assert env["MINIO_ROOT_PASSWORD"] == olds["rootPassword"] and env["MINIO_BROWSER"] == "off"


def test_the_store_takes_a_port_no_cluster_records(tmp_path: Path) -> None:
    """GIVEN a stopped cluster recording the store's first choice WHEN the store's port is chosen THEN it avoids it."""
    clusters, store = tmp_path / "clusters", tmp_path / "processes" / "t-minio"
    (clusters / "old").mkdir(parents=True)
    first = ports.for_store(store, clusters)
    assert first is not None
    (clusters / "old" / "kwok.yaml").write_text(f"options:\n  kubeApiserverPort: {first}\n")
    second = ports.for_store(store, clusters)
    assert second is not None and second != first and (second - ports.PORT_FLOOR) % ports.BLOCK == 0


def test_local_seeds_share_one_store_each_with_its_own_bucket() -> None:
    """GIVEN two local seeds with backups WHEN registered THEN one store and a protected bucket per seed in it.

    The store is the landscape's (no seed's removal can move it); its own protection is in test_protection.
    """
    raw = base()
    seeds = [{**seed, "backup": {"provider": "local"}} for seed in raw["seeds"]]
    seeds.append({**seeds[0], "name": "local-2"})
    built, mocks = registered(plan_landscape(parse_landscape({**raw, "seeds": seeds}), "local"))
    assert [n for n, t in mocks.types.items() if t == "pulumi-python:dynamic/arbor:ObjectStore"] == [STORE]
    buckets = {n: mocks.inputs[n] for n, t in mocks.types.items() if t == "pulumi-python:dynamic/arbor:StoreBucket"}
    assert sorted(buckets) == ["arbor-seed-local-1-backup", "arbor-seed-local-2-backup"]
    assert len({b["bucket"] for b in buckets.values()}) == 2
    for name in buckets:
        assert built.options[name].protect
        assert STORE in built.edges[name]
        # The root password is the store's alone: it writes it to the garden, where the buckets read it.
        assert "rootPassword" not in buckets[name] and buckets[name]["rootSecret"]["name"] == object_store.ROOT_SECRET
    store = mocks.inputs[STORE]
    assert store["namespace"] == "garden" and list(store["secrets"]) == [object_store.ROOT_SECRET]
    assert built.edges[STORE] == {f"{STORE}-namespace"}


# What a sharded landscape's garden stack exports for its seed stacks (the local garden's kubeconfig, the store).
GARDEN_STACK_OUTPUTS: dict[str, Any] = {
    "kubeconfigs": {"garden": "garden kubeconfig"}, "gardenReach": "",
    "objectStoreAccess": {"endpoint": "https://127.0.0.1:9000", "caCert": "<store ca>", "rootUser": "arbor",
                          "rootPassword": "<root password>", "dir": "/arbor/processes/local-minio"},
}  # fmt: skip


class GardenStackMocks(Mocks):
    """The mocks, with a garden stack whose outputs a seed stack's StackReference reads."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.typ == "pulumi:pulumi:StackReference":
            self.types[args.name] = args.typ
            return args.name, {**args.inputs, "outputs": GARDEN_STACK_OUTPUTS, "secretOutputNames": []}
        return super().new_resource(args)


def test_a_sharded_landscape_runs_one_store_in_its_garden_stack_and_each_seed_stack_uses_it() -> None:
    """GIVEN a landscape sharded per seed with local backups WHEN its stacks register THEN one store, the garden's.

    The garden stack runs the store and exports how to reach it; a seed stack makes its bucket there with those
    values (the same inputs a one-stack landscape's bucket has, so a move into shards changes nothing) and no store.
    """
    raw = base()
    raw["seeds"] = [{**seed, "backup": {"provider": "local"}} for seed in raw["seeds"]]
    plan = plan_landscape(parse_landscape({**raw, "stacks": "perSeed"}), "local")
    garden, mocks = registered(scope(plan, Shard("local")))
    assert [n for n, t in mocks.types.items() if t == "pulumi-python:dynamic/arbor:ObjectStore"] == [STORE]
    assert "pulumi-python:dynamic/arbor:StoreBucket" not in mocks.types.values()
    assert set(garden.landscape.store_outputs()) == {"objectStore", "objectStoreAccess"}
    seed = plan.seeds[0].name
    built, mocks = registered(scope(plan, Shard("local", seed)), mocks=GardenStackMocks(), garden_stack="local")
    assert "pulumi-python:dynamic/arbor:ObjectStore" not in mocks.types.values()
    assert built.landscape.store_outputs() == {"objectStore": None}
    bucket = mocks.inputs[f"arbor-seed-{seed}-backup"]
    store = GARDEN_STACK_OUTPUTS["objectStoreAccess"]
    # Plain, as in one stack; the root password it reads in the garden's Secret, which an older garden stack's
    # export (it held the password) is not asked for.
    assert {k: bucket[k] for k in store if k != "rootPassword"} == {
        k: v for k, v in store.items() if k != "rootPassword"
    }
    assert "rootPassword" not in bucket and SECRET_SIG not in json.dumps(bucket)
    assert bucket["rootSecret"] == object_store.root_reference(bucket["rootSecret"]["kubeconfig"])
    # No store to wait for in this stack: only the seed's namespace the bucket writes its Secret in, and the seed's
    # issuer published to the store (the bucket's identity is a role its tokens assume).
    assert built.edges[f"arbor-seed-{seed}-backup"] == {
        f"arbor-seed-{seed}-garden",
        f"arbor-seed-{seed}-garden-etcd-backup",
        f"arbor-seed-{seed}-issuer-discovery",
    }


@pytest.mark.parametrize(("backups", "kept", "stores"), [(False, False, 0), (False, True, 1), (True, False, 1)])
def test_the_store_outlives_its_buckets(backups: bool, kept: bool, stores: int) -> None:
    """GIVEN seeds with or without local buckets and a store made before or not WHEN registered THEN it is there.

    Removing every local bucket keeps the store (and the buckets' objects in it), as a cloud bucket outlives its
    seed: only `make down` deletes it. A stack that never had one gets none.
    """
    raw = base()
    if backups:
        raw["seeds"] = [{**seed, "backup": {"provider": "local"}} for seed in raw["seeds"]]
    built, mocks = registered(plan_landscape(parse_landscape(raw), "local"), keep_store=kept)
    assert [n for n, t in mocks.types.items() if t == "pulumi-python:dynamic/arbor:ObjectStore"] == [STORE] * stores
    assert (built.landscape.store is not None) == bool(stores)


def snapshot_props(**changes: Any) -> dict[str, Any]:
    """An EtcdSnapshot's state after a snapshot an hour ago."""
    props = {
        "cluster": "local-shoot-dev-web", "workdir": "/w", "backup": {}, "prefix": "shoot--dev--web--uid/etcd-main",
        "entry": "shoot--dev--web--uid", "entryNamespace": "garden-dev", "gardenKubeconfig": "g", "request": "",
        "periodSeconds": etcd_snapshot.DAY_S, "version": etcd_snapshot.PROVIDER_VERSION, "due": False,
        "latest": "shoot--dev--web--uid/etcd-main/v2/Full-00000000-00000042-1700000000.gz",
        "time": etcd_snapshot.rfc3339(datetime.now(UTC) - timedelta(hours=1)), "revision": 42, "size": 1, "sha256": "x",
    }  # fmt: skip
    return {**props, **changes}


def test_a_snapshot_is_named_and_placed_as_etcd_backup_restore_does() -> None:
    """GIVEN a revision and a time WHEN a full snapshot's key is made THEN it is etcd-backup-restore's v2 name."""
    taken = datetime(2026, 11, 27, 15, 4, 5, tzinfo=UTC)
    key = etcd_snapshot.snapshot_key("e/etcd-main", 4242, taken)
    assert key == f"e/etcd-main/v2/Full-00000000-00004242-{int(taken.timestamp())}.gz"
    assert etcd_snapshot.rfc3339(taken) == "2026-11-27T15:04:05Z"


@pytest.mark.parametrize(
    ("olds", "news", "wanted"),
    [
        ({}, {}, False),
        ({"due": True}, {}, True),
        ({}, {"request": "20261127T150405"}, True),
        ({"request": "20261127T150405"}, {"request": "20261127T150405"}, False),
        ({"request": "20261127T150405"}, {"request": ""}, False),
        ({}, {"prefix": "shoot--dev--web--uid2/etcd-main"}, True),
    ],
)
def test_a_snapshot_is_taken_when_due_asked_for_or_of_a_new_entry(
    olds: dict[str, Any], news: dict[str, Any], wanted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN the last snapshot's state and new inputs WHEN diffed and updated THEN a snapshot is taken if wanted.

    A request is `make backup`'s (a new value each time; a plain `up` passes none); a new prefix is a shoot made
    again (a new entry). Otherwise the update only writes the entry's status again, keeping the latest snapshot.
    """
    taken: list[str] = []

    def take(props: dict[str, Any]) -> dict[str, Any]:
        taken.append(props["prefix"])
        return {"latest": "new", "time": "t"}

    monkeypatch.setattr(etcd_snapshot, "take", take)
    monkeypatch.setattr(etcd_snapshot, "write_status", lambda p: None)
    provider = etcd_snapshot.EtcdSnapshotProvider()
    before, after = snapshot_props(**olds), snapshot_props(due=None, latest=None, time=None, **news)
    result = provider.diff("e", before, after)
    assert bool(result.changes) == wanted and not result.replaces
    assert (result.stables == []) == wanted
    updated = outs(provider.update("e", before, after))
    assert bool(taken) == wanted
    assert updated["latest"] == ("new" if wanted else before["latest"]) and updated["due"] is False


@pytest.mark.parametrize(("age", "present", "due"), [(1, True, False), (25, True, True), (1, False, True)])
def test_refresh_finds_a_snapshot_due_when_old_or_gone(
    age: int, present: bool, due: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN the latest snapshot's age and whether the bucket has it WHEN refreshed THEN a day old or gone is due."""
    monkeypatch.setattr(etcd_snapshot, "_present", lambda p: present)
    then = etcd_snapshot.rfc3339(datetime.now(UTC) - timedelta(hours=age))
    assert outs(etcd_snapshot.EtcdSnapshotProvider().read("e", snapshot_props(time=then)))["due"] is due


def test_a_risky_change_waits_for_a_snapshot_step_the_preview_lists() -> None:
    """GIVEN a local hosted shoot on a seed with backups WHEN registered THEN a command step snapshots its etcd.

    Made, it does nothing; a change of what it follows (the minor version, the encryption configuration, in its
    environment) is an update the preview shows, which takes the snapshot; the encryption rewrite waits for it.
    """
    raw = base()
    raw["seeds"] = [{**seed, "backup": {"provider": "local"}} for seed in raw["seeds"]]
    built, mocks = registered(plan_landscape(parse_landscape(raw), "local"))
    step, rewrite = "arbor-shoot-dev-web-snapshot-before-change", "arbor-shoot-dev-web-encryption-rewrite"
    assert mocks.types[step] == "command:local:Command"
    inputs = mocks.inputs[step]
    assert (inputs["create"], inputs["update"]) == ("true", etcd_snapshot.SNAPSHOT_COMMAND)
    environment = inputs["environment"]["value"]  # secret as a whole: the request holds the seed's key
    assert json.loads(environment[RISKY_ENV]) == ["1.34", mocks.inputs[rewrite]["configHash"]]
    request = json.loads(environment[etcd_snapshot.SNAPSHOT_ENV])
    assert request["cluster"] == "local-shoot-dev-web"
    assert request["prefix"].endswith("/etcd-main") and request["entryNamespace"] == "garden-dev"
    assert step in built.edges[rewrite]
    assert not [n for n in mocks.types if n.startswith("arbor-shoot-ops-root-") and "snapshot" in n]


def test_a_snapshot_step_that_fails_says_why_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """GIVEN the snapshot step with a missing or broken request WHEN it runs THEN it exits 1 with one line, no trace."""
    monkeypatch.delenv(etcd_snapshot.SNAPSHOT_ENV, raising=False)
    assert etcd_snapshot.main() == 1
    monkeypatch.setenv(etcd_snapshot.SNAPSHOT_ENV, "{not json")
    assert etcd_snapshot.main() == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("etcd snapshot failed: ") for line in err)


def test_a_cloud_snapshot_step_asks_etcd_backup_restore_through_the_seeds_pod_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GIVEN a cloud shoot's step WHEN it runs THEN it asks the sidecar for a full snapshot and names what it took.

    The answer is etcd-backup-restore's snapshot (prefix, directory, name, creation time in Go's format); a seed
    that cannot be asked is a clear error naming the namespace.
    """
    asked: list[tuple[str, float]] = []
    answer = {
        "kind": "Full", "lastRevision": 42, "createdOn": "2026-11-27T15:04:05.123456789Z", "snapDir": "",
        "snapName": "Full-00000000-00000042-1795791845.gz", "prefix": "shoot--p--s--uid/etcd-main/v2",
    }  # fmt: skip

    class Seed:
        def get(self, path: str, timeout: float) -> dict[str, Any]:
            asked.append((path, timeout))
            return answer

    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: Seed()))
    taken = etcd_snapshot.trigger_full({"seedKubeconfig": "k", "seedNamespace": "shoot--p--s"})
    assert asked == [("/api/v1/namespaces/shoot--p--s/pods/etcd-main-0:8080/proxy/snapshot/full", 900)]
    assert taken == {"latest": "shoot--p--s--uid/etcd-main/v2/Full-00000000-00000042-1795791845.gz",
                     "time": "2026-11-27T15:04:05Z", "revision": 42}  # fmt: skip

    class Unreachable:
        def get(self, path: str, timeout: float) -> dict[str, Any]:
            raise KubeError("GET ...: 503 no endpoints", 503)

    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: Unreachable()))
    with pytest.raises(etcd_snapshot.SnapshotError, match=r"etcd-backup-restore of shoot--p--s: .*503"):
        etcd_snapshot.trigger_full({"seedKubeconfig": "k", "seedNamespace": "shoot--p--s"})


def test_a_hosted_shoots_bucket_key_is_kept_by_its_seeds_bucket_alone() -> None:
    """GIVEN a local hosted shoot on a seed with backups WHEN registered THEN only the seed's bucket keeps its key.

    The migration (which runs before a new seed namespace holds the Secret) reads the seed's bucket Secret; the
    snapshot, the snapshot step, the state upload, the machine restore and the cluster's restore name the seed
    namespace's `etcd-backup` Secret and wait for the EntrySecret that writes it from the seed's.
    """
    raw = base()
    raw["seeds"] = [{**seed, "backup": {"provider": "local"}} for seed in raw["seeds"]]
    built, mocks = registered(plan_landscape(parse_landscape(raw), "local"))
    # The mocks' bucket has no user keys yet: a key only the data has stands for it.
    prefix, secret_key = "arbor-shoot-dev-web", "s3ForcePathStyle"

    def unwrapped(value: Any) -> Any:
        return value.get("value", value) if isinstance(value, dict) and "value" in value else value

    step = json.loads(
        unwrapped(mocks.inputs[f"{prefix}-snapshot-before-change"]["environment"])[etcd_snapshot.SNAPSHOT_ENV]
    )
    references = {
        "snapshot": unwrapped(mocks.inputs[f"{prefix}-etcd-snapshot"]["backup"]),
        "step": step["backup"],
        "upload": unwrapped(mocks.inputs[f"{prefix}-shoot-state"]["backup"]),
        "restore": unwrapped(mocks.inputs[f"{prefix}-cluster"]["restore"]),
        "machines": unwrapped(mocks.inputs[f"{prefix}-machine-restore"]["backup"]),
    }
    for what, reference in references.items():
        assert reference["secretRef"]["namespace"] == "shoot--dev--web", what
        assert reference["secretRef"]["name"] == "etcd-backup", what
        assert secret_key not in json.dumps(reference), what
    keeping = [n for n in mocks.inputs if n.startswith(prefix) and secret_key in json.dumps(mocks.inputs[n])]
    assert keeping == []
    # The SecretSet keeps no `etcd-backup`: its EntrySecret writes it from the seed's bucket Secret, by reference.
    assert "etcd-backup" not in secret_set.contents(
        {"secrets": unwrapped(mocks.inputs[f"{prefix}-secrets"]["secrets"])}
    )
    assert "etcd-backup" in mocks.inputs[f"{prefix}-secrets"]["others"]
    written = mocks.inputs[f"{prefix}-etcd-backup"]
    assert written["namespace"] == "shoot--dev--web"
    assert unwrapped(written["source"]) == unwrapped(mocks.inputs[f"{prefix}-migration"]["backup"])
    # The migration, which runs before the new seed namespace holds `etcd-backup`, reads the seed's bucket Secret
    # (`garden/bucket-<bucket>`, which the bucket writes), with the entry's prefix and the digest it expects.
    moved = unwrapped(mocks.inputs[f"{prefix}-migration"]["backup"])
    (bucket,) = [unwrapped(mocks.inputs[n]) for n, t in mocks.types.items() if t.endswith(":StoreBucket")]
    held = f"bucket-{bucket['bucket']}"
    assert moved["secretRef"]["namespace"] == "garden" and moved["secretRef"]["name"] == held
    assert moved["storePrefix"] == references["upload"]["storePrefix"]
    assert moved["digest"] == references["upload"]["digest"], "the same data as the shoot's own Secret's"
    # The bucket writes it, naming its role; the seed's set, which wrote it before, hands it over.
    assert bucket["namespace"] == "garden" and list(bucket["secrets"]) == [held]
    role = backup.store_role_credentials("", "", "", "")
    assert set(bucket["secrets"][held]) == set(backup.store_bucket_data("", role)) and "accessKeyID" not in role
    seed_set = mocks.inputs["arbor-seed-local-1-bucket-secret"]
    assert secret_set.contents({"secrets": unwrapped(seed_set["secrets"])}) == {} and seed_set["others"] == [held]
    for name in (f"{prefix}-etcd-snapshot", f"{prefix}-snapshot-before-change"):
        assert f"{prefix}-etcd-backup" in built.edges[name]


def test_a_given_local_seed_naming_its_issuer_is_connected_to_and_its_bucket_trusts_that_issuer() -> None:
    """GIVEN a local seed by kubeconfig with its issuer, beside a made one WHEN registered THEN connected, trusted.

    No LocalCluster or node is made for it; its bucket is a role for its audience whose keys the store fetches from
    the issuer its spec names, which whoever runs the seed publishes: arbor makes the discovery binding on the seed
    it made alone.
    """
    raw = base()
    made = {**raw["seeds"][0], "backup": {"provider": "local"}}
    issuer = "https://127.0.0.1:32000"
    given = {**made, "name": "local-2", "cluster": {"kubeconfigSecret": "seedKubeconfig", "issuer": {"url": issuer}}}
    pulumi.runtime.set_all_config({"arbor:seedKubeconfig": GIVEN_KUBECONFIG}, ["arbor:seedKubeconfig"])
    _, mocks = registered(plan_landscape(parse_landscape({**raw, "seeds": [made, given]}), "local"))
    clusters = [n for n, t in mocks.types.items() if t == "pulumi-python:dynamic/arbor:LocalCluster"]
    assert "arbor-seed-local-1-cluster" in clusters and not [n for n in clusters if "local-2" in n]
    assert not [n for n, t in mocks.types.items() if t == "kubernetes:core/v1:Node" and "local-2" in n]
    bucket = mocks.inputs["arbor-seed-local-2-backup"]
    assert bucket["issuer"] == issuer and bucket["audience"] == "arbor-seed:local-2"
    assert mocks.inputs["arbor-seed-local-1-backup"].get("issuer") is None
    bindings = [n for n, t in mocks.types.items() if t == "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"]
    assert "arbor-seed-local-1-issuer-discovery" in bindings and "arbor-seed-local-2-issuer-discovery" not in bindings
