"""LeafSet: a hosted shoot's leaves as one resource; check() decides when each is issued, so previews are exact."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest
from cryptography import x509
from pulumi.runtime import rpc

from components.reconciler import leaf_set, signing
from components.reconciler.ca_source import ca_hash
from components.render import pki
from tests.unit.test_credential_secrets import COLLECTION, NAMESPACE, Cluster, cluster  # noqa: F401 - a fixture

DAY = 24 * 3600
CA = signing.self_signed_ca("etcd", 3650 * DAY)
LAYOUT = {"ca.crt": "caCert", "tls.crt": "cert", "tls.key": "key"}


def _leaf(name: str, **spec: Any) -> dict[str, Any]:
    """A leaf's inputs as the program gives them."""
    return {"ca": "ca-etcd", "commonName": name, "organizations": [], "dnsNames": [name], "ipAddresses": [],
            "usages": ["server"], "validitySeconds": 90 * DAY, "rotation": 0, "secrets": {name: LAYOUT},
            **spec}  # fmt: skip


def _news(**leaves: dict[str, Any]) -> dict[str, Any]:
    """A LeafSet's new inputs: two etcd leaves unless told otherwise."""
    leaves = leaves or {"etcd-peer": _leaf("etcd-peer"), "etcd-server": _leaf("etcd-server")}
    cas = {"ca-etcd": {"secret": "ca-etcd-signer", "hash": ca_hash(CA.cert), "spec": "etcd/315360000/0"}}
    return {"kubeconfig": "k", "namespace": NAMESPACE, "cluster": "local:seed", "cas": cas, "leaves": leaves,
            "version": leaf_set.PROVIDER_VERSION}  # fmt: skip


def _checked(olds: dict[str, Any], news: dict[str, Any]) -> dict[str, Any]:
    """The inputs check() gives the engine."""
    return leaf_set.LeafSetProvider().check(olds, news).inputs


@pytest.fixture
def seed(cluster: Cluster) -> Cluster:  # noqa: F811 - the fixture it extends
    """A seed namespace holding the etcd CA's signer Secret, as the SecretSet writes it."""
    data = {pki.KEY_CA_CERT: CA.cert, pki.KEY_CA_KEY: CA.key}
    cluster.create_or_replace(COLLECTION, {"metadata": {"name": "ca-etcd-signer"}, "data": _b64(data)})
    return cluster


def _b64(data: dict[str, str]) -> dict[str, str]:
    """Secret data as the API keeps it."""
    return {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}


def test_check_keeps_when_a_stable_leaf_was_issued_and_issues_a_changed_one_now() -> None:
    """GIVEN issued leaves WHEN checked again THEN the same issue times and checksums; one changed leaf alone moves."""
    first = _checked({}, _news())
    assert set(first[leaf_set.ISSUED]) == {"etcd-peer", "etcd-server"}
    assert set(first[leaf_set.CHECKSUMS]) == {"etcd-peer", "etcd-server"}
    again = _checked(first, _news())
    assert again[leaf_set.ISSUED] == first[leaf_set.ISSUED] and again[leaf_set.CHECKSUMS] == first[leaf_set.CHECKSUMS]
    old = {**first, leaf_set.ISSUED: {k: v - 10 for k, v in first[leaf_set.ISSUED].items()}}
    changed = _news(
        **{"etcd-peer": _leaf("etcd-peer", dnsNames=["etcd-peer", "more"]), "etcd-server": _leaf("etcd-server")}
    )
    moved = _checked(old, changed)
    assert moved[leaf_set.ISSUED]["etcd-server"] == old[leaf_set.ISSUED]["etcd-server"]
    assert moved[leaf_set.ISSUED]["etcd-peer"] != old[leaf_set.ISSUED]["etcd-peer"]


def test_a_due_leaf_is_issued_again_and_only_its_checksum_changes() -> None:
    """GIVEN a leaf issued 80 days ago (of 90) WHEN checked THEN it is issued now; the other keeps its checksum."""
    first = _checked({}, _news())
    old = copy.deepcopy(first)
    old[leaf_set.ISSUED]["etcd-peer"] -= 80 * DAY
    old[leaf_set.CHECKSUMS] = leaf_set.checksums(old, old[leaf_set.ISSUED])
    got = _checked(old, _news())
    assert got[leaf_set.ISSUED]["etcd-peer"] > old[leaf_set.ISSUED]["etcd-peer"]
    assert got[leaf_set.CHECKSUMS]["etcd-peer"] != old[leaf_set.CHECKSUMS]["etcd-peer"]
    assert got[leaf_set.CHECKSUMS]["etcd-server"] == old[leaf_set.CHECKSUMS]["etcd-server"]


def test_a_ca_rotation_issues_its_leaves_again_and_a_preview_knows_every_checksum() -> None:
    """GIVEN the CA's spec rotated and its hash unknown (a preview) WHEN checked THEN its leaves move, all known."""
    old = copy.deepcopy(_checked({}, _news()))
    old[leaf_set.ISSUED] = {k: v - 10 for k, v in old[leaf_set.ISSUED].items()}
    news = _news()
    news["cas"]["ca-etcd"] = {**news["cas"]["ca-etcd"], "hash": rpc.UNKNOWN, "spec": "etcd/315360000/1"}
    got = _checked(old, news)
    assert all(got[leaf_set.ISSUED][k] != old[leaf_set.ISSUED][k] for k in old[leaf_set.ISSUED])
    assert all(isinstance(v, str) and len(v) == 64 for v in got[leaf_set.CHECKSUMS].values())
    # An unknown hash of an unchanged CA (its outputs being refreshed) issues nothing.
    news = _news()
    news["cas"]["ca-etcd"] = {**news["cas"]["ca-etcd"], "hash": rpc.UNKNOWN}
    assert _checked(old, news)[leaf_set.ISSUED] == old[leaf_set.ISSUED]


def test_create_writes_every_leaf_from_its_ca_and_keeps_no_certificate_or_key(seed: Cluster) -> None:
    """GIVEN the CA's signer Secret WHEN created THEN each Secret holds a leaf its CA signed; the state only hashes."""
    props = _checked({}, _news())
    outs = leaf_set.LeafSetProvider().create(props).outs
    assert outs is not None
    peer = seed.data("etcd-peer")
    x509.load_pem_x509_certificate(peer["tls.crt"].encode()).verify_directly_issued_by(
        x509.load_pem_x509_certificate(CA.cert.encode())
    )
    assert peer["ca.crt"] == CA.cert
    assert set(outs[leaf_set.WRITTEN]) == {"etcd-peer", "etcd-server"}
    assert "BEGIN" not in str(outs)
    # The leaves' specs are kept once, in the inputs; the outputs keep which leaf writes each Secret, and how.
    assert "leaves" not in outs and outs[leaf_set.SECRETS]["etcd-peer"] == {"leaf": "etcd-peer", "layout": LAYOUT}


def test_drift_issues_that_leaf_again_keeping_its_checksum_and_the_other_untouched(seed: Cluster) -> None:
    """GIVEN a Secret deleted in the seed WHEN refreshed and updated THEN that leaf is written again, nothing else."""
    provider = leaf_set.LeafSetProvider()
    props = _checked({}, _news())
    outs = provider.create(props).outs
    assert outs is not None
    server = seed.data("etcd-server")
    seed.delete(f"{COLLECTION}/etcd-peer")
    read = provider.read("id", outs).outs
    # The read keeps the hash of what differs only ("" gone); an older state's read kept every Secret's.
    assert read is not None and read[leaf_set.FOUND] == {"etcd-peer": ""}
    news = _checked(props, _news())
    assert provider.diff("id", read, news).changes
    older = {**read, leaf_set.FOUND: {**outs[leaf_set.WRITTEN], "etcd-peer": ""}}
    assert leaf_set._drifted(older) == leaf_set._drifted(read) == {"etcd-peer"}
    assert leaf_set._drifted({**read, leaf_set.FOUND: dict(outs[leaf_set.WRITTEN])}) == set()
    updated = provider.update("id", read, news).outs
    assert updated is not None and updated[leaf_set.CHECKSUMS] == outs[leaf_set.CHECKSUMS]
    assert seed.data("etcd-server") == server and "tls.key" in seed.data("etcd-peer")
    again = provider.read("id", updated).outs
    assert again is not None and not provider.diff("id", again, _checked(news, _news())).changes


def test_a_dropped_leaf_takes_its_secret_and_delete_takes_the_rest(seed: Cluster) -> None:
    """GIVEN two leaves WHEN one is no longer named THEN its Secret goes; WHEN deleted THEN the other's goes too."""
    provider = leaf_set.LeafSetProvider()
    outs = provider.create(_checked({}, _news())).outs
    assert outs is not None
    news = _checked(outs, _news(**{"etcd-server": _leaf("etcd-server")}))
    assert provider.diff("id", outs, news).changes
    updated = provider.update("id", outs, news).outs
    assert updated is not None
    assert f"{COLLECTION}/etcd-peer" not in seed.objects and f"{COLLECTION}/etcd-server" in seed.objects
    provider.delete("id", updated)
    assert set(seed.objects) == {f"{COLLECTION}/ca-etcd-signer"}
