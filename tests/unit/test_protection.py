"""Data-bearing resources are registered with `protect`: clusters (etcd data), CAs, keys, encryption keys, backups."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pulumi
import pytest
import yaml
from pulumi.runtime import mocks as pulumi_mocks

from components import checks
from tests.unit.landscape_mocks import Mocks, build

with open("stacks/Pulumi.local.yaml") as f:
    LOCAL = yaml.safe_load(f)["config"]["arbor:landscape"]

CLUSTERS = ["arbor-garden-cluster", "arbor-seed-local-1-cluster"] + [
    f"arbor-shoot-{s}-cluster" for s in ("dev-web", "ops-db", "ops-root")
]
ENCRYPTION_KEYS = ["arbor-garden-encryption-keys"] + [
    f"arbor-shoot-{s}-encryption-keys" for s in ("dev-web", "ops-db", "ops-root")
]
# The local object store (every snapshot), the seed's bucket in it, and the hosted shoots' states (their keys).
BACKUPS = ["arbor-seed-local-1-backup", "local-object-store"] + [
    f"arbor-shoot-{s}-shoot-state-key" for s in ("dev-web", "ops-db")
]
# Every shoot's CAs and its service-account key; certificates and bootstrap tokens are issued again from them.
PKI = ["ca", "ca-client", "ca-etcd", "ca-front-proxy", "service-account-key"]


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, bool]]:
    """Mocks for the local stack, and the `protect` of every RegisterResource call by resource name."""
    seen: dict[str, bool] = {}
    register = pulumi_mocks.MockMonitor.RegisterResource

    def recording(self: Any, request: Any) -> Any:
        seen[request.name] = bool(request.protect)
        return register(self, request)  # type: ignore[no-untyped-call]

    monkeypatch.setattr(pulumi_mocks.MockMonitor, "RegisterResource", recording)
    pulumi.runtime.set_mocks(Mocks(), project="arbor", stack="local", preview=False)
    yield seen


def expected() -> list[str]:
    """Every resource the local landscape must protect."""
    shoots = ("dev-web", "ops-db", "ops-root")
    return sorted([*CLUSTERS, *ENCRYPTION_KEYS, *BACKUPS, *(f"arbor-shoot-{s}-pki-{c}" for s in shoots for c in PKI)])


@pulumi.runtime.test
def test_data_bearing_resources_are_protected(registered: dict[str, bool]) -> pulumi.Output[None]:
    """GIVEN the local stack WHEN registered THEN exactly clusters, CAs, keys and backups are protected."""
    built = build(LOCAL)

    def check(_: list[str]) -> None:
        assert sorted(name for name, protect in registered.items() if protect) == expected()

    return built.settled().apply(check)


@pulumi.runtime.test
def test_a_rotation_lifts_the_protection_of_what_it_replaces(registered: dict[str, bool]) -> pulumi.Output[None]:
    """GIVEN dev/web's etcd CA rotation counter raised WHEN registered THEN that CA alone is unprotected."""
    raw = {**LOCAL, "shoots": [{**LOCAL["shoots"][0], "credentials": {"rotation": {"etcdCA": 1}}}]}
    before = checks.records(checks.check({**LOCAL, "shoots": LOCAL["shoots"][:1]}, "local", dict).plan)
    plan = checks.check(raw, "local", lambda: before).plan
    built = build(raw, plan)

    def check(_: list[str]) -> None:
        assert registered["arbor-shoot-dev-web-pki-ca-etcd"] is False
        assert registered["arbor-shoot-dev-web-pki-ca"] is True
        assert registered["arbor-shoot-dev-web-cluster"] is True

    return built.settled().apply(check)
