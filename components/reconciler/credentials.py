"""A kubeconfig user's credentials, read as client-go reads them: certificates, tokens, token files, exec plugins.

GKE and EKS kubeconfigs name an exec plugin (gke-gcloud-auth-plugin, `aws eks get-token`) that prints an
ExecCredential (client.authentication.k8s.io v1 or v1beta1). Its answer is kept, per plugin and per process, until
the expiration it states, as client-go keeps it; a plugin that states none is asked again only when the server
answers 401. No message here holds a token or a key: a plugin's output is never quoted, only its error stream.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
EXEC_TIMEOUT_S = 60
# A token that expires within this margin is renewed first, so it does not lapse while a request is on its way.
EXPIRY_MARGIN = timedelta(seconds=30)
STDERR_CHARS = 300


class CredentialError(RuntimeError):
    """A kubeconfig user whose credentials cannot be had; the message says which and why, never a secret."""


class CredentialFileError(CredentialError):
    """A credential file the kubeconfig names cannot be read (a local cluster's files go with the cluster)."""


@dataclass(frozen=True)
class Credential:
    """What an exec plugin answered: a bearer token or a client certificate (PEM), and when it expires."""

    token: str = ""
    cert_pem: str = ""
    key_pem: str = ""
    expires: datetime | None = None

    def fresh(self, now: datetime) -> bool:
        """Whether it may still be used at `now` (one without an expiration is, until a 401)."""
        return self.expires is None or now + EXPIRY_MARGIN < self.expires


@dataclass(frozen=True)
class ExecPlugin:
    """A kubeconfig user's `exec` entry: the command, its arguments and environment, what it is told of the cluster."""

    api_version: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    install_hint: str = ""
    cluster: str = ""  # the JSON of spec.cluster when the entry asks for provideClusterInfo, else ""

    @staticmethod
    def from_user(entry: dict[str, Any], cluster: dict[str, Any]) -> ExecPlugin:
        """The plugin a kubeconfig's `user.exec` names; refuses what client-go would refuse."""
        command, api_version = str(entry.get("command") or ""), str(entry.get("apiVersion") or "")
        if not command:
            raise CredentialError("kubeconfig user's exec entry names no command")
        if api_version not in EXEC_API_VERSIONS:
            wanted = " or ".join(EXEC_API_VERSIONS)
            raise CredentialError(f"exec plugin '{command}' asks for apiVersion '{api_version}'; use {wanted}")
        if entry.get("interactiveMode") == "Always":
            raise CredentialError(f"exec plugin '{command}' wants a terminal (interactiveMode Always); arbor has none")
        info = {k: cluster[k] for k in ("server", "certificate-authority-data", "tls-server-name") if cluster.get(k)}
        if cluster.get("insecure-skip-tls-verify"):
            info["insecure-skip-tls-verify"] = True
        return ExecPlugin(
            api_version=api_version,
            command=command,
            args=tuple(str(a) for a in entry.get("args") or ()),
            env=tuple((str(e["name"]), str(e["value"])) for e in entry.get("env") or ()),
            install_hint=str(entry.get("installHint") or "").strip(),
            cluster=json.dumps(info, sort_keys=True) if entry.get("provideClusterInfo") else "",
        )

    def exec_info(self) -> str:
        """KUBERNETES_EXEC_INFO, as client-go sets it: the request, with the cluster when it was asked for."""
        spec: dict[str, Any] = {"interactive": False}
        if self.cluster:
            spec["cluster"] = json.loads(self.cluster)
        return json.dumps({"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec})


def _expiry(stamp: Any, command: str) -> datetime | None:
    """status.expirationTimestamp (RFC 3339) as an aware datetime; None when absent."""
    if not stamp:
        return None
    try:
        parsed = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        raise CredentialError(f"exec plugin '{command}' printed an invalid expirationTimestamp") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse(plugin: ExecPlugin, stdout: str) -> Credential:
    """The credential in a plugin's output; errors name the plugin and what is wrong, never the output."""
    name = plugin.command
    try:
        answer = json.loads(stdout)
    except ValueError:
        raise CredentialError(f"exec plugin '{name}' printed no ExecCredential (its output is not JSON)") from None
    if not isinstance(answer, dict) or answer.get("kind") != "ExecCredential":
        raise CredentialError(f"exec plugin '{name}' printed no ExecCredential (kind is not ExecCredential)")
    if answer.get("apiVersion") != plugin.api_version:
        raise CredentialError(
            f"exec plugin '{name}' answered apiVersion '{answer.get('apiVersion')}', asked for '{plugin.api_version}'"
        )
    status = answer.get("status") or {}
    token, cert, key = (str(status.get(k) or "") for k in ("token", "clientCertificateData", "clientKeyData"))
    if bool(cert) != bool(key):
        raise CredentialError(f"exec plugin '{name}' printed clientCertificateData and clientKeyData, not both")
    if not token and not cert:
        raise CredentialError(f"exec plugin '{name}' printed neither status.token nor a client certificate")
    return Credential(token, cert, key, _expiry(status.get("expirationTimestamp"), name))


def run(plugin: ExecPlugin) -> Credential:
    """Runs the plugin (no terminal, its env over ours, KUBERNETES_EXEC_INFO set) and reads its answer."""
    env = {**os.environ, **dict(plugin.env), "KUBERNETES_EXEC_INFO": plugin.exec_info()}
    name = plugin.command
    hint = f" ({plugin.install_hint})" if plugin.install_hint else ""
    try:
        proc = subprocess.run(
            [name, *plugin.args], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=EXEC_TIMEOUT_S, check=False,
        )  # fmt: skip
    except FileNotFoundError:
        raise CredentialError(f"exec plugin '{name}' is not installed or not on PATH{hint}") from None
    except PermissionError:
        raise CredentialError(f"exec plugin '{name}' cannot be run (permission denied){hint}") from None
    except subprocess.TimeoutExpired:
        raise CredentialError(f"exec plugin '{name}' gave no answer within {EXEC_TIMEOUT_S}s") from None
    if proc.returncode != 0:
        said = proc.stderr.strip()[-STDERR_CHARS:]
        raise CredentialError(f"exec plugin '{name}' failed with exit status {proc.returncode}: {said or 'no output'}")
    return parse(plugin, proc.stdout)


_CACHE: dict[ExecPlugin, Credential] = {}
# One lock per plugin: two clients of one cluster run its plugin once; other clusters' plugins do not wait.
_LOCKS: dict[ExecPlugin, threading.Lock] = {}
_GUARD = threading.Lock()


def _lock(plugin: ExecPlugin) -> threading.Lock:
    """The plugin's lock."""
    with _GUARD:
        return _LOCKS.setdefault(plugin, threading.Lock())


def now() -> datetime:
    """The time a cached credential is judged at."""
    return datetime.now(UTC)


def exec_credential(plugin: ExecPlugin) -> Credential:
    """The plugin's credential: the cached one while it is fresh, else a new answer."""
    with _lock(plugin):
        cached = _CACHE.get(plugin)
        if cached is not None and cached.fresh(now()):
            return cached
        _CACHE[plugin] = credential = run(plugin)
        return credential


def read_file(what: str, path: str) -> str:
    """A file a kubeconfig names (`what`: whose field), as text; the error names it, the path and why, no content."""
    try:
        return Path(path).read_text()
    except OSError as err:
        raise CredentialFileError(f"{what} {path} cannot be read: {err.strerror}") from None


def _read(field: str, path: str) -> str:
    """The file a kubeconfig user's `field` names, as text."""
    return read_file(f"kubeconfig user's {field}", path)


class TokenSource(Protocol):
    """Where a client's bearer token comes from, each request."""

    def token(self) -> str:
        """The token to send now."""
        ...

    def renew(self) -> bool:
        """After a 401: drop what is kept; whether asking again may give another token."""
        ...


@dataclass(frozen=True)
class StaticToken:
    """`user.token`: the same token every time."""

    value: str

    def token(self) -> str:
        """The token."""
        return self.value

    def renew(self) -> bool:
        """A written token does not change."""
        return False


@dataclass(frozen=True)
class TokenFile:
    """`user.tokenFile`: read on every request, so a rotated projected token is picked up."""

    path: str

    def token(self) -> str:
        """The file's content, trimmed."""
        return _read("tokenFile", self.path).strip()

    def renew(self) -> bool:
        """The file is read again anyway."""
        return False


@dataclass(frozen=True)
class ExecToken:
    """`user.exec` with a token answer: the cached token while fresh, a new one after expiry or a 401."""

    plugin: ExecPlugin

    def token(self) -> str:
        """The plugin's current token."""
        return exec_credential(self.plugin).token

    def renew(self) -> bool:
        """Forgets the cached answer, as client-go does on a 401."""
        with _lock(self.plugin):
            return _CACHE.pop(self.plugin, None) is not None


def _file_or_data(user: dict[str, Any], key: str) -> str:
    """`<key>-data` (base64) or the file `<key>` names, as PEM text; "" when neither is set."""
    if user.get(f"{key}-data"):
        return base64.b64decode(user[f"{key}-data"]).decode()
    if user.get(key):
        return _read(key, user[key])
    return ""


def user_auth(user: dict[str, Any], cluster: dict[str, Any]) -> tuple[tuple[str, str] | None, TokenSource | None]:
    """A kubeconfig user's client certificate and key (PEM), and its token source; at least one of them."""
    if user.get("auth-provider"):
        provider = (user["auth-provider"] or {}).get("name", "")
        raise CredentialError(f"kubeconfig user uses auth-provider '{provider}', removed from Kubernetes; use exec")
    cert, key = _file_or_data(user, "client-certificate"), _file_or_data(user, "client-key")
    pair = (cert, key) if cert and key else None
    source: TokenSource | None = None
    if user.get("token"):
        source = StaticToken(str(user["token"]))
    elif user.get("tokenFile"):
        source = TokenFile(str(user["tokenFile"]))
    elif user.get("exec"):
        plugin = ExecPlugin.from_user(user["exec"], cluster)
        answer = exec_credential(plugin)
        # As client-go: a certificate it answers with is the connection's; a token goes with every request.
        if answer.cert_pem:
            pair = pair or (answer.cert_pem, answer.key_pem)
        if answer.token:
            source = ExecToken(plugin)
    if pair is None and source is None:
        raise CredentialError("kubeconfig user has no credentials: give a client certificate, a token or exec")
    return pair, source
