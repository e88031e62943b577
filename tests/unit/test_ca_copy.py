"""A hosted shoot's client CA copied to the garden from its seed's signer Secret, the state keeping no key."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pulumi
import pytest

from components.checks import parse_landscape
from components.concerns.access import internal_secret, internal_secret_name
from components.plan.planner import plan_landscape
from components.reconciler import ca_copy, signing
from components.reconciler.ca_source import ca_hash
from components.reconciler.kube import Kube, KubeError, secret_path
from components.reconciler.object_set import TYPE as OBJECT_SET
from components.reconciler.secret_places import Directory
from tests.unit.landscape_mocks import OUTPUTS, registered
from tests.unit.spec_cases import base
from tests.unit.test_system_objects import Cluster

SEED_NAMESPACE, PROJECT = "shoot--dev--web", "garden-dev"
SIGNER = "ca-client-signer"
PATH = f"/apis/arbor.dev/v1alpha1/namespaces/{PROJECT}/internalsecrets/web.ca-client"
PROVIDER = ca_copy.CaCopyProvider()
CERTIFICATE_AUTHORITY = "pulumi-python:dynamic/arbor:CertificateAuthority"
MOCK_KEY = OUTPUTS[CERTIFICATE_AUTHORITY]["key"]


class Garden(Cluster):
    """A cluster that also serves arbor's InternalSecrets."""

    def get(self, path: str) -> Any:
        if path == "/apis/arbor.dev/v1alpha1":
            return {"resources": [{"kind": "InternalSecret", "name": "internalsecrets", "namespaced": True}]}
        return super().get(path)


@pytest.fixture
def clusters(monkeypatch: pytest.MonkeyPatch) -> dict[str, Garden]:
    """The seed and the garden, by kubeconfig."""
    found = {"seed": Garden(), "garden": Garden()}
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda k: found[k]))
    return found


def signed(clusters: dict[str, Garden], ca: signing.Issued) -> None:
    """The seed namespace's signer Secret holding `ca`, as the CertificateAuthority writes it."""
    data = {"ca.crt": ca.cert, "ca.key": ca.key}
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
    clusters["seed"].objects[secret_path(SEED_NAMESPACE, SIGNER)] = {"metadata": {"name": SIGNER}, "data": encoded}


def inputs(ca: signing.Issued, project: str = PROJECT) -> dict[str, Any]:
    """The copy's inputs as the program sends them."""
    target = {k: v for k, v in internal_secret(internal_secret_name("web"), project, {}).items() if k != "data"}
    return {"sourceKubeconfig": "seed", "sourceNamespace": SEED_NAMESPACE, "caSecret": SIGNER,
            "caHash": ca_hash(ca.cert), "kubeconfig": "garden", "cluster": "local:garden", "object": target,
            "version": ca_copy.PROVIDER_VERSION, "fingerprint": None}  # fmt: skip


def copied(clusters: dict[str, Garden], path: str = PATH) -> dict[str, str]:
    """The garden's InternalSecret's data, decoded."""
    return {k: base64.b64decode(v).decode() for k, v in clusters["garden"].objects[path]["data"].items()}


@pytest.fixture(scope="module")
def ca() -> signing.Issued:
    """A shoot's client CA."""
    return signing.self_signed_ca("kubernetes-client", 3600)


def test_the_copy_holds_the_signers_ca_and_the_state_keeps_no_key(
    clusters: dict[str, Garden], ca: signing.Issued
) -> None:
    """GIVEN the seed's signer Secret WHEN copied THEN the garden holds the CA and the outputs keep neither PEM."""
    signed(clusters, ca)
    outs = PROVIDER.create(inputs(ca)).outs or {}
    assert copied(clusters) == {"ca.crt": ca.cert, "ca.key": ca.key}
    assert "PRIVATE KEY" not in json.dumps(outs) and "CERTIFICATE" not in json.dumps(outs)
    assert not PROVIDER.diff("id", PROVIDER.read("id", outs).outs or {}, inputs(ca)).changes


def test_a_self_hosted_shoots_copy_is_read_from_its_machine_directory(
    clusters: dict[str, Garden], ca: signing.Issued, tmp_path: Path
) -> None:
    """GIVEN the signer in a machine directory WHEN copied THEN the garden holds the CA; the inputs name the directory.

    A later change of the directory copies again.
    """
    data = {"ca.crt": ca.cert, "ca.key": ca.key}
    Directory(str(tmp_path)).put(SIGNER, {k: base64.b64encode(v.encode()).decode() for k, v in data.items()})
    props = {k: v for k, v in inputs(ca).items() if k not in ("sourceKubeconfig", "sourceNamespace")}
    props["sourceDirectory"] = str(tmp_path)
    outs = PROVIDER.create(props).outs or {}
    assert copied(clusters) == data and "PRIVATE KEY" not in json.dumps(outs)
    assert PROVIDER.diff("id", outs, {**props, "sourceDirectory": str(tmp_path / "other")}).changes


@pytest.mark.parametrize("change", ["deleted", "edited"])
def test_a_copy_changed_in_the_garden_is_drift_and_written_again(
    clusters: dict[str, Garden], ca: signing.Issued, change: str
) -> None:
    """GIVEN a copy WHEN deleted or edited in the garden THEN read marks drift and the update writes it again."""
    signed(clusters, ca)
    outs = PROVIDER.create(inputs(ca)).outs or {}
    if change == "deleted":
        del clusters["garden"].objects[PATH]
    else:
        clusters["garden"].objects[PATH]["data"]["ca.key"] = "eA=="
    read = PROVIDER.read("id", outs).outs or {}
    assert read["fingerprint"] == ca_copy.DRIFTED
    assert PROVIDER.diff("id", read, inputs(ca)).changes
    PROVIDER.update("id", read, inputs(ca))
    assert copied(clusters) == {"ca.crt": ca.cert, "ca.key": ca.key}


def test_a_signer_holding_another_ca_is_refused_naming_it(clusters: dict[str, Garden], ca: signing.Issued) -> None:
    """GIVEN a signer Secret of another CA WHEN copied THEN refused naming the Secret, and nothing is written."""
    signed(clusters, signing.self_signed_ca("another", 3600))
    with pytest.raises(KubeError, match=f"{SEED_NAMESPACE}/{SIGNER} holds another CA"):
        PROVIDER.create(inputs(ca))
    assert PATH not in clusters["garden"].objects


def test_a_rotated_ca_is_copied_again(clusters: dict[str, Garden], ca: signing.Issued) -> None:
    """GIVEN a copy WHEN the CA is rotated (its signer rewritten) THEN an update copies the new one."""
    signed(clusters, ca)
    outs = PROVIDER.create(inputs(ca)).outs or {}
    rotated = signing.self_signed_ca("kubernetes-client", 3600)
    signed(clusters, rotated)
    assert PROVIDER.diff("id", outs, inputs(rotated)).changes
    PROVIDER.update("id", outs, inputs(rotated))
    assert copied(clusters) == {"ca.crt": rotated.cert, "ca.key": rotated.key}


def test_a_moved_target_is_written_there_and_removed_where_it_was(
    clusters: dict[str, Garden], ca: signing.Issued
) -> None:
    """GIVEN a copy WHEN its project namespace changes THEN written in the new one, gone from the old."""
    signed(clusters, ca)
    outs = PROVIDER.create(inputs(ca)).outs or {}
    moved = inputs(ca, project="garden-other")
    assert PROVIDER.diff("id", outs, moved).changes
    PROVIDER.update("id", outs, moved)
    assert PATH not in clusters["garden"].objects
    assert copied(clusters, PATH.replace(PROJECT, "garden-other"))["ca.key"] == ca.key


def test_an_older_arbors_object_set_of_the_same_secret_becomes_the_copy(
    clusters: dict[str, Garden], ca: signing.Issued
) -> None:
    """GIVEN the ObjectSet an older arbor applied the InternalSecret with WHEN updated THEN the same object is kept."""
    signed(clusters, ca)
    clusters["garden"].objects[PATH] = {**inputs(ca)["object"], "data": {"ca.crt": "", "ca.key": ""}}
    older = {"kubeconfig": "garden", "cluster": "local:garden", "refs": ["arbor.dev/v1alpha1 InternalSecret x"],
             "objects": {"internalsecret-web.ca-client": "h"}, "fingerprints": "f", "version": "1"}  # fmt: skip
    assert (PROVIDER.read("id", older).outs or {}) == older
    assert PROVIDER.diff("id", older, inputs(ca)).changes
    outs = PROVIDER.update("id", older, inputs(ca)).outs or {}
    assert copied(clusters) == {"ca.crt": ca.cert, "ca.key": ca.key}
    assert outs["fingerprint"]


def test_delete_removes_the_copy_and_an_unreachable_garden_took_it(
    clusters: dict[str, Garden], ca: signing.Issued, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a copy WHEN deleted THEN gone; a garden that cannot be reached is no error, another failure is."""
    signed(clusters, ca)
    outs = PROVIDER.create(inputs(ca)).outs or {}
    PROVIDER.delete("id", outs)
    assert PATH not in clusters["garden"].objects
    for status, fails in ((0, False), (403, True)):

        def refused(_path: str, status: int = status) -> None:
            raise KubeError("refused", status)

        monkeypatch.setattr(clusters["garden"], "delete", refused)
        if fails:
            with pytest.raises(KubeError):
                PROVIDER.delete("id", outs)
        else:
            PROVIDER.delete("id", outs)


def test_under_mocks_every_local_shoot_copies_its_client_ca_and_keeps_no_key() -> None:
    """GIVEN the local landscape WHEN registered THEN each shoot copies its CA from where it is; no key in inputs.

    Hosted shoots from their seed namespace, the self-hosted one from its machine directory.
    """
    built, mocks = registered(plan_landscape(parse_landscape(base()), "local"))
    for shoot, namespace in (("dev-web", "shoot--dev--web"), ("ops-db", "shoot--ops--db"), ("ops-root", None)):
        name = f"arbor-shoot-{shoot}-ca-client"
        assert mocks.types[name] == "pulumi-python:dynamic/arbor:CaCopy", name
        # An older arbor's ObjectSet of that name becomes the copy: the InternalSecret is never deleted.
        aliases = built.options[name].aliases or []
        assert [a.type_ for a in aliases if isinstance(a, pulumi.Alias)] == [OBJECT_SET]
        kept = mocks.inputs[name]
        assert (kept.get("sourceNamespace"), kept["caSecret"]) == (namespace, SIGNER)
        assert MOCK_KEY not in json.dumps(kept)
        assert kept["caHash"] == ca_hash(OUTPUTS[CERTIFICATE_AUTHORITY]["cert"])
    assert mocks.inputs["arbor-shoot-ops-root-ca-client"]["sourceDirectory"].endswith("/machines/local-shoot-ops-root")


@pytest.mark.parametrize(("status", "fails"), [(0, False), (404, False), (403, True)])
def test_a_garden_that_cannot_be_reached_at_refresh_counts_the_copy_as_gone(
    clusters: dict[str, Garden], ca: signing.Issued, monkeypatch: pytest.MonkeyPatch, status: int, fails: bool
) -> None:
    """GIVEN a copy WHEN the garden is stopped (a reboot) at refresh THEN drift, not a failed refresh; else an error."""
    signed(clusters, ca)
    outs = PROVIDER.create(inputs(ca)).outs or {}

    def refused(_path: str) -> Any:
        raise KubeError("connection refused", status)

    monkeypatch.setattr(clusters["garden"], "get", refused)
    if fails:
        with pytest.raises(KubeError):
            PROVIDER.read("id", outs)
        return
    assert (PROVIDER.read("id", outs).outs or {})["fingerprint"] == ca_copy.DRIFTED
