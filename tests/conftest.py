"""Shared test helpers: golden files with an update flag (`pytest --update-golden`), and the order modules start in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "unit" / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--update-golden` rewrites golden files from the current output instead of comparing."""
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Longest first: modules with a landscape of their own, then the other integration modules, then unit ones."""
    # Workers take whole modules in this order (`--dist loadfile --no-loadscope-reorder`); the long ones started
    # last kept one worker busy for minutes after the other had run out of work.
    items.sort(key=start_order)


def start_order(item: pytest.Item) -> int:
    """0 for a module marked own_landscape, 1 for another integration module, 2 for the rest."""
    if item.get_closest_marker("own_landscape"):
        return 0
    return 1 if "integration" in item.path.parts else 2


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """A checker that `text` equals tests/unit/golden/<name>, or rewrites the file with --update-golden."""

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if request.config.getoption("--update-golden"):
            path.write_text(text)
        assert path.exists(), f"golden file {path} is missing: run pytest --update-golden"
        assert text == path.read_text(), f"output differs from {path}; if intended, run pytest --update-golden"

    return check
