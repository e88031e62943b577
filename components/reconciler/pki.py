"""PKI as Pulumi dynamic resources: CAs, certificates, the service-account key and bootstrap tokens.

Every credential is generated inside the provider with `cryptography` and kept in the Pulumi state, its private
part as a secret output (encrypted by the stack's secrets provider; nothing secret in plaintext). A hosted shoot's
certificate also writes the Secret its control plane mounts in the seed (credential_secrets.py), so the state keeps
its content once, in the certificate; `read()` then compares that Secret with it, and `delete()` removes it.

What replaces a credential, and what the preview says (the step's replace reasons):
- `rotation`: the counter of the credential's group (`credentials.rotation.<group>`) changed;
- `caCert`: the issuing CA was replaced, so every certificate it signed is issued again;
- `secret`: the Secret a certificate wrote was edited or deleted in the cluster;
- `renewal`: a leaf certificate is due (80% of its validity passed, or fewer than 10 days left; Gardener's rule),
  decided in `diff()` against the current time, so any `pulumi up` after that point renews it;
- any other input (common name, SANs, usages, validity).
A new `version` (provider logic) is an in-place update that keeps the credential.

The engine stores these providers pickled by reference to this module: moving or renaming the module or a
class needs a shim left behind, or existing resources can no longer be read or deleted.
"""

from __future__ import annotations

import ipaddress
import secrets
import string
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pulumi
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider, UpdateResult

from components.reconciler import credential_secrets
from components.reconciler.credential_secrets import Writes, writing
from components.render import pki

# Bump when the provider logic changes: every credential then shows an update (never a replacement).
PROVIDER_VERSION = "1"
# Certificates start a minute in the past: a verifier whose clock runs slightly behind still accepts them.
CLOCK_SKEW = timedelta(minutes=1)
EXTENDED_USAGES = {pki.Usage.SERVER: ExtendedKeyUsageOID.SERVER_AUTH, pki.Usage.CLIENT: ExtendedKeyUsageOID.CLIENT_AUTH}
# Kubernetes bootstrap tokens: `[a-z0-9]{6}.[a-z0-9]{16}`.
TOKEN_ALPHABET = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class Issued:
    """A certificate and its private key as PEM, with its validity as Unix times."""

    cert: str
    key: str
    not_before: float
    not_after: float


def new_key() -> rsa.RSAPrivateKey:
    """A new RSA key of Gardener's size."""
    return rsa.generate_private_key(public_exponent=65537, key_size=pki.RSA_KEY_BITS)


def key_pem(key: rsa.RSAPrivateKey) -> str:
    """The private key as PKCS#1 PEM, as kube-apiserver, etcd and kubectl read it."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    ).decode()


def public_pem(key: rsa.RSAPrivateKey) -> str:
    """The public key as PEM (SubjectPublicKeyInfo)."""
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def _name(common_name: str, organizations: tuple[str, ...] | list[str] = ()) -> x509.Name:
    """A subject: organizations (Kubernetes groups) and the common name (the user)."""
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    return x509.Name([*attributes, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _sans(dns_names: list[str], ip_addresses: list[str]) -> x509.SubjectAlternativeName:
    """The subject alternative names of a certificate."""
    general: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    general += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses]
    return x509.SubjectAlternativeName(general)


def _key_usage(ca: bool) -> x509.KeyUsage:
    """Digital signature and key encipherment; a CA also signs certificates and revocation lists."""
    return x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=True, data_encipherment=False,
        key_agreement=False, key_cert_sign=ca, crl_sign=ca, encipher_only=False, decipher_only=False,
    )  # fmt: skip


def _builder(subject: x509.Name, issuer: x509.Name, key: rsa.RSAPrivateKey, validity_s: int) -> x509.CertificateBuilder:
    """A certificate builder with serial, validity window and the subject key identifier."""
    now = datetime.now(UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(now + timedelta(seconds=validity_s))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )


def _issued(cert: x509.Certificate, key: rsa.RSAPrivateKey) -> Issued:
    """The PEM forms and validity of a signed certificate."""
    return Issued(
        cert=cert.public_bytes(serialization.Encoding.PEM).decode(),
        key=key_pem(key),
        not_before=cert.not_valid_before_utc.timestamp(),
        not_after=cert.not_valid_after_utc.timestamp(),
    )


def self_signed_ca(common_name: str, validity_s: int) -> Issued:
    """A new self-signed CA."""
    key = new_key()
    name = _name(common_name)
    cert = (
        _builder(name, name, key, validity_s)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_key_usage(ca=True), critical=True)
        .sign(key, hashes.SHA256())
    )
    return _issued(cert, key)


def issue(
    ca_cert: str,
    ca_key: str,
    common_name: str,
    organizations: list[str],
    dns_names: list[str],
    ip_addresses: list[str],
    usages: list[str],
    validity_s: int,
) -> Issued:
    """A new key and a certificate for it, signed by the CA."""
    ca = x509.load_pem_x509_certificate(ca_cert.encode())
    signer = serialization.load_pem_private_key(ca_key.encode(), password=None)
    if not isinstance(signer, rsa.RSAPrivateKey):
        raise ValueError("the CA key is not an RSA key")
    key = new_key()
    builder = (
        _builder(_name(common_name, organizations), ca.subject, key, validity_s)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(ca=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([EXTENDED_USAGES[pki.Usage(u)] for u in usages]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()), critical=False)
    )
    if dns_names or ip_addresses:
        builder = builder.add_extension(_sans(dns_names, ip_addresses), critical=False)
    return _issued(builder.sign(signer, hashes.SHA256()), key)


def _changed(olds: dict[str, Any], news: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    """The keys whose values differ (an unknown value during preview differs from any known one)."""
    return [k for k in keys if olds.get(k) != news.get(k)]


def _keep(olds: dict[str, Any], news: dict[str, Any], generated: tuple[str, ...]) -> dict[str, Any]:
    """New inputs with the generated outputs kept: an update never regenerates a credential."""
    return {**news, **{k: olds[k] for k in generated}}


class _Credential(ResourceProvider):
    """A credential kept in the state, with the Secrets it writes where it has any (credential_secrets.py)."""

    replace_on: tuple[str, ...] = ()
    generated: tuple[str, ...] = ()

    def generate(self, props: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """A new credential: its ID and the outputs."""
        raise NotImplementedError

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Generates the credential, then writes its Secrets."""
        id_, outs = self.generate(props)
        return CreateResult(id_=id_, outs=credential_secrets.write(outs))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """Replaces on a new identity, a rotation or a Secret changed in the cluster; a new logic version updates."""
        drifted = ["secret"] if credential_secrets.drifted(olds, news) else []
        replaces = _changed(olds, news, self.replace_on) + drifted
        changed = bool(replaces) or olds.get("version") != news.get("version")
        return DiffResult(changes=changed, replaces=replaces, delete_before_replace=False)

    def kept(self, olds: dict[str, Any], news: dict[str, Any]) -> dict[str, Any]:
        """The new inputs with the credential kept: an update never generates it again."""
        return _keep(olds, news, self.generated)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Keeps the credential (only the logic version changed) and writes its Secrets again."""
        return UpdateResult(outs=credential_secrets.write(self.kept(olds, news)))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The state is the credential; the Secrets it writes are read back as hashes (drift when they differ)."""
        if not credential_secrets.writes(props):
            return ReadResult(id_=id_, outs=props)
        return ReadResult(id_=id_, outs={**props, credential_secrets.OUTPUT: credential_secrets.actual(props)})

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

    def generate(self, props: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Generates the CA."""
        ca = self_signed_ca(props["commonName"], int(props["validitySeconds"]))
        outs = {**props, "cert": ca.cert, "key": ca.key, "notBefore": ca.not_before, "notAfter": ca.not_after}
        return f"{props['commonName']}-{secrets.token_hex(4)}", outs


def _issue_props(props: dict[str, Any]) -> Issued:
    """Issues the certificate the properties describe."""
    return issue(
        props["caCert"], props["caKey"], props["commonName"], list(props.get("organizations") or []),
        list(props.get("dnsNames") or []), list(props.get("ipAddresses") or []), list(props["usages"]),
        int(props["validitySeconds"]),
    )  # fmt: skip


class CertificateProvider(_Credential):
    """A certificate signed by a CA; renewed by replacement when due."""

    replace_on = ("caCert", "commonName", "organizations", "dnsNames", "ipAddresses", "usages", "validitySeconds",
                  "rotation")  # fmt: skip
    generated = ("cert", "key", "notBefore", "notAfter")

    def generate(self, props: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Issues the certificate; the CA key is used, never kept in the outputs."""
        cert = _issue_props(props)
        outs = {k: v for k, v in props.items() if k != "caKey"}
        outs |= {"cert": cert.cert, "key": cert.key, "notBefore": cert.not_before, "notAfter": cert.not_after}
        return f"{props['commonName']}-{secrets.token_hex(4)}", outs

    def diff(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """As any credential, and a replacement with the reason `renewal` once the certificate is due."""
        result = super().diff(id_, olds, news)
        if olds.get("notAfter") and pki.leaf_renewal_due(
            float(olds["notBefore"]), float(olds["notAfter"]), time.time()
        ):
            replaces = [*(result.replaces or []), "renewal"]
            return DiffResult(changes=True, replaces=replaces, delete_before_replace=False)
        return result

    def kept(self, olds: dict[str, Any], news: dict[str, Any]) -> dict[str, Any]:
        """The certificate kept, without the CA key (an input only)."""
        outs = super().kept(olds, news)
        outs.pop("caKey", None)
        return outs


class ServiceAccountKeyProvider(_Credential):
    """The RSA key kube-apiserver signs service-account tokens with."""

    replace_on = ("rotation",)
    generated = ("privateKey", "publicKey")

    def generate(self, props: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Generates the key pair."""
        key = new_key()
        outs = {**props, "privateKey": key_pem(key), "publicKey": public_pem(key)}
        return f"service-account-key-{secrets.token_hex(4)}", outs


class BootstrapTokenProvider(_Credential):
    """A kubelet bootstrap token: a public id and a secret."""

    replace_on = ("rotation",)
    generated = ("tokenId", "tokenSecret")

    def generate(self, props: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Generates the token."""
        token_id = _token(6)
        return token_id, {**props, "tokenId": token_id, "tokenSecret": _token(16)}


def _secret_outputs(opts: pulumi.ResourceOptions | None, *names: str) -> pulumi.ResourceOptions:
    """`opts` with the named outputs kept secret in the state."""
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=list(names)))


class CertificateAuthority(Resource, module="arbor", name="CertificateAuthority"):
    """A self-signed CA; `key` is secret."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        cert: pulumi.Output[str]
        key: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        common_name: str,
        validity_s: int,
        rotation: int,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "commonName": common_name,
            "validitySeconds": validity_s,
            "rotation": rotation,
            "version": PROVIDER_VERSION,
        }
        props |= dict.fromkeys(("cert", "key", "notBefore", "notAfter"))
        super().__init__(CertificateAuthorityProvider(), name, props, _secret_outputs(opts, "key"))


class Certificate(Resource, module="arbor", name="Certificate"):
    """A certificate signed by a CA; `key` is secret, `caKey` is an input only."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        cert: pulumi.Output[str]
        key: pulumi.Output[str]
        caCert: pulumi.Output[str]  # noqa: N815 - the output's name in the state

    def __init__(
        self,
        name: str,
        *,
        ca_cert: pulumi.Input[str],
        ca_key: pulumi.Input[str],
        common_name: str,
        usages: list[str],
        validity_s: int,
        rotation: int,
        organizations: list[str] | None = None,
        dns_names: list[str] | None = None,
        ip_addresses: list[str] | None = None,
        writes: Writes | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "caCert": ca_cert, "caKey": pulumi.Output.secret(ca_key), "commonName": common_name,
            "organizations": organizations or [], "dnsNames": dns_names or [], "ipAddresses": ip_addresses or [],
            "usages": usages, "validitySeconds": validity_s, "rotation": rotation, "version": PROVIDER_VERSION,
            "cert": None, "key": None, "notBefore": None, "notAfter": None,
        }  # fmt: skip
        # The kubeconfig its Secret is written with is secret too.
        opts = _secret_outputs(opts, "key", "caKey", "kubeconfig")
        super().__init__(CertificateProvider(), name, writing(props, writes), opts)


class ServiceAccountKey(Resource, module="arbor", name="ServiceAccountKey"):
    """The service-account signing key pair; `privateKey` is secret."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        privateKey: pulumi.Output[str]  # noqa: N815 - the output's name in the state
        publicKey: pulumi.Output[str]  # noqa: N815 - the output's name in the state

    def __init__(self, name: str, *, rotation: int, opts: pulumi.ResourceOptions | None = None) -> None:
        props = {"rotation": rotation, "version": PROVIDER_VERSION, "privateKey": None, "publicKey": None}
        super().__init__(ServiceAccountKeyProvider(), name, props, _secret_outputs(opts, "privateKey"))


class BootstrapToken(Resource, module="arbor", name="BootstrapToken"):
    """A kubelet bootstrap token; `tokenSecret` is secret, the id is public (it names the token's Secret)."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        tokenId: pulumi.Output[str]  # noqa: N815 - the output's name in the state
        tokenSecret: pulumi.Output[str]  # noqa: N815 - the output's name in the state

    def __init__(self, name: str, *, rotation: int, opts: pulumi.ResourceOptions | None = None) -> None:
        props = {"rotation": rotation, "version": PROVIDER_VERSION, "tokenId": None, "tokenSecret": None}
        super().__init__(BootstrapTokenProvider(), name, props, _secret_outputs(opts, "tokenSecret"))
