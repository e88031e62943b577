"""SeedOperation: a Seed record's operation annotation read in check(), removed by an update, conditionally."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from components.reconciler.kube import Kube, KubeError
from components.reconciler.seed_operation import (
    OPERATION,
    RENEW_GARDEN_ACCESS_SECRETS,
    SeedOperationProvider,
    requested_operation,
    seed_path,
)

KEY = "/metadata/annotations/gardener.cloud~1operation"


@dataclass
class FakeGarden:
    """The garden as far as SeedOperation asks it: Seed records, and JSON patches applied with their tests."""

    records: dict[str, dict[str, Any]] = field(default_factory=dict)

    def find(self, path: str) -> Any | None:
        return self.records.get(path)

    def json_patch(self, path: str, operations: list[dict[str, Any]]) -> Any:
        record = self.records.get(path)
        if record is None:
            raise KubeError("not found", 404)
        annotations = record["metadata"].setdefault("annotations", {})
        for op in operations:
            assert op["path"] == KEY
            if op["op"] == "test" and annotations.get(OPERATION) != op["value"]:
                raise KubeError("test failed", 422)
            if op["op"] == "remove":
                annotations.pop(OPERATION)
        return record

    def annotate(self, seed: str, value: str | None) -> None:
        """The Seed record `seed`, annotated with `value` (or not at all)."""
        annotations = {OPERATION: value} if value else {}
        self.records[seed_path(seed)] = {"metadata": {"name": seed, "annotations": annotations}}

    def operation(self, seed: str) -> str | None:
        """The annotation's value now."""
        value = self.records[seed_path(seed)]["metadata"]["annotations"].get(OPERATION)
        return str(value) if value is not None else None


@pytest.fixture
def garden(monkeypatch: pytest.MonkeyPatch) -> FakeGarden:
    """A fake garden in place of the real client."""
    fake = FakeGarden()
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: fake))
    return fake


def inputs(seed: str = "local-1") -> dict[str, Any]:
    """The inputs as the program registers them."""
    return {"kubeconfig": "garden", "seed": seed, "operation": None}


def test_a_requested_renewal_is_an_update_that_removes_the_annotation(garden: FakeGarden) -> None:
    """GIVEN local-1 annotated renew-garden-access-secrets WHEN checked, diffed, updated THEN the annotation is gone."""
    garden.annotate("local-1", RENEW_GARDEN_ACCESS_SECRETS)
    provider = SeedOperationProvider()
    news = dict(provider.check({}, inputs()).inputs)
    assert news["operation"] == RENEW_GARDEN_ACCESS_SECRETS
    diff = provider.diff("local-1", inputs(), news)
    assert diff.changes and diff.replaces == []
    provider.update("local-1", inputs(), news)
    assert garden.operation("local-1") is None
    after = dict(provider.check(news, inputs()).inputs)
    assert after["operation"] == "" and not provider.diff("local-1", news, after).changes


def test_an_unknown_operation_or_none_is_left_alone(garden: FakeGarden) -> None:
    """GIVEN `reconcile`, or no annotation WHEN checked THEN no operation and no update."""
    garden.annotate("local-1", "reconcile")
    garden.annotate("local-2", None)
    provider = SeedOperationProvider()
    for seed in ("local-1", "local-2"):
        news = dict(provider.check({}, inputs(seed)).inputs)
        assert news["operation"] == "" and not provider.diff(seed, inputs(seed), news).changes
    assert garden.operation("local-1") == "reconcile"


def test_an_annotation_changed_meanwhile_is_not_removed(garden: FakeGarden) -> None:
    """GIVEN the renewal read, then the annotation set to another value WHEN updated THEN the new value stays."""
    garden.annotate("local-1", RENEW_GARDEN_ACCESS_SECRETS)
    provider = SeedOperationProvider()
    news = dict(provider.check({}, inputs()).inputs)
    garden.annotate("local-1", "reconcile")
    provider.update("local-1", inputs(), news)
    assert garden.operation("local-1") == "reconcile"
    provider.create(news)  # a record gone (404) is fine too
    garden.records.clear()
    provider.create(news)


def test_an_unknown_or_unreachable_garden_requests_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN the kubeconfig unknown in a preview, or the garden down WHEN read THEN no operation, no error."""
    assert requested_operation("04da6b54-80e4-46f7-96ec-b56ff0331ba9", "local-1") == ""
    assert requested_operation(None, "local-1") == ""

    def down(_: str) -> Any:
        raise KubeError("connection refused")

    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: type("K", (), {"find": staticmethod(down)})()))
    assert requested_operation("garden", "local-1") == ""


def test_a_refused_removal_is_an_error(garden: FakeGarden, monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN the garden refuses the patch (403) WHEN updated THEN the error reaches the engine."""
    garden.annotate("local-1", RENEW_GARDEN_ACCESS_SECRETS)

    def refuse(_path: str, _ops: Any) -> Any:
        raise KubeError("forbidden", 403)

    monkeypatch.setattr(garden, "json_patch", refuse)
    with pytest.raises(KubeError):
        SeedOperationProvider().update("local-1", inputs(), inputs() | {"operation": RENEW_GARDEN_ACCESS_SECRETS})
