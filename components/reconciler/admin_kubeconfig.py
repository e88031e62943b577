"""AdminKubeconfig: a short-lived client certificate of a shoot's client CA, as a kubeconfig (a secret output).

Like Gardener's AdminKubeconfigRequest, the certificate names the user (CN) and its groups (O, by default
`system:masters`) and expires after `expirationSeconds`, at most 24 hours. `diff()` compares its validity with
the current time: once less than half of it remains, the preview shows a replacement with the reason `renewal`
and `pulumi up` issues a new one. New inputs (CA, server, user, groups, expiration) also issue a new one.
The state names the CAs by hashes, not copies.
Nothing external exists: `read()` keeps the state, `delete()` removes nothing (the certificate simply expires).

The engine stores the provider pickled by reference to this module: moving or renaming it needs a shim.
"""

from __future__ import annotations

import base64
import time
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ReadResult, Resource

from components import yaml_text
from components.kinds import ADMIN_KUBECONFIG_MAX_S
from components.reconciler.ca_source import CA_SECRET, ca_hash, with_ca
from components.reconciler.provider import Provider
from components.reconciler.signing import issue
from components.render import pki as credential_names

PROVIDER_VERSION = "1"
DEFAULT_GROUPS = ("system:masters",)
# Issued again once less than this fraction of the validity remains: arbor's rule for admin kubeconfigs, not
# Gardener's rule for leaf certificates (components/render/pki.py: leaf_renewal_due).
RENEW_REMAINING = 0.5
REPLACE_ON = ("server", "user", "groups", "expirationSeconds", "version")
# The CAs it names, kept in the state as a hash each (`<input>Hash`), not as copies of the certificates.
HASHED = ("clientCaCert", "serverCa")


def expiration_problem(seconds: object) -> str | None:
    """Why `seconds` is not a valid expiration, or None (the engine hands numbers over as floats)."""
    problem = f"{seconds!r} is not a whole number of seconds from 1 to {ADMIN_KUBECONFIG_MAX_S} (24h)"
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return problem
    if not float(seconds).is_integer() or not 0 < seconds <= ADMIN_KUBECONFIG_MAX_S:
        return problem
    return None


def admin_kubeconfig_renewal_due(not_before: float, not_after: float, now: float) -> bool:
    """Whether less than half of an admin kubeconfig's validity remains (or it has expired)."""
    return not_after - now < (not_after - not_before) * RENEW_REMAINING


def kubeconfig(server: str, server_ca: str, user: str, cert: str, key: str) -> str:
    """A self-contained kubeconfig for one user, context named after the user."""

    def data(pem: str) -> str:
        return base64.b64encode(pem.encode()).decode()

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "shoot", "cluster": {"server": server, "certificate-authority-data": data(server_ca)}}],
        "users": [{"name": user, "user": {"client-certificate-data": data(cert), "client-key-data": data(key)}}],
        "contexts": [{"name": user, "context": {"cluster": "shoot", "user": user}}],
        "current-context": user,
    }
    return yaml_text.dump(config, sort_keys=False)


def _hashes(props: dict[str, Any]) -> dict[str, str]:
    """The hash of each CA the properties name: from the hash an output keeps, or of the certificate an input has."""
    return {k: str(props.get(f"{k}Hash") or ca_hash(props.get(k))) for k in HASHED}


def lean(outs: dict[str, Any]) -> dict[str, Any]:
    """The outputs as the state keeps them: the CAs as hashes."""
    hashes = {f"{k}Hash": v for k, v in _hashes(outs).items()}
    return {**{k: v for k, v in outs.items() if k not in HASHED}, **hashes}


def with_client_ca(props: dict[str, Any]) -> dict[str, Any]:
    """The properties with the client CA, read from its signer Secret in the seed namespace where they name one.

    A hosted shoot's client CA is there (`ca-client-signer`, the SecretSet's), so the state keeps no copy of its key.
    """
    if not props.get(CA_SECRET):
        return props
    where = {"kubeconfig": props["seedKubeconfig"], "namespace": props["seedNamespace"]}
    found = with_ca({**where, CA_SECRET: props[CA_SECRET], "caHash": props["clientCaCertHash"]})
    return {**props, "clientCaCert": found["caCert"], "clientCaKey": found["caKey"]}


class AdminKubeconfigProvider(Provider):
    """Issues admin kubeconfigs and renews them in time; the client CA key is used, never kept in the outputs."""

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        """Refuses an expiration outside 1s..24h, naming the input."""
        problem = expiration_problem(news.get("expirationSeconds"))
        return CheckResult(news, [CheckFailure("expirationSeconds", problem)] if problem else [])

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Issues the client certificate and builds the kubeconfig."""
        props = with_client_ca(props)
        groups = list(props.get("groups") or [])
        cert = issue(props["clientCaCert"], props["clientCaKey"], props["user"], groups, [], [], ["client"],
                     int(props["expirationSeconds"]))  # fmt: skip
        outs = {k: v for k, v in props.items() if k != "clientCaKey"}
        outs |= {
            "kubeconfig": kubeconfig(props["server"], props["serverCa"], props["user"], cert.cert, cert.key),
            "notBefore": cert.not_before,
            "notAfter": cert.not_after,
        }
        return CreateResult(id_=f"{props['user']}-{int(cert.not_before)}", outs=lean(outs))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """Issues again on new inputs, or with the reason `renewal` once less than half the validity remains."""
        replaces = [k for k in REPLACE_ON if olds.get(k) != news.get(k)]
        replaces += [k for k, v in _hashes(olds).items() if v != _hashes(news)[k]]
        if olds.get("notAfter") and admin_kubeconfig_renewal_due(
            float(olds["notBefore"]), float(olds["notAfter"]), time.time()
        ):
            replaces.append("renewal")
        return DiffResult(changes=bool(replaces), replaces=replaces, delete_before_replace=False)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """Nothing external to look at; an older state's copies of the CAs become their hashes."""
        return ReadResult(id_=id_, outs=lean(props))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """Nothing to remove: the certificate expires by itself."""


class AdminKubeconfig(Resource, module="arbor", name="AdminKubeconfig"):
    """A kubeconfig with a short-lived client certificate; `kubeconfig` is secret."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        kubeconfig: pulumi.Output[str]
        notAfter: pulumi.Output[float]  # noqa: N815 - the output's name in the state

    def __init__(
        self,
        name: str,
        *,
        client_ca_cert: pulumi.Input[str],
        client_ca_key: pulumi.Input[str] | None,
        server: pulumi.Input[str],
        server_ca: pulumi.Input[str],
        expiration_s: int,
        user: str = "admin",
        groups: tuple[str, ...] = DEFAULT_GROUPS,
        signer: tuple[pulumi.Input[str], str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`signer`: the seed and namespace whose `ca-client-signer` Secret holds the client CA, read there."""
        if problem := expiration_problem(expiration_s):
            raise ValueError(f"AdminKubeconfig '{name}': expiration_s: {problem}")
        ca: dict[str, Any] = {"clientCaCert": client_ca_cert, "clientCaKey": pulumi.Output.secret(client_ca_key)}
        if signer is not None:
            # The certificate only as its hash (what the diff compares), `client_ca_key` None: both are read there.
            ca = {
                "clientCaCertHash": pulumi.Output.from_input(client_ca_cert).apply(ca_hash),
                "seedKubeconfig": signer[0], "seedNamespace": signer[1],
                CA_SECRET: credential_names.signer(credential_names.CA_CLIENT),
            }  # fmt: skip
        props = {
            **ca, "server": server, "serverCa": server_ca, "user": user, "groups": list(groups),
            "expirationSeconds": expiration_s, "version": PROVIDER_VERSION, "kubeconfig": None, "notBefore": None,
            "notAfter": None,
        }  # fmt: skip
        secrets = pulumi.ResourceOptions(additional_secret_outputs=["kubeconfig", "clientCaKey"])
        super().__init__(AdminKubeconfigProvider(), name, props, pulumi.ResourceOptions.merge(opts, secrets))
