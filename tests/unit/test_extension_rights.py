"""Extensions' rights in the garden: the plan gives each shoot its seed's accounts, the renderer names its records."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pytest

from components.checks import parse_landscape
from components.plan.planner import plan_landscape
from components.plan.values import LandscapePlan
from components.providers.registry import provider_for
from components.render import extension_rights
from components.yaml_text import dump
from tests.unit.landscape_mocks import registered
from tests.unit.object_sets import expanded
from tests.unit.spec_cases import two_seeds
from tests.unit.test_example_stacks import ExampleMocks

ACCOUNT_1 = ("seed-local-1", "extension-provider-local")
ACCOUNT_2 = ("seed-local-2", "extension-provider-dns")


class TwoSeedMocks(ExampleMocks):
    """The aws example's mocks, with a kubeconfig for the local clusters (the garden, seed local-2)."""

    def __init__(self) -> None:
        super().__init__("aws")

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        rid, outputs = super().new_resource(args)
        if args.typ.endswith(":LocalCluster"):
            outputs["kubeconfig"] = f"kubeconfig of {args.name}"
        return rid, outputs


def plan() -> LandscapePlan:
    """The two-seed landscape's plan."""
    return plan_landscape(parse_landscape(two_seeds()), "local")


def test_each_shoot_gets_the_accounts_of_its_own_seed_only() -> None:
    """GIVEN two seeds with extensions WHEN planned THEN a shoot's accounts are its seed's with garden access."""
    accounts = {s.name: s.garden_accounts for s in plan().shoots}
    assert accounts == {"web": (ACCOUNT_1,), "db": (ACCOUNT_1,), "root": (), "api": (ACCOUNT_2,)}
    assert {s.name: s.garden_accounts for s in plan().seeds} == {"local-1": (ACCOUNT_1,), "local-2": (ACCOUNT_2,)}


def test_the_rights_of_a_seed_and_of_a_shoot_on_it(golden: Callable[[str, str], None]) -> None:
    """GIVEN seed local-1 with backups WHEN rendered THEN its Seed record and bucket, the shoot's records (golden)."""
    planned = plan()
    web = next(s for s in planned.shoots if s.name == "web")
    objects = extension_rights.seed_rights(planned.seeds[0]) + extension_rights.shoot_rights(web, "shoot--dev--web--u1")
    golden("extension-rights.yaml", dump(objects, sort_keys=False))


@pytest.mark.parametrize("index", [0, 1])
def test_every_rule_names_its_objects_and_only_records(index: int) -> None:
    """GIVEN any seed's or shoot's rights WHEN rendered THEN no rule without names, and no Secret of any kind."""
    planned = plan()
    shoots = [s for s in planned.shoots if s.seed == planned.seeds[index].name]
    objects = [*extension_rights.seed_rights(planned.seeds[index])]
    objects += [o for s in shoots for o in extension_rights.shoot_rights(s, f"{s.technical_id}--u1")]
    rules = [r for o in objects for r in o.get("rules", [])]
    assert rules
    for rule in rules:
        assert rule["resourceNames"] and all(rule["resourceNames"])
        assert rule["apiGroups"] == ["arbor.dev"]
        assert {r.split("/")[0] for r in rule["resources"]} <= {"seeds", "shoots", "backupbuckets", "backupentries"}
        assert "delete" not in rule["verbs"] and "create" not in rule["verbs"]
    names = {n for r in rules for n in r["resourceNames"]}
    other = planned.seeds[1 - index].name
    assert other not in names and not any(s.name in names for s in planned.shoots if s.seed == other)


def test_the_garden_registers_the_rights_with_the_entry_named_by_the_shoot_uid(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN the two-seed landscape WHEN registered THEN each seed's ClusterRole, each hosted shoot's Role."""
    # The local seed's provider reads its settings from the environment, as under `make`.
    monkeypatch.setenv("KWOK_WORKDIR", "/work/.kwok")
    monkeypatch.setenv("KUBERNETES_VERSION", "v1.34.4")
    built, mocks = registered(plan(), provider_for, TwoSeedMocks())
    types = {name: typ for typ, name in mocks.typed}
    inputs = {name: outputs for (_, name), outputs in mocks.typed.items()}
    assert types["arbor-seed-local-1-extensions-clusterrole"] == "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
    binding = inputs["arbor-seed-local-2-extensions-clusterrolebinding"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "namespace": ACCOUNT_2[0], "name": ACCOUNT_2[1]}]
    # A hosted shoot's Role and RoleBinding: one ObjectSet in the garden, after the record (whose uid names the entry).
    rights = {
        name: obj
        for (typ, name), obj in expanded(mocks.typed).items()
        if name.startswith("arbor-shoot-dev-web-extensions/")
    }
    role = next(obj for obj in rights.values() if obj["kind"] == "Role")
    assert (role["metadata"]["name"], role["metadata"]["namespace"]) == ("arbor.dev:extensions:shoot:web", "garden-dev")
    assert sorted(obj["kind"] for obj in rights.values()) == ["Role", "RoleBinding"]
    entry = role["rules"][1]["resourceNames"][0]
    assert entry.startswith("shoot--dev--web--") and len(entry) > len("shoot--dev--web--")
    assert "arbor-shoot-dev-web-record" in built.edges["arbor-shoot-dev-web-extensions"]
    assert "arbor-shoot-ops-root-extensions" not in types
