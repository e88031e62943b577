"""Reading the previous update's outputs: retried while the backend is busy, a clear error when it stays so."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from components import outputs


class Backend:
    """A backend that fails the first `failures` reads, then answers with `outputs`."""

    def __init__(self, failures: int, outputs: dict[str, Any]) -> None:
        self.failures, self.outputs, self.reads = failures, outputs, 0

    def read(self, stack: str) -> dict[str, Any]:
        """One read of the stack's outputs."""
        self.reads += 1
        if self.reads <= self.failures:
            raise Exception(
                "invocation of pulumi:pulumi:readStackOutputs returned an error: failed to load checkpoint: EOF"
            )
        return self.outputs


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without waiting."""
    monkeypatch.setattr(outputs, "RETRY_PAUSES_S", (0.0, 0.0, 0.0, 0.0))


def test_a_busy_backend_is_read_again() -> None:
    """GIVEN a backend that fails twice WHEN the previous outputs are read THEN the third read answers."""
    backend = Backend(2, {"networks": {"dev/web": {"ipFamilies": ["IPv4"]}}})
    assert outputs.previous_outputs(backend.read).get("networks") == {"dev/web": {"ipFamilies": ["IPv4"]}}
    assert backend.reads == 3


def test_a_stack_without_the_output_has_none() -> None:
    """GIVEN a stack never updated WHEN read THEN the output is None."""
    assert outputs.previous_outputs(Backend(0, {}).read).get("networks") is None


def test_a_backend_that_stays_busy_stops_the_program() -> None:
    """GIVEN a backend failing every read WHEN read THEN a RunError names the stack and the cause."""
    backend = Backend(99, {})
    with pytest.raises(pulumi.RunError, match=r"cannot read the outputs of the previous update of .*: .*EOF"):
        outputs.previous_outputs(backend.read)
    assert backend.reads == 5


def test_a_stack_that_does_not_exist_has_no_outputs() -> None:
    """GIVEN a stack the backend does not have WHEN another stack's outputs are read THEN {} at the first read."""

    def read(stack: str) -> dict[str, Any]:
        raise Exception(f'invocation of pulumi:pulumi:readStackOutputs returned an error: unknown stack "{stack}"')

    assert outputs.stack_outputs("local.seed-1", read) == {}
