"""Shared test helpers: golden files with an update flag (`pytest --update-golden`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "unit" / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--update-golden` rewrites golden files from the current output instead of comparing."""
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files")


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
