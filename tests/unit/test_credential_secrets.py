"""A hosted shoot's credentials write their own Secrets: content once in the state, the Secrets as hashes."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from cryptography import x509

from components.reconciler import ca_source, credential_secrets, pki, signing
from components.reconciler.kube import Kube, KubeError
from components.render import objects, packed_keys
from tests.unit.test_shoot_state import SeedSecrets

NAMESPACE = "shoot--dev--web"
COLLECTION = f"/api/v1/namespaces/{NAMESPACE}/secrets"
LEAF = {"etcd-peer": {"ca.crt": "caCert", "tls.crt": "cert", "tls.key": "key"}}
# Long enough that no renewal is due while a test runs.
YEAR_S = 365 * 24 * 3600


class Cluster:
    """Secrets by path, as the API keeps them: each write a new resourceVersion; deletes honour preconditions."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.version = 0

    def find(self, path: str) -> Any:
        return self.objects.get(path)

    def create_or_replace(self, collection: str, body: Any) -> None:
        self.version += 1
        metadata = {**body["metadata"], "resourceVersion": str(self.version)}
        self.objects[f"{collection}/{body['metadata']['name']}"] = {**body, "metadata": metadata}

    def delete_if(self, path: str, resource_version: str | None) -> None:
        current = self.objects.get(path)
        if current is not None and current["metadata"]["resourceVersion"] != resource_version:
            raise KubeError("precondition failed", 409)
        self.objects.pop(path, None)

    def delete(self, path: str) -> None:
        self.objects.pop(path, None)

    def data(self, name: str) -> dict[str, str]:
        """A Secret's data, decoded."""
        raw = self.objects[f"{COLLECTION}/{name}"]["data"]
        return {k: base64.b64decode(v).decode() for k, v in raw.items()}


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Cluster:
    """A seed whose API is the in-memory Cluster."""
    fake = Cluster()
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: fake))
    return fake


def leaf_inputs(ca: signing.Issued, layout: dict[str, Any] = LEAF) -> dict[str, Any]:
    """A leaf certificate's inputs as the program sends them, writing `layout` in the seed namespace."""
    props = {"caCert": ca.cert, "caKey": ca.key, "commonName": "etcd-peer", "organizations": [], "dnsNames": ["a"],
             "ipAddresses": [], "usages": ["server", "client"], "validitySeconds": YEAR_S, "rotation": 0,
             "version": pki.PROVIDER_VERSION}  # fmt: skip
    return credential_secrets.writing(props, {"kubeconfig": "k", "namespace": NAMESPACE, "secrets": layout})


@pytest.fixture(scope="module")
def ca() -> signing.Issued:
    """An issuing CA."""
    return signing.self_signed_ca("etcd", 3600)


def test_a_leaf_writes_its_secret_and_the_state_keeps_hashes_not_copies(cluster: Cluster, ca: signing.Issued) -> None:
    """GIVEN a leaf with a Secret to write WHEN created THEN the Secret holds it and the state holds only its hash."""
    provider = pki.CertificateProvider()
    outs = provider.create(leaf_inputs(ca)).outs or {}

    key = packed_keys.expanded(outs["key"])
    assert cluster.data("etcd-peer") == {"ca.crt": ca.cert, "tls.crt": outs["cert"], "tls.key": key}
    assert set(outs["writtenHashes"]) == {"etcd-peer"}
    # The key is once in the outputs (the credential, as its primes), never as a Secret's data again; the CA not at
    # all (a hash).
    state = json.dumps(outs)
    assert state.count(outs["key"].strip()) == 1 and key.splitlines()[1] not in state
    assert ca.key.splitlines()[1] not in state
    assert ca.cert.splitlines()[1] not in state and outs["caHash"] == ca_source.ca_hash(ca.cert)


def test_an_older_state_with_the_ca_certificate_is_kept_and_leaned_on_refresh(
    cluster: Cluster, ca: signing.Issued
) -> None:
    """GIVEN a leaf's state that kept its CA's certificate WHEN refreshed and diffed THEN no change, and no copy."""
    provider = pki.CertificateProvider()
    inputs = leaf_inputs(ca)
    outs = provider.create(inputs).outs or {}
    older = {k: v for k, v in outs.items() if k != "caHash"} | {"caCert": ca.cert}
    assert not provider.diff("id", older, inputs).changes
    read = provider.read("id", older).outs or {}
    assert "caCert" not in read and read["caHash"] == outs["caHash"]
    assert not provider.diff("id", read, inputs).changes
    assert provider.diff("id", read, {**inputs, "caCert": signing.self_signed_ca("etcd", 3600).cert}).replaces == [
        "caCert"
    ]


@pytest.mark.parametrize(
    ("change", "drift"),
    [
        ("none", False),
        ("edited", True),
        ("deleted", True),
        ("another key added", False),
    ],
)
def test_a_secret_changed_in_the_cluster_is_drift_that_issues_the_certificate_again(
    cluster: Cluster, ca: signing.Issued, change: str, drift: bool
) -> None:
    """GIVEN a written leaf WHEN its Secret is edited or deleted and refreshed THEN it is replaced (reason `secret`)."""
    provider = pki.CertificateProvider()
    inputs = leaf_inputs(ca)
    outs = provider.create(inputs).outs or {}
    path = f"{COLLECTION}/etcd-peer"
    if change == "edited":
        cluster.objects[path]["data"]["tls.crt"] = base64.b64encode(b"x").decode()
    elif change == "deleted":
        del cluster.objects[path]
    elif change == "another key added":
        cluster.objects[path]["data"]["extra"] = "eA=="

    read = provider.read("id", outs).outs or {}
    diff = provider.diff("id", read, inputs)
    assert diff.changes is drift and diff.replaces == (["secret"] if drift else [])


def test_a_certificate_issued_before_it_wrote_its_secret_is_left_as_it_is(cluster: Cluster, ca: signing.Issued) -> None:
    """GIVEN a leaf issued by an older arbor (no Secret of its own) WHEN given one to write THEN no change."""
    provider = pki.CertificateProvider()
    inputs = leaf_inputs(ca)
    older = {k: v for k, v in inputs.items() if k not in (*credential_secrets.INPUTS, credential_secrets.OUTPUT)}
    outs = provider.create(older).outs or {}
    assert cluster.objects == {} and provider.read("id", outs).outs == outs
    assert not provider.diff("id", outs, inputs).changes
    # A new logic version updates it in place: from then on it writes its Secret, with the same certificate.
    updated = provider.update("id", outs, {**inputs, "version": "next"}).outs or {}
    assert cluster.data("etcd-peer")["tls.crt"] == outs["cert"] == updated["cert"]


def test_a_replaced_leaf_leaves_its_successors_secret_alone(cluster: Cluster, ca: signing.Issued) -> None:
    """GIVEN a renewal (create the new, then delete the old) WHEN the old is deleted THEN the new Secret stays."""
    provider = pki.CertificateProvider()
    old = provider.create(leaf_inputs(ca)).outs or {}
    new = provider.create(leaf_inputs(ca)).outs or {}
    provider.delete("old", old)
    assert cluster.data("etcd-peer")["tls.crt"] == new["cert"] != old["cert"]
    # The last one deleted takes its Secret with it.
    provider.delete("new", new)
    assert cluster.objects == {}


def test_a_secret_moved_elsewhere_issues_the_certificate_again_and_the_kubeconfig_alone_does_not(
    cluster: Cluster, ca: signing.Issued
) -> None:
    """GIVEN a written leaf WHEN its namespace, layout or seed changes THEN replaced; a kubeconfig alone does not."""
    provider = pki.CertificateProvider()
    inputs = leaf_inputs(ca)
    outs = provider.create(inputs).outs or {}
    assert provider.diff("id", outs, {**inputs, "namespace": "elsewhere"}).replaces == ["secret"]
    renamed = {"etcd-peer-2": LEAF["etcd-peer"]}
    assert provider.diff("id", outs, {**inputs, "secrets": renamed}).replaces == ["secret"]
    assert not provider.diff("id", outs, {**inputs, "kubeconfig": "another"}).changes
    # Another seed (a control plane moved): issued again there; a state from before seeds were named is not moved.
    on_seed = provider.create({**inputs, "cluster": "local:local-1"}).outs or {}
    assert provider.diff("id", on_seed, {**inputs, "cluster": "local:local-2"}).replaces == ["secret"]
    assert not provider.diff("id", on_seed, {**inputs, "cluster": "local:local-1", "kubeconfig": "other"}).changes
    assert not provider.diff("id", outs, {**inputs, "cluster": "local:local-1"}).changes


def test_an_unpublished_leaf_keeps_no_content_and_its_checksums_stand_for_it(
    cluster: Cluster, ca: signing.Issued
) -> None:
    """GIVEN a leaf only its Secret needs WHEN created, read and updated THEN the state keeps checksums, no PEM."""
    provider = pki.CertificateProvider()
    inputs = {**leaf_inputs(ca), "published": False}
    outs = provider.create(inputs).outs or {}
    secret = cluster.data("etcd-peer")
    assert "key" not in outs and "cert" not in outs and secret["tls.key"] not in json.dumps(outs)
    # The checksum a workload mounting the Secret is annotated with, as if from the content itself.
    assert outs["checksums"] == {"etcd-peer": objects.checksum(secret)}
    read = provider.read("id", outs).outs or {}
    assert read["checksums"] == outs["checksums"] and not provider.diff("id", read, inputs).changes
    # A new logic version: an update that keeps it (its Secret still holds it).
    updated = provider.update("id", read, {**inputs, "version": "next"}).outs or {}
    assert updated["checksums"] == outs["checksums"] and cluster.data("etcd-peer") == secret
    # Published again, the content must come from somewhere: it is issued again.
    assert provider.diff("id", read, {**inputs, "published": True}).replaces == ["published"]


def test_a_published_leaf_becoming_unpublished_is_updated_in_place(cluster: Cluster, ca: signing.Issued) -> None:
    """GIVEN a leaf whose state keeps its content WHEN no longer published THEN an update drops it, same checksums."""
    provider = pki.CertificateProvider()
    inputs = leaf_inputs(ca)
    outs = provider.create(inputs).outs or {}
    older = {k: v for k, v in outs.items() if k != "checksums"}  # as an older arbor kept it
    unpublished = {**inputs, "published": False}
    diff = provider.diff("id", older, unpublished)
    assert diff.changes and diff.replaces == []
    updated = provider.update("id", older, unpublished).outs or {}
    assert "key" not in updated and updated["checksums"] == {"etcd-peer": objects.checksum(cluster.data("etcd-peer"))}
    assert cluster.data("etcd-peer")["tls.crt"] == outs["cert"]


def signer_inputs(ca: signing.Issued) -> dict[str, Any]:
    """A hosted leaf's inputs as the program sends them now: its CA named by its signer Secret and hash."""
    props = {k: v for k, v in leaf_inputs(ca).items() if k not in ("caCert", "caKey")}
    return {**props, ca_source.CA_SECRET: "ca-etcd-signer", "caHash": ca_source.ca_hash(ca.cert)}


def write_signer(cluster: Cluster, ca: signing.Issued) -> None:
    """The CA's signer Secret in the seed namespace, as the shoot's SecretSet writes it."""
    data = {"ca.crt": ca.cert, "ca.key": ca.key}
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
    cluster.create_or_replace(COLLECTION, {"metadata": {"name": "ca-etcd-signer", "namespace": NAMESPACE},
                                           "data": encoded})  # fmt: skip


def test_a_hosted_leaf_is_issued_from_its_cas_signer_secret_and_keeps_no_copy(
    cluster: Cluster, ca: signing.Issued
) -> None:
    """GIVEN the CA's signer Secret WHEN a leaf names it THEN it is signed by that CA; its inputs hold no CA key."""
    write_signer(cluster, ca)
    inputs = signer_inputs(ca)
    outs = pki.CertificateProvider().create(inputs).outs or {}
    issued = x509.load_pem_x509_certificate(cluster.data("etcd-peer")["tls.crt"].encode())
    assert issued.issuer == x509.load_pem_x509_certificate(ca.cert.encode()).subject
    assert cluster.data("etcd-peer")["ca.crt"] == ca.cert
    for text in (json.dumps(inputs), json.dumps(outs)):
        assert ca.key.splitlines()[1] not in text and ca.cert.splitlines()[1] not in text
    # A leaf of an older state (its CA given) is the same CA: no change; a new CA's hash replaces it.
    provider = pki.CertificateProvider()
    assert not provider.diff("id", provider.create(leaf_inputs(ca)).outs or {}, inputs).changes
    other = signing.self_signed_ca("etcd", 3600)
    assert provider.diff("id", outs, {**inputs, "caHash": ca_source.ca_hash(other.cert)}).replaces == ["caCert"]


@pytest.mark.parametrize("signer", ["missing", "another CA"])
def test_a_leaf_is_not_issued_from_a_signer_secret_that_is_not_its_ca(
    cluster: Cluster, ca: signing.Issued, signer: str
) -> None:
    """GIVEN a missing signer Secret, or one of another CA WHEN the leaf is issued THEN it fails, naming the Secret."""
    if signer == "another CA":
        write_signer(cluster, signing.self_signed_ca("etcd", 3600))
    with pytest.raises(KubeError, match=f"{NAMESPACE}/ca-etcd-signer"):
        pki.CertificateProvider().create(signer_inputs(ca))
    assert f"{COLLECTION}/etcd-peer" not in cluster.objects


class _Unreachable:
    """A cluster that does not answer."""

    def find(self, path: str) -> None:
        """Never."""
        raise KubeError("connection refused")


@pytest.mark.parametrize(
    ("held", "error"),
    [
        (SeedSecrets({"s": {"a": "1", "b": "2"}}), None),
        (SeedSecrets({"s": {"a": "1"}}), "Secret ns/s has no b"),
        (SeedSecrets({}), "Secret ns/s is missing"),
        (_Unreachable(), "reading Secret ns/s: connection refused"),
    ],
)
def test_another_secrets_keys_are_read_or_a_line_names_the_secret(
    held: Any, error: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a Secret in the namespace WHEN some of its keys are read THEN them, or one line naming the Secret."""
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: held))
    where = {"kubeconfig": "kubeconfig-file:/seed", "namespace": "ns"}
    if error is None:
        assert credential_secrets.secret_keys(where, "s", ["a", "b"]) == {"a": "1", "b": "2"}
        return
    with pytest.raises(KubeError) as raised:
        credential_secrets.secret_keys(where, "s", ["a", "b"])
    assert str(raised.value) == error
