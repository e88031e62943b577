"""hack/deletions.py: what `make up` unprotects for confirmed deletions, and what `make preview` still refuses."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[2] / "hack"))
import deletions

from components import checks
from tests.unit.spec_cases import base

ROOT = "urn:pulumi:s::arbor::arbor:landscape:Landscape"
LANDSCAPE = f"{ROOT}::arbor"


def resource(type_: str, name: str, parent: str | None, protect: bool = False) -> dict[str, Any]:
    """One resource of `pulumi stack export` (its URN's type chain shortened)."""
    return {"urn": f"{ROOT}${type_}::{name}", "type": type_, "parent": parent, "protect": protect}


def state() -> list[dict[str, Any]]:
    """A state with dev/web and ops/db, each with a protected cluster and an unprotected status."""
    out = []
    for shoot in ("arbor-shoot-dev-web", "arbor-shoot-ops-db"):
        component = resource("arbor:shoot:Shoot", shoot, LANDSCAPE)
        out += [
            component,
            resource("arbor:LocalCluster", f"{shoot}-cluster", component["urn"], protect=True),
            resource("arbor:ShootStatus", f"{shoot}-status", component["urn"]),
        ]
    return out


def plan_without_web(confirm: dict[str, list[str]] | None) -> Any:
    """The plan of the base landscape without dev/web (confirmed when `confirm` says so), and the records before."""
    before = checks.records(checks.check(base(), "s", dict).plan)
    doc = {**base(), "shoots": base()["shoots"][1:], **({"confirmDeletion": confirm} if confirm else {})}
    return checks.check(doc, "s", lambda: before).plan, before


def test_a_confirmed_shoot_has_its_protected_resources_unprotected_and_nothing_else() -> None:
    """GIVEN dev/web removed and confirmed WHEN planned THEN only its cluster is unprotected."""
    plan, before = plan_without_web({"shoots": ["dev/web"]})
    components = deletions.components_to_delete(plan, before)
    assert components == {"arbor-shoot-dev-web": "shoot dev/web"}
    assert deletions.protected_under(state(), components) == {
        "arbor-shoot-dev-web": [f"{ROOT}$arbor:LocalCluster::arbor-shoot-dev-web-cluster"]
    }


def test_a_seed_without_shoots_goes_without_confirmation_one_with_shoots_only_confirmed() -> None:
    """GIVEN the records of two seeds, one hosting nothing WHEN both are gone THEN only the empty one goes."""
    plan, _ = plan_without_web({"shoots": ["dev/web"]})
    before = {"seeds": {"empty": {"shoots": []}, "busy": {"shoots": ["dev/x"]}, "local-1": {"shoots": ["ops/db"]}}}
    assert deletions.components_to_delete(plan, before) == {
        "arbor-shoot-dev-web": "shoot dev/web",
        "arbor-seed-empty": "seed empty",
    }


def test_the_preview_is_refused_for_a_protected_deletion_that_is_not_confirmed() -> None:
    """GIVEN a preview deleting a confirmed and an unconfirmed protected resource WHEN verified THEN one line."""
    web, db = (f"{ROOT}$arbor:LocalCluster::arbor-shoot-{s}-cluster" for s in ("dev-web", "ops-db"))
    steps = [
        {"op": "delete", "urn": web, "oldState": {"protect": True}},
        {"op": "replace", "urn": db, "oldState": {"protect": True}},
        {"op": "delete", "urn": f"{ROOT}$arbor:ShootStatus::x", "oldState": {}},
    ]
    assert deletions.unexpected({"steps": steps}, {web}) == [
        f"{db}: replace of a protected resource; `up` refuses it (only confirmed deletions lift the protection, "
        "landscape.confirmDeletion)"
    ]
