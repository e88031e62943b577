"""A minimal Kubernetes REST client for the reconciler: GET and merge-PATCH with an admin kubeconfig.

Dynamic providers run in their own process and must not capture clients; this module makes one per call from
the kubeconfig text, with nothing but the standard library. The kubeconfig's user may hold client certificates
(local clusters), a token or token file, or an exec plugin (GKE, EKS): components/reconciler/credentials.py.
"""

from __future__ import annotations

import base64
import json
import ssl
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components import yaml_text
from components.reconciler.credentials import CredentialError, CredentialFileError, TokenSource, read_file, user_auth

TIMEOUT_S = 10
# How often a throttled (429) request is made in all.
THROTTLED_ATTEMPTS = 5
JSON = "application/json"
CA_FIELD = "kubeconfig cluster's certificate-authority"


def _retry_after(header: str | None) -> float:
    """Seconds to wait before asking again: the server's Retry-After, 1 when it gives none, at most 5."""
    try:
        return min(max(float(header or 1), 0.1), 5.0)
    except ValueError:
        return 1.0


class KubeError(RuntimeError):
    """An API call that failed; `status` is the HTTP status (0 when the server was not reached)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


# A reconciler's `kubeconfig` input may name a kubeconfig file instead of holding one: a local cluster's own, which
# the cluster holds once (components/bundles.py, ClusterAccess.reach) and which is gone exactly when it is.
KUBECONFIG_FILE = "kubeconfig-file:"
# The fields of a kubeconfig that name files (relative ones are relative to the kubeconfig file).
PATH_FIELDS = ("certificate-authority", "client-certificate", "client-key", "tokenFile")


def kubeconfig_file(path: str) -> str:
    """A `kubeconfig` input that names the kubeconfig file at `path`."""
    return KUBECONFIG_FILE + path


def load_kubeconfig(kubeconfig: str) -> dict[str, Any]:
    """A kubeconfig's content, from its text or the file it names (CredentialFileError when that cannot be read)."""
    if not kubeconfig.startswith(KUBECONFIG_FILE):
        config = yaml_text.load(kubeconfig)
        return config if isinstance(config, dict) else {}
    path = Path(kubeconfig.removeprefix(KUBECONFIG_FILE))
    config = yaml_text.load(read_file("kubeconfig", str(path)))
    if not isinstance(config, dict):
        return {}
    for entry in [*(c.get("cluster") or {} for c in config.get("clusters") or []),
                  *(u.get("user") or {} for u in config.get("users") or [])]:  # fmt: skip
        for field in PATH_FIELDS:
            if isinstance(entry.get(field), str) and not Path(entry[field]).is_absolute():
                entry[field] = str(path.parent / entry[field])
    return config


def current(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The cluster and user entries of a kubeconfig's current context (else its first context); {} when absent."""
    contexts = {c["name"]: c["context"] for c in config.get("contexts") or []}
    context: dict[str, Any] = contexts.get(config.get("current-context")) or next(iter(contexts.values()), {})
    clusters = {c["name"]: c["cluster"] for c in config.get("clusters") or []}
    users = {u["name"]: u["user"] for u in config.get("users") or []}
    return clusters.get(context.get("cluster"), {}), users.get(context.get("user"), {})


def server_of(kubeconfig: str) -> str:
    """The API server URL of a kubeconfig's current context, "" when it names none."""
    try:
        return str(current(load_kubeconfig(kubeconfig))[0].get("server", ""))
    except CredentialFileError:
        return ""


def certificate_authority(kubeconfig: str) -> str:
    """The PEM of the CA a kubeconfig's current context trusts (embedded or its file), "" when it names none."""
    cluster = current(load_kubeconfig(kubeconfig))[0]
    if cluster.get("certificate-authority-data"):
        return base64.b64decode(cluster["certificate-authority-data"]).decode()
    if cluster.get("certificate-authority"):
        return read_file(CA_FIELD, cluster["certificate-authority"])
    return ""


def certificate_authority_file(kubeconfig: str) -> str | None:
    """The CA file a kubeconfig's current context trusts, None when it embeds its CA or names none."""
    cluster = current(load_kubeconfig(kubeconfig))[0]
    return None if cluster.get("certificate-authority-data") else cluster.get("certificate-authority")


def tls_context(cluster: dict[str, Any]) -> ssl.SSLContext:
    """The TLS context a kubeconfig's cluster entry asks for: its CA (data or file), else the system's roots."""
    if cluster.get("insecure-skip-tls-verify"):
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        return context
    if cluster.get("certificate-authority-data"):
        return ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    if cluster.get("certificate-authority"):
        return ssl.create_default_context(cadata=read_file(CA_FIELD, cluster["certificate-authority"]))
    return ssl.create_default_context()


@dataclass(frozen=True)
class Kube:
    """One cluster's API: server URL, a TLS context (with any client certificate) and any bearer token source."""

    server: str
    context: ssl.SSLContext
    auth: TokenSource | None = None
    # Why every call fails as if the server were down: a credential file gone (a local cluster deleted with them).
    unreachable: str = ""

    @staticmethod
    def from_kubeconfig(kubeconfig: str) -> Kube:
        """A client for the current context of a kubeconfig: certificates, a token, a token file or an exec plugin.

        An exec plugin runs here (or its cached answer is taken), so a missing or failing plugin is a
        CredentialError that names it, raised before any request. A credential file that cannot be read makes a
        client that fails every call as unreachable, naming the file: a local cluster's kubeconfig references its
        own files, which are gone exactly when the cluster is, and an unreachable cluster's objects count as gone.
        """
        try:
            config = load_kubeconfig(kubeconfig)
        except CredentialFileError as err:
            # No server to name: a reserved name that never resolves (no request is sent: `unreachable`).
            return Kube(server="https://unreadable-kubeconfig.invalid", context=ssl.create_default_context(),
                        unreachable=str(err))  # fmt: skip
        cluster, user = current(config)
        if not cluster.get("server"):
            raise CredentialError("kubeconfig's current context names no cluster with a server")
        try:
            context = tls_context(cluster)
            pair, auth = user_auth(user, cluster)
        except CredentialFileError as err:
            return Kube(server=cluster["server"], context=ssl.create_default_context(), unreachable=str(err))
        if pair is not None:
            # ssl loads client certificates from files only; the files live just long enough to be read.
            with tempfile.TemporaryDirectory() as tmp:
                cert, key = Path(tmp, "cert"), Path(tmp, "key")
                cert.write_text(pair[0])
                key.write_text(pair[1])
                context.load_cert_chain(str(cert), str(key))
        return Kube(server=cluster["server"], context=context, auth=auth)

    def open(self, request: urllib.request.Request, timeout: float) -> Any:
        """Sends `request` with the client's token; after a 401 asks an exec plugin once more, as client-go does."""
        if self.unreachable:
            raise ConnectionError(self.unreachable)
        if self.auth is not None:
            request.add_header("Authorization", f"Bearer {self.auth.token()}")
        try:
            return urllib.request.urlopen(request, context=self.context, timeout=timeout)
        except urllib.error.HTTPError as err:
            if err.code != 401 or self.auth is None or not self.auth.renew():
                raise
            err.close()
        request.add_header("Authorization", f"Bearer {self.auth.token()}")
        return urllib.request.urlopen(request, context=self.context, timeout=timeout)

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float = TIMEOUT_S,
    ) -> Any:
        """One request; the decoded JSON answer.

        A 429 (a new CRD's storage initializing, or the server shedding load) is asked again after its Retry-After,
        a few times, as client-go does.
        """
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(THROTTLED_ATTEMPTS):
            request = urllib.request.Request(self.server + path, data=data, method=method)
            request.add_header("Accept", "application/json")
            if data is not None:
                request.add_header("Content-Type", content_type)
            try:
                with self.open(request, timeout) as response:
                    return json.loads(response.read() or b"null")
            except urllib.error.HTTPError as err:
                if err.code == 429 and attempt + 1 < THROTTLED_ATTEMPTS:
                    time.sleep(_retry_after(err.headers.get("Retry-After")))
                    continue
                raise KubeError(
                    f"{method} {path}: {err.code} {err.read().decode(errors='replace')[:300]}", err.code
                ) from None
            except (OSError, ValueError) as err:
                raise KubeError(f"{method} {path}: {err}") from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    def get(self, path: str, timeout: float = TIMEOUT_S) -> Any:
        """GET `path` (e.g. `/api/v1/nodes`); `timeout` for an answer that takes long (a pod's, through its proxy)."""
        return self._call("GET", path, timeout=timeout)

    def find(self, path: str) -> Any | None:
        """GET `path`; None when the object is gone or its cluster cannot be reached.

        Unreachable counts as gone, as the Kubernetes provider's deleteUnreachable does: a stopped local cluster
        comes back with `up`, which then writes the object again.
        """
        try:
            return self.get(path)
        except KubeError as err:
            if err.status in (0, 404):
                return None
            raise

    def create(self, path: str, body: Any) -> Any:
        """POST `body` to the collection at `path`."""
        return self._call("POST", path, body)

    def replace(self, path: str, body: Any) -> Any:
        """PUT `body` at `path`."""
        return self._call("PUT", path, body)

    def create_or_replace(self, collection: str, body: Any) -> Any:
        """POST `body` to `collection`, or PUT it over the object of its name there when that exists."""
        try:
            return self.create(collection, body)
        except KubeError as err:
            if err.status != 409:
                raise
            return self.replace(f"{collection}/{body['metadata']['name']}", body)

    def delete(self, path: str) -> None:
        """DELETE `path`; an object already gone is fine."""
        try:
            self._call("DELETE", path)
        except KubeError as err:
            if err.status != 404:
                raise

    def delete_if(self, path: str, resource_version: str | None) -> None:
        """DELETE `path` only while it is at `resource_version` (409 otherwise); an object already gone is fine."""
        options = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"resourceVersion": resource_version}}
        try:
            self._call("DELETE", path, options)
        except KubeError as err:
            if err.status != 404:
                raise

    def merge_patch(self, path: str, body: Any) -> Any:
        """A JSON merge patch of `path`."""
        return self._call("PATCH", path, body, "application/merge-patch+json")

    def apply_patch(self, path: str, body: Any) -> Any:
        """A server-side apply of `body` at `path` (its query names the field manager)."""
        return self._call("PATCH", path, body, "application/apply-patch+yaml")

    def json_patch(self, path: str, operations: list[dict[str, Any]]) -> Any:
        """A JSON patch of `path` (its `test` operations make it conditional)."""
        return self._call("PATCH", path, operations, "application/json-patch+json")

    def ready(self) -> bool:
        """Whether /readyz answers ok."""
        try:
            with self.open(urllib.request.Request(self.server + "/readyz"), 3) as response:
                return bool(response.status == 200)
        except (OSError, ValueError):
            return False


@contextmanager
def unless_unreachable() -> Iterator[None]:
    """For a deletion: a cluster that cannot be reached (status 0) took its objects with it; any other error stays."""
    try:
        yield
    except KubeError as err:
        if err.status != 0:
            raise


def secret_path(namespace: str, name: str = "") -> str:
    """The API path of a namespace's Secrets, or of one of them."""
    return f"/api/v1/namespaces/{namespace}/secrets" + (f"/{name}" if name else "")
