"""A local shoot's cluster as the shoot's own: served with its PKI, and its etcd restored from its entry when lost.

kwokctl makes a PKI for a new cluster unless the cluster's `pki/` exists. arbor writes it first, from the shoot's
CA, which signs the one certificate kwokctl's components serve and authenticate with, and the shoot's
service-account key, which kwokctl uses as that certificate's key and so as kube-apiserver's token signing key.
A cluster made again (its files lost, or on another seed) is then the same cluster to its clients: their
kubeconfigs verify it with the shoot's CA, and service-account tokens issued before still authenticate.

A cluster made while its shoot's backup entry holds a full snapshot starts from the newest one, as
etcd-backup-restore restores etcd main of a Gardener shoot whose volume is empty. The snapshot's key is written
into the cluster's `arbor/` before `kwokctl create`, and removed only once the restored etcd serves: a run killed
anywhere in between restores again on the next `up` (LocalCluster reads a pending restore as not running). The
key it was restored from stays in `arbor/restored-from`.

A cluster with an entry is never deleted without a final full snapshot (Gardener's migrate flow takes one before it
stops etcd): a replacement (a new Kubernetes version of the tools) or a move so comes back with every object, and a
snapshot that fails stops the deletion. A cluster whose restore is pending holds nothing of the shoot yet: no
snapshot of it is taken, and its pending snapshot stays the newest.
"""

from __future__ import annotations

import gzip
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

from components.reconciler import kwokctl, signing
from components.reconciler.credential_secrets import secret_keys
from components.reconciler.entry_status import latest_full
from components.reconciler.entry_store import StoreError, entry_store
from components.reconciler.etcd_snapshot import GZIP_SUFFIX, LAYOUT, SnapshotError, etcd_tool, restore_marker, take
from components.reconciler.files import write_file
from components.reconciler.kube import KubeError
from components.reconciler.secret_places import DIRECTORY
from components.render import backup, packed_keys
from components.render import pki as credentials

# The certificate kwokctl's components share, as kwokctl names it (kube-apiserver serves it; the others are its
# clients): its user and group, and the names it serves at on loopback.
ADMIN_USER = "kwok-admin"
ADMIN_GROUPS = ["system:masters"]
ADMIN_DNS_NAMES = ["kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
                   "localhost"]  # fmt: skip
ADMIN_IPS = ["127.0.0.1", "::1"]
# kwokctl's own PKI lasts a year and is never renewed; the shoot's certificate for it lasts as long.
ADMIN_VALIDITY_S = 365 * 24 * 3600
# The `pki` input's keys: the shoot's CA (certificate and key) and its service-account key.
PKI_KEYS = ("ca", "caKey", "serviceAccountKey")
# Where a hosted shoot's seed namespace holds each of them (the control plane's SecretSet writes them): Secret, key.
PKI_SOURCES = {
    "ca": (credentials.signer(credentials.CA), credentials.KEY_CA_CERT),
    "caKey": (credentials.signer(credentials.CA), credentials.KEY_CA_KEY),
    "serviceAccountKey": (credentials.SERVICE_ACCOUNT_KEY, credentials.KEY_RSA_PRIVATE),
}
# A `pki` naming where it is rather than holding it: the seed's kubeconfig (or file reference) and namespace.
PKI_SEED, PKI_NAMESPACE = "seedKubeconfig", "namespace"
# etcd's flags a restored member must carry, read from the cluster's kwok.yaml.
ETCD_MEMBER_FLAGS = ("--name", "--initial-cluster", "--initial-advertise-peer-urls")
# How long kube-apiserver gets to stop before a final snapshot (it drains requests for a few seconds).
APISERVER_STOP_S = 30


class RestoreError(Exception):
    """A snapshot that could not be found, read or restored; the message says which and why (never a key)."""


def _restored_file(cluster: kwokctl.Cluster) -> Path:
    """Where the snapshot the cluster started from stays named."""
    return cluster.dir / "arbor" / "restored-from"


def held_at(source: dict[str, str]) -> dict[str, str]:
    """Where an input says its content is, as credential_secrets reads it: a seed namespace, or a machine directory."""
    if source.get(DIRECTORY):
        return {DIRECTORY: source[DIRECTORY]}
    return {"kubeconfig": source[PKI_SEED], "namespace": source[PKI_NAMESPACE]}


def held_pki(source: dict[str, str]) -> dict[str, str]:
    """A shoot's PKI where it is held: a hosted shoot's seed namespace, or a self-hosted shoot's machine directory."""
    seed = held_at(source)
    wanted: dict[str, list[str]] = {}  # each Secret once, with the keys taken from it
    for secret, field in PKI_SOURCES.values():
        wanted.setdefault(secret, []).append(field)
    try:
        held = {secret: secret_keys(seed, secret, fields) for secret, fields in wanted.items()}
    except KubeError as error:
        raise RestoreError(f"the shoot's PKI: {error}") from None
    return {key: held[secret][field] for key, (secret, field) in PKI_SOURCES.items()}


def write_pki(cluster: kwokctl.Cluster, pki: dict[str, str]) -> bool:
    """Gives a cluster about to be made the shoot's PKI in kwokctl's layout; False when it has a PKI already.

    `pki` holds it, or names where it is (a hosted shoot's seed namespace, a self-hosted shoot's machine directory):
    read there, kept nowhere else.
    Written into a sibling directory and renamed, so kwokctl never finds a half-written `pki/` and keeps it.
    """
    target = cluster.dir / "pki"
    if target.exists():
        return False
    if PKI_SEED in pki or DIRECTORY in pki:
        pki = held_pki(pki)
    pki = {k: packed_keys.expanded(v) for k, v in pki.items()}  # kept as their primes (render/packed_keys.py)
    missing = [k for k in PKI_KEYS if not pki.get(k)]
    if missing:
        raise RestoreError(f"cluster '{cluster.name}': the shoot's PKI lacks {', '.join(missing)}")
    admin = signing.issue(
        pki["ca"], pki["caKey"], ADMIN_USER, ADMIN_GROUPS, ADMIN_DNS_NAMES, ADMIN_IPS, ["server", "client"],
        ADMIN_VALIDITY_S, key_pem_text=pki["serviceAccountKey"],
    )  # fmt: skip
    partial = cluster.dir / ".pki.partial"
    shutil.rmtree(partial, ignore_errors=True)
    files = {"ca.crt": pki["ca"], "ca.key": pki["caKey"], "admin.crt": admin.cert, "admin.key": admin.key}
    for name, text in files.items():
        write_file(partial / name, text)
    os.replace(partial, target)
    return True


def latest_snapshot(data: dict[str, str]) -> str | None:
    """The newest full snapshot in the entry the `etcd-backup` data names, None while it holds none."""
    prefix = data[backup.KEY_PREFIX]
    try:
        keys = entry_store(data).keys(f"{prefix}/{LAYOUT}/")
    except StoreError as error:
        # Never made empty when a snapshot may exist: the entry must answer first.
        raise RestoreError(f"cannot tell whether the backup entry holds a snapshot: {error}") from None
    latest = latest_full(keys)
    return latest[0] if latest else None


def plan_restore(cluster: kwokctl.Cluster, data: dict[str, str] | None) -> str | None:
    """Before a cluster is made: names the snapshot it is to start from (the entry's newest), None for none."""
    key = latest_snapshot(data) if data else None
    if key:
        write_file(restore_marker(cluster), key)
    return key


def _named(path: Path) -> str | None:
    """The snapshot key a marker file names, None without the file."""
    return path.read_text().strip() if path.is_file() else None


def pending(cluster: kwokctl.Cluster) -> str | None:
    """The snapshot a made cluster still has to start from, None when none is pending."""
    return _named(restore_marker(cluster))


def restored_from(cluster: kwokctl.Cluster) -> str | None:
    """The snapshot the cluster started from, None when it started empty."""
    return _named(_restored_file(cluster))


def _member_flags(cluster: kwokctl.Cluster) -> list[str]:
    """The flags that make a restored data directory etcd's own member (its name and peer URL, from kwok.yaml)."""
    components: Any = kwokctl.config(cluster)[0].get("components") or []
    etcd: dict[str, Any] = next((c for c in components if c.get("name") == "etcd"), {})
    return [arg for arg in etcd.get("args") or [] if kwokctl.flag_name(arg) in ETCD_MEMBER_FLAGS]


def _fetch(data: dict[str, str], key: str, into: Path) -> None:
    """Downloads a snapshot and writes it uncompressed."""
    try:
        body, _ = entry_store(data).get(key)
    except StoreError as error:
        raise RestoreError(str(error)) from None
    into.write_bytes(gzip.decompress(body) if key.endswith(GZIP_SUFFIX) else body)


def restore(cluster: kwokctl.Cluster, data: dict[str, str]) -> str:
    """Replaces a made cluster's etcd data with its pending snapshot, with every process stopped; the key."""
    key = pending(cluster)
    assert key is not None, "restore() is called only for a pending restore"
    etcd_dir, staged = cluster.dir / "etcd", cluster.dir / "etcd.restoring"
    with tempfile.TemporaryDirectory(prefix="arbor-restore-") as tmp:
        snapshot = Path(tmp) / "snapshot.db"
        _fetch(data, key, snapshot)

        def replace_data() -> None:
            shutil.rmtree(staged, ignore_errors=True)
            try:
                etcd_tool("etcdutl", "snapshot", "restore", str(snapshot), f"--data-dir={staged}",
                          *_member_flags(cluster))  # fmt: skip
            except SnapshotError as error:
                raise RestoreError(f"restoring {key}: {error}") from None
            shutil.rmtree(etcd_dir, ignore_errors=True)
            os.replace(staged, etcd_dir)

        kwokctl.restart(cluster, while_stopped=replace_data)
    write_file(_restored_file(cluster), key)
    restore_marker(cluster).unlink()
    return key


def _stop_apiserver(cluster: kwokctl.Cluster) -> None:
    """Stops the cluster's kube-apiserver (kwokctl's binary runtime starts no exited process again); etcd runs on."""
    try:
        proc = kwokctl.apiserver_proc(cluster)
        os.kill(int(proc.name), signal.SIGTERM)
    except (OSError, ValueError):
        return  # not running
    deadline = time.monotonic() + APISERVER_STOP_S
    while proc.exists() and time.monotonic() < deadline:
        time.sleep(0.1)


def final_snapshot(cluster: kwokctl.Cluster, data: dict[str, str]) -> str | None:
    """Before a cluster with data is deleted: a full snapshot into its entry (started first if stopped); its key."""
    if not kwokctl.holds_data(cluster) or pending(cluster):
        return None
    # Only etcd has to run: a run killed after it stopped the API server finds etcd alone.
    if "etcd" in kwokctl.stopped_components(cluster):
        kwokctl.start(cluster)
    # Nothing written after it: its API server goes first, as Gardener scales kube-apiserver down before etcd.
    _stop_apiserver(cluster)
    try:
        taken = take({"cluster": cluster.name, "workdir": cluster.workdir, "backup": data,
                      "prefix": data[backup.KEY_PREFIX]})  # fmt: skip
    except SnapshotError as error:
        raise RestoreError(
            f"cluster '{cluster.name}' is kept: its final snapshot failed ({error}); fix the cause and run `up` again"
        ) from None
    return str(taken["latest"])
