"""SecretSet: a namespace's Secrets written from their contents, each content once in the state, drift by hash."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from pulumi.runtime import rpc

from components.reconciler import secret_set
from components.reconciler.kube import Kube
from components.render.packing import pack
from tests.unit.test_credential_secrets import COLLECTION, NAMESPACE, Cluster

SECRETS = {"ca": {"ca.crt": "CERT"}, "service-account-key": {"id_rsa": "PRIVATE", "id_rsa.pub": "PUBLIC"}}


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Cluster:
    """A seed whose API is the in-memory Cluster."""
    fake = Cluster()
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: fake))
    return fake


def inputs(secrets: dict[str, dict[str, str]] = SECRETS, packed: bool = True) -> dict[str, Any]:
    """The resource's inputs as the program sends them (its contents packed), or as an older arbor kept them."""
    kept = pack(secrets) if packed else secrets
    return {"kubeconfig": "k", "namespace": NAMESPACE, "secrets": kept, "version": secret_set.PROVIDER_VERSION}


def test_every_secret_is_written_and_the_state_keeps_hashes_not_contents(cluster: Cluster) -> None:
    """GIVEN two Secrets WHEN created THEN both are in the namespace, and the outputs hold no content."""
    provider = secret_set.SecretSetProvider()
    outs = provider.create(inputs()).outs or {}
    assert cluster.data("service-account-key") == SECRETS["service-account-key"]
    assert set(outs["hashes"]) == set(SECRETS) and "PRIVATE" not in json.dumps(outs) and "secrets" not in outs
    assert not provider.diff("id", provider.read("id", outs).outs or {}, inputs()).changes


@pytest.mark.parametrize("change", ["edited", "deleted", "content changed", "one dropped"])
def test_drift_or_a_new_content_is_an_update_that_writes_them(cluster: Cluster, change: str) -> None:
    """GIVEN written Secrets WHEN one is edited or deleted, or the contents change THEN `up` writes them."""
    provider = secret_set.SecretSetProvider()
    outs = provider.create(inputs()).outs or {}
    news = inputs()
    if change == "edited":
        cluster.objects[f"{COLLECTION}/ca"]["data"]["ca.crt"] = base64.b64encode(b"x").decode()
    elif change == "deleted":
        del cluster.objects[f"{COLLECTION}/ca"]
    elif change == "content changed":
        news = inputs({**SECRETS, "ca": {"ca.crt": "NEW"}})
    else:
        news = inputs({"ca": SECRETS["ca"]})
    read = provider.read("id", outs).outs or {}
    assert provider.diff("id", read, news).changes
    updated = provider.update("id", read, news).outs or {}
    assert {p.rsplit("/", 1)[-1] for p in cluster.objects} == set(secret_set.contents(news))
    assert not provider.diff("id", provider.read("id", updated).outs or {}, news).changes


@pytest.mark.parametrize("unknown", ["all", "one"])
def test_contents_unknown_in_a_preview_are_a_change_not_an_error(cluster: Cluster, unknown: str) -> None:
    """GIVEN written Secrets WHEN a preview sends contents still unknown (a CA being rotated) THEN a change."""
    provider = secret_set.SecretSetProvider()
    outs = provider.create(inputs()).outs or {}
    pending: Any = rpc.UNKNOWN if unknown == "all" else {**SECRETS, "ca": rpc.UNKNOWN}
    assert provider.diff("id", outs, {**inputs(), "secrets": pending}).changes


def test_an_older_state_of_whole_contents_is_read_and_its_next_inputs_are_packed(cluster: Cluster) -> None:
    """GIVEN Secrets an older arbor wrote from whole contents WHEN the program sends them packed THEN no change.

    The packed value is what the state keeps from then on, smaller: a CA's certificate in two Secrets is one.
    """
    provider = secret_set.SecretSetProvider()
    older = provider.create(inputs(packed=False)).outs or {}
    assert not provider.diff("id", provider.read("id", older).outs or {}, inputs()).changes
    assert cluster.data("service-account-key") == SECRETS["service-account-key"]
    ca = "-----BEGIN CERTIFICATE-----\n" + "QUJD" * 300 + "\n-----END CERTIFICATE-----\n"
    both = {"ca": {"ca.crt": ca}, "ca-signer": {"ca.crt": ca, "ca.key": "KEY"}}
    assert len(inputs(both)["secrets"]) < len(json.dumps(both)) / 2


def test_the_same_contents_on_another_cluster_are_an_update_that_writes_them_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GIVEN Secrets written on one seed WHEN the set names another (a migration) THEN an update writes them there.

    The contents alone may not change (an encryption configuration is the same on every seed): the cluster does.
    """
    seeds = {"seed-1": Cluster(), "seed-2": Cluster()}
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda k: seeds[k]))
    provider = secret_set.SecretSetProvider()
    outs = provider.create({**inputs(), "kubeconfig": "seed-1", "cluster": "local:seed-1"}).outs or {}
    moved = {**inputs(), "kubeconfig": "seed-2", "cluster": "local:seed-2"}
    assert provider.diff("id", outs, moved).changes
    provider.update("id", outs, moved)
    assert seeds["seed-2"].data("service-account-key") == SECRETS["service-account-key"]
    assert not provider.diff("id", provider.read("id", provider.create(moved).outs or {}).outs or {}, moved).changes
