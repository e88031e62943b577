"""node_leases: a restarted kwok's node leases, held by its dead predecessor, are handed over at once."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.reconciler import node_leases
from components.reconciler.kube import Kube, KubeError

STARTED = datetime(2026, 12, 6, 12, 8, 30, tzinfo=UTC)
BEFORE, AFTER = "2026-12-06T12:08:05.256997Z", "2026-12-06T12:08:39.232885Z"


def lease(name: str, renewed: str | None, holder: str | None = "vm_dead") -> dict[str, Any]:
    """A node lease as the API server returns it."""
    spec = {"leaseDurationSeconds": 200, **({"holderIdentity": holder} if holder else {})}
    return {"metadata": {"name": name}, "spec": {**spec, **({"renewTime": renewed} if renewed else {})}}


@dataclass
class FakeApi:
    """kube-node-lease as far as node_leases asks: a list, and JSON patches applied with their tests."""

    leases: dict[str, dict[str, Any]]
    # A lease the new kwok renews between the list and the patch.
    renewed_meanwhile: set[str] = field(default_factory=set)

    def get(self, path: str) -> Any:
        assert path == node_leases.LEASES
        return {"items": [copy.deepcopy(v) for v in self.leases.values()]}

    def json_patch(self, path: str, operations: list[dict[str, Any]]) -> Any:
        name = path.rsplit("/", 1)[1]
        if name not in self.leases:
            raise KubeError("not found", 404)
        spec = self.leases[name]["spec"]
        if name in self.renewed_meanwhile:
            spec.update(holderIdentity="vm_new", renewTime=AFTER)
        for op in operations:
            if op["op"] == "test" and spec.get(op["path"].rsplit("/", 1)[1]) != op["value"]:
                raise KubeError("test failed", 422)
            if op["op"] == "remove":
                del spec[op["path"].rsplit("/", 1)[1]]
        return self.leases[name]


def test_only_leases_last_renewed_before_the_start_lose_their_holder() -> None:
    """GIVEN a lease of the dead kwok, one the new kwok took, one without holder WHEN released THEN the first only."""
    api = FakeApi({"n0": lease("n0", BEFORE), "n1": lease("n1", AFTER, "vm_new"), "n2": lease("n2", BEFORE, None)})
    assert node_leases.release_stale(cast(Kube, api), STARTED) == ["n0"]
    assert "holderIdentity" not in api.leases["n0"]["spec"]
    assert api.leases["n0"]["spec"]["renewTime"] == BEFORE  # the controller manager's heartbeat is not touched
    assert api.leases["n1"]["spec"]["holderIdentity"] == "vm_new"


def test_a_lease_renewed_between_list_and_patch_is_left_to_its_holder() -> None:
    """GIVEN the new kwok renewing a stale lease meanwhile WHEN released THEN the patch's test fails and it keeps it."""
    api = FakeApi({"n0": lease("n0", BEFORE)}, renewed_meanwhile={"n0"})
    assert node_leases.release_stale(cast(Kube, api), STARTED) == []
    assert api.leases["n0"]["spec"]["holderIdentity"] == "vm_new"


def test_another_api_error_is_raised() -> None:
    """GIVEN a patch refused for another reason WHEN released THEN the error is raised, not taken for a renewal."""

    class Forbidden(FakeApi):
        def json_patch(self, path: str, operations: list[dict[str, Any]]) -> Any:
            raise KubeError("forbidden", 403)

    with pytest.raises(KubeError):
        node_leases.release_stale(cast(Kube, Forbidden({"n0": lease("n0", BEFORE)})), STARTED)


@given(st.lists(st.tuples(st.datetimes(timezones=st.just(UTC)), st.booleans()), max_size=8))
def test_stale_are_exactly_the_held_leases_renewed_before_the_start(renewals: list[tuple[datetime, bool]]) -> None:
    """GIVEN any renew times, held or not WHEN sorted out THEN stale ones are held and renewed before the start."""
    leases = [
        lease(f"n{i}", t.isoformat().replace("+00:00", "Z"), "vm" if held else None)
        for i, (t, held) in enumerate(renewals)
    ]
    expected = [f"n{i}" for i, (t, held) in enumerate(renewals) if held and t < STARTED]
    assert [name for name, _ in node_leases.stale(leases, STARTED)] == expected
