"""A credential's private key among its outputs: the state keeps it as its primes, the program reads its PEM."""

from __future__ import annotations

import functools
from typing import Any

import pulumi
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from components.reconciler import ca_source, signing
from components.reconciler import pki as issuing
from components.render import packed_keys

CA_INPUTS = {"commonName": "ca", "validitySeconds": 3600, "rotation": 0, "version": issuing.PROVIDER_VERSION,
             "cert": None, "key": None, "notBefore": None, "notAfter": None}  # fmt: skip
NAMES = ("key", "privateKey")


@functools.cache
def ca() -> signing.Issued:
    """A CA as arbor issues it (made once: a key takes a while)."""
    return signing.self_signed_ca("ca", 3600)


def _public(pem: str) -> bytes:
    """The public key of a private key's PEM."""
    key = serialization.load_pem_private_key(pem.encode(), None)
    return key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _cert_public(pem: str) -> bytes:
    """The public key a certificate is for."""
    cert = x509.load_pem_x509_certificate(pem.encode())
    return cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def test_a_new_ca_keeps_its_key_as_primes() -> None:
    """GIVEN a CA created by the provider WHEN its outputs are read THEN no PEM key, a token a quarter its size."""
    outs = issuing.CertificateAuthorityProvider().create(dict(CA_INPUTS)).outs or {}
    assert outs["key"].startswith(packed_keys.MARK) and packed_keys.BEGIN not in str(outs)
    pem = packed_keys.expanded(outs["key"])
    assert _public(pem) == _cert_public(outs["cert"])
    assert len(outs["key"]) < len(pem) / 4


def test_an_older_states_pem_key_is_packed_at_refresh_and_kept_by_an_update() -> None:
    """GIVEN a CA's older state with its PEM key WHEN refreshed, then updated THEN the same key, kept as primes."""
    provider, issued = issuing.CertificateAuthorityProvider(), ca()
    older = {**CA_INPUTS, "cert": issued.cert, "key": issued.key, "notBefore": 1.0, "notAfter": 2.0}
    read = provider.read("id", older).outs or {}
    assert read["key"].startswith(packed_keys.MARK) and packed_keys.expanded(read["key"]) == issued.key
    updated = provider.update("id", read, {**CA_INPUTS, "version": "next"}).outs or {}
    assert (updated["key"], updated["cert"], updated["version"]) == (read["key"], issued.cert, "next")
    # And from the older state directly: an update is the refresh's twin.
    assert (provider.update("id", older, dict(CA_INPUTS)).outs or {})["key"] == read["key"]


def test_a_key_its_primes_would_not_give_back_is_kept_whole() -> None:
    """GIVEN an older state whose key is PKCS#8 WHEN refreshed THEN it stays as it is."""
    key = serialization.load_pem_private_key(ca().key.encode(), None)
    pkcs8 = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()).decode()  # fmt: skip
    read = issuing.CertificateAuthorityProvider().read("id", {**CA_INPUTS, "cert": ca().cert, "key": pkcs8}).outs
    assert read is not None and read["key"] == pkcs8


def test_the_service_account_key_keeps_its_private_key_as_primes() -> None:
    """GIVEN the service-account key created WHEN its outputs are read THEN the private key as primes, of the pair."""
    props = {"rotation": 0, "version": issuing.PROVIDER_VERSION, "privateKey": None, "publicKey": None}
    outs = issuing.ServiceAccountKeyProvider().create(props).outs or {}
    assert outs["privateKey"].startswith(packed_keys.MARK)
    private = packed_keys.expanded(outs["privateKey"])
    public = serialization.load_pem_public_key(outs["publicKey"].encode())
    assert _public(private) == public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def test_a_certificate_that_keeps_its_content_keeps_its_key_as_primes() -> None:
    """GIVEN a self-hosted shoot's certificate (no Secrets) WHEN issued THEN its key as primes, the certificate's."""
    issued = ca()
    props = {"caCert": issued.cert, "caKey": issued.key, "commonName": "kubelet", "usages": ["client"],
             "validitySeconds": 3600, "rotation": 0, "version": issuing.PROVIDER_VERSION}  # fmt: skip
    outs = issuing.CertificateProvider().create(props).outs or {}
    assert outs["key"].startswith(packed_keys.MARK) and "caKey" not in outs
    assert _public(packed_keys.expanded(outs["key"])) == _cert_public(outs["cert"])


# Outputs without a key arbor could compact: none, numbers, short texts (a PEM key is longer than 30 characters).
OUTPUTS = st.dictionaries(st.sampled_from(["key", "privateKey", "cert", "x"]),
                          st.one_of(st.none(), st.integers(), st.text(max_size=30)), max_size=4)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(values=OUTPUTS, with_key=st.sampled_from(["key", "privateKey", None]))
def test_fields_packed_and_written_out_give_back_the_values(values: dict[str, Any], with_key: str | None) -> None:
    """GIVEN outputs with or without a PEM key WHEN packed and written out THEN the same outputs, the key as primes."""
    assume(not any(packed_keys.MARK in str(v) or packed_keys.B64_MARK in str(v) for v in values.values()))
    if with_key:
        values[with_key] = ca().key
    packed = packed_keys.fields_packed(values, NAMES)
    assert packed_keys.fields_written_out(packed, NAMES) == values
    if with_key:
        assert packed[with_key].startswith(packed_keys.MARK) and packed_keys.BEGIN not in str(packed)
    else:
        assert packed == values


def test_a_value_that_holds_a_token_already_is_not_packed_again() -> None:
    """GIVEN a key field holding a token's mark WHEN packed THEN it is kept as it is (a token is never a key)."""
    values = {"key": packed_keys.MARK + "x:y:1:0>>"}
    assert packed_keys.fields_packed(values, NAMES) == values


class _Echo(pulumi.runtime.Mocks):
    """Each resource's outputs: its inputs, and the key in the form the test's state keeps it."""

    def __init__(self, outputs: dict[str, Any]) -> None:
        self.outputs = outputs

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return f"{args.name}-id", {k: v for k, v in args.inputs.items() if v is not None} | self.outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, []


@pytest.mark.parametrize("preview", [False, True])
@pytest.mark.parametrize("form", ["primes", "pem"])
def test_the_program_reads_the_pem_whichever_form_the_state_keeps(form: str, preview: bool) -> None:
    """GIVEN a CA and the SA key, their state keeping the key as primes or as PEM WHEN read THEN the PEM, secret.

    In a preview too: a key the program read as unknown there would show every Secret made from it as changing.
    """
    pem = ca().key
    stored = packed_keys.compacted(pem) if form == "primes" else pem
    mocks = _Echo({"key": stored, "privateKey": stored})
    pulumi.runtime.set_mocks(mocks, project="arbor", stack="test", preview=preview)

    @pulumi.runtime.test
    def check() -> pulumi.Output[None]:
        authority = issuing.CertificateAuthority("ca", common_name="ca", validity_s=3600, rotation=0)
        account = issuing.ServiceAccountKey("sa", rotation=0)
        keys = pulumi.Output.all(authority.key, account.privateKey)
        secret = pulumi.Output.all(pulumi.Output.is_secret(authority.key), pulumi.Output.is_secret(account.privateKey))
        return pulumi.Output.all(keys, secret).apply(lambda got: _expect(got[0], got[1], pem))

    check()


def _expect(keys: list[str], secret: list[bool], pem: str) -> None:
    """Both keys are the PEM, and secret."""
    assert keys == [pem, pem] and secret == [True, True]


def _leaf_inputs(issuer: dict[str, Any]) -> dict[str, Any]:
    """A self-hosted shoot's certificate's inputs (it writes no Secret), issued from `issuer`."""
    return {**issuer, "caKey": packed_keys.compacted(ca().key), "commonName": "kubelet", "usages": ["client"],
            "validitySeconds": 365 * 86400, "rotation": 0, "version": issuing.PROVIDER_VERSION}  # fmt: skip


def test_a_certificate_writing_no_secret_keeps_its_cas_subject_not_its_certificate_and_is_issued_by_it() -> None:
    """GIVEN a self-hosted certificate's inputs WHEN checked, then created THEN its CA's subject, verified against it.

    The state keeps the CA's subject and hash, not its certificate, which the CA's own resource holds.
    """
    provider = issuing.CertificateProvider()
    checked = provider.check({}, _leaf_inputs({"caCert": ca().cert})).inputs
    assert "caCert" not in checked and checked["caHash"] == ca_source.ca_hash(ca().cert)
    assert checked[ca_source.CA_SUBJECT] == signing.subject_of(ca().cert)
    outs = provider.create(checked).outs or {}
    x509.load_pem_x509_certificate(outs["cert"].encode()).verify_directly_issued_by(
        x509.load_pem_x509_certificate(ca().cert.encode())
    )
    assert ca_source.CA_SUBJECT not in outs and outs["caHash"] == ca_source.ca_hash(ca().cert)
    # One that writes its Secret keeps the CA's certificate: the Secret's `ca.crt` is written from it.
    writing = {**_leaf_inputs({"caCert": ca().cert}), "kubeconfig": "k", "namespace": "n", "secrets": {"s": {}}}
    assert provider.check({}, writing).inputs == writing


def test_an_older_certificate_given_its_cas_certificate_is_no_change_and_a_new_ca_replaces_it() -> None:
    """GIVEN a certificate issued with its CA's certificate WHEN its inputs are checked THEN no change.

    Another CA (its hash) replaces it, as a new CA always has (`caCert`).
    """
    provider = issuing.CertificateProvider()
    older = provider.create(_leaf_inputs({"caCert": ca().cert})).outs or {}
    checked = provider.check({}, _leaf_inputs({"caCert": ca().cert})).inputs
    assert not provider.diff("id", older, checked).changes
    assert provider.diff("id", older, {**checked, "caHash": "0" * 16}).replaces == ["caCert"]


def test_a_subject_that_would_not_encode_as_its_certificates_is_refused() -> None:
    """GIVEN a subject whose DER hash is not the one given WHEN named THEN a clear error, not a wrong issuer."""
    text = signing.subject_of(ca().cert)
    assert signing.named(text).rfc4514_string() == "CN=ca"
    with pytest.raises(ValueError, match="does not encode as its certificate's"):
        signing.named(text.rsplit("#", 1)[0] + "#" + "0" * 16)
