"""PKI as Pulumi dynamic resources: CAs, certificates, the service-account key and bootstrap tokens.

Every credential is generated inside the provider with `cryptography` and kept in the Pulumi state, its private
part as a secret output (encrypted by the stack's secrets provider; nothing secret in plaintext); an RSA key as its
primes (render/packed_keys.py; an older state's at its next refresh), written out again where the program reads it.
A hosted shoot's certificate also writes the Secret its control plane mounts in the seed (credential_secrets.py), so
the state keeps its content once, in the certificate; `read()` then compares that Secret's hash with the one
written, and `delete()` removes it. A certificate's state names its issuer by a hash of the CA's certificate
(`caHash`), not a copy of it.

What replaces a credential, and what the preview says (the step's replace reasons):
- `rotation`: the counter of the credential's group (`credentials.rotation.<group>`) changed;
- `caCert`: the issuing CA was replaced, so every certificate it signed is issued again;
- `secret`: the Secret a certificate wrote was edited or deleted in the cluster;
- `renewal`: a leaf certificate is due (80% of its validity passed, or fewer than 10 days left; Gardener's rule),
  decided in `diff()` against the current time, so any `pulumi up` after that point renews it;
- any other input (common name, SANs, usages, validity).
A new `version` (provider logic) is an in-place update that keeps the credential.

An update's preview knows a kept credential's public outputs. A dynamic provider cannot preview an update, so the
engine previews its outputs as its inputs: a hosted CA, key or token's refresh records its certificate, public key or
token id and its Secrets' checksums among its inputs (`carried`), and `check` carries them on while no input that would
replace it changed. What reads them then previews as it is (docs/state.md).

The engine stores these providers pickled by reference to this module: moving or renaming the module or a
class needs a shim left behind, or existing resources can no longer be read or deleted.
"""

from __future__ import annotations

import secrets
import string
import time
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import CheckResult, CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.reconciler import credential_secrets, unknowns
from components.reconciler.ca_source import CA_SECRET, CA_SUBJECT, ca_hash, issue_from, with_ca
from components.reconciler.credential_secrets import Writes, writing
from components.reconciler.provider import Provider
from components.reconciler.signing import key_pem, new_key, public_pem, self_signed_ca, subject_of
from components.render import packed_keys, pki

# Bump when the provider logic changes: every credential then shows an update (never a replacement).
PROVIDER_VERSION = "1"
# Kubernetes bootstrap tokens: `[a-z0-9]{6}.[a-z0-9]{16}`.
TOKEN_ALPHABET = string.ascii_lowercase + string.digits


def _changed(olds: dict[str, Any], news: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    """The keys whose values differ (an unknown value during preview differs from any known one)."""
    return [k for k in keys if olds.get(k) != news.get(k)]


def _keep(olds: dict[str, Any], news: dict[str, Any], generated: tuple[str, ...]) -> dict[str, Any]:
    """New inputs with the generated outputs kept: an update never regenerates a credential."""
    return {**news, **{k: olds[k] for k in generated}}


class _Credential(Provider):
    """A credential kept in the state, with the Secrets it writes where it has any (credential_secrets.py)."""

    replace_on: tuple[str, ...] = ()
    generated: tuple[str, ...] = ()
    # Whether a drifted or moved Secret is written again from the state (an update): a CA, key or token, which must
    # never be generated again. A certificate is issued again instead (a replacement), as Gardener regenerates a leaf.
    rewrites = False
    # The generated outputs that are not secret, recorded among the inputs at refresh and carried on by `check` where
    # the credential writes Secrets (an update writes them again; elsewhere only a new logic version updates, and the
    # state keeps no second copy).
    carried: tuple[str, ...] = ()
    # The private keys among the outputs, kept as their primes: about a quarter of a PEM, written out again where the
    # program reads them (`written_out`).
    key_outputs: tuple[str, ...] = ()

    def generate(self, props: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """A new credential: its ID and the outputs."""
        raise NotImplementedError

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Generates the credential, then writes its Secrets."""
        id_, outs = self.generate(props)
        return CreateResult(id_=id_, outs=self.lean(credential_secrets.write(outs)))

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        """The inputs, with the carried outputs of the credential they keep (none where it would be replaced)."""
        inputs = credential_secrets.carry(olds, news, self.carried, self.replace_on) if self.carried else news
        return CheckResult(inputs=inputs, failures=[])

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """Replaces on a new identity or a rotation; a drifted or moved Secret is issued again or written again.

        A certificate is issued again (a replacement); a CA, key or token writes it again (`rewrites`, an update).
        A new logic version updates.
        """
        drifted = credential_secrets.drifted(olds, news)
        replaces = _changed(olds, news, self.replace_on) + (["secret"] if drifted and not self.rewrites else [])
        rewrite = self.rewrites and credential_secrets.write_again(olds, news)
        changed = bool(replaces) or rewrite or olds.get("version") != news.get("version")
        return DiffResult(changes=changed, replaces=replaces, delete_before_replace=False)

    def kept(self, olds: dict[str, Any], news: dict[str, Any]) -> dict[str, Any]:
        """The new inputs with the credential kept: an update never generates it again."""
        return _keep(packed_keys.fields_written_out(olds, self.key_outputs), news, self.generated)

    def lean(self, outs: dict[str, Any]) -> dict[str, Any]:
        """The outputs as the state keeps them: private keys as their primes."""
        return packed_keys.fields_packed(outs, self.key_outputs)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Keeps the credential and writes its Secrets again (where they moved, after removing them where they were)."""
        credential_secrets.leave_old_place(olds, news)
        return UpdateResult(outs=self.lean(credential_secrets.write(self.kept(olds, news))))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The state is the credential; the Secrets it writes are read back as hashes (drift when they differ)."""
        outs = self.lean(props)
        if credential_secrets.writes(props):
            outs |= credential_secrets.observed(props)
        made = set(self.generated) - set(self.carried)
        return ReadResult(id_=id_, outs=outs, inputs=credential_secrets.recorded(outs, made) if self.carried else None)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Removes the Secrets it wrote, where they still hold what it wrote."""
        credential_secrets.remove(props)


def _token(length: int) -> str:
    """A random string of the bootstrap token alphabet."""
    return "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(length))


class CertificateAuthorityProvider(_Credential):
    """A self-signed CA."""

    replace_on = ("commonName", "validitySeconds", "rotation")
    generated = ("cert", "key", "notBefore", "notAfter")
    carried = ("cert", "notBefore", "notAfter", credential_secrets.CHECKSUMS)
    rewrites = True
    key_outputs = ("key",)

    def generate(self, props: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Generates the CA."""
        ca = self_signed_ca(props["commonName"], int(props["validitySeconds"]))
        outs = {**props, "cert": ca.cert, "key": ca.key, "notBefore": ca.not_before, "notAfter": ca.not_after}
        return f"{props['commonName']}-{secrets.token_hex(4)}", outs


def _issuer_hash(outs: dict[str, Any]) -> str:
    """The hash of the CA a certificate's outputs name (an older state kept the CA's certificate itself)."""
    return str(outs["caHash"]) if outs.get("caHash") else ca_hash(outs.get("caCert"))


def _new_issuer_hash(news: dict[str, Any]) -> str:
    """The hash of the CA the new inputs name: given (with its signer Secret or subject), else of its certificate."""
    return str(news.get("caHash")) if news.get(CA_SECRET) or news.get(CA_SUBJECT) else ca_hash(news.get("caCert"))


class CertificateProvider(_Credential):
    """A certificate signed by a CA; renewed by replacement when due."""

    replace_on = ("commonName", "organizations", "dnsNames", "ipAddresses", "usages", "validitySeconds", "rotation")
    generated = ("cert", "key", "notBefore", "notAfter")
    key_outputs = ("key",)

    def generate(self, props: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Issues the certificate; the CA key is used, never kept in the outputs."""
        props = with_ca(props)
        cert = issue_from(props)
        outs = {k: v for k, v in props.items() if k != "caKey"}
        outs |= {"cert": cert.cert, "key": cert.key, "notBefore": cert.not_before, "notAfter": cert.not_after}
        return f"{props['commonName']}-{secrets.token_hex(4)}", outs

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        """The inputs as the state keeps them: where it writes no Secret, its CA's subject and hash for its certificate.

        Issuing needs of the CA's certificate only its subject (the issuer); its hash tells a new CA.
        """
        cert = news.get("caCert")
        if credential_secrets.writes(news) or not (unknowns.known(cert) and str(cert).startswith("-----BEGIN")):
            return CheckResult(inputs=news, failures=[])
        named_by = {CA_SUBJECT: subject_of(str(cert)), "caHash": ca_hash(cert)}
        return CheckResult(inputs={**{k: v for k, v in news.items() if k != "caCert"}, **named_by}, failures=[])

    def diff(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """As any credential; replaced by a new CA (`caCert`), once due (`renewal`), or to publish what it dropped."""
        result = super().diff(id_, olds, news)
        replaces = list(result.replaces or [])
        if _issuer_hash(olds) != _new_issuer_hash(news):
            replaces.insert(0, "caCert")
        if _holds_content(news) and not _holds_content(olds):
            replaces.append("published")
        if olds.get("notAfter") and pki.leaf_renewal_due(
            float(olds["notBefore"]), float(olds["notAfter"]), time.time()
        ):
            replaces.append("renewal")
        changed = bool(result.changes or replaces) or (_holds_content(olds) and not _holds_content(news))
        return DiffResult(changes=changed, replaces=replaces, delete_before_replace=False)

    def kept(self, olds: dict[str, Any], news: dict[str, Any]) -> dict[str, Any]:
        """The certificate kept (its CA's certificate read where the Secret it writes needs it), without the CA key."""
        outs = with_ca(super().kept(olds, news)) if _holds_content(olds) else super().kept(olds, news)
        outs.pop("caKey", None)
        return outs

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Writes its Secrets again from the state where it holds the content; else they hold it (drift replaces)."""
        olds = packed_keys.fields_written_out(olds, self.key_outputs)
        if "key" in olds:
            return super().update(id_, olds, news)
        outs = {k: v for k, v in news.items() if k != "caKey"}
        outs |= {k: olds[k] for k in ("notBefore", "notAfter", *credential_secrets.OUTPUTS) if k in olds}
        return UpdateResult(outs=self.lean(outs))

    def lean(self, outs: dict[str, Any]) -> dict[str, Any]:
        """Without the issuing CA (its hash tells a new one); without certificate and key if only Secrets need them."""
        dropped = (
            ("caCert", "caKey", CA_SUBJECT) if _holds_content(outs) else ("caCert", "caKey", CA_SUBJECT, "cert", "key")
        )
        return super().lean({**{k: v for k, v in outs.items() if k not in dropped}, "caHash": _issuer_hash(outs)})


def _holds_content(props: dict[str, Any]) -> bool:
    """Whether the state keeps the certificate and key: unless only the Secrets it writes need them (`published`)."""
    return not credential_secrets.writes(props) or props.get("published") is not False


class ServiceAccountKeyProvider(_Credential):
    """The RSA key kube-apiserver signs service-account tokens with."""

    replace_on = ("rotation",)
    generated = ("privateKey", "publicKey")
    carried = ("publicKey", credential_secrets.CHECKSUMS)
    rewrites = True
    key_outputs = ("privateKey",)

    def generate(self, props: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Generates the key pair."""
        key = new_key()
        outs = {**props, "privateKey": key_pem(key), "publicKey": public_pem(key)}
        return f"service-account-key-{secrets.token_hex(4)}", outs


class BootstrapTokenProvider(_Credential):
    """A kubelet bootstrap token: a public id and a secret."""

    replace_on = ("rotation",)
    generated = ("tokenId", "tokenSecret")
    carried = ("tokenId", credential_secrets.CHECKSUMS)
    rewrites = True

    def generate(self, props: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Generates the token."""
        token_id = _token(6)
        return token_id, {**props, "tokenId": token_id, "tokenSecret": _token(16)}


def _secret_outputs(opts: pulumi.ResourceOptions | None, *names: str) -> pulumi.ResourceOptions:
    """`opts` with the named outputs kept secret in the state."""
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=list(names)))


def written_out(key: pulumi.Output[str]) -> pulumi.Output[str]:
    """A private key as the program reads it: its PEM, written out from its primes where the state keeps those."""
    return pulumi.Output.secret(key.apply(lambda k: packed_keys.expanded(k) if isinstance(k, str) else k))


class CertificateAuthority(Resource, module="arbor", name="CertificateAuthority"):
    """A self-signed CA; `key` is secret."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        cert: pulumi.Output[str]
        key: pulumi.Output[str]
        checksums: pulumi.Output[dict[str, str]]

    def __init__(
        self,
        name: str,
        *,
        common_name: str,
        validity_s: int,
        rotation: int,
        writes: Writes | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "commonName": common_name,
            "validitySeconds": validity_s,
            "rotation": rotation,
            "version": PROVIDER_VERSION,
        }
        props |= dict.fromkeys(("cert", "key", "notBefore", "notAfter"))
        super().__init__(CertificateAuthorityProvider(), name, writing(props, writes), _secret_outputs(opts, "key"))
        self.key = written_out(self.key)


class Certificate(Resource, module="arbor", name="Certificate"):
    """A certificate signed by a CA; `key` is secret, `caKey` is an input only.

    One that writes its Secrets and is not `published` keeps neither certificate nor key in the state (its Secrets
    hold them, as Gardener's secrets manager keeps a leaf); `checksums` then stand for them.
    """

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        cert: pulumi.Output[str]
        key: pulumi.Output[str]
        checksums: pulumi.Output[dict[str, str]]

    def __init__(
        self,
        name: str,
        *,
        ca_cert: pulumi.Input[str] | None,
        ca_key: pulumi.Input[str] | None,
        common_name: str,
        usages: list[str],
        validity_s: int,
        rotation: int,
        organizations: list[str] | None = None,
        dns_names: list[str] | None = None,
        ip_addresses: list[str] | None = None,
        writes: Writes | None = None,
        published: bool = True,
        ca_secret: str | None = None,
        ca_digest: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        # Its CA: given (certificate and key), or read from the signer Secret `ca_secret` where it writes its own
        # Secrets, named by the hash of the CA's certificate (`ca_digest`), which a new CA changes.
        issuer: dict[str, Any] = {CA_SECRET: ca_secret, "caHash": ca_digest}
        if not ca_secret:
            assert ca_key is not None, "a certificate is given its CA's key or the Secret that holds it"
            # Kept as its primes (render/packed_keys.py): a fifth of its PEM in the state; written out to issue.
            key = pulumi.Output.from_input(ca_key).apply(packed_keys.compacted)
            issuer = {"caCert": ca_cert, "caKey": pulumi.Output.secret(key)}
        props = {
            **issuer, "commonName": common_name,
            "organizations": organizations or [], "dnsNames": dns_names or [], "ipAddresses": ip_addresses or [],
            "usages": usages, "validitySeconds": validity_s, "rotation": rotation, "version": PROVIDER_VERSION,
            "cert": None, "key": None, "notBefore": None, "notAfter": None,
        }  # fmt: skip
        if writes is not None:
            # The program reads the certificate and key from the outputs; else only the Secrets hold them.
            props["published"] = published
        opts = _secret_outputs(opts, "key", "caKey")
        super().__init__(CertificateProvider(), name, writing(props, writes), opts)
        self.key = written_out(self.key)


class ServiceAccountKey(Resource, module="arbor", name="ServiceAccountKey"):
    """The service-account signing key pair; `privateKey` is secret."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        privateKey: pulumi.Output[str]  # noqa: N815 - the output's name in the state
        publicKey: pulumi.Output[str]  # noqa: N815 - the output's name in the state
        checksums: pulumi.Output[dict[str, str]]

    def __init__(
        self, name: str, *, rotation: int, writes: Writes | None = None, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        props = {"rotation": rotation, "version": PROVIDER_VERSION, "privateKey": None, "publicKey": None}
        super().__init__(ServiceAccountKeyProvider(), name, writing(props, writes), _secret_outputs(opts, "privateKey"))
        self.privateKey = written_out(self.privateKey)


class BootstrapToken(Resource, module="arbor", name="BootstrapToken"):
    """A kubelet bootstrap token; `tokenSecret` is secret, the id is public (it names the token's Secret)."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        tokenId: pulumi.Output[str]  # noqa: N815 - the output's name in the state
        tokenSecret: pulumi.Output[str]  # noqa: N815 - the output's name in the state
        checksums: pulumi.Output[dict[str, str]]

    def __init__(
        self, name: str, *, rotation: int, writes: Writes | None = None, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        props = {"rotation": rotation, "version": PROVIDER_VERSION, "tokenId": None, "tokenSecret": None}
        super().__init__(BootstrapTokenProvider(), name, writing(props, writes), _secret_outputs(opts, "tokenSecret"))
