"""ObjectStore: the local landscape's S3-compatible object store, the real MinIO server on loopback, over TLS.

It runs as a supervised process (local_process.py) with what it needs generated at create and kept in the state as
secrets, never generated again: its root user, the KMS key of its server-side encryption (a new one would leave
every encrypted object unreadable), and a CA of its own with the serving certificate for 127.0.0.1, renewed (and the
server restarted) when due by Gardener's rule. Its port is chosen once, from a block no kwok cluster uses, and kept.

Its root credentials are the account its buckets are made with, as a seed's backup credentials are in Gardener: it
writes them to the garden's `garden/backup-local` Secret itself (gardener-local's name; credential_secrets.py), and
each bucket reads them there, so the state keeps them here alone.

Its objects live in `dataDir`, apart from the process's directory: a restart, a new binary or a renewed certificate
keeps every object. Only `delete` removes them; the resource is protected, so that is `make down` (after every shoot
and bucket is gone) or a confirmed removal. A store found stopped is `running: false`, so the next `up` starts it.

The engine stores the provider pickled by reference to this module: keep its path and class names.
"""

from __future__ import annotations

import base64
import secrets
import shutil
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.reconciler import credential_secrets, local_process, ports
from components.reconciler.kube import unless_unreachable
from components.reconciler.kwokctl import ports_lock
from components.reconciler.provider import Provider
from components.reconciler.signing import issue, self_signed_ca
from components.render import pki

# Bump when the provider logic changes: every store shows an update and is restarted (its data kept).
PROVIDER_VERSION = "1"
PROGRAM = "minio"
ROOT_USER = "arbor-root"
# The name MinIO gives its built-in KMS key (`MINIO_KMS_SECRET_KEY=<name>:<base64 of 32 bytes>`).
KMS_KEY_NAME = "arbor-backups"
HEALTH_PATH = "/minio/health/live"
READY_WAIT_S = 60.0
# MinIO reads `public.crt` and `private.key` from its certificates directory: the process's own.
CERT_FILE, KEY_FILE = "public.crt", "private.key"
HOST = "127.0.0.1"
# Inputs that change what runs; the generated outputs below are kept across every update.
RESTART_ON = ("dir", "dataDir", "version")
GENERATED = ("rootUser", "rootPassword", "kmsKey", "caCert", "caKey", "cert", "key", "notBefore", "notAfter", "port")
SECRET_OUTPUTS = ("rootPassword", "kmsKey", "caKey", "key")
# The garden's Secret of the root credentials (the seed backups' account), as gardener-local names its seed's.
ROOT_SECRET_NAMESPACE, ROOT_SECRET = "garden", "backup-local"
ROOT_PASSWORD_KEY = "secretAccessKey"
ROOT_KEYS = {"accessKeyID": "rootUser", ROOT_PASSWORD_KEY: "rootPassword"}


def root_reference(kubeconfig: str) -> dict[str, str]:
    """Where a bucket reads the root credentials: the garden's Secret, reached with its `kubeconfig`."""
    return {"kubeconfig": kubeconfig, "namespace": ROOT_SECRET_NAMESPACE, "name": ROOT_SECRET}


def root_password(where: Mapping[str, str]) -> str:
    """The root password from the Secret `where` names (root_reference); a KubeError names it when it cannot."""
    return credential_secrets.secret_keys(where, where["name"], [ROOT_PASSWORD_KEY])[ROOT_PASSWORD_KEY]


class StoreError(Exception):
    """An object store that cannot be started or reached; the message names it and says why."""


def endpoint(port: int) -> str:
    """The store's S3 endpoint."""
    return f"https://{HOST}:{port}"


def _credentials() -> dict[str, Any]:
    """A new root password, KMS key and CA; the serving certificate is issued from that CA."""
    # ECDSA, as MinIO's own certificate tool makes them: every shoot's backup data carries this CA's certificate.
    ca = self_signed_ca("arbor-object-store-ca", int(pki.CA_VALIDITY.total_seconds()), ecdsa=True)
    kms = base64.b64encode(secrets.token_bytes(32)).decode()
    return {
        "rootUser": ROOT_USER,
        "rootPassword": secrets.token_urlsafe(30),
        "kmsKey": f"{KMS_KEY_NAME}:{kms}",
        "caCert": ca.cert,
        "caKey": ca.key,
        **_serving(ca.cert, ca.key),
    }


def _serving(ca_cert: str, ca_key: str) -> dict[str, Any]:
    """A serving certificate for the loopback address, from the store's CA."""
    leaf = issue(
        ca_cert, ca_key, "arbor-object-store", [], ["localhost"], [HOST], [pki.Usage.SERVER.value],
        int(pki.LEAF_VALIDITY.total_seconds()), ecdsa=True,
    )  # fmt: skip
    return {"cert": leaf.cert, "key": leaf.key, "notBefore": leaf.not_before, "notAfter": leaf.not_after}


def renewal_due(props: dict[str, Any]) -> bool:
    """Whether the serving certificate is due for renewal now."""
    if not props.get("notAfter"):
        return False
    return pki.leaf_renewal_due(float(props["notBefore"]), float(props["notAfter"]), time.time())


def _process(props: dict[str, Any]) -> dict[str, Any]:
    """The process's properties for local_process: MinIO on its port, serving TLS, its data in `dataDir`."""
    address = f"{HOST}:{int(props['port'])}"
    return {
        "program": PROGRAM,
        "dir": props["dir"],
        "args": ["server", props["dataDir"], "--address", address, "--certs-dir", "{dir}", "--quiet"],
        "files": {CERT_FILE: props["cert"], KEY_FILE: props["key"]},
        "version": props["version"],
    }


def _environment(props: dict[str, Any]) -> dict[str, str]:
    """MinIO's root user, its KMS key, no web console and no update checks."""
    return {
        "MINIO_ROOT_USER": props["rootUser"],
        "MINIO_ROOT_PASSWORD": props["rootPassword"],
        "MINIO_KMS_SECRET_KEY": props["kmsKey"],
        "MINIO_BROWSER": "off",
        "MINIO_UPDATE": "off",
    }


def _port(props: dict[str, Any], kept: int | None) -> int:
    """The store's port: the one it had while that is still free, else a new block's (caller holds the lock)."""
    if kept and ports.bindable(int(kept)):
        return int(kept)
    chosen = ports.for_store(Path(props["dir"]), Path(props["workdir"]) / "clusters")
    if chosen is None:
        raise StoreError(f"object store {props['name']}: no free loopback port block below the ephemeral range")
    return chosen


def ready(url: str, ca_cert: str) -> bool:
    """Whether the store at `url` answers its liveness check over TLS, trusting only its CA."""
    context = ssl.create_default_context(cadata=ca_cert)
    try:
        with urllib.request.urlopen(f"{url}{HEALTH_PATH}", context=context, timeout=5) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _await_ready(props: dict[str, Any]) -> None:
    """Returns once the store answers; else a clear error with its log's end."""
    deadline = time.monotonic() + READY_WAIT_S
    while time.monotonic() < deadline:
        if ready(endpoint(int(props["port"])), props["caCert"]):
            return
        if local_process.running_pid(props) is None:
            break
        time.sleep(0.2)
    log = Path(props["dir"]) / local_process.LOG_FILE
    lines = log.read_text(errors="replace").splitlines()[-local_process.LOG_TAIL_LINES :] if log.exists() else []
    said = "\n".join(lines)
    raise StoreError(f"object store {props['name']} did not answer within {READY_WAIT_S:.0f}s; its log ends:\n{said}")


def run(props: dict[str, Any], restart: bool) -> dict[str, Any]:
    """The store running with these properties (its port chosen or kept under the ports lock), and its outputs."""
    with ports_lock(props["workdir"]):
        running = local_process.running_pid(props) is not None and not restart
        # The engine hands numbers back as floats.
        props = {**props, "port": int(props["port"]) if running else _port(props, props.get("port"))}
        Path(props["dataDir"]).mkdir(parents=True, exist_ok=True, mode=0o700)
        local_process.ensure_running(_process(props), restart=restart, environment=_environment(props))
        _await_ready(props)
    return _outputs(props, local_process.running_pid(props))


def _outputs(props: dict[str, Any], pid: int | None) -> dict[str, Any]:
    """The inputs, what was generated, where it listens and whether it runs."""
    port = int(props.get("port") or 0)
    return {**props, "endpoint": endpoint(port) if port else "", "pid": pid or 0, "running": pid is not None}


def _changed(olds: dict[str, Any], news: dict[str, Any]) -> bool:
    """Whether what runs changed."""
    return any(olds.get(k) != news.get(k) for k in RESTART_ON)


class ObjectStoreProvider(Provider):
    """CRUD of the store; nothing is captured, everything is read from the properties."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Generates its credentials, starts it and writes the garden's Secret of its root credentials."""
        outs = run({**props, **_credentials(), "port": None}, restart=True)
        return CreateResult(id_=props["name"], outs=credential_secrets.write(outs))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """Stopped, a certificate due, a change of what runs or of its Secret: an update; nothing replaces it."""
        rewrite = credential_secrets.write_again(olds, news)
        changed = rewrite or olds.get("running") is False or renewal_due(olds) or _changed(olds, news)
        # What was generated stays through every update (the port only while it is free, so it is not promised).
        stables = [k for k in GENERATED if k not in ("port", "cert", "key", "notBefore", "notAfter")]
        return DiffResult(changes=changed, replaces=[], stables=stables, delete_before_replace=True)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Keeps what was generated, renews a certificate that is due, restarts on a change, starts it when gone."""
        props = {**news, **{k: olds.get(k) for k in GENERATED}}
        restart = _changed(olds, news)
        if renewal_due(olds):
            props |= _serving(olds["caCert"], olds["caKey"])
            restart = True
        if olds.get("dir") != news.get("dir"):
            local_process.stop(olds)
        credential_secrets.leave_old_place(olds, props)
        return UpdateResult(outs=credential_secrets.write(run(props, restart=restart)))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The store as it is: `running: false` when its process is gone; its Secret in the garden, as a hash."""
        outs = _outputs(props, local_process.running_pid(props))
        return ReadResult(id_=id_, outs=credential_secrets.read_back(outs, props))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Removes its Secret in the garden (a garden gone took it along), stops it, removes its files and objects."""
        with unless_unreachable():
            credential_secrets.remove(props)
        local_process.stop(props)
        for name in (CERT_FILE, KEY_FILE):
            (Path(props["dir"]) / name).unlink(missing_ok=True)
        shutil.rmtree(props["dataDir"], ignore_errors=True)


class ObjectStore(Resource, module="arbor", name="ObjectStore"):
    """The local landscape's MinIO server; its root password, KMS key and keys are secret outputs."""

    if TYPE_CHECKING:
        endpoint: pulumi.Output[str]
        caCert: pulumi.Output[str]  # noqa: N815 - the output's name in the state
        rootUser: pulumi.Output[str]  # noqa: N815 - the output's name in the state
        rootPassword: pulumi.Output[str]  # noqa: N815 - the output's name in the state

    def __init__(
        self,
        name: str,
        *,
        workdir: str,
        directory: str,
        data_dir: str,
        writes: Mapping[str, Any],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "name": name, "workdir": workdir, "dir": directory, "dataDir": data_dir, "version": PROVIDER_VERSION,
            **dict.fromkeys((*GENERATED, "endpoint", "pid", "running")),
        }  # fmt: skip
        # `writes`: the garden (its `kubeconfig` and identity, `cluster`) where it writes its root credentials.
        where = {**writes, "namespace": ROOT_SECRET_NAMESPACE, "secrets": {ROOT_SECRET: ROOT_KEYS}}
        props = credential_secrets.writing(props, where)
        secret = pulumi.ResourceOptions(additional_secret_outputs=list(SECRET_OUTPUTS))
        super().__init__(ObjectStoreProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret))
