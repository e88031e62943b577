"""The local store's trust in a seed's ServiceAccount tokens: a MinIO OpenID provider per bucket (workload identity).

What an IAM OIDC provider and a role's trust are to an EKS seed's bucket: MinIO's STS (AssumeRoleWithWebIdentity)
gives a token of the seed's issuer, asked for the bucket's audience, the bucket's role, whose policy reaches that
bucket's objects alone. MinIO fetches the seed's discovery document and keys over TLS, so it trusts the seed's CA:
the CA goes into the store's `CAs` directory and the provider into its configuration, both of which MinIO reads
when it starts. Either change restarts the store through its admin API (the same process, every object kept); a
bucket converges under the store's lock (`converging`), so no other bucket works on the store while it restarts.
"""

from __future__ import annotations

import contextlib
import fcntl
import re
import shlex
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import urllib3
from minio.error import MinioAdminException
from minio.minioadmin import MinioAdmin

from components.naming import json_hash
from components.reconciler.kube import certificate_authority, server_of
from components.reconciler.object_store import ready

PROVIDERS = "identity_openid"
DISCOVERY = "/.well-known/openid-configuration"
# Where MinIO reads the CAs it trusts as a client: `CAs` in its certificates directory (the store's own).
CAS_DIR = "CAs"
# The provider's settings a reader compares; its client secret MinIO does not show.
SHOWN = ("config_url", "client_id", "role_policy")
RESTART_WAIT_S = 60.0
# How long a restart may take to stop answering; a store that answers throughout has restarted by then.
STOP_WAIT_S = 5.0


def provider_key(bucket: str) -> str:
    """The provider's name in MinIO's configuration: the bucket's, in the letters, digits and `_` a name takes."""
    return f"{PROVIDERS}:{re.sub('[^A-Za-z0-9_]', '_', bucket)}"


def ca_file(props: dict[str, Any]) -> Path:
    """Where the store keeps the seed's CA for this bucket's provider."""
    if not props.get("dir"):
        raise ValueError("the store's directory is unknown (its garden stack is older than this arbor): `up` it first")
    return Path(props["dir"]) / CAS_DIR / f"bucket-{props['bucket']}.crt"


def seed_kubeconfig(props: dict[str, Any]) -> str:
    """The seed's kubeconfig: the one the bucket writes the seed's Secret with."""
    return str(props["kubeconfig"])


def wanted(props: dict[str, Any]) -> dict[str, str]:
    """The provider's settings: the seed's discovery document, its audience, the bucket's policy (not the secret).

    The document is the seed's API server's, or where an existing seed's spec says its issuer is published.
    """
    issuer = str(props.get("issuer") or server_of(seed_kubeconfig(props))).rstrip("/")
    return {"config_url": issuer + DISCOVERY, "client_id": str(props["audience"]), "role_policy": props["bucket"]}


def configured(admin: MinioAdmin, bucket: str) -> dict[str, str]:
    """The provider's settings as the store has them; empty when it has none."""
    key = provider_key(bucket)
    words = [w for line in _config(admin, key).splitlines() if line.startswith(key) for w in shlex.split(line)[1:]]
    found = dict(w.split("=", 1) for w in words if "=" in w)
    return {k: found[k] for k in SHOWN if found.get(k)}


def _config(admin: MinioAdmin, key: str) -> str:
    """The store's settings of `key` as `config get` prints them; "" when it refuses (it has no such target)."""
    try:
        return admin.config_get(key)
    except MinioAdminException:
        return ""
    except UnboundLocalError as error:  # minio-py 7.2 loses the refusal in its `finally`, which cannot close it
        if isinstance(error.__context__, MinioAdminException):
            return ""
        raise


def facts(admin: MinioAdmin, props: dict[str, Any]) -> list[Any]:
    """What a reader compares: the provider's settings and the digest of the CA it trusts the seed with."""
    path = ca_file(props)
    return [configured(admin, props["bucket"]), json_hash(path.read_text()) if path.is_file() else ""]


def desired(props: dict[str, Any]) -> list[Any]:
    """What `facts` should read."""
    return [wanted(props), json_hash(certificate_authority(seed_kubeconfig(props)))]


@contextlib.contextmanager
def converging(props: dict[str, Any]) -> Iterator[None]:
    """Holds the store's lock (in its directory), which a bucket converges under: one at a time, restarts included.

    A store whose directory an older garden stack does not export is not restarted by its buckets: no lock then.
    """
    if not props.get("dir"):
        yield
        return
    with (Path(props["dir"]) / ".identity.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def restart(admin: MinioAdmin, props: dict[str, Any]) -> None:
    """Restarts the store and returns once it answers again; a clear error when it does not."""
    # MinIO replaces its process as it answers: on a busy machine the connection closes before the answer is sent.
    # The restart is under way all the same, and the waits below see it through.
    with contextlib.suppress(urllib3.exceptions.ProtocolError):
        admin.service_restart()
    url, ca = props["endpoint"], props["caCert"]
    deadline = time.monotonic() + STOP_WAIT_S
    while time.monotonic() < deadline and ready(url, ca):
        time.sleep(0.1)
    deadline = time.monotonic() + RESTART_WAIT_S
    while not ready(url, ca):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the object store at {url} did not answer within {RESTART_WAIT_S:.0f}s of a restart")
        time.sleep(0.2)


def trust(admin: MinioAdmin, props: dict[str, Any]) -> None:
    """The store trusting the seed's tokens for the bucket's role: its CA on file, its provider configured.

    The caller holds the store's lock (`converging`).
    """
    path, ca = ca_file(props), certificate_authority(seed_kubeconfig(props))
    if not path.is_file() or path.read_text() != ca:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(ca)
        # MinIO fetches the discovery document when it is configured: it must trust the CA first.
        restart(admin, props)
    settings = wanted(props)
    if configured(admin, props["bucket"]) != settings:
        admin.config_set(provider_key(props["bucket"]), {**settings, "client_secret": props["clientSecret"]})
        restart(admin, props)


def forget(admin: MinioAdmin, props: dict[str, Any]) -> None:
    """Removes the provider and the seed's CA; the store drops them when it next starts."""
    with contextlib.suppress(MinioAdminException):
        admin.config_reset(provider_key(props["bucket"]))
    ca_file(props).unlink(missing_ok=True)
