"""Reading kubeconfigs: the current context's cluster and user, as the reconciler and the cloud providers do."""

from __future__ import annotations

import yaml

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
