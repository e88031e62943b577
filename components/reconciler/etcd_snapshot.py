"""EtcdSnapshot: full snapshots of a local shoot's etcd in its backup entry, named as etcd-backup-restore names them.

kwok runs no etcd-backup-restore beside a local shoot's etcd, so arbor takes the full snapshots itself: `etcdctl
snapshot save` of the shoot cluster's etcd on loopback, gzip-compressed and uploaded with the seed's key (the
`etcd-backup` Secret's data) to `<entry>/etcd-main/v2/Full-00000000-<revision>-<unix time>.gz`, the name and place
etcd-backup-restore gives a compressed full snapshot. One is taken when the resource is made, when refresh finds
the latest older than the period (a day, as Gardener's daily full snapshot) or gone from the bucket, when the entry
changes (a shoot made again) and when `make backup` asks (a new `request`). Each writes the BackupEntry's status:
the latest full snapshot's name and time (RFC 3339).

The engine stores the provider pickled by reference to this module: keep its path and class names.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pulumi
import urllib3
from minio import S3Error
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.naming import API_GROUP, API_VERSION
from components.plan import retention
from components.reconciler import kwokctl
from components.reconciler.entry_store import SECRET_REF, S3Entry, StoreError, entry_data, entry_store, s3_client
from components.reconciler.kube import Kube, KubeError
from components.reconciler.provider import Provider
from components.render import backup

PROVIDER_VERSION = "1"
# etcd-backup-restore's layout of a store prefix, and the suffix of a gzip-compressed snapshot.
LAYOUT, GZIP_SUFFIX = "v2", ".gz"
# etcd-backup-restore's full snapshot: `Full-<start revision>-<last revision>-<unix time>`, compressed or not; not a
# chunk of one still being uploaded (`…/<chunk number>`).
FULL = re.compile(r"/Full-\d{8}-(\d{8})-(\d+)(\.gz|\.zlib|\.lz4)?(\.final)?$")
DAY_S = 24 * 3600
ETCDCTL_TIMEOUT_S = 120
SNAPSHOT_OUTPUTS = ("latest", "time", "revision", "size", "sha256")
# The properties a snapshot step reads (main()), as JSON.
SNAPSHOT_ENV = "ARBOR_SNAPSHOT"
# What a step before a risky change runs, from the project directory with the project's virtualenv (Pulumi.yaml).
SNAPSHOT_COMMAND = ".venv/bin/python -m components.reconciler.etcd_snapshot"
# Where a cloud seed's etcd-backup-restore answers (render/backup_restore.py), and how long a full snapshot may take.
ETCD_MAIN_POD, SIDECAR_PORT, SIDECAR_TIMEOUT_S = "etcd-main-0", 8080, 15 * 60


class SnapshotError(Exception):
    """A snapshot that cannot be taken or stored; the message names the shoot's etcd or the entry and why."""


def snapshot_key(prefix: str, revision: int, taken: datetime) -> str:
    """Where a full snapshot of `revision` taken at `taken` goes under the entry's etcd prefix."""
    return f"{prefix}/{LAYOUT}/Full-{0:08d}-{revision:08d}-{int(taken.timestamp())}{GZIP_SUFFIX}"


def full_snapshots(keys: Iterable[str]) -> list[tuple[str, datetime]]:
    """The full snapshots among a prefix's keys, each with the time its name gives."""
    return [(key, datetime.fromtimestamp(int(m.group(2)), UTC)) for key in keys if (m := FULL.search(key))]


def collect_garbage(store: S3Entry, prefix: str, now: datetime) -> list[str]:
    """Removes the entry's full snapshots the retention policy lets go (plan/retention.py); the keys removed.

    Best effort, as etcd-backup-restore's collector: a store that refuses loses nothing, the next snapshot tries again.
    `store`: the entry's bucket as the snapshot's upload reached it (a role assumed once serves both).
    """
    try:
        gone = retention.collectable(full_snapshots(store.keys(f"{prefix}/{LAYOUT}/")), now)
        store.remove(gone)
    except StoreError:
        return []
    return gone


def rfc3339(moment: datetime) -> str:
    """A UTC time as RFC 3339, seconds precision (`2026-11-27T15:04:05Z`)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def etcd_url(cluster: kwokctl.Cluster) -> str:
    """The client URL of a kwokctl cluster's etcd on loopback (the port its kwok.yaml was made with)."""
    options: Any = kwokctl.config(cluster)[0].get("options") or {}
    return f"http://127.0.0.1:{int(options['etcdPort'])}"


def etcd_tool(tool: str, *args: str) -> str:
    """The output of etcdctl or etcdutl; its error, never a key, when it fails."""
    program = shutil.which(tool)
    if program is None:
        raise SnapshotError(f"{tool} is not on PATH: run `make tools`")
    done = subprocess.run([program, *args], capture_output=True, text=True, timeout=ETCDCTL_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise SnapshotError(f"{tool} {args[0]} failed: {done.stderr.strip()[-300:]}")
    return done.stdout


def restore_marker(cluster: kwokctl.Cluster) -> Path:
    """Where a cluster made from a snapshot names it until its etcd holds it (reconciler/shoot_cluster.py)."""
    return cluster.dir / "arbor" / "restore-pending"


def take(props: dict[str, Any]) -> dict[str, Any]:
    """Saves the etcd's snapshot, compresses and uploads it; its key, time, revision, size and digest."""
    cluster = kwokctl.Cluster(props["cluster"], props["workdir"])
    if restore_marker(cluster).is_file():
        # Its etcd is a new, empty one until the restore is done: a snapshot of it would become the newest.
        raise SnapshotError(f"cluster '{cluster.name}' is being restored from a snapshot: run `make up` to finish")
    endpoint = etcd_url(cluster)
    try:
        data = entry_data(props["backup"])
    except StoreError as error:
        raise SnapshotError(str(error)) from None
    where = props["backup"].get(SECRET_REF)
    with tempfile.TemporaryDirectory(prefix="arbor-snapshot-") as tmp:
        raw, packed = Path(tmp) / "snapshot.db", Path(tmp) / "snapshot.db.gz"
        etcd_tool("etcdctl", "snapshot", "save", str(raw), f"--endpoints={endpoint}")
        # The revision the snapshot holds, read from the file: etcd may have moved on since it was saved.
        revision = int(json.loads(etcd_tool("etcdutl", "snapshot", "status", str(raw), "--write-out=json"))["revision"])
        with raw.open("rb") as source, gzip.open(packed, "wb") as sink:
            shutil.copyfileobj(source, sink)
        taken = datetime.now(UTC)
        key = snapshot_key(props["prefix"], revision, taken)
        digest = hashlib.sha256(packed.read_bytes()).hexdigest()
        try:
            client = s3_client(data, where)
            client.fput_object(data[backup.KEY_BUCKET], key, str(packed), content_type="application/gzip")
        except (S3Error, StoreError, urllib3.exceptions.HTTPError) as error:
            raise SnapshotError(f"uploading {key} to bucket {data[backup.KEY_BUCKET]}: {error}") from None
        size = packed.stat().st_size
    collect_garbage(S3Entry(client, data[backup.KEY_BUCKET]), props["prefix"], taken)
    return {"latest": key, "time": rfc3339(taken), "revision": revision, "size": size, "sha256": digest}


def _entry_path(props: dict[str, Any]) -> str:
    """The BackupEntry record's path in the garden."""
    return f"/apis/{API_GROUP}/{API_VERSION}/namespaces/{props['entryNamespace']}/backupentries/{props['entry']}"


def write_status(props: dict[str, Any]) -> None:
    """Names the latest full snapshot and its time in the BackupEntry's status, unless it names a newer one."""
    status = {"status": {"latestFullSnapshot": {"name": props["latest"], "time": props["time"]}}}
    try:
        garden = Kube.from_kubeconfig(props["gardenKubeconfig"])
        named = ((garden.get(_entry_path(props)).get("status") or {}).get("latestFullSnapshot") or {}).get("time")
        # A snapshot taken before a risky step (the command below) may be newer than this resource's own.
        if not named or named <= props["time"]:
            garden.merge_patch(f"{_entry_path(props)}/status", status)
    except KubeError as error:
        raise SnapshotError(f"BackupEntry {props['entryNamespace']}/{props['entry']}: {error}") from None


def _age_s(props: dict[str, Any]) -> float:
    """How long ago the latest snapshot was taken (infinite when there is none)."""
    if not props.get("time"):
        return float("inf")
    return time.time() - datetime.strptime(props["time"], "%Y-%m-%dT%H:%M:%S%z").timestamp()


def _present(props: dict[str, Any]) -> bool:
    """Whether the latest snapshot is still in the bucket; a store that cannot be asked says nothing is missing."""
    try:
        return entry_store(props["backup"]).present(props["latest"])
    except StoreError:
        return True


def _wanted(olds: dict[str, Any], news: dict[str, Any]) -> bool:
    """Whether a new snapshot is due: asked for, a new entry, the latest too old or gone."""
    asked = bool(news.get("request")) and news.get("request") != olds.get("request")
    return asked or olds.get("prefix") != news.get("prefix") or bool(olds.get("due"))


def _converge(props: dict[str, Any], snapshot: bool) -> dict[str, Any]:
    """Takes a snapshot when asked to, then writes the entry's status; the outputs."""
    outs = {**props, **take(props)} if snapshot else dict(props)
    write_status(outs)
    return {**outs, "due": False}


class EtcdSnapshotProvider(Provider):
    """Full snapshots of one shoot's etcd; nothing is captured, everything is read from the properties."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """The first full snapshot of the entry."""
        return CreateResult(id_=f"{props['entryNamespace']}/{props['entry']}", outs=_converge(props, snapshot=True))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """A snapshot due, asked for or of a new entry is an update; the last one's key and time stay otherwise."""
        keys = ("cluster", "workdir", "entry", "entryNamespace", "periodSeconds", "version")
        inputs = [k for k in keys if olds.get(k) != news.get(k)]
        wanted = _wanted(olds, news)
        stables = [] if wanted else list(SNAPSHOT_OUTPUTS)
        return DiffResult(changes=wanted or bool(inputs), replaces=[], stables=stables, delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Takes a snapshot when one is wanted, else keeps the latest; writes the entry's status again."""
        kept = {k: olds.get(k) for k in SNAPSHOT_OUTPUTS}
        return UpdateResult(outs=_converge({**news, **kept}, snapshot=_wanted(olds, news)))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """Whether a snapshot is due: the latest older than the period, or gone from the bucket."""
        due = _age_s(props) > float(props.get("periodSeconds") or DAY_S) or not _present(props)
        return ReadResult(id_=id_, outs={**props, "due": due})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Nothing: the snapshots stay in the bucket, as the bucket outlives its seed."""


class EtcdSnapshot(Resource, module="arbor", name="EtcdSnapshot"):
    """A local shoot's latest full etcd snapshot in its backup entry; `backup` (the seed's key) is secret."""

    if TYPE_CHECKING:
        latest: pulumi.Output[str]
        time: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        cluster: str,
        workdir: str,
        backup_data: pulumi.Input[dict[str, str]],
        prefix: pulumi.Input[str],
        entry: pulumi.Input[str],
        entry_namespace: str,
        garden_kubeconfig: pulumi.Input[str],
        request: str = "",
        period_s: int = DAY_S,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "cluster": cluster, "workdir": workdir, "backup": pulumi.Output.secret(backup_data), "prefix": prefix,
            "entry": entry, "entryNamespace": entry_namespace, "gardenKubeconfig": garden_kubeconfig,
            "request": request, "periodSeconds": period_s, "version": PROVIDER_VERSION, "due": None,
            **dict.fromkeys(SNAPSHOT_OUTPUTS),
        }  # fmt: skip
        secret = pulumi.ResourceOptions(additional_secret_outputs=["backup"])
        super().__init__(EtcdSnapshotProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret))


def trigger_full(props: dict[str, Any]) -> dict[str, Any]:
    """Asks etcd-backup-restore beside etcd main for a full snapshot now, through the seed API server's pod proxy.

    Its answer is the snapshot it took (its name, directory and prefix in the bucket, its creation time).
    """
    pod = f"/api/v1/namespaces/{props['seedNamespace']}/pods/{ETCD_MAIN_POD}:{SIDECAR_PORT}/proxy/snapshot/full"
    try:
        taken = Kube.from_kubeconfig(props["seedKubeconfig"]).get(pod, timeout=SIDECAR_TIMEOUT_S)
    except KubeError as error:
        raise SnapshotError(f"etcd-backup-restore of {props['seedNamespace']}: {error}") from None
    key = "/".join(p for p in (taken.get("prefix"), taken.get("snapDir"), taken.get("snapName")) if p)
    return {
        "latest": key,
        "time": rfc3339(go_time(str(taken["createdOn"]))),
        "revision": int(taken.get("lastRevision") or 0),
    }


def go_time(text: str) -> datetime:
    """A Go `time.Time` as JSON gives it (RFC 3339, nanoseconds optional), to the second."""
    return datetime.fromisoformat(re.sub(r"\.\d+", "", text).replace("Z", "+00:00"))


def main() -> int:
    """One full snapshot as a step of its own (a `command.local.Command` before a risky change).

    Reads what to snapshot from `ARBOR_SNAPSHOT` (JSON): a local shoot's cluster (arbor takes it), or a cloud seed's
    namespace (its etcd-backup-restore takes it). Names it in the entry's status and prints its key; a failure is one
    line on stderr, never a traceback.
    """
    try:
        props = json.loads(os.environ[SNAPSHOT_ENV])
        outs = {**props, **(trigger_full(props) if props.get("seedKubeconfig") else take(props))}
        write_status(outs)
    except (SnapshotError, KeyError, ValueError) as error:
        print(f"etcd snapshot failed: {error}", file=sys.stderr)
        return 1
    print(outs["latest"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
