"""A landscape sharded per seed: each stack's part, the refusals across stacks, and moving a seed's state."""

from __future__ import annotations

import json
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


def with_backups(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with local backups on both seeds: a control plane can move between them."""
    for seed in doc["seeds"]:
        seed["backup"] = {"provider": "local"}
    return doc


def test_a_shoot_moves_between_seed_stacks_only_with_its_state() -> None:
    """GIVEN ops/db recorded on local-2 WHEN the document puts it on local-1 THEN each seed stack run alone refuses.

    Its stack refuses to let go of it, the other to take it while a sibling's state holds it; both name the shoot
    by its index in the document and say to run `make up`. Once its records moved with its state (hack/shards.py
    migrate), the target stack takes it and its preview lists the migration's steps.
    """
    doc = with_backups(sharded())
    doc["shoots"][1]["seed"] = "local-1"
    recorded = checks.records(checks.check(with_backups(sharded()), SEED_2, dict, lambda s: IDENTITY).plan)
    source = refusal(SEED_2, recorded, doc)
    assert "shoots[1].seed: local-2 -> local-1: its control plane moves to the seed stack prod.local-1" in source
    target = refusal(SEED_1, {}, doc, **{"prod": IDENTITY, "prod.local-2": recorded})
    assert "landscape.shoots[1].seed: ops/db runs on seed local-2 (stack prod.local-2), whose state holds it" in target
    assert source.count("run `make up`") == target.count("run `make up`") == 1
    moved = {key: {"ops/db": recorded[key]["ops/db"]} for key in ("shoots", "networks", "credentials")}
    taken = checks.check(doc, SEED_1, lambda: moved, lambda s: {**IDENTITY} if s == "prod" else {})
    assert [s.ref for s in taken.plan.shoots] == ["dev/web", "ops/db"]
    assert any("migrates ops/db's control plane from seed local-2 to local-1" in n for n in taken.notices)


def test_a_move_between_seed_stacks_is_refused_as_a_move_in_one_stack() -> None:
    """GIVEN a target seed without backups WHEN a shoot's document moves it there THEN the source says why, once."""
    doc = sharded()
    doc["seeds"][0]["backup"] = {"provider": "local"}
    recorded = checks.records(checks.check(sharded(), SEED_1, dict, lambda s: IDENTITY).plan)
    doc["shoots"][0]["seed"] = "local-2"
    lines = checks_lines(SEED_1, recorded, doc)
    assert lines == [
        "landscape.shoots[0].seed: local-1 -> local-2: a migration moves etcd and the shoot's state through the "
        "seeds' buckets, and seed local-2 has no backup; add it first"
    ]


def checks_lines(shard: Shard, previous: dict[str, Any], doc: dict[str, Any]) -> list[str]:
    """The lines of the refusal the shard's stack gets."""
    with pytest.raises(checks.RefusalError) as refused:
        checks.check(doc, shard, lambda: previous, lambda s: IDENTITY if s == "prod" else {})
    return refused.value.lines


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


# --- hack/shards.py migrate: a shoot's state handed from its seed stack to another's (hack/shoot_moves.py)


def l_urn(stack: str, chain: str, name: str) -> str:
    """A URN under the Landscape component of a seed stack."""
    return f"urn:pulumi:{stack}::arbor::arbor:landscape:Landscape{chain}::{name}"


def seed_stack_state(stack: str, seed: str, garden_id: str, shoots: dict[str, Any]) -> list[dict[str, Any]]:
    """A seed stack's resources: its Stack (recording `shoots`), the Landscape, the garden's provider, its Seed.

    The Seed has a cluster and a provider.
    """
    seed_c = l_urn(stack, "$arbor:seed:Seed", f"arbor-seed-{seed}")
    records = {"shoots": shoots, "networks": {k: {} for k in shoots}, "credentials": {k: {} for k in shoots}}
    return [
        {"urn": f"urn:pulumi:{stack}::arbor::pulumi:pulumi:Stack::arbor-{stack}", "type": "pulumi:pulumi:Stack",
         "outputs": {**records, "encryption": {}}},
        {"urn": l_urn(stack, "", "arbor"), "type": "arbor:landscape:Landscape"},
        {"urn": l_urn(stack, "$pulumi:providers:kubernetes", "arbor-garden-k8s"), "id": garden_id, "custom": True,
         "type": "pulumi:providers:kubernetes", "parent": l_urn(stack, "", "arbor")},
        {"urn": seed_c, "type": "arbor:seed:Seed", "parent": l_urn(stack, "", "arbor")},
        {"urn": l_urn(stack, "$arbor:seed:Seed$x:Cluster", f"arbor-seed-{seed}-cluster"), "id": "c", "custom": True,
         "type": "x:Cluster", "parent": seed_c},
        {"urn": l_urn(stack, "$arbor:seed:Seed$pulumi:providers:kubernetes", f"arbor-seed-{seed}-k8s"),
         "id": f"{seed}-p", "custom": True, "type": "pulumi:providers:kubernetes", "parent": seed_c,
         "dependencies": [l_urn(stack, "$arbor:seed:Seed$x:Cluster", f"arbor-seed-{seed}-cluster")]},
    ]  # fmt: skip


def dev_web(stack: str, seed: str) -> list[dict[str, Any]]:
    """dev/web's resources in a seed stack: its seed namespace, its Shoot, a record in the garden, a Secret there."""
    shoot = l_urn(stack, "$arbor:shoot:Shoot", "arbor-shoot-dev-web")
    seed_c = l_urn(stack, "$arbor:seed:Seed", f"arbor-seed-{seed}")
    seed_p = l_urn(stack, "$arbor:seed:Seed$pulumi:providers:kubernetes", f"arbor-seed-{seed}-k8s")
    return [
        {"urn": l_urn(stack, "$arbor:seed:Seed$kubernetes:core/v1:Namespace", f"arbor-seed-{seed}-shoot--dev--web"),
         "id": "shoot--dev--web", "custom": True, "type": "kubernetes:core/v1:Namespace", "parent": seed_c,
         "provider": f"{seed_p}::{seed}-p"},
        {"urn": shoot, "type": "arbor:shoot:Shoot", "parent": l_urn(stack, "", "arbor")},
        {"urn": l_urn(stack, "$arbor:shoot:Shoot$kubernetes:x", "arbor-shoot-dev-web-record"), "id": "r",
         "custom": True, "type": "kubernetes:x", "parent": shoot,
         "provider": f"{l_urn(stack, '$pulumi:providers:kubernetes', 'arbor-garden-k8s')}::g1"},
        {"urn": l_urn(stack, "$arbor:shoot:Shoot$kubernetes:core/v1:Secret", "arbor-shoot-dev-web-ca"), "id": "s",
         "custom": True, "type": "kubernetes:core/v1:Secret", "parent": shoot, "provider": f"{seed_p}::{seed}-p",
         "dependencies": [l_urn(stack, "$arbor:seed:Seed$x:Cluster", f"arbor-seed-{seed}-cluster")]},
    ]  # fmt: skip


def moved_web(monkeypatch: pytest.MonkeyPatch, backups: bool = True) -> Backend:
    """Both seed stacks of a landscape whose document moved dev/web from local-1 to local-2."""
    doc = with_backups(sharded()) if backups else sharded()
    doc["shoots"][0]["seed"] = "local-2"
    before = {"dev/web": {"seed": "local-1"}}
    backend = Backend(monkeypatch, [])
    monkeypatch.setattr(shards, "spec_of", lambda _: checks.parse_landscape(doc))
    backend.states["prod.local-1"] = {"version": 3, "deployment": {
        "resources": [*seed_stack_state("prod.local-1", "local-1", "g1", before), *dev_web("prod.local-1", "local-1")]
    }}  # fmt: skip
    backend.states["prod.local-2"] = {"version": 3, "deployment": {
        "resources": seed_stack_state("prod.local-2", "local-2", "g2", {})
    }}  # fmt: skip
    return backend


def test_a_shoot_moved_to_another_seed_moves_its_state_and_records(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """GIVEN dev/web's state in local-1's stack WHEN the document moves it to local-2 THEN its stack takes it over.

    Its Shoot with everything under it, its namespace on local-1 (under a copy of local-1's Seed component and
    provider, which local-2's update deletes after the migration) and its records; the garden's provider becomes
    local-2's own; local-1's stack keeps its seed and cluster and no longer knows dev/web.
    """
    backend = moved_web(monkeypatch)
    assert (
        shards.pending("prod")[-1]
        == "shoot dev/web: its state is still in prod.local-1; `make up` moves it to prod.local-2"
    )
    shards.migrate("prod")
    assert backend.imports == ["prod.local-2", "prod.local-1"]
    assert "moved 4 resources of shoot dev/web from prod.local-1 to prod.local-2" in capsys.readouterr().out
    assert backend.urns("prod.local-1") == [r["urn"] for r in seed_stack_state("prod.local-1", "local-1", "g1", {})]
    target = backend.states["prod.local-2"]["deployment"]["resources"]
    web = dev_web("prod.local-2", "local-1")
    assert [r["urn"] for r in target] == [
        *(r["urn"] for r in seed_stack_state("prod.local-2", "local-2", "g2", {})),
        l_urn("prod.local-2", "$arbor:seed:Seed", "arbor-seed-local-1"),
        l_urn("prod.local-2", "$arbor:seed:Seed$pulumi:providers:kubernetes", "arbor-seed-local-1-k8s"),
        *(r["urn"] for r in web),
    ]
    by_urn = {r["urn"]: r for r in target}
    assert by_urn[web[2]["urn"]]["provider"].endswith("arbor-garden-k8s::g2")
    assert by_urn[web[3]["urn"]]["provider"].endswith("arbor-seed-local-1-k8s::local-1-p")
    assert by_urn[web[3]["urn"]]["dependencies"] == []  # local-1's cluster stays in its stack
    assert target[0]["outputs"]["shoots"] == {"dev/web": {"seed": "local-1"}}
    assert set(target[0]["outputs"]["networks"]) == {"dev/web"}
    assert backend.states["prod.local-1"]["deployment"]["resources"][0]["outputs"]["shoots"] == {}
    shards.migrate("prod")
    assert backend.imports == ["prod.local-2", "prod.local-1"] and shards.pending("prod") == []


def test_a_hand_over_killed_between_its_imports_is_finished_by_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN a hand-over killed after the target's import WHEN run again THEN the source lets go; nothing twice."""
    backend = moved_web(monkeypatch)
    backend.fail_on = "prod.local-1"
    with pytest.raises(KeyboardInterrupt):
        shards.migrate("prod")
    taken = json.dumps(backend.states["prod.local-2"])
    shards.migrate("prod")
    assert backend.imports == ["prod.local-2", "prod.local-1"]
    assert json.dumps(backend.states["prod.local-2"]) == taken
    assert not any("dev-web" in u or "dev--web" in u for u in backend.urns("prod.local-1"))


def test_a_move_the_checks_refuse_leaves_the_state_where_it_is(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """GIVEN seeds without backups WHEN dev/web's document moves it THEN nothing moves, and stderr says why."""
    backend = moved_web(monkeypatch, backups=False)
    shards.migrate("prod")
    assert backend.imports == []
    assert "dev/web stays in its stack: landscape.shoots[0].seed: local-1 -> local-2: a migration" in (
        capsys.readouterr().err
    )


def test_a_hand_over_never_takes_another_resource_along(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN local-1's provider under its cluster WHEN dev/web moves THEN refused: the copy would delete the cluster."""
    backend = moved_web(monkeypatch)
    resources = backend.states["prod.local-1"]["deployment"]["resources"]
    resources[5]["parent"] = resources[4]["urn"]  # the seed's provider under its cluster resource
    with pytest.raises(SystemExit, match=r"would take .*arbor-seed-local-1-cluster along; not moved"):
        shards.migrate("prod")
    assert backend.imports == []


def test_a_shoot_moves_into_a_seed_stack_that_never_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN local-2's stack made but never run WHEN dev/web moves there THEN its state starts with dev/web's records.

    It takes the source's secrets settings, and none of the source stack's other outputs.
    """
    backend = moved_web(monkeypatch)
    backend.states["prod.local-1"]["deployment"]["secrets_providers"] = {"type": "passphrase", "state": {"salt": "x"}}
    backend.states["prod.local-2"] = {"version": 3, "deployment": {}}
    backend.states["prod.local-1"]["deployment"]["resources"][0]["outputs"]["shard"] = {"seed": "local-1"}
    shards.migrate("prod")
    target = backend.states["prod.local-2"]["deployment"]
    assert target["secrets_providers"] == {"type": "passphrase", "state": {"salt": "x"}}
    assert target["resources"][0]["urn"] == "urn:pulumi:prod.local-2::arbor::pulumi:pulumi:Stack::arbor-prod.local-2"
    assert target["resources"][0]["outputs"] == {
        "shoots": {"dev/web": {"seed": "local-1"}},
        "networks": {"dev/web": {}},
        "credentials": {"dev/web": {}},
    }
    assert len(target["resources"]) == 1 + 4 + len(dev_web("prod.local-2", "local-1"))
