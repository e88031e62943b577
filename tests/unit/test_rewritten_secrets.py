"""A hosted shoot's CAs, keys and token write their own Secrets and write them again, never generated again."""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.checks import parse_landscape
from components.plan.planner import plan_landscape
from components.reconciler import credential_secrets, pki, secret_set
from components.reconciler.kube import Kube
from components.render import controlplane, packed_keys
from components.render import pki as pki_table
from components.render.packing import pack
from tests.unit.landscape_mocks import registered
from tests.unit.spec_cases import base
from tests.unit.test_credential_secrets import COLLECTION, NAMESPACE, Cluster

# A CA whose key a component signs with: its certificate for everyone, and its signer Secret with the key.
CA_LAYOUT = {"ca-client": {"ca.crt": "cert"}, "ca-client-signer": {"ca.crt": "cert", "ca.key": "key"}}
WHERE = {"kubeconfig": "k", "namespace": NAMESPACE, "secrets": CA_LAYOUT, "cluster": "local:seed"}
CA_INPUTS = {"commonName": "kubernetes-client", "validitySeconds": 3600, "rotation": 0, "version": pki.PROVIDER_VERSION,
             "cert": None, "key": None, "notBefore": None, "notAfter": None}  # fmt: skip
PROVIDER = pki.CertificateAuthorityProvider()


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Cluster:
    """A seed whose API is the in-memory Cluster."""
    fake = Cluster()
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: fake))
    return fake


def ca_inputs(**where: Any) -> dict[str, Any]:
    """A hosted CA's inputs as the program sends them, writing its two Secrets where `where` says."""
    return credential_secrets.writing(dict(CA_INPUTS), {**WHERE, **where})


def created() -> tuple[dict[str, Any], dict[str, Any]]:
    """A CA created and refreshed: its outputs and the inputs the next `check` makes."""
    outs = PROVIDER.create(ca_inputs()).outs or {}
    read = PROVIDER.read("id", outs)
    assert read.outs is not None and read.inputs is not None
    return read.outs, PROVIDER.check(read.inputs, ca_inputs()).inputs


def test_a_ca_writes_its_secrets_and_keeps_its_key_once(cluster: Cluster) -> None:
    """GIVEN a hosted CA WHEN created THEN its Secrets hold it, its outputs keep the key and the checksums."""
    outs, news = created()
    key = packed_keys.expanded(outs["key"])
    assert cluster.data("ca-client-signer") == {"ca.crt": outs["cert"], "ca.key": key}
    assert cluster.data("ca-client") == {"ca.crt": outs["cert"]}
    assert set(outs[credential_secrets.CHECKSUMS]) == set(CA_LAYOUT)
    assert news["key"] is None and news["cert"] == outs["cert"]
    assert news[credential_secrets.CHECKSUMS] == outs[credential_secrets.CHECKSUMS]
    assert not PROVIDER.diff("id", outs, news).changes
    # Only Secrets that differ from those written have a found hash; an older state kept every one's.
    assert outs[credential_secrets.FOUND] == {}
    older = {**outs, credential_secrets.FOUND: dict(outs[credential_secrets.OUTPUT])}
    assert not PROVIDER.diff("id", older, news).changes


@pytest.mark.parametrize("change", ["deleted", "edited", "moved", "another seed"])
def test_a_drifted_or_moved_secret_is_written_again_never_a_new_ca(cluster: Cluster, change: str) -> None:
    """GIVEN a hosted CA WHEN its Secret drifts or goes elsewhere THEN an update writes the same CA there, previewed."""
    outs, news = created()
    if change == "deleted":
        del cluster.objects[f"{COLLECTION}/ca-client-signer"]
    elif change == "edited":
        cluster.objects[f"{COLLECTION}/ca-client"]["data"]["ca.crt"] = "eA=="
    elif change == "moved":
        news = {**news, "namespace": "shoot--dev--other"}
    else:
        news = {**news, "cluster": "local:other"}
    outs = PROVIDER.read("id", outs).outs or {}
    diff = PROVIDER.diff("id", outs, news)
    assert diff.changes and not diff.replaces
    assert news["cert"] == outs["cert"]  # what the engine previews the update's outputs as
    updated = PROVIDER.update("id", outs, news).outs or {}
    assert (updated["cert"], updated["key"]) == (outs["cert"], outs["key"])
    namespace = news["namespace"]
    data = cluster.objects[f"/api/v1/namespaces/{namespace}/secrets/ca-client-signer"]["data"]
    assert (
        credential_secrets.content_hash(data, CA_LAYOUT["ca-client-signer"])
        == updated["writtenHashes"]["ca-client-signer"]
    )
    if change == "moved":
        assert f"{COLLECTION}/ca-client-signer" not in cluster.objects
    assert not PROVIDER.diff("id", PROVIDER.read("id", updated).outs or {}, news).changes


def test_a_ca_the_secret_set_wrote_starts_writing_them_itself(cluster: Cluster) -> None:
    """GIVEN an older arbor's CA, its SecretSet writing its Secrets WHEN it writes them THEN the set hands them over."""
    older = PROVIDER.create(dict(CA_INPUTS)).outs or {}
    key = packed_keys.expanded(older["key"])
    contents = {"ca-client": {"ca.crt": older["cert"]}, "ca-client-signer": {"ca.crt": older["cert"], "ca.key": key}}
    set_inputs = {"kubeconfig": "k", "namespace": NAMESPACE, "version": secret_set.PROVIDER_VERSION}
    provider = secret_set.SecretSetProvider()
    set_outs = provider.create({**set_inputs, "secrets": pack(contents)}).outs or {}
    news = PROVIDER.check(PROVIDER.read("id", older).inputs or {}, ca_inputs()).inputs
    # Its certificate stays known to the update's preview; it had no checksums to carry.
    assert news["cert"] == older["cert"] and news[credential_secrets.CHECKSUMS] is None
    diff = PROVIDER.diff("id", older, news)
    assert diff.changes and not diff.replaces
    updated = PROVIDER.update("id", older, news).outs or {}
    assert (updated["cert"], updated["key"]) == (older["cert"], older["key"])
    provider.update("id", set_outs, {**set_inputs, "secrets": pack({}), "others": sorted(CA_LAYOUT)})
    assert cluster.data("ca-client-signer") == contents["ca-client-signer"]
    recorded = json.dumps(PROVIDER.read("id", updated).inputs)
    assert key not in recorded and str(older["key"]) not in recorded


def test_a_rotation_replaces_the_ca_and_carries_nothing(cluster: Cluster) -> None:
    """GIVEN a hosted CA WHEN its rotation counter moves THEN it is replaced and nothing of the old one is carried."""
    outs, _ = created()
    rotated = PROVIDER.check(PROVIDER.read("id", outs).inputs or {}, {**ca_inputs(), "rotation": 1}).inputs
    assert rotated["cert"] is None and rotated[credential_secrets.CHECKSUMS] is None
    assert PROVIDER.diff("id", outs, rotated).replaces == ["rotation"]


def test_a_hosted_shoots_secret_set_keeps_no_credential_and_each_writes_its_own() -> None:
    """GIVEN the local landscape WHEN registered THEN a hosted shoot's SecretSet keeps no credential, each its own."""
    built, mocks = registered(plan_landscape(parse_landscape(base()), "local"))
    prefix = "arbor-shoot-dev-web"
    kept = mocks.inputs[f"{prefix}-secrets"]
    contents = secret_set.contents({"secrets": kept["secrets"].get("value", kept["secrets"])})
    assert contents == {}
    writers = {
        f"{prefix}-pki-{c.name}": pki_table.secrets_of(c)
        for c in pki_table.credentials("shoot--dev--web", ("100.104.0.0/13",))
        if c.kind is not pki_table.Kind.CERT
    }
    # The encryption configuration by its keys (the shoot has no entry, so no EntrySecret).
    writers[f"{prefix}-encryption-keys"] = {controlplane.ENCRYPTION_SECRET: (controlplane.ENCRYPTION_KEY,)}
    assert set(kept["others"]) == {s for secrets in writers.values() for s in secrets}
    for name, secrets in writers.items():
        assert set(mocks.inputs[name]["secrets"]) == set(secrets), name
        assert mocks.inputs[name]["namespace"] == "shoot--dev--web", name
        # It writes in the seed namespace, so it waits for it.
        assert any("shoot--dev--web" in dep for dep in built.edges[name]), (name, built.edges[name])


KINDS = [
    (pki.ServiceAccountKeyProvider(), {"rotation": 0, "version": "1", "privateKey": None, "publicKey": None},
     {"service-account-key": {"id_rsa": "privateKey", "id_rsa.pub": "publicKey"}}, ("publicKey",), "privateKey"),
    (pki.BootstrapTokenProvider(), {"rotation": 0, "version": "1", "tokenId": None, "tokenSecret": None},
     {"bootstrap-token": {"token-id": "tokenId", "token-secret": "tokenSecret"}}, ("tokenId",), "tokenSecret"),
    (PROVIDER, CA_INPUTS, CA_LAYOUT, ("cert", "notBefore", "notAfter"), "key"),
]  # fmt: skip


@pytest.mark.parametrize(("provider", "inputs", "layout", "public", "private"), KINDS)
def test_a_refresh_records_the_public_outputs_and_check_carries_them_where_it_writes(
    cluster: Cluster,
    provider: pki._Credential,
    inputs: dict[str, Any],
    layout: dict[str, Any],
    public: tuple[str, ...],
    private: str,
) -> None:
    """GIVEN a refreshed CA, key or token WHEN checked THEN its public outputs are carried where it writes Secrets."""
    hosted = credential_secrets.writing(dict(inputs), {**WHERE, "secrets": layout})
    outs = provider.create(hosted).outs or {}
    recorded = provider.read("id", outs).inputs or {}
    carried = (*public, credential_secrets.CHECKSUMS)
    assert {k: recorded[k] for k in carried} == {k: outs[k] for k in carried}
    assert recorded[private] is None and credential_secrets.FOUND not in recorded
    news = provider.check(recorded, {**hosted, "version": "next"}).inputs
    assert {k: news[k] for k in carried} == {k: outs[k] for k in carried} and news[private] is None
    assert provider.check(recorded, dict(hosted)).inputs == recorded
    assert provider.check(recorded, {**hosted, "rotation": 1}).inputs == {**hosted, "rotation": 1}
    assert provider.check({}, dict(hosted)).inputs == hosted
    # Self-hosted (no Secrets to write): no second copy in the state.
    assert provider.check(recorded, dict(inputs)).inputs == inputs
