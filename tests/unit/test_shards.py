"""A landscape sharded per seed: each stack's part, the refusals across stacks, and moving a seed's state."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components import checks, stacks
from components.checks.shards import landscape_record
from components.plan.shards import Shard, scope
from tests.unit.spec_cases import base

sys.path.insert(0, str(Path(__file__).parents[2] / "hack"))
import shards

GARDEN, SEED_1, SEED_2 = Shard("prod"), Shard("prod", "local-1"), Shard("prod", "local-2")
IDENTITY = {"landscape": {"name": "prod", "uid": "u1"}}


def sharded() -> dict[str, Any]:
    """Base (dev/web, ops/db on local-1; ops/root self-hosted) with a seed local-2 hosting ops/db, per seed."""
    doc = base()
    doc["seeds"].append({"name": "local-2", "provider": "local", "zones": ["local-a"]})
    doc["shoots"][1]["seed"] = "local-2"
    return {**doc, "stacks": "perSeed"}


def part(shard: Shard, doc: dict[str, Any] | None = None, **outputs: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The seeds and shoots (by ref) the shard's stack registers; `outputs` are other stacks' outputs by name."""
    plan = checks.check(doc or sharded(), shard, dict, lambda s: outputs.get(s, IDENTITY if s == "prod" else {})).plan
    return [s.name for s in plan.seeds], [s.ref for s in plan.shoots]


def refusal(shard: Shard, previous: dict[str, Any], doc: dict[str, Any] | None = None, **others: Any) -> str:
    """The refusal the shard's stack gets with these records."""
    with pytest.raises(checks.RefusalError) as refused:
        checks.check(
            doc or sharded(), shard, lambda: previous, lambda s: others.get(s, IDENTITY if s == "prod" else {})
        )
    return str(refused.value)


def test_each_stack_registers_its_part() -> None:
    """GIVEN a landscape per seed WHEN planned for each stack THEN garden, seed and self-hosted shoots split so."""
    assert part(GARDEN) == ([], ["ops/root"])
    assert part(SEED_1) == (["local-1"], ["dev/web"])
    assert part(SEED_2) == (["local-2"], ["ops/db"])
    # One stack keeps the whole landscape.
    one = {**sharded(), "stacks": "one"}
    assert part(GARDEN, one) == (["local-1", "local-2"], ["dev/web", "ops/db", "ops/root"])


def test_a_seed_stack_of_a_landscape_in_one_stack_is_refused() -> None:
    """GIVEN stacks: one WHEN a seed stack runs THEN refused, naming landscape.stacks."""
    assert "landscape.stacks: one, but prod.local-1 is a seed stack" in refusal(
        SEED_1, {}, {**sharded(), "stacks": "one"}
    )


def test_a_seed_stack_needs_its_garden_stack_first() -> None:
    """GIVEN a garden stack that never ran WHEN a seed stack runs THEN refused: run the garden stack first."""
    assert "the garden stack prod has not run yet" in refusal(SEED_1, {}, prod={})


def test_a_seed_stack_refuses_another_landscapes_garden() -> None:
    """GIVEN a seed stack that ran against garden u0 WHEN the garden stack is u1 THEN refused with both."""
    lines = refusal(SEED_1, {"shard": {"landscape": "prod", "seed": "local-1", "garden": "u0"}})
    assert "arbor:shard.landscape: prod.local-1 was converged against the garden u0" in lines
    assert "prod's garden is u1" in lines
    other = {"landscape": {"name": "staging", "uid": "u1"}}
    assert "is the garden stack of landscape staging" in refusal(SEED_1, {}, prod=other)


def test_a_shoot_never_moves_between_seed_stacks() -> None:
    """GIVEN dev/web recorded on local-1 WHEN the document puts it on local-2 THEN both seed stacks refuse."""
    doc = sharded()
    doc["shoots"][0]["seed"] = "local-2"
    recorded = {"shoots": checks.records(checks.check(sharded(), SEED_1, dict, lambda s: IDENTITY).plan)["shoots"]}
    assert "landscape.shoots[0].seed: local-1 -> local-2" in refusal(SEED_1, recorded, doc)
    target = refusal(SEED_2, {}, doc, **{"prod": IDENTITY, "prod.local-1": recorded})
    assert "landscape.shoots[0].seed: dev/web runs on seed local-1 (stack prod.local-1)" in target


def test_the_garden_stack_after_the_move_refuses_nothing() -> None:
    """GIVEN the records of the landscape as one stack WHEN the garden stack runs per seed THEN nothing is refused."""
    one = {**sharded(), "stacks": "one"}
    records = checks.records(checks.check(one, GARDEN, dict).plan)
    plan = checks.check(sharded(), GARDEN, lambda: records).plan
    assert [s.ref for s in plan.shoots] == ["ops/root"]
    # A seed removed from the document is still a deletion its seed stack needs confirmed.
    doc = sharded()
    doc["seeds"].pop()
    doc["shoots"].pop(1)
    seeds = {"seeds": checks.records(checks.check(sharded(), SEED_2, dict, lambda s: IDENTITY).plan)["seeds"]}
    assert scope(checks.check(doc, GARDEN, dict).plan, SEED_2).seeds == ()
    assert "local-2" in refusal(SEED_2, {**seeds, "seeds": {"local-2": {"shoots": ["ops/db"]}}}, doc)


def test_the_landscape_keeps_its_uid() -> None:
    """GIVEN a garden stack's recorded identity WHEN recorded again THEN the uid stays; a first one is drawn."""
    assert landscape_record("prod", IDENTITY, "new")["uid"] == "u1"
    assert landscape_record("prod", {}, "new") == {"name": "prod", "uid": "new"}


@given(st.one_of(st.none(), st.text(), st.dictionaries(st.text(), st.one_of(st.text(), st.integers(), st.none()))))
def test_any_shard_config_is_a_shard_or_a_refusal(raw: Any) -> None:
    """GIVEN any arbor:shard value WHEN read THEN a Shard naming this stack, or a RefusalError naming the field."""
    try:
        shard = stacks.shard_of(raw, "prod.local-1")
    except checks.RefusalError as refused:
        assert all(line.startswith("arbor:shard") for line in refused.lines)
    else:
        assert shard.stack == "prod.local-1"


def test_a_seed_stack_reads_its_landscapes_document(tmp_path: Path) -> None:
    """GIVEN the garden stack's config file WHEN a seed stack reads its document THEN it is that file's landscape."""
    (tmp_path / "Pulumi.prod.yaml").write_text("config:\n  arbor:landscape: {garden: {provider: local}}\n")
    assert stacks.document(SEED_1, tmp_path) == {"garden": {"provider": "local"}}
    with pytest.raises(checks.RefusalError, match=r"arbor:shard\.landscape: cannot read"):
        stacks.document(Shard("staging", "local-1"), tmp_path)


# --- hack/shards.py: a seed's part of the state handed over, URNs kept but for the stack's name

P = "urn:pulumi:prod::arbor::arbor:landscape:Landscape"
STACK = {"urn": "urn:pulumi:prod::arbor::pulumi:pulumi:Stack::arbor-prod", "type": "pulumi:pulumi:Stack"}
LANDSCAPE = {"urn": P, "type": "arbor:landscape:Landscape", "parent": STACK["urn"]}
GARDEN_C = {"urn": f"{P}$arbor:garden:Garden::arbor-garden", "type": "arbor:garden:Garden", "parent": P}
CLUSTER = {"urn": f"{P}$arbor:garden:Garden$x:Cluster::arbor-garden-cluster", "type": "x", "parent": GARDEN_C["urn"]}
PROVIDER = {
    "urn": f"{P}$arbor:garden:Garden$pulumi:providers:kubernetes::arbor-garden-k8s",
    "id": "p1",
    "type": "pulumi:providers:kubernetes",
    "parent": GARDEN_C["urn"],
    "dependencies": [CLUSTER["urn"]],
}
SEED = {"urn": f"{P}$arbor:seed:Seed::arbor-seed-local-1", "type": "arbor:seed:Seed", "parent": P}
RECORD = {
    "urn": f"{P}$arbor:seed:Seed$kubernetes:x::arbor-seed-local-1-record",
    "type": "kubernetes:x",
    "parent": SEED["urn"],
    "provider": f"{PROVIDER['urn']}::p1",
    "dependencies": [CLUSTER["urn"]],
}
OTHER = {"urn": f"{P}$arbor:seed:Seed::arbor-seed-local-2", "type": "arbor:seed:Seed", "parent": P}


def test_a_seeds_state_moves_with_what_it_needs_and_nothing_else() -> None:
    """GIVEN a one-stack state WHEN seed local-1's part moves THEN it leaves the source and keeps its URNs' parents.

    Its ancestors and the garden's provider are copied (renamed to the seed stack), references to what stays in
    the garden stack are dropped, and the other seed stays where it is.
    """
    resources: list[dict[str, Any]] = [STACK, LANDSCAPE, GARDEN_C, CLUSTER, PROVIDER, SEED, RECORD, OTHER]
    deployment = {"resources": resources}
    moving = shards.subtree(resources, {"arbor-seed-local-1"})
    assert moving == {SEED["urn"], RECORD["urn"]}
    source, dest = shards.split(deployment, moving, "prod", "prod.local-1")
    assert [r["urn"] for r in source["resources"]] == [
        r["urn"] for r in (STACK, LANDSCAPE, GARDEN_C, CLUSTER, PROVIDER, OTHER)
    ]
    renamed = [
        str(r["urn"]).replace("urn:pulumi:prod::", "urn:pulumi:prod.local-1::")
        for r in (LANDSCAPE, GARDEN_C, PROVIDER, SEED, RECORD)
    ]
    assert [r["urn"] for r in dest["resources"]] == [
        "urn:pulumi:prod.local-1::arbor::pulumi:pulumi:Stack::arbor-prod.local-1",
        *renamed,
    ]
    record = dest["resources"][-1]
    assert record["provider"] == f"{renamed[2]}::p1" and record["dependencies"] == []
    assert dest["resources"][3]["dependencies"] == []  # the provider's garden cluster stays in the garden stack


class Backend:
    """Stacks' states in memory, standing in for the backend `hack/shards.py` exports from and imports into."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, resources: list[dict[str, Any]]) -> None:
        self.states: dict[str, dict[str, Any]] = {"prod": {"version": 3, "deployment": {"resources": resources}}}
        self.imports: list[str] = []
        self.fail_on: str | None = None
        monkeypatch.setattr(shards, "existing_stacks", lambda: list(self.states))
        monkeypatch.setattr(shards, "spec_of", lambda _: checks.parse_landscape(sharded()))
        monkeypatch.setattr(shards, "ensure_stack", self.ensure)
        monkeypatch.setattr(shards, "export", lambda stack, who: self.states[stack])
        monkeypatch.setattr(shards, "import_state", self.import_state)

    def ensure(self, landscape: str, seed: str, existing: Any) -> str:
        """A seed stack, empty when new."""
        stack = f"{landscape}.{seed}"
        self.states.setdefault(stack, {"version": 3, "deployment": {}})
        return stack

    def import_state(self, stack: str, state: dict[str, Any], who: str) -> None:
        """Replaces a stack's state; the one named by `fail_on` is killed before it is written, once."""
        if stack == self.fail_on:
            self.fail_on = None
            raise KeyboardInterrupt("killed")
        self.imports.append(stack)
        self.states[stack] = state

    def urns(self, stack: str) -> list[str]:
        """The URNs a stack holds."""
        return [r["urn"] for r in self.states[stack]["deployment"].get("resources") or []]


def test_a_move_killed_between_its_two_imports_is_finished_by_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN a move killed after the seed stack's import WHEN it runs again THEN it finishes; nothing twice or lost."""
    backend = Backend(monkeypatch, [STACK, LANDSCAPE, GARDEN_C, CLUSTER, PROVIDER, SEED, RECORD, OTHER])
    backend.fail_on = "prod"
    with pytest.raises(KeyboardInterrupt):
        shards.move("prod")
    # Killed: the seed's part is in both stacks.
    assert SEED["urn"] in backend.urns("prod") and backend.imports == ["prod.local-1"]
    shards.move("prod")
    # Not imported again into local-1's stack; the landscape's stack lets go of it, and local-2 moves too.
    assert backend.imports == ["prod.local-1", "prod", "prod.local-2", "prod"]
    assert backend.urns("prod") == [r["urn"] for r in (STACK, LANDSCAPE, GARDEN_C, CLUSTER, PROVIDER)]
    assert backend.urns("prod.local-1")[-2:] == [
        str(r["urn"]).replace("urn:pulumi:prod::", "urn:pulumi:prod.local-1::") for r in (SEED, RECORD)
    ]


def test_a_seed_stack_with_other_resources_is_never_overwritten(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN a seed stack holding something else WHEN its seed's part would move THEN refused, nothing imported."""
    backend = Backend(monkeypatch, [STACK, LANDSCAPE, GARDEN_C, CLUSTER, PROVIDER, SEED, RECORD, OTHER])
    stray = {"urn": "urn:pulumi:prod.local-1::arbor::x::stray", "type": "x", "id": "i"}
    backend.states["prod.local-1"] = {"version": 3, "deployment": {"resources": [stray]}}
    with pytest.raises(SystemExit) as refused:
        shards.move("prod")
    assert str(refused.value) == "shards: prod.local-1 already has resources; 2 of seed local-1 are in prod"
    assert backend.imports == [] and backend.urns("prod.local-1") == [stray["urn"]]


@pytest.mark.parametrize(
    ("raw", "lines"),
    [
        ("local-1", ["arbor:shard: must be a mapping {landscape: ..., seed: ...}"]),
        (
            {"landscape": "prod", "seed": "Local_1", "zone": "a"},
            [
                "arbor:shard.zone: unknown field (landscape, seed)",
                "arbor:shard.seed: must name a seed of the landscape (a DNS label)",
            ],
        ),
        (
            {"seed": "local-1"},
            ["arbor:shard.landscape: must name the landscape's garden stack (letters, digits, `_.-`)"],
        ),
        (
            {"landscape": "staging", "seed": "local-1"},
            ["arbor:shard: names the stack staging.local-1, but this is prod.local-1"],
        ),
    ],
)
def test_a_bad_shard_config_is_refused_with_its_lines(raw: Any, lines: list[str]) -> None:
    """GIVEN a bad arbor:shard value WHEN read THEN refused with exactly these lines."""
    with pytest.raises(checks.RefusalError) as refused:
        stacks.shard_of(raw, "prod.local-1")
    assert refused.value.lines == lines
