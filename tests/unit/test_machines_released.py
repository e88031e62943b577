"""MachinesReleased: deleting a shoot's workers waits for MCM to release every object it holds a finalizer on."""

from __future__ import annotations

from typing import Any

import pytest

from components.reconciler import machines_released, shoot_status
from components.reconciler.kube import KubeError
from components.render import health

NS = "shoot--dev--web"
MCM = "machine.sapcloud.io/machine-controller"


def item(name: str, *finalizers: str) -> dict[str, Any]:
    """An object as a list returns it."""
    return {"metadata": {"name": name, "finalizers": list(finalizers)}}


class FakeSeed:
    """A seed whose namespace holds objects that MCM releases after `polls` lists of the machines."""

    def __init__(self, polls: int) -> None:
        self.polls = polls
        self.listed = 0

    def find(self, path: str) -> dict[str, Any] | None:
        """A list; machine kinds keep MCM's finalizer until enough polls went by."""
        kind = path.rsplit("/", 1)[1]
        if kind == "machinedeployments":  # the first kind each look lists
            self.listed += 1
        held = self.listed <= self.polls
        if kind == "secrets":
            return {"items": [item("cloudprovider", MCM) if held else item("cloudprovider"), item("other", "x/y")]}
        if kind == "machineclasses":
            return None  # no such resource: nothing is held
        return {"items": [item(f"{kind[:-1]}-a", MCM, "foregroundDeletion")] if held else []}


def test_held_names_every_object_with_an_mcm_finalizer_and_nothing_else() -> None:
    assert machines_released.held(FakeSeed(polls=5), NS) == [  # type: ignore[arg-type]
        "machinedeployments/machinedeployment-a",
        "machinesets/machineset-a",
        "machines/machine-a",
        "secrets/cloudprovider",
    ]


def test_wait_returns_once_mcm_released_everything() -> None:
    seed = FakeSeed(polls=3)
    machines_released.wait_released(seed, NS, timeout_s=60, poll_s=0)  # type: ignore[arg-type]
    assert seed.listed == 4
    assert machines_released.held(seed, NS) == []  # type: ignore[arg-type]


def test_wait_fails_naming_what_is_still_held() -> None:
    with pytest.raises(KubeError, match=r"still holds .*machines/machine-a.*secrets/cloudprovider"):
        machines_released.wait_released(FakeSeed(polls=10**6), NS, timeout_s=0, poll_s=0)  # type: ignore[arg-type]


def conditions(nodes_ok: bool, api_ok: bool = True) -> tuple[health.Condition, ...]:
    """Conditions with EveryNodeReady (and APIServerAvailable) as given."""
    return (
        health.Condition(health.APISERVER, api_ok, "r", "m"),
        health.Condition(health.CONTROL_PLANE, True, "r", "m"),
        health.Condition(health.NODES, nodes_ok, "r", "m"),
    )


@pytest.mark.parametrize(
    ("seen", "observations", "state"),
    [
        ([conditions(False), conditions(False), conditions(True)], 3, "Succeeded"),  # MCM caught up
        ([conditions(False, api_ok=False), conditions(True)], 2, "Succeeded"),  # a control plane starting
        ([conditions(True)], 1, "Succeeded"),
    ],
)
def test_status_waits_for_the_machines_only(
    monkeypatch: pytest.MonkeyPatch, seen: list[tuple[health.Condition, ...]], observations: int, state: str
) -> None:
    """GIVEN only EveryNodeReady failing WHEN the status is written THEN it is observed again until it holds."""
    calls = iter(seen)
    observed: list[int] = []

    def observe(_props: dict[str, Any]) -> tuple[health.Condition, ...]:
        observed.append(1)
        return next(calls)

    monkeypatch.setattr(shoot_status, "_observe", observe)
    result = shoot_status._settled({}, timeout_s=60, poll_s=0)
    assert len(observed) == observations
    assert health.last_operation_state(result) == state


def test_status_stops_waiting_at_its_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shoot_status, "_observe", lambda _props: conditions(False))
    assert health.last_operation_state(shoot_status._settled({}, timeout_s=0, poll_s=0)) == "Error"


def test_a_control_plane_that_does_not_start_is_reported_after_its_start_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GIVEN an API that never answers WHEN the status is written THEN Error once the start window is over."""
    observed: list[int] = []

    def observe(_props: dict[str, Any]) -> tuple[health.Condition, ...]:
        observed.append(1)
        return conditions(True, api_ok=False)

    monkeypatch.setattr(shoot_status, "_observe", observe)
    result = shoot_status._settled({}, timeout_s=60, poll_s=0, starting_s=0)
    assert health.last_operation_state(result) == "Error" and len(observed) == 1
