"""Dynamic providers' read() on a cluster that cannot be reached: gone, so `up` writes them again."""

from __future__ import annotations

import base64
import json
import ssl
from typing import Any

import pytest
from pulumi.runtime import rpc

from components.reconciler import node_addresses, osc_secret
from components.reconciler.kube import Kube
from components.render import packing
from components.render.packing import pack


def unreachable() -> Kube:
    """A client of a cluster whose API refuses connections: nothing listens on port 1 of loopback."""
    return Kube(server="https://127.0.0.1:1", context=ssl.create_default_context())


@pytest.mark.parametrize(
    ("module", "provider", "props"),
    [
        (node_addresses, node_addresses.NodeAddressesProvider(), {"kubeconfig": "k", "node": "n"}),
        (osc_secret, osc_secret.OperatingSystemConfigProvider(), {"kubeconfig": "k", "secretName": "s"}),
    ],
    ids=["NodeAddresses", "OperatingSystemConfig"],
)
def test_an_unreachable_cluster_makes_the_resource_gone(
    monkeypatch: pytest.MonkeyPatch, module: Any, provider: Any, props: dict[str, Any]
) -> None:
    """GIVEN a stopped cluster WHEN refreshed THEN the resource is gone (not an error that stops the refresh)."""
    monkeypatch.setattr(module.Kube, "from_kubeconfig", staticmethod(lambda _: unreachable()))
    result = provider.read("id", props)
    assert result.id == "" and result.outs == {}


class _Cluster:
    """A cluster holding one Secret, as the API returns it; records what is written."""

    def __init__(self, osc_yaml: str | None) -> None:
        data = {"osc.yaml": base64.b64encode(osc_yaml.encode()).decode()} if osc_yaml is not None else None
        self.secret = {"metadata": {"name": "s"}, "data": data} if osc_yaml is not None else None
        self.written: list[Any] = []

    def find(self, _path: str) -> Any:
        return self.secret

    def create_or_replace(self, _collection: str, body: Any) -> None:
        self.written.append(body)


def osc_inputs(text: str) -> dict[str, Any]:
    """An OSC resource's inputs as the program sends them, with the hashes of its Secret."""
    secret = {"metadata": {"name": "s"}, "stringData": {"osc.yaml": text}}
    return {"kubeconfig": "k", "pool": "p", "secretName": "s", "secret": secret, "unitHashes": {}, "fileHashes": {},
            "stoppedUnits": [], "secretHash": osc_secret.secret_hash(secret), "oscHash": osc_secret.osc_hash(text),
            "version": osc_secret.PROVIDER_VERSION}  # fmt: skip


def test_osc_check_derives_the_secrets_name_and_hashes_from_its_content() -> None:
    """GIVEN the program's inputs (the Secret's content, packed) WHEN checked THEN its name and hashes; unknown too."""
    provider = osc_secret.OperatingSystemConfigProvider()
    whole = osc_inputs("units: [a]\n")
    sent = {**whole, "secret": pack(whole["secret"]), **dict.fromkeys(osc_secret.DERIVED)}
    checked = provider.check({}, sent).inputs
    assert {k: checked[k] for k in osc_secret.DERIVED} == {k: whole[k] for k in osc_secret.DERIVED}
    pending = provider.check({}, {**sent, "secret": rpc.UNKNOWN}).inputs
    assert all(pending[k] == rpc.UNKNOWN for k in osc_secret.DERIVED)
    # The pool key the program gives stays known: whether the pool rolls is known in the preview.
    named = provider.check({}, {**sent, "secret": rpc.UNKNOWN, "secretName": "s"}).inputs
    assert named["secretName"] == "s" and named["oscHash"] == rpc.UNKNOWN


@pytest.mark.parametrize(("live", "drift"), [("units: [a]\n", False), ("units: [edited]\n", True)])
def test_osc_state_keeps_hashes_and_an_edit_is_drift(monkeypatch: pytest.MonkeyPatch, live: str, drift: bool) -> None:
    """GIVEN an OSC written WHEN its state is read back THEN no content in the outputs; an edited Secret is a diff."""
    cluster = _Cluster(live)
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: cluster))
    provider = osc_secret.OperatingSystemConfigProvider()
    inputs = osc_inputs("units: [a]\n")

    outs = provider.create(inputs).outs or {}
    assert cluster.written == [inputs["secret"]]
    assert "secret" not in outs and "units" not in json.dumps(outs)

    read = provider.read("s", outs).outs or {}
    assert provider.diff("s", read, inputs).changes is drift


def test_an_osc_secret_is_packed_in_the_state_and_written_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN an OSC Secret packed as the program sends it WHEN created THEN the cluster gets the Secret itself.

    Packed, it is several times smaller than its JSON (units and files compress well).
    """
    cluster = _Cluster("units: [a]\n")
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: cluster))
    inputs = osc_inputs("units: [a]\n" * 200)
    packed = {**inputs, "secret": packing.pack(inputs["secret"])}
    assert packed["secret"].startswith(packing.PACKED)
    assert len(packed["secret"]) * 5 < len(json.dumps(inputs["secret"]))
    osc_secret.OperatingSystemConfigProvider().create(packed)
    assert cluster.written == [inputs["secret"]] and packing.unpacked(packed["secret"]) == inputs["secret"]
