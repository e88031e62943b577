"""The policy pack over the local landscape as registered under mocks: no mandatory policy is violated."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest
import yaml
from arbor_policies.catalog import POLICIES, load_config, run, settings
from arbor_policies.rendered import expanded
from arbor_policies.resource import Resource

from tests.unit.landscape_mocks import Mocks, build

with open("stacks/Pulumi.local.yaml") as f:
    LOCAL = yaml.safe_load(f)["config"]["arbor:landscape"]


class Recording(Mocks):
    """Mocks that keep every resource's type, name and inputs (names repeat across types)."""

    def __init__(self) -> None:
        super().__init__()
        self.registered: list[tuple[str, str, dict[str, Any]]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.registered.append((args.typ, args.name, dict(args.inputs)))
        return super().new_resource(args)


@pytest.fixture
def mocks() -> Recording:
    """Recording mocks installed for the local stack."""
    m = Recording()
    pulumi.runtime.set_mocks(m, project="arbor", stack="local", preview=False)
    return m


def _mandatory_violations(mocks: Recording, built: Any) -> dict[str, list[str]]:
    """What every mandatory policy reports on the registered resources, by policy (those with something)."""
    providers = {name: inputs for typ, name, inputs in mocks.registered if typ.startswith("pulumi:providers:")}
    resources = []
    for typ, name, inputs in mocks.registered:
        opts = built.options.get(name) or pulumi.ResourceOptions()
        provider = opts.provider._name if isinstance(opts.provider, pulumi.ProviderResource) else ""
        resources.append(Resource(typ, inputs, name, providers.get(provider, {}), bool(opts.protect)))
    # The rules read the landscape itself: arbor's workloads, bindings, records and certificates are all there.
    assert {"Deployment", "StatefulSet", "Pod", "ClusterRoleBinding", "Shoot", "LeafSet"} <= {
        each.kind for r in resources for each in expanded(r)
    }
    config = load_config()
    mandatory = [p for p in POLICIES if config[p.name]["enforcementLevel"] == "mandatory"]
    found = {p.name: run(p, resources, settings(p.name, config)) for p in mandatory}
    return {name: messages for name, messages in found.items() if messages}


@pulumi.runtime.test
def test_the_local_landscape_passes_every_mandatory_policy(mocks: Recording) -> pulumi.Output[None]:
    """GIVEN the local landscape WHEN every mandatory policy runs on its resources THEN none reports anything."""
    built = build(LOCAL)
    return built.settled().apply(lambda _: _assert_equal(_mandatory_violations(mocks, built), {}))


@pulumi.runtime.test
def test_a_garden_without_encryption_violates(mocks: Recording) -> pulumi.Output[None]:
    """GIVEN the local landscape without the garden's encryption WHEN checked THEN that one cluster is named."""
    built = build({**LOCAL, "garden": {k: v for k, v in LOCAL["garden"].items() if k != "encryption"}})
    expected = {
        "secrets-encrypted-at-rest": [
            "cluster local-garden (arbor-garden-cluster) runs without encryption at rest: give it an encryption "
            "configuration (landscape.garden.encryption for the garden)"
        ]
    }
    return built.settled().apply(lambda _: _assert_equal(_mandatory_violations(mocks, built), expected))


def _assert_equal(found: dict[str, list[str]], expected: dict[str, list[str]]) -> None:
    """Asserts inside an Output's apply."""
    assert found == expected
