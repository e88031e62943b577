"""Every dynamic provider of arbor keeps its pickled class in the state unencrypted (reconciler/provider.py)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from pulumi.dynamic import ResourceProvider
from pulumi.dynamic.dynamic import _serialize, serialize_provider  # type: ignore[attr-defined]  # the SDK's own check

import components.reconciler
from components.reconciler.provider import Provider


def _providers() -> list[type[ResourceProvider]]:
    """The provider classes the reconciler's modules define."""
    found = []
    for info in pkgutil.iter_modules(components.reconciler.__path__):
        module = importlib.import_module(f"components.reconciler.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, ResourceProvider) and cls.__module__ == module.__name__ and cls is not Provider:
                found.append(cls)
    return found


def test_the_reconciler_defines_providers() -> None:
    assert len(_providers()) >= 20


@pytest.mark.parametrize("cls", _providers(), ids=lambda c: c.__name__)
def test_every_provider_derives_from_the_base(cls: type[ResourceProvider]) -> None:
    assert issubclass(cls, Provider), f"{cls.__name__} derives from ResourceProvider, not arbor's Provider"


@pytest.mark.parametrize("cls", [c for c in _providers() if not inspect.isabstract(c)], ids=lambda c: c.__name__)
def test_a_provider_is_serialized_by_reference_without_secrets(cls: type[ResourceProvider]) -> None:
    serialized, contains_secrets = _serialize(True, serialize_provider, cls())
    # The SDK encrypts `__provider` when either of these holds (pulumi.dynamic.Resource.__init__).
    assert not contains_secrets
    assert cls().serialize_as_secret_always is False
    # Pickled by reference (module and class name), not by value: about a hundred bytes.
    assert len(serialized) < 200, len(serialized)
