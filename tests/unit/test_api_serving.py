"""ApiServing: the gate between a self-hosted cloud shoot's control-plane machine and everything in its API."""

from __future__ import annotations

import base64

import pytest

from components.reconciler import api_serving
from components.reconciler.api_serving import ApiServingProvider
from tests.unit.kube_server import api_server


def props(kubeconfig: str, machine: str = "i-1", timeout_s: float = 0.5) -> dict[str, object]:
    """The gate's inputs as the engine hands them over."""
    return {"shoot": "platform/edge", "kubeconfig": kubeconfig, "server": "https://api", "machine": machine,
            "timeoutSeconds": timeout_s, "version": api_serving.PROVIDER_VERSION}  # fmt: skip


def test_created_once_the_api_answers_readyz() -> None:
    """GIVEN an API that answers /readyz to the client WHEN the gate is created THEN it exists at once."""
    with api_server() as server:
        issued = server.client_certificate()
        config = server.kubeconfig({"client-certificate-data": _b64(issued.cert), "client-key-data": _b64(issued.key)})
        assert ApiServingProvider().create(props(config)).id == "platform/edge"


def test_an_api_that_never_serves_fails_naming_its_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN an API that refuses the client WHEN the gate waits past its timeout THEN the error names the server."""
    monkeypatch.setattr(api_serving, "POLL_S", 0.05)
    with api_server() as server:
        config = server.kubeconfig({"token": "unknown"})
        with pytest.raises(RuntimeError, match=rf"platform/edge: the API at {server.url} did not answer /readyz"):
            ApiServingProvider().create(props(config))


def test_a_new_machine_waits_again_a_new_kubeconfig_does_not() -> None:
    """GIVEN the gate WHEN its machine or only its kubeconfig changes THEN only the machine asks for an update."""
    provider = ApiServingProvider()
    assert provider.diff("x", props("a"), props("a", machine="i-2")).changes is True
    assert provider.diff("x", props("a"), props("b")).changes is False


def _b64(text: str) -> str:
    """`text` in base64, as a kubeconfig carries certificate data."""
    return base64.b64encode(text.encode()).decode()
