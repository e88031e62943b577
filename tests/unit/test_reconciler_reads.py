"""Dynamic providers' read() on a cluster that cannot be reached: gone, so `up` writes them again."""

from __future__ import annotations

import ssl
from typing import Any

import pytest

from components.reconciler import node_addresses, osc_secret
from components.reconciler.kube import Kube


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
