"""The REST client: kubeconfigs read as the reconciler and cloud providers do, and a throttled server asked again."""

from __future__ import annotations

import email.message
import io
import ssl
import urllib.error
import urllib.request

import pytest
import yaml

from components.reconciler import kube
from components.reconciler.kube import current, server_of


def config(current_context: str | None) -> dict[str, object]:
    """A kubeconfig with two contexts."""
    doc: dict[str, object] = {
        "clusters": [{"name": "a", "cluster": {"server": "https://a"}}, {"name": "b", "cluster": {"server": "https://b"}}],
        "users": [{"name": "ua", "user": {"token": "ta"}}, {"name": "ub", "user": {"token": "tb"}}],
        "contexts": [{"name": "ca", "context": {"cluster": "a", "user": "ua"}},
                     {"name": "cb", "context": {"cluster": "b", "user": "ub"}}],
    }  # fmt: skip
    if current_context:
        doc["current-context"] = current_context
    return doc


def test_current_context_picks_its_cluster_and_user() -> None:
    """GIVEN two contexts WHEN the second is current THEN its cluster and user are returned."""
    assert current(config("cb")) == ({"server": "https://b"}, {"token": "tb"})


def test_without_current_context_the_first_context_counts() -> None:
    """GIVEN no current-context WHEN read THEN the first context is used."""
    assert server_of(yaml.safe_dump(config(None))) == "https://a"


def test_an_empty_kubeconfig_has_no_server() -> None:
    """GIVEN an empty kubeconfig WHEN read THEN there is no server (not an exception)."""
    assert server_of("") == ""


class Answer(io.BytesIO):
    """A response body usable as a context manager, as urlopen's."""

    def __enter__(self) -> Answer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


@pytest.mark.parametrize(("throttled", "answered"), [(0, True), (2, True), (kube.THROTTLED_ATTEMPTS, False)])
def test_a_throttled_request_is_asked_again_after_retry_after(
    throttled: int, answered: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a server answering 429 (a new CRD's storage initializing) a few times WHEN asked THEN asked again.

    After its Retry-After each time, as client-go does; throttled every time, the 429 is the error.
    """
    calls: list[str] = []
    waits: list[float] = []

    def opened(request: urllib.request.Request, timeout: float) -> Answer:
        calls.append(request.full_url)
        if len(calls) <= throttled:
            headers = email.message.Message()
            headers["Retry-After"] = "2"
            raise urllib.error.HTTPError(request.full_url, 429, "Too Many Requests", headers, io.BytesIO(b"{}"))
        return Answer(b'{"kind": "MachineSetList"}')

    client = kube.Kube("https://127.0.0.1:1", ssl.create_default_context())
    monkeypatch.setattr(kube.Kube, "open", lambda _self, request, timeout: opened(request, timeout))
    monkeypatch.setattr("components.reconciler.kube.time.sleep", waits.append)
    if answered:
        assert client.get("/apis/machine.sapcloud.io/v1alpha1/machinesets") == {"kind": "MachineSetList"}
    else:
        with pytest.raises(kube.KubeError) as failed:
            client.get("/apis/machine.sapcloud.io/v1alpha1/machinesets")
        assert failed.value.status == 429
    assert len(calls) == min(throttled + 1, kube.THROTTLED_ATTEMPTS)
    assert waits == [2.0] * min(throttled, kube.THROTTLED_ATTEMPTS - 1)
