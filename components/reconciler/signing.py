"""X.509 keys and certificates, made with `cryptography` in Gardener's shapes (RSA keys of its size, SHA-256).

Where arbor runs something of its own that is not Gardener's (the local object store), its keys are ECDSA P-256, as
MinIO's own certificate tool makes them: a certificate a third the size, which every shoot's backup data carries.

Pure issuing, no Pulumi: reconciler/pki.py's providers and the admin kubeconfig call these.
"""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from components.render import pki

# Certificates start a minute in the past: a verifier whose clock runs slightly behind still accepts them.
CLOCK_SKEW = timedelta(minutes=1)
EXTENDED_USAGES = {pki.Usage.SERVER: ExtendedKeyUsageOID.SERVER_AUTH, pki.Usage.CLIENT: ExtendedKeyUsageOID.CLIENT_AUTH}


# The private keys this module makes and signs with.
PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


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


def _new(ecdsa: bool) -> PrivateKey:
    """A new key: ECDSA P-256, or RSA of Gardener's size."""
    return ec.generate_private_key(ec.SECP256R1()) if ecdsa else new_key()


def key_pem(key: PrivateKey) -> str:
    """The private key as PKCS#1 PEM (SEC 1 for ECDSA), as kube-apiserver, etcd and kubectl read it."""
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


def _signing_key(pem: str) -> PrivateKey:
    """A CA's private key from PEM: RSA or ECDSA."""
    key = serialization.load_pem_private_key(pem.encode(), password=None)
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise ValueError("the key is neither an RSA nor an ECDSA key")
    return key


def _rsa_key(pem: str) -> rsa.RSAPrivateKey:
    """An RSA private key from PEM."""
    key = _signing_key(pem)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("the key is not an RSA key")
    return key


def _name(common_name: str, organizations: tuple[str, ...] | list[str] = ()) -> x509.Name:
    """A subject: organizations (Kubernetes groups) and the common name (the user)."""
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    return x509.Name([*attributes, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _sans(dns_names: list[str], ip_addresses: list[str]) -> x509.SubjectAlternativeName:
    """The subject alternative names of a certificate."""
    general: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    general += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses]
    return x509.SubjectAlternativeName(general)


def _key_usage(ca: bool, encipherment: bool = True) -> x509.KeyUsage:
    """Digital signature and (an RSA key's) key encipherment; a CA also signs certificates and revocation lists."""
    return x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=encipherment, data_encipherment=False,
        key_agreement=False, key_cert_sign=ca, crl_sign=ca, encipher_only=False, decipher_only=False,
    )  # fmt: skip


def _builder(subject: x509.Name, issuer: x509.Name, key: PrivateKey, validity_s: int) -> x509.CertificateBuilder:
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


def _issued(cert: x509.Certificate, key: PrivateKey) -> Issued:
    """The PEM forms and validity of a signed certificate."""
    return Issued(
        cert=cert.public_bytes(serialization.Encoding.PEM).decode(),
        key=key_pem(key),
        not_before=cert.not_valid_before_utc.timestamp(),
        not_after=cert.not_valid_after_utc.timestamp(),
    )


def self_signed_ca(common_name: str, validity_s: int, ecdsa: bool = False) -> Issued:
    """A new self-signed CA (its key ECDSA P-256 where asked, else RSA)."""
    key = _new(ecdsa)
    name = _name(common_name)
    cert = (
        _builder(name, name, key, validity_s)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_key_usage(ca=True, encipherment=not ecdsa), critical=True)
        .sign(key, hashes.SHA256())
    )
    return _issued(cert, key)


def subject_of(cert_pem: str) -> str:
    """A certificate's subject as RFC 4514 text, with the SHA-256 of its DER (16 hex digits) after a `#`."""
    subject = x509.load_pem_x509_certificate(cert_pem.encode()).subject
    return f"{subject.rfc4514_string()}#{hashlib.sha256(subject.public_bytes()).hexdigest()[:16]}"


def named(subject: str) -> x509.Name:
    """The name `subject_of` gave, checked to encode exactly as the certificate's did (its issuer's must)."""
    text, _, digest = subject.rpartition("#")
    name = x509.Name.from_rfc4514_string(text)
    if hashlib.sha256(name.public_bytes()).hexdigest()[:16] != digest:
        raise ValueError(f"the CA subject {text!r} does not encode as its certificate's: give its certificate")
    return name


def issue(
    ca_cert: str | x509.Name,
    ca_key: str,
    common_name: str,
    organizations: list[str],
    dns_names: list[str],
    ip_addresses: list[str],
    usages: list[str],
    validity_s: int,
    key_pem_text: str | None = None,
    ecdsa: bool = False,
) -> Issued:
    """A certificate signed by the CA (its certificate, or only its subject), for a new key (or the given one).

    The CA's key may be RSA or ECDSA; a new key is ECDSA P-256 where asked, else RSA.
    """
    issuer = ca_cert if isinstance(ca_cert, x509.Name) else x509.load_pem_x509_certificate(ca_cert.encode()).subject
    signer = _signing_key(ca_key)
    key: PrivateKey = _rsa_key(key_pem_text) if key_pem_text else _new(ecdsa)
    builder = (
        _builder(_name(common_name, organizations), issuer, key, validity_s)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(ca=False, encipherment=isinstance(key, rsa.RSAPrivateKey)), critical=True)
        .add_extension(x509.ExtendedKeyUsage([EXTENDED_USAGES[pki.Usage(u)] for u in usages]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()), critical=False)
    )
    if dns_names or ip_addresses:
        builder = builder.add_extension(_sans(dns_names, ip_addresses), critical=False)
    return _issued(builder.sign(signer, hashes.SHA256()), key)
