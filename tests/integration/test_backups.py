"""Local backups on the real engine: the landscape's object store (real MinIO over TLS), the seed's bucket and key.

The local landscape's seed asks for `backup: {provider: local}`: `up` starts the store, makes the seed's bucket with
aws's settings and a role limited to it, which the seed's `etcd-backup` ServiceAccounts assume with their tokens
through the store's STS (workload identity), records BackupBucket and BackupEntry in the garden and hands each hosted
shoot the `etcd-backup` Secret. These tests use that Secret as etcd-backup-restore would, with a token of its
namespace's ServiceAccount, and the root user only to play the operator who changes the bucket behind arbor's back.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import io
import json
import os
import re
import signal
import ssl
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml
from minio import Minio, S3Error
from minio.commonconfig import CopySource
from minio.credentials.providers import StaticProvider
from minio.deleteobjects import DeleteObject
from minio.error import InvalidResponseError
from minio.minioadmin import MinioAdmin
from minio.versioningconfig import VersioningConfig

from components.reconciler import access_token, entry_store, kube, local_process
from components.reconciler import entry_status as listed_status
from components.reconciler.store_bucket import trusting
from tests.integration.engine import Stack, items, kubectl, preview_with, steps_by_type

SEED = "seed/local-1"
HOSTED = {"shoot--dev--web": ("dev", "web"), "shoot--ops--db": ("ops", "db")}


def secret_data(stack: Stack, tmp_path: Path, namespace: str, seed: str = SEED) -> dict[str, Any]:
    """The `etcd-backup` Secret of a hosted shoot's seed namespace (on seed `seed`, by its key), decoded.

    With a reference to it, as arbor's own reads have one: the namespace whose `etcd-backup` ServiceAccount assumes
    the bucket's role, and the digest of what it holds.
    """
    (secret,) = items(
        stack, seed, tmp_path, "secrets", "-n", namespace, "--field-selector", "metadata.name=etcd-backup"
    )
    data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    where = {"kubeconfig": stack.outputs()["kubeconfigs"][seed], "namespace": namespace, "name": "etcd-backup"}
    return {**data, entry_store.SECRET_REF: where, "digest": entry_store.data_digest(data)}


def from_seed(stack: Stack, data: dict[str, Any], seed: str = SEED) -> dict[str, Any]:
    """`data` read through the seed's own bucket Secret, as arbor does once the shoot's namespace is gone.

    Its `garden/etcd-backup` ServiceAccount assumes the role; the Secret holds the same data but the entry's prefix.
    """
    bucket = {
        "kubeconfig": stack.outputs()["kubeconfigs"][seed],
        "namespace": "garden",
        "name": f"bucket-{data['bucketName']}",
    }
    return {**data, entry_store.SECRET_REF: bucket}


def held(data: dict[str, Any]) -> dict[str, str]:
    """What the Secret holds, without the reference `secret_data` adds."""
    return {k: v for k, v in data.items() if k not in (entry_store.SECRET_REF, "digest")}


def client(endpoint: str, ca: str, access_key: str, secret_key: str) -> Minio:
    """An S3 client of the store that trusts only its CA (the environment's AWS_CA_BUNDLE plays no part)."""
    http = urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_cert_data=ca, retries=urllib3.Retry(total=2))
    return Minio(endpoint.removeprefix("https://"), access_key, secret_key, secure=True, http_client=http)


@pytest.fixture(scope="module")
def backup(local_stack: Stack) -> Iterator[dict[str, Any]]:
    """dev/web's `etcd-backup` Secret."""
    with tempfile.TemporaryDirectory() as tmp:
        yield secret_data(local_stack, Path(tmp), "shoot--dev--web")


def seed_client(data: dict[str, Any]) -> Minio:
    """The store as the Secret's identity: its role, assumed with a token of its namespace's `etcd-backup`."""
    return entry_store.s3_client(data, data.get(entry_store.SECRET_REF))


def store_outputs(stack: Stack) -> dict[str, Any]:
    """The ObjectStore's outputs in the stack's state, secrets shown (the root user's password among them)."""
    (store,) = stack.resource_outputs("pulumi-python:dynamic/arbor:ObjectStore").values()
    return store


def admin_args(stack: Stack) -> dict[str, Any]:
    """MinIO admin client arguments as the store's root user."""
    store = store_outputs(stack)
    credentials = StaticProvider(store["rootUser"], store["rootPassword"])
    return {"endpoint": store["endpoint"].removeprefix("https://"), "credentials": credentials, "secure": True,
            "http_client": trusting(store["caCert"])}  # fmt: skip


def root_client(stack: Stack) -> Minio:
    """The store as its root user: the operator who changes things behind arbor's back."""
    store = store_outputs(stack)
    return client(store["endpoint"], store["caCert"], store["rootUser"], store["rootPassword"])


def test_the_seeds_bucket_is_recorded_and_handed_to_each_hosted_shoot(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN the local landscape WHEN converged THEN the garden records its bucket and each hosted shoot its entry.

    Each hosted shoot's seed namespace holds `etcd-backup` naming the bucket, the store and the entry's prefix.
    """
    (bucket,) = items(local_stack, "garden", tmp_path, "backupbuckets")
    assert bucket["spec"]["provider"] == {"type": "local", "region": bucket["spec"]["provider"]["region"]}
    assert bucket["spec"]["seedName"] == "local-1"
    entries = {e["metadata"]["name"]: e for e in items(local_stack, "garden", tmp_path, "backupentries", "-A")}
    shoots = {s["metadata"]["name"]: s for s in items(local_stack, "garden", tmp_path, "shoots", "-A")}
    for namespace, (project, name) in HOSTED.items():
        uid = shoots[name]["metadata"]["uid"]
        entry = entries[f"{namespace}--{uid}"]
        assert entry["metadata"]["namespace"] == f"garden-{project}"
        assert entry["spec"]["bucketName"] == bucket["metadata"]["name"]
        data = secret_data(local_stack, tmp_path, namespace)
        assert data["bucketName"] == bucket["metadata"]["name"]
        assert data["storePrefix"] == f"{namespace}--{uid}/etcd-main"
        assert data["endpoint"].startswith("https://127.0.0.1:")
        assert data["s3ForcePathStyle"] == "true"
        assert "BEGIN CERTIFICATE" in data["trustedCaCert"]


def role_client(data: dict[str, Any], token: Callable[[], dict[str, str]]) -> Minio:
    """The store as the bucket's role, assumed with the tokens `token` gives."""
    http = trusting(data["trustedCaCert"])
    role = entry_store.RoleCredentials(
        jwt_provider_func=token,
        sts_endpoint=data["endpoint"],
        role_arn=data["roleARN"],
        role_session_name="test",
        http_client=http,
    )
    return Minio(data["endpoint"].removeprefix("https://"), credentials=role, secure=True, http_client=http)


def test_the_bucket_is_the_seeds_tokens_role_and_no_key_exists(local_stack: Stack, backup: dict[str, Any]) -> None:
    """GIVEN the seed's bucket by workload identity WHEN its Secret, the store and other tokens are tried THEN no key.

    The Secret names the role and the audience it trusts, no key; the store has no user for the bucket; the seed
    publishes its issuer's discovery document to anyone, as a cloud's issuer is public. The store's STS refuses the
    `etcd-backup` token asked for another audience, and another ServiceAccount's token gets nothing of the bucket.
    """
    where, bucket = backup[entry_store.SECRET_REF], backup["bucketName"]
    assert not {"accessKeyID", "secretAccessKey"} & set(backup)
    assert backup["tokenAudience"] == "arbor-seed:local-1" and backup["roleARN"].startswith("arn:minio:iam:::role/")
    users = json.loads(MinioAdmin(**admin_args(local_stack)).user_list() or "{}")
    assert not [u for u in users.values() if bucket in str(u.get("policyName", ""))], users
    server = kube.server_of(where["kubeconfig"])
    context = ssl.create_default_context(cadata=kube.certificate_authority(where["kubeconfig"]))
    with urllib.request.urlopen(f"{server}/.well-known/openid-configuration", context=context) as answer:
        assert json.load(answer)["jwks_uri"] == f"{server}/openid/v1/jwks"
    assert seed_client(backup).bucket_exists(bucket)
    elsewhere = role_client(backup, lambda: entry_store.service_account_token(where, "sts.amazonaws.com"))
    with pytest.raises(entry_store.StoreError, match="assuming role"):
        elsewhere.bucket_exists(bucket)
    api = kube.Kube.from_kubeconfig(where["kubeconfig"])
    other, _ = access_token.request_token(api, where["namespace"], "default", 600, [backup["tokenAudience"]])
    stranger = role_client(backup, lambda: {"access_token": other, "expires_in": "600"})
    for attempt in (
        lambda: list(stranger.list_objects(bucket)),
        lambda: stranger.put_object(bucket, "x", io.BytesIO(b"x"), 1),
    ):
        with pytest.raises(S3Error) as denied:
            attempt()
        assert denied.value.code == "AccessDenied"


def test_the_seeds_identity_may_use_its_bucket_and_nothing_else(local_stack: Stack, backup: dict[str, Any]) -> None:
    """GIVEN the seed's identity WHEN it writes, reads and overwrites a snapshot THEN it may, and nothing else.

    Each write is a version encrypted at rest; deleting a version for good, another bucket, listing or making
    buckets, changing or reading the bucket's settings are refused, and plain HTTP gets no answer.
    """
    s3, bucket = seed_client(backup), backup["bucketName"]
    key = f"{backup['storePrefix']}/test-{os.getpid()}"
    # Another seed's bucket, with a snapshot in it.
    root, other = root_client(local_stack), f"{bucket}-other"
    if not root.bucket_exists(other):
        root.make_bucket(other)
    root.put_object(other, "snapshot", io.BytesIO(b"theirs"), 6)
    for body in (b"first", b"second"):
        s3.put_object(bucket, key, io.BytesIO(body), len(body))
    assert s3.get_object(bucket, key).read() == b"second"
    versions = [o for o in s3.list_objects(bucket, prefix=key, include_version=True)]
    assert len(versions) == 2
    assert (s3.stat_object(bucket, key).metadata or {}).get("x-amz-server-side-encryption") == "AES256"
    refused: list[Callable[[], object]] = [
        lambda: s3.remove_object(bucket, key, version_id=versions[-1].version_id),
        lambda: s3.make_bucket("arbor-another"),
        lambda: list(s3.list_objects(other)),
        lambda: s3.get_object(other, "snapshot"),
        lambda: s3.put_object(other, "snapshot", io.BytesIO(b"mine"), 4),
        lambda: s3.set_bucket_versioning(bucket, VersioningConfig("Suspended")),
        lambda: s3.get_bucket_policy(bucket),
    ]
    for i, attempt in enumerate(refused):
        with pytest.raises(S3Error) as denied:
            attempt()
        assert denied.value.code == "AccessDenied", i
    # MinIO lists the buckets a user may use instead of refusing the listing: its own alone.
    assert [b.name for b in s3.list_buckets()] == [bucket]
    # Only TLS: the store's port does not speak plain HTTP at all. It says so to a short request, and drops a signed
    # one (the role's session token makes it longer than what the store reads before it closes the connection).
    plain = urllib3.PoolManager(retries=urllib3.Retry(total=0))
    url = backup["endpoint"].replace("https://", "http://", 1)
    answer = plain.request("GET", f"{url}/{bucket}/{key}")
    assert answer.status == 400 and b"HTTP request to an HTTPS server" in answer.data
    role = entry_store.s3_credentials(backup, backup[entry_store.SECRET_REF])
    signed = Minio(url.removeprefix("http://"), **role, secure=False, http_client=plain)
    with pytest.raises((InvalidResponseError, urllib3.exceptions.MaxRetryError)):
        signed.get_object(bucket, key).read()


def test_drift_and_a_stopped_store_are_put_right_with_every_object_kept(
    local_stack: Stack, backup: dict[str, Any], tmp_path: Path
) -> None:
    """GIVEN bucket settings changed behind arbor's back and the store stopped WHEN converged THEN both are right.

    Versioning suspended and the bucket policy removed, then the server killed: the preview updates the bucket and
    the store, `up` restores both on the same endpoint, and the objects written before are still there.
    """
    s3, bucket = seed_client(backup), backup["bucketName"]
    key = f"{backup['storePrefix']}/kept-{os.getpid()}"
    s3.put_object(bucket, key, io.BytesIO(b"kept"), 4)
    store = store_outputs(local_stack)
    root = root_client(local_stack)
    root.set_bucket_versioning(bucket, VersioningConfig("Suspended"))
    root.delete_bucket_policy(bucket)
    pid = local_process.running_pid(store)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)

    steps = steps_by_type(local_stack.preview_json("--refresh"), ops=("same", "refresh"))
    assert steps.get("pulumi-python:dynamic/arbor:StoreBucket") == ["update"]
    assert steps.get("pulumi-python:dynamic/arbor:ObjectStore") == ["update"]
    local_stack.up()

    assert root.get_bucket_versioning(bucket).status == "Enabled"
    assert "DenyInsecureTransport" in root.get_bucket_policy(bucket)
    assert seed_client(backup).get_object(bucket, key).read() == b"kept"
    assert store_outputs(local_stack)["endpoint"] == store["endpoint"]


def held_secret(stack: Stack, key: str, tmp_path: Path, name: str) -> dict[str, str]:
    """A Secret of the `garden` namespace of cluster `key`, decoded; empty when it is gone."""
    found = items(stack, key, tmp_path, "secrets", "-n", "garden", "--field-selector", f"metadata.name={name}")
    return {k: base64.b64decode(v).decode() for k, v in found[0]["data"].items()} if found else {}


def test_the_stores_secrets_deleted_in_the_seed_and_garden_are_written_again_by_the_bucket_and_store(
    local_stack: Stack, backup: dict[str, Any], tmp_path: Path
) -> None:
    """GIVEN the seed's `garden/bucket-<bucket>` and the garden's `garden/backup-local` gone WHEN converged THEN back.

    The state keeps neither content (the bucket's user key and the store's root password are held once, by the
    bucket and the store): each writer reads its Secret back as a hash, so the preview updates the bucket and the
    store, and `up` writes the same keys again; the shoots' `etcd-backup` keeps working throughout.
    """
    bucket_secret = f"bucket-{backup['bucketName']}"
    kept = held_secret(local_stack, SEED, tmp_path, bucket_secret)
    assert kept == {k: v for k, v in held(backup).items() if k != "storePrefix"}
    store = store_outputs(local_stack)
    root = held_secret(local_stack, "garden", tmp_path, "backup-local")
    assert root == {"accessKeyID": store["rootUser"], "secretAccessKey": store["rootPassword"]}
    kubeconfigs = local_stack.outputs()["kubeconfigs"]
    kubectl(kubeconfigs[SEED], tmp_path, "delete", "secret", "-n", "garden", bucket_secret)
    kubectl(kubeconfigs["garden"], tmp_path, "delete", "secret", "-n", "garden", "backup-local")

    steps = steps_by_type(local_stack.preview_json("--refresh"), ops=("same", "refresh"))
    assert steps.get("pulumi-python:dynamic/arbor:StoreBucket") == ["update"]
    assert steps.get("pulumi-python:dynamic/arbor:ObjectStore") == ["update"]
    local_stack.up()

    assert held_secret(local_stack, SEED, tmp_path, bucket_secret) == kept
    assert held_secret(local_stack, "garden", tmp_path, "backup-local") == root
    assert seed_client(backup).bucket_exists(backup["bucketName"])


def entry_status(stack: Stack, tmp_path: Path, namespace: str) -> dict[str, str]:
    """The latest full snapshot the BackupEntry of a hosted shoot's seed namespace names."""
    entries = items(stack, "garden", tmp_path, "backupentries", "-A")
    (entry,) = [e for e in entries if e["metadata"]["name"].startswith(f"{namespace}--")]
    return dict(entry["status"]["latestFullSnapshot"])


def restored_keys(snapshot: bytes, tmp_path: Path) -> list[str]:
    """The keys of an etcd restored from a gzip-compressed snapshot and started on its own: a restore that works."""
    db = tmp_path / "snapshot.db"
    db.write_bytes(gzip.decompress(snapshot))
    data, port = tmp_path / "restored", local_process.free_port()
    peer = f"http://127.0.0.1:{local_process.free_port()}"
    subprocess.run(["etcdutl", "snapshot", "restore", str(db), "--data-dir", str(data), "--name", "r",
                    "--initial-cluster", f"r={peer}", "--initial-advertise-peer-urls", peer],
                   check=True, capture_output=True)  # fmt: skip
    client = f"http://127.0.0.1:{port}"
    etcd = subprocess.Popen(["etcd", "--name", "r", "--data-dir", str(data), "--listen-client-urls", client,
                             "--advertise-client-urls", client, "--listen-peer-urls", peer,
                             "--initial-cluster", f"r={peer}", "--initial-advertise-peer-urls", peer],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        for _ in range(100):
            got = subprocess.run(["etcdctl", f"--endpoints={client}", "get", "/registry/", "--prefix", "--keys-only"],
                                 capture_output=True, text=True, check=False)  # fmt: skip
            if got.returncode == 0:
                return [k for k in got.stdout.splitlines() if k]
            time.sleep(0.1)
        raise AssertionError(f"the restored etcd did not answer: {got.stderr}")
    finally:
        etcd.kill()
        etcd.wait()


def test_each_hosted_shoots_etcd_is_snapshotted_into_its_entry_and_restores(
    local_stack: Stack, backup: dict[str, Any], tmp_path: Path
) -> None:
    """GIVEN the converged landscape WHEN its entries are read THEN each names a full snapshot that restores.

    The snapshot is where etcd-backup-restore puts one (`<entry>/etcd-main/v2/Full-…gz`), the status gives its time
    in RFC 3339, and an etcd restored from it with etcdutl holds the shoot's objects.
    """
    status = entry_status(local_stack, tmp_path, "shoot--dev--web")
    assert re.fullmatch(rf"{re.escape(backup['storePrefix'])}/v2/Full-00000000-\d{{8}}-\d+\.gz", status["name"])
    # What a cloud shoot's EntryStatus finds listing the entry with the seed's key: the same snapshot, the same time.
    listed = entry_store.entry_store(backup).keys(f"{backup['storePrefix']}/v2/")
    assert listed_status.latest_full(listed) == (status["name"], status["time"])
    assert datetime.strptime(status["time"], "%Y-%m-%dT%H:%M:%SZ")
    snapshot = seed_client(backup).get_object(backup["bucketName"], status["name"]).read()
    keys = restored_keys(snapshot, tmp_path)
    assert "/registry/namespaces/kube-system" in keys


def plant_old_snapshots(data: dict[str, Any], copy_of: str) -> dict[str, bool]:
    """Copies of a snapshot under older names in the entry; whether retention keeps each (plan/retention.py).

    Two of one hour five hours back (the newer stays), one of ten days back (its week's only one, stays), one of
    forty days back (older than five weeks, goes).
    """
    now = int(time.time())
    hour = (now - 5 * 3600) // 3600 * 3600
    ages = {hour + 600: False, hour + 1800: True, now - 10 * 86400: True, now - 40 * 86400: False}
    planted = {}
    for revision, (unix, kept) in enumerate(ages.items(), start=1):
        key = f"{data['storePrefix']}/v2/Full-00000000-{revision:08d}-{unix}.gz"
        seed_client(data).copy_object(data["bucketName"], key, CopySource(data["bucketName"], copy_of))
        planted[key] = kept
    return planted


def test_make_backup_takes_a_new_snapshot_of_each_hosted_shoot_and_the_preview_says_so(
    local_stack: Stack, backup: dict[str, Any], tmp_path: Path
) -> None:
    """GIVEN the converged landscape WHEN a backup is asked for THEN the preview lists a snapshot per hosted shoot.

    And `up` takes them: each entry names a newer snapshot than before. Without the request, nothing is due. Each
    snapshot collects its entry's old ones as etcd-backup-restore's Exponential policy does: of old copies planted in
    dev/web's entry the two the policy lets go are gone, still there as noncurrent versions (the bucket is versioned).
    """
    before = {ns: entry_status(local_stack, tmp_path, ns) for ns in HOSTED}
    planted = plant_old_snapshots(backup, before["shoot--dev--web"]["name"])
    assert "pulumi-python:dynamic/arbor:EtcdSnapshot" not in steps_by_type(local_stack.preview_json())
    asked = dataclasses.replace(local_stack, env={**(local_stack.env or {}), "ARBOR_BACKUP_REQUEST": f"t{time.time()}"})
    steps = steps_by_type(asked.preview_json())
    assert steps.get("pulumi-python:dynamic/arbor:EtcdSnapshot") == ["update"] * len(HOSTED)
    time.sleep(1)  # a snapshot's name holds its second
    asked.up()
    for namespace, old in before.items():
        new = entry_status(local_stack, tmp_path, namespace)
        assert new["name"] != old["name"] and new["time"] >= old["time"]
    s3, bucket = seed_client(backup), backup["bucketName"]
    current = set(entry_store.entry_store(backup).keys(f"{backup['storePrefix']}/v2/"))
    assert {key for key in planted if key in current} == {key for key, kept in planted.items() if kept}
    listed = s3.list_objects(bucket, f"{backup['storePrefix']}/v2/", include_version=True)
    versions = {o.object_name for o in listed if not o.is_delete_marker}
    assert set(planted) <= versions
    s3.remove_objects(bucket, [DeleteObject(key) for key, kept in planted.items() if kept])


def test_a_risky_change_runs_after_a_snapshot_step_the_preview_lists(
    local_stack: Stack, backup: dict[str, Any], tmp_path: Path
) -> None:
    """GIVEN dev/web's encryption changed WHEN previewed and converged THEN a snapshot step runs before the rewrite.

    The preview lists the step (an update of a `command.local.Command`) ahead of the rewrite, and nothing of ops/db;
    `up` runs it: its output names a new full snapshot in the entry, which the entry's status names. The change is
    undone afterwards (another snapshot, another rewrite).
    """
    preview = preview_with(local_stack, tmp_path, {"encryption": {"resources": ["configmaps"]}})
    names = [((s.get("newState") or s["oldState"])["urn"].split("::")[-1], s["op"]) for s in preview["steps"]]
    order = [n for n, op in names if op != "same"]
    step, rewrite = "arbor-shoot-dev-web-snapshot-before-change", "arbor-shoot-dev-web-encryption-rewrite"
    assert (step, "update") in names and (rewrite, "update") in names
    assert order.index(step) < order.index(rewrite)
    assert not [n for n in order if n.startswith("arbor-shoot-ops-db-")]

    path = local_stack.config_dir / f"Pulumi.{local_stack.name}.yaml"
    original = path.read_text()
    before = entry_status(local_stack, tmp_path, "shoot--dev--web")
    try:
        changed = yaml.safe_load(original)
        changed["config"]["arbor:landscape"]["shoots"][0]["encryption"] = {"resources": ["configmaps"]}
        path.write_text(yaml.safe_dump(changed, sort_keys=False))
        time.sleep(1)  # a snapshot's name holds its second
        local_stack.up()
        state = json.loads(local_stack.run("stack", "export").stdout)["deployment"]["resources"]
        (command,) = [r for r in state if r["urn"].endswith(f"::{step}")]
        taken = command["outputs"]["stdout"]
        assert taken.startswith(f"{backup['storePrefix']}/v2/Full-") and taken != before["name"]
        assert (seed_client(backup).stat_object(backup["bucketName"], taken).size or 0) > 0
        assert entry_status(local_stack, tmp_path, "shoot--dev--web")["name"] == taken
    finally:
        path.write_text(original)
        local_stack.up()
