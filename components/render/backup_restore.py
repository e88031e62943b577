"""etcd-backup-restore beside etcd main, pure: snapshots of a hosted shoot's etcd into its seed's bucket.

As Gardener's etcd (etcd-druid's `backup-restore` container): a full snapshot once a day at a time in the first hour
of the maintenance window (Gardener's default window starts at 22:00 UTC; the minute comes from the shoot, so a
seed's shoots do not all upload at once), delta snapshots every five minutes or at 100 MiB of changes, exponential
garbage collection every twelve hours, gzip compression. Only etcd main is backed up, as in Gardener. The sidecar
reaches etcd on loopback with the etcd client certificate and reads the bucket's credentials, name and the shoot's
prefix (`<backup entry>/etcd-main`) from the `etcd-backup` Secret, so a shoot made again under its name (a new
entry) never writes into the old one's snapshots.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from components import naming
from components.kinds import ProviderType
from components.plan.values import ShootValues
from components.render import backup, pki, storage

Object = dict[str, Any]
IMAGE = "europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl:v0.39.0"
SERVER_PORT = 8080
# etcd-backup-restore's names for the object stores, and where each reads its credentials. The local object store
# speaks S3: the same provider, with the endpoint and CA the `etcd-backup` Secret adds.
STORAGE_PROVIDERS = {ProviderType.GCP: "GCS", ProviderType.AWS: "S3", ProviderType.LOCAL: "S3"}
_S3_CREDENTIALS = ("/var/etcd-backup", "AWS_APPLICATION_CREDENTIALS", "/var/etcd-backup")
CREDENTIALS = {
    ProviderType.GCP: (
        backup.GCP_CREDENTIALS_DIR,
        "GOOGLE_APPLICATION_CREDENTIALS",
        f"{backup.GCP_CREDENTIALS_DIR}/{backup.KEY_SERVICE_ACCOUNT}",
    ),
    ProviderType.AWS: _S3_CREDENTIALS,
    ProviderType.LOCAL: _S3_CREDENTIALS,
}
MAINTENANCE_HOUR = 22
DELTA_PERIOD, DELTA_MEMORY_LIMIT = "5m", 100 * 1024 * 1024
GC_POLICY, GC_PERIOD = "Exponential", "12h"
VOLUME = "etcd-backup"


def full_snapshot_schedule(shoot: ShootValues) -> str:
    """The daily full snapshot's cron line: a minute of the maintenance window's first hour, fixed per shoot."""
    minute = int(naming.short_hash(shoot.technical_id), 16) % 60
    return f"{minute} {MAINTENANCE_HOUR} * * *"


def entry_prefix(entry: str) -> str:
    """Where etcd main's snapshots of a backup entry are, in its bucket (Gardener's `<entry>/etcd-main`)."""
    return f"{entry}/etcd-main"


def _secret_env(name: str, key: str) -> Object:
    """An environment variable from a key of the `etcd-backup` Secret."""
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": backup.ETCD_BACKUP_SECRET, "key": key}}}


def add_sidecar(
    pod: Object, etcd: Object, shoot: ShootValues, client_port: int, path: Callable[[str, str], str]
) -> Object:
    """Adds the `backup-restore` container to etcd main's pod; `path` gives a mounted credential's file."""
    assert shoot.backup is not None
    mount_dir, credentials_env, credentials_path = CREDENTIALS[shoot.backup.provider]
    command = [
        "etcdbrctl",
        "server",
        f"--data-dir={storage.DATA_DIR}",
        f"--endpoints=https://localhost:{client_port}",
        f"--cacert={path(pki.CA_ETCD, 'ca.crt')}",
        f"--cert={path(pki.ETCD_CLIENT, 'tls.crt')}",
        f"--key={path(pki.ETCD_CLIENT, 'tls.key')}",
        "--insecure-transport=false",
        "--insecure-skip-tls-verify=false",
        f"--storage-provider={STORAGE_PROVIDERS[shoot.backup.provider]}",
        # Kubernetes expands $(VAR) from the container's environment: the entry's prefix, from the Secret.
        "--store-prefix=$(STORE_PREFIX)",
        f"--schedule={full_snapshot_schedule(shoot)}",
        f"--delta-snapshot-period={DELTA_PERIOD}",
        f"--delta-snapshot-memory-limit={DELTA_MEMORY_LIMIT}",
        f"--garbage-collection-policy={GC_POLICY}",
        f"--garbage-collection-period={GC_PERIOD}",
        "--compress-snapshots=true",
        "--compression-policy=gzip",
        "--etcd-connection-timeout=5m",
        "--etcd-snapshot-timeout=15m",
        f"--server-port={SERVER_PORT}",
    ]
    sidecar: Object = {
        "name": "backup-restore",
        "image": IMAGE,
        "command": command,
        "env": [
            _secret_env("STORAGE_CONTAINER", backup.KEY_BUCKET),
            _secret_env("STORE_PREFIX", backup.KEY_PREFIX),
            {"name": credentials_env, "value": credentials_path},
        ],
        "ports": [{"name": "server", "containerPort": SERVER_PORT, "protocol": "TCP"}],
        # No readiness probe: a pod is ready when all its containers are, and a bucket that cannot be reached
        # must not take etcd out of its Service (and the shoot's API with it); the entry's status tells instead.
        "resources": {"requests": {"cpu": "23m", "memory": "128Mi"}},
        # The data volume as etcd has it, the CA etcd already mounts, and the bucket's credentials.
        "volumeMounts": [
            *(m for m in etcd["volumeMounts"] if m["name"] != pki.ETCD_SERVER and m["name"] != pki.ETCD_PEER),
            {"name": VOLUME, "mountPath": mount_dir, "readOnly": True},
        ],
    }
    pod["volumes"] = [*pod.get("volumes", []), _credentials_volume(shoot.backup.audience)]
    if shoot.backup.audience is not None:
        # The bucket's role trusts this ServiceAccount's tokens (workload identity); etcd needs no API token.
        pod.update(serviceAccountName=backup.SERVICE_ACCOUNT, automountServiceAccountToken=False)
    pod["containers"] = [*pod["containers"], sidecar]
    return sidecar


def _credentials_volume(audience: str | None) -> Object:
    """The `etcd-backup` Secret's keys; with workload identity, and the pod's token for the bucket's role beside them.

    etcd-backup-restore assumes the role named by `roleARN` (aws), or exchanges the token for the service account's
    (gcp: `serviceaccount.json` an external account), with the file `token` of the same directory, which the kubelet
    renews before it expires (a projected ServiceAccount token: no Secret holds it).
    """
    secret = {"name": backup.ETCD_BACKUP_SECRET}
    if audience is None:
        return {"name": VOLUME, "secret": {"secretName": backup.ETCD_BACKUP_SECRET}}
    token = {"audience": audience, "expirationSeconds": backup.TOKEN_SECONDS, "path": backup.KEY_TOKEN}
    return {"name": VOLUME, "projected": {"sources": [{"secret": secret}, {"serviceAccountToken": token}]}}
