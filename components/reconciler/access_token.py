"""AccessToken: a ServiceAccount's token from a TokenRequest, kept in a Secret and renewed in time.

Gardener's token-requestor (gardener-resource-manager) keeps node-agent's access token this way when the
NodeAgentAuthorizer is off: a TokenRequest for the ServiceAccount (default lifetime 12h), the token under the key
`token` of a Secret, whose annotation `serviceaccount.resources.gardener.cloud/token-renew-timestamp` says when a
new one is asked for: once 80% of the lifetime (at most 24h) has passed. Here `check()` keeps that moment as the input
`renewAfter` and, once it has passed, moves it on and says why in the input `renewal`, so the preview shows both
and `up` requests a new token in place. A token of a seed (`seed`) is also renewed when the Seed record asks for it
with `gardener.cloud/operation: renew-garden-access-secrets` (components/reconciler/seed_operation.py).
`read()` looks at the Secret: missing, holding another token, or holding one a TokenReview no longer
authenticates makes the next `up` write a new token in place. The token itself is never an output: the state
keeps its times and a hash. `delete()` removes the Secret (the token expires by itself).

With `makesServiceAccount`, it also makes the ServiceAccount where it is missing (no token mounted: nothing runs
as it), as Gardener's token-requestor does for the accounts its Secrets name, and removes it with the token; a
ServiceAccount deleted behind its back makes the token fail its review, so the next `up` makes both again.

The Secret may live in another cluster than the ServiceAccount (`secretKubeconfig`, `secretNamespace`), with labels
and annotations of its own (`secretMetadata`): an extension's garden access token is requested in the garden and
kept in the extension's seed namespace, as gardener-resource-manager's token requestor of class `garden` keeps it.
A program arbor runs on this machine reads its token from a file instead (`tokenFile`, owner-only), as a pod reads
a projected one; the same renewal and drift rules hold for it.

The engine stores the provider pickled by reference to this module: moving or renaming it needs a shim.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import (
    CheckFailure,
    CheckResult,
    CreateResult,
    DiffResult,
    ReadResult,
    Resource,
    UpdateResult,
)

from components.reconciler import unknowns
from components.reconciler.files import write_file
from components.reconciler.kube import Kube, KubeError, secret_path
from components.reconciler.provider import Provider
from components.reconciler.seed_operation import OPERATION, requested_operation

PROVIDER_VERSION = "1"
RENEW_TIMESTAMP = "serviceaccount.resources.gardener.cloud/token-renew-timestamp"
TOKEN_KEY = "token"
DEFAULT_EXPIRATION_S = 12 * 3600
# The shortest lifetime a TokenRequest accepts (kube-apiserver refuses less than 10 minutes).
MIN_EXPIRATION_S = 600
# The longest a token requestor asks for: a leaked token expires within a day (policy `access-token-lifetime` too).
MAX_EXPIRATION_S = 24 * 3600
# Gardener renews once this fraction of the lifetime has passed, counting at most MAX_RENEW_BASIS_S of it.
RENEW_AFTER = 0.8
MAX_RENEW_BASIS_S = 24 * 3600
INPUTS = (
    "namespace",
    "serviceAccount",
    "secretName",
    "secretNamespace",
    "secretMetadata",
    "tokenFile",
    "expirationSeconds",
    "version",
    "renewAfter",
    "makesServiceAccount",
)
# What read() finds in the Secret; anything but VALID asks the next `up` for a new token.
VALID, MISSING, CHANGED, REJECTED = "valid", "missing", "changed", "rejected"


def clock() -> float:
    """The current time in seconds (a function of its own, so tests can set the clock)."""
    return time.time()


def expiration_problem(seconds: object) -> str | None:
    """Why `seconds` is not a valid token lifetime, or None (the engine hands numbers over as floats)."""
    problem = f"{seconds!r} is not a whole number of seconds from {MIN_EXPIRATION_S} (10m) to {MAX_EXPIRATION_S} (24h)"
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return problem
    if not float(seconds).is_integer() or not MIN_EXPIRATION_S <= seconds <= MAX_EXPIRATION_S:
        return problem
    return None


def renew_at(issued_at: float, expires_at: float) -> float:
    """When a token issued at `issued_at` and expiring at `expires_at` is renewed (Gardener's 80%, capped at 24h)."""
    return issued_at + min(expires_at - issued_at, MAX_RENEW_BASIS_S) * RENEW_AFTER


def token_renewal_due(issued_at: float, expires_at: float, now: float) -> bool:
    """Whether 80% of an access token's lifetime has passed (or it has expired)."""
    return now >= renew_at(issued_at, expires_at)


def schedule(olds: dict[str, Any], news: dict[str, Any]) -> dict[str, str]:
    """The inputs `renewAfter` (when the token is renewed next) and `renewal` (why it is renewed now, or "")."""
    now = clock()
    previous, seed = olds.get("renewAfter"), news.get("seed")
    if operation := requested_operation(news.get("kubeconfig"), seed):
        reason = f"requested: the Seed record {seed} is annotated {OPERATION}={operation}"
    elif isinstance(previous, str) and now >= _seconds(previous):
        reason = f"due: {RENEW_AFTER:.0%} of the token's lifetime has passed"
    elif isinstance(previous, str) and olds.get("expirationSeconds") == news.get("expirationSeconds"):
        return {"renewAfter": previous, "renewal": ""}
    else:
        reason = ""
    return {"renewAfter": _rfc3339(renew_at(now, now + float(news["expirationSeconds"]))), "renewal": reason}


def token_hash(token: str) -> str:
    """What the state keeps of a token: enough to see it was changed, nothing to use it with."""
    return hashlib.sha256(token.encode()).hexdigest()


def _rfc3339(seconds: float) -> str:
    """A time as Kubernetes writes it."""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _seconds(stamp: str) -> float:
    """A Kubernetes time in seconds since the epoch."""
    return datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC).timestamp()


def request_token(
    kube: Kube, namespace: str, account: str, seconds: int, audiences: Sequence[str] = ()
) -> tuple[str, float]:
    """A new token of the ServiceAccount (for `audiences`, else the API server's own) and when it expires."""
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token"
    spec: dict[str, Any] = {"expirationSeconds": seconds, **({"audiences": list(audiences)} if audiences else {})}
    status = kube.create(path, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})
    return str(status["status"]["token"]), _seconds(status["status"]["expirationTimestamp"])


def _request_token(kube: Kube, props: dict[str, Any]) -> tuple[str, float]:
    """A new token of the resource's ServiceAccount for its lifetime."""
    return request_token(kube, props["namespace"], props["serviceAccount"], int(props["expirationSeconds"]))


def _secret_kube(props: dict[str, Any]) -> Kube:
    """The cluster the Secret is kept in: `secretKubeconfig`'s, else the ServiceAccount's."""
    return Kube.from_kubeconfig(props.get("secretKubeconfig") or props["kubeconfig"])


def _secret_namespace(props: dict[str, Any]) -> str:
    """The Secret's namespace: `secretNamespace`, else the ServiceAccount's."""
    return str(props.get("secretNamespace") or props["namespace"])


def _location(props: dict[str, Any]) -> str:
    """Where the token is kept: its file, or its Secret's path."""
    return str(props.get("tokenFile") or secret_path(_secret_namespace(props), props["secretName"]))


def _store(props: dict[str, Any], token: str, renewal: float) -> None:
    """Writes the token into its file, or into its Secret with the renew timestamp."""
    if props.get("tokenFile"):
        write_file(Path(props["tokenFile"]), token)
        return
    ns, name = _secret_namespace(props), props["secretName"]
    extra = props.get("secretMetadata") or {}
    annotations = {**(extra.get("annotations") or {}), RENEW_TIMESTAMP: _rfc3339(renewal)}
    metadata = {"name": name, "namespace": ns, "labels": extra.get("labels") or {}, "annotations": annotations}
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": metadata,
        "data": {TOKEN_KEY: base64.b64encode(token.encode()).decode()},
    }
    _secret_kube(props).create_or_replace(secret_path(ns), secret)


def _stored(props: dict[str, Any]) -> str:
    """The token kept now ("" when there is none, or its cluster cannot be reached)."""
    if props.get("tokenFile"):
        path = Path(props["tokenFile"])
        return path.read_text() if path.is_file() else ""
    secret = _secret_kube(props).find(secret_path(_secret_namespace(props), props["secretName"]))
    data = ((secret or {}).get("data") or {}).get(TOKEN_KEY, "")
    return base64.b64decode(data).decode(errors="replace") if data else ""


def _forget(props: dict[str, Any]) -> None:
    """Removes the token's file or Secret; an unreachable cluster counts as gone, as in read()."""
    if props.get("tokenFile"):
        Path(props["tokenFile"]).unlink(missing_ok=True)
        return
    try:
        _secret_kube(props).delete(secret_path(_secret_namespace(props), props["secretName"]))
    except KubeError as err:
        if err.status != 0:
            raise


def _account_path(props: dict[str, Any]) -> str:
    """The ServiceAccount's API path."""
    return f"/api/v1/namespaces/{props['namespace']}/serviceaccounts/{props['serviceAccount']}"


def _ensure_account(kube: Kube, props: dict[str, Any]) -> None:
    """Makes the ServiceAccount where the token's resource makes it and it is missing."""
    if not props.get("makesServiceAccount") or kube.find(_account_path(props)) is not None:
        return
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "automountServiceAccountToken": False,
               "metadata": {"name": props["serviceAccount"], "namespace": props["namespace"]}}  # fmt: skip
    kube.create(f"/api/v1/namespaces/{props['namespace']}/serviceaccounts", account)


def _issue(props: dict[str, Any]) -> dict[str, Any]:
    """Requests a token and keeps it (file or Secret); the outputs without the token."""
    issued_at = clock()
    kube = Kube.from_kubeconfig(props["kubeconfig"])
    _ensure_account(kube, props)
    token, expires_at = _request_token(kube, props)
    renewal = renew_at(issued_at, expires_at)
    _store(props, token, renewal)
    return {
        **props,
        "issuedAt": issued_at,
        "expiresAt": expires_at,
        "renewAt": renewal,
        "tokenHash": token_hash(token),
        "tokenState": VALID,
    }


def authenticates(kube: Kube, token: str, namespace: str, account: str) -> bool:
    """Whether a TokenReview authenticates `token` as the ServiceAccount."""
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
    status = kube.create("/apis/authentication.k8s.io/v1/tokenreviews", review).get("status") or {}
    username = (status.get("user") or {}).get("username")
    return bool(status.get("authenticated")) and username == f"system:serviceaccount:{namespace}:{account}"


def token_state(props: dict[str, Any]) -> str:
    """What the file or Secret holds now: VALID, MISSING (or unreachable), CHANGED (another token) or REJECTED."""
    token = _stored(props)
    if not token:
        return MISSING
    if token_hash(token) != props.get("tokenHash"):
        return CHANGED
    try:
        valid = authenticates(
            Kube.from_kubeconfig(props["kubeconfig"]), token, props["namespace"], props["serviceAccount"]
        )
    except KubeError as err:
        # A reviewer that cannot be reached (a stopped local cluster) counts as missing, as a Secret there would.
        if err.status != 0:
            raise
        return MISSING
    return VALID if valid else REJECTED


class AccessTokenProvider(Provider):
    """Requests ServiceAccount tokens into a Secret and renews them in time; the token is never kept in the state."""

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        """Refuses a lifetime a TokenRequest would not take, naming the input; schedules the renewal."""
        if problem := expiration_problem(news.get("expirationSeconds")):
            return CheckResult(news, [CheckFailure("expirationSeconds", problem)])
        return CheckResult({**news, **schedule(olds, news)}, [])

    def create(self, props: dict[str, Any]) -> CreateResult:
        """The first token."""
        outs = _issue(props)
        return CreateResult(id_=props.get("tokenFile") or f"{props['namespace']}/{props['secretName']}", outs=outs)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """An update, never a replacement: new inputs (`renewAfter` moved), a Secret read() found wrong, or due."""
        # And the cluster (its kubeconfig), only when known: a preview restarting it does not know it yet.
        changed = [k for k in INPUTS if olds.get(k) != news.get(k)] + unknowns.changed(olds, news, ("kubeconfig",))
        stale = olds.get("tokenState") != VALID
        due = bool(olds.get("expiresAt")) and token_renewal_due(
            float(olds["issuedAt"]), float(olds["expiresAt"]), clock()
        )
        return DiffResult(changes=bool(changed) or stale or due, replaces=[], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """A new token; one kept elsewhere before (another file, Secret name or namespace) is removed."""
        outs = _issue(news)
        if _location(olds) != _location(news):
            _forget(olds)
        return UpdateResult(outs=outs)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The state with what the Secret holds now (`tokenState`); anything but valid is renewed by `up`."""
        return ReadResult(id_=id_, outs={**props, "tokenState": token_state(props)})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Removes the file or Secret (the token expires by itself), and the ServiceAccount it made."""
        _forget(props)
        if props.get("makesServiceAccount"):
            try:
                Kube.from_kubeconfig(props["kubeconfig"]).delete(_account_path(props))
            except KubeError as err:
                if err.status != 0:  # an unreachable cluster is gone with its accounts
                    raise


class AccessToken(Resource, module="arbor", name="AccessToken"):
    """A ServiceAccount's token in a Secret, renewed once 80% of its lifetime has passed; outputs hold no token."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        renewAt: pulumi.Output[float]  # noqa: N815 - the output's name in the state
        tokenState: pulumi.Output[str]  # noqa: N815 - the output's name in the state

    def __init__(
        self,
        name: str,
        *,
        kubeconfig: pulumi.Input[str],
        namespace: str,
        service_account: str,
        secret_name: str | None = None,
        expiration_s: int = DEFAULT_EXPIRATION_S,
        secret_kubeconfig: pulumi.Input[str] | None = None,
        secret_namespace: str | None = None,
        secret_metadata: dict[str, dict[str, str]] | None = None,
        seed: str | None = None,
        token_file: str | None = None,
        makes_service_account: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        if problem := expiration_problem(expiration_s):
            raise ValueError(f"AccessToken '{name}': expiration_s: {problem}")
        if (secret_name is None) == (token_file is None):
            raise ValueError(f"AccessToken '{name}': give either secret_name or token_file")
        props = {
            "kubeconfig": kubeconfig, "namespace": namespace, "serviceAccount": service_account,
            "secretName": secret_name, "expirationSeconds": expiration_s, "version": PROVIDER_VERSION,
            "secretKubeconfig": secret_kubeconfig, "secretNamespace": secret_namespace,
            "secretMetadata": secret_metadata, "tokenFile": token_file, "seed": seed,
            "makesServiceAccount": makes_service_account or None,
            "renewAfter": None, "renewal": None,
            "issuedAt": None, "expiresAt": None, "renewAt": None, "tokenHash": None, "tokenState": None,
        }  # fmt: skip
        super().__init__(AccessTokenProvider(), name, props, opts)
