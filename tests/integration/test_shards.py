"""A one-stack landscape sharded per seed on the real engine, with nothing replaced (docs/shards.md).

One small landscape (garden, two seeds, a hosted shoot on the first), its tests in order: converged as one stack by
`make up`'s script; then `stacks: perSeed`: `make preview`'s script shows the moves in a copy of the backend and
changes no state; `make up`'s script moves each seed's state into its stack (the two run side by side), whose first
update creates, deletes and replaces nothing; the objects keep their UIDs; a second run changes nothing in any
stack; a backup the seed stack takes goes into the one object store the garden stack runs; a seed stack whose garden
stack is another landscape's is refused; a shoot moving to the other seed's stack is refused by each seed stack run
alone, and `make up` hands its state over and migrates its control plane there, with nothing lost.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.engine import (
    LOCAL_LANDSCAPE,
    ROOT,
    SECOND_SEED,
    Stack,
    items,
    kube_items,
    kubectl,
    make_stack,
    remove_stack,
    require_environment,
)
from tests.integration.test_backups import entry_status, secret_data, seed_client

pytestmark = [pytest.mark.integration, pytest.mark.own_landscape]

SEED = LOCAL_LANDSCAPE["seeds"][0]["name"]
# A second seed with backups and no shoot: two seed stacks run side by side, and a shoot moves to it.
OTHER: dict[str, Any] = SECOND_SEED
MACHINES = "machines.machine.sapcloud.io"
WEB = LOCAL_LANDSCAPE["shoots"][0]
# What a seed stack has that the one stack had not: the reference to its garden stack.
NEW_IN_SEED_STACK = {"pulumi:pulumi:StackReference"}
# The objects whose UIDs must survive the move: the seed's namespaces and workloads (the shoot's control plane).
KEPT = [("seed/local-1", ["namespaces"]), ("seed/local-1", ["deployments", "-A"])]


def landscape(**fields: Any) -> dict[str, Any]:
    """The local garden (without encryption), its first seed (local backups) with dev/web, seed local-2."""
    garden = {**LOCAL_LANDSCAPE["garden"]}
    garden.pop("encryption", None)
    return {"garden": garden, "seeds": [LOCAL_LANDSCAPE["seeds"][0], OTHER], "shoots": [WEB], **fields}


def up_script(stack: Stack) -> str:
    """`make up`'s script (hack/up.sh) on the landscape; its output."""
    env = {**os.environ, **(stack.env or {})}
    proc = subprocess.run(
        [str(ROOT / "hack" / "up.sh"), stack.name], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-4000:]
    return proc.stdout


def seed_stack(stack: Stack, seed: str = SEED) -> Stack:
    """A seed stack of the landscape (dev/web's seed's by default)."""
    return Stack(f"{stack.name}.{seed}", stack.project_dir, stack.config_dir, stack.env)


def uids(stack: Stack, tmp_path: Path) -> dict[str, str]:
    """The UIDs of the objects in KEPT, by kind/namespace/name."""
    out = {}
    for key, args in KEPT:
        for item in items(stack, key, tmp_path, *args):
            meta = item["metadata"]
            out[f"{item['kind']}/{meta.get('namespace', '')}/{meta['name']}"] = meta["uid"]
    return out


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    """The landscape, converged once as one stack."""
    require_environment()
    stack = make_stack(ROOT, ROOT / "stacks", {"arbor:landscape": landscape()})
    try:
        up_script(stack)
        yield stack
    finally:
        for seed in (seed_stack(stack), seed_stack(stack, OTHER["name"])):
            seed.run("stack", "rm", "--yes", "--force", check=False)
            (seed.config_dir / f"Pulumi.{seed.name}.yaml").unlink(missing_ok=True)
        remove_stack(stack, destroy=False)


@pytest.fixture(scope="module")
def before(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The UIDs of the kept objects while the landscape is one stack."""
    found = uids(stack, tmp_path_factory.mktemp("uids"))
    assert any(k.startswith("Deployment/") for k in found), found
    return found


def preview_script(stack: Stack, out: Path) -> subprocess.CompletedProcess[str]:
    """`make preview`'s script (hack/preview.sh) on the landscape, without the policy pack."""
    env = {**os.environ, **(stack.env or {})}
    cmd = [str(ROOT / "hack" / "preview.sh"), stack.name, str(out)]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def test_the_preview_of_sharding_shows_the_move_and_changes_no_state(
    stack: Stack, before: dict[str, str], tmp_path: Path
) -> None:
    """GIVEN a one-stack landscape set to stacks: perSeed WHEN `make preview` runs THEN it shows the move, no state.

    The summary has a row per stack and a line for the seed's moved state, and nothing is deleted or replaced;
    afterwards the seed stack does not exist and the one stack still holds the seed.
    """
    stack.set_config({"arbor:landscape": landscape(stacks="perSeed")})
    seeds = [seed_stack(stack), seed_stack(stack, OTHER["name"])]
    proc = preview_script(stack, tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    summary = (tmp_path / "preview.md").read_text()
    assert f"## arbor preview: landscape `{stack.name}`, 3 stacks" in summary
    assert "| **landscape** | **0** | " in summary
    for seed in seeds:
        assert f"resources of seed {seed.name.rsplit('.', 1)[1]} from {stack.name} to {seed.name}" in summary
        assert seed.name not in stack.run("stack", "ls", "--json").stdout
        assert not (seed.config_dir / f"Pulumi.{seed.name}.yaml").exists()
    for digest in [tmp_path / "preview.json", *(tmp_path / f"preview-{s.name}.json" for s in seeds)]:
        ops = {s["op"] for s in json.loads(digest.read_text())["steps"]}
        assert not ops & {"create", "delete", "replace", "create-replacement", "delete-replaced"}, (digest, ops)
    assert any("arbor:seed:Seed" in r["urn"] for r in stack.export()["deployment"]["resources"])


def test_sharding_moves_the_seed_into_its_stack_and_replaces_nothing(
    stack: Stack, before: dict[str, str], tmp_path: Path
) -> None:
    """GIVEN a one-stack landscape WHEN it says stacks: perSeed and `make up` runs THEN nothing is replaced.

    The seed's part moves to its stack, whose first update creates, deletes and replaces nothing; every object
    keeps its UID, and the garden stack keeps none of the seed's resources.
    """
    stack.set_config({"arbor:landscape": landscape(stacks="perSeed")})
    seed = seed_stack(stack)
    out = up_script(stack)
    assert "moved " in out and f"to {seed.name}" in out, out[-3000:]
    # Each seed stack's own history (the two ran side by side): its only update, with what it did.
    for each in (seed, seed_stack(stack, OTHER["name"])):
        changes = json.loads(each.run("stack", "history", "--json").stdout)[0]["resourceChanges"]
        assert set(changes) <= {"same", "update"}, (each.name, changes)
    # Its StackReference is read, not created: the engine counts it with what stayed the same.
    assert {r["type"] for r in seed.export()["deployment"]["resources"]} >= NEW_IN_SEED_STACK
    garden_changes = json.loads(stack.run("stack", "history", "--json").stdout)[0]["resourceChanges"]
    assert set(garden_changes) <= {"same", "update"}, garden_changes
    assert uids(seed, tmp_path) == before
    # The seed's resources are the seed stack's now, and the garden stack keeps none of them.
    garden_urns = {r["urn"] for r in stack.export()["deployment"]["resources"]}
    assert not [u for u in garden_urns if "arbor:seed:Seed" in u or "arbor:shoot:Shoot" in u]
    assert json.loads(seed.run("stack", "output", "shard", "--json").stdout)["seed"] == SEED
    # The landscape's one object store stays in the garden stack; the seed's bucket went with the seed.
    assert list(stack.resource_outputs("pulumi-python:dynamic/arbor:ObjectStore")) == ["local-object-store"]
    assert not seed.resource_outputs("pulumi-python:dynamic/arbor:ObjectStore")
    assert list(seed.resource_outputs("pulumi-python:dynamic/arbor:StoreBucket")) == [f"arbor-seed-{SEED}-backup"]


def test_a_second_run_changes_nothing_in_any_stack(stack: Stack) -> None:
    """GIVEN the sharded landscape WHEN `make up` runs again THEN no stack changes anything."""
    out = up_script(stack)
    assert "moved " not in out
    for s in (stack, seed_stack(stack), seed_stack(stack, OTHER["name"])):
        changes = json.loads(s.run("stack", "history", "--json").stdout)[0]["resourceChanges"]
        assert set(changes) == {"same"}, (s.name, changes)


def test_a_backup_in_a_seed_stack_goes_to_the_garden_stacks_store(stack: Stack, tmp_path: Path) -> None:
    """GIVEN the sharded landscape WHEN `make backup`'s request reaches `make up` THEN dev/web's entry has a new one.

    The seed stack takes it into its bucket in the store the garden stack runs: the entry in the garden names it.
    """
    entry = entry_status(stack, tmp_path, "shoot--dev--web")
    time.sleep(1)  # a snapshot's name holds its second
    asked = dataclasses.replace(stack, env={**(stack.env or {}), "ARBOR_BACKUP_REQUEST": f"t{time.time()}"})
    up_script(asked)
    changes = json.loads(seed_stack(stack).run("stack", "history", "--json").stdout)[0]["resourceChanges"]
    assert changes.get("update", 0) >= 1 and set(changes) <= {"same", "update"}, changes
    taken = entry_status(stack, tmp_path, "shoot--dev--web")
    assert taken["name"] != entry["name"] and taken["time"] >= entry["time"]
    data = secret_data(seed_stack(stack), tmp_path, "shoot--dev--web")
    assert data["endpoint"] == stack.outputs()["objectStore"]
    assert seed_client(data).stat_object(data["bucketName"], taken["name"]).size


def test_a_seed_stack_refuses_another_landscapes_garden(stack: Stack) -> None:
    """GIVEN another landscape's garden stack under the garden stack's name WHEN the seed stack previews THEN refused.

    The garden stack's identity is replaced in its state; the refusal names arbor:shard.landscape and both uids.
    """
    exported = stack.export()
    resources = exported["deployment"]["resources"]
    root = next(r for r in resources if r["type"] == "pulumi:pulumi:Stack")
    original = json.loads(json.dumps(root["outputs"]))
    root["outputs"]["landscape"]["uid"] = "another-landscape"
    path = Path(stack.config_dir).parent / f".{stack.name}-other.json"
    try:
        path.write_text(json.dumps(exported))
        stack.run("stack", "import", "--file", str(path))
        proc = seed_stack(stack).run("preview", check=False)
        assert proc.returncode != 0
        assert "arbor:shard.landscape:" in proc.stdout + proc.stderr
        assert "another-landscape" in proc.stdout + proc.stderr
    finally:
        root["outputs"] = original
        path.write_text(json.dumps(exported))
        stack.run("stack", "import", "--file", str(path))
        path.unlink(missing_ok=True)


def test_a_seed_stack_run_alone_never_moves_a_shoot(stack: Stack) -> None:
    """GIVEN dev/web on local-1 WHEN the document puts it on local-2 THEN each seed stack previewed alone refuses.

    Its own stack refuses to let go of it, the other to take it while its sibling's state holds it; both say that
    `make up` moves its state first. Nothing changes.
    """
    stack.set_config({"arbor:landscape": landscape(stacks="perSeed", shoots=[{**WEB, "seed": OTHER["name"]}])})
    try:
        source = seed_stack(stack).run("preview", check=False)
        target = seed_stack(stack, OTHER["name"]).run("preview", check=False)
    finally:
        stack.set_config({"arbor:landscape": landscape(stacks="perSeed")})
    assert source.returncode != 0 and target.returncode != 0
    said = source.stdout + source.stderr
    assert f"landscape.shoots[0].seed: {SEED} -> {OTHER['name']}: its control plane moves to the seed stack " in said
    assert "run `make up`" in said
    said = target.stdout + target.stderr
    assert f"dev/web runs on seed {SEED} (stack {seed_stack(stack).name}), whose state holds it" in said


def test_make_up_moves_a_shoot_to_another_seed_stack_and_nothing_is_lost(stack: Stack, tmp_path: Path) -> None:
    """GIVEN a ConfigMap in dev/web WHEN the document puts it on local-2 THEN `make up` migrates it to local-2's stack.

    `make preview` shows the hand-over and the migration; after `make up`, the ConfigMap, the Nodes and the Machines
    are the same objects, the admin kubeconfig from before still works, the garden's record names local-2, nothing
    of dev/web is left on local-1 or in its stack's state, and a second `make up` changes nothing in any stack.
    """
    source, target = seed_stack(stack), seed_stack(stack, OTHER["name"])
    admin, ns = source.admin_kubeconfig("dev/web"), "shoot--dev--web"
    kubectl(admin, tmp_path, "create", "configmap", "settings", "--from-literal=colour=blue")
    (settings,) = kube_items(admin, tmp_path, "configmaps", "--field-selector", "metadata.name=settings")
    assert settings["data"] == {"colour": "blue"}
    nodes = {n["metadata"]["name"]: n["metadata"]["uid"] for n in kube_items(admin, tmp_path, "nodes")}
    machines = sorted(m["metadata"]["name"] for m in items(source, f"seed/{SEED}", tmp_path, MACHINES, "-n", ns))
    assert nodes and machines
    stack.set_config({"arbor:landscape": landscape(stacks="perSeed", shoots=[{**WEB, "seed": OTHER["name"]}])})

    proc = preview_script(stack, tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    summary = (tmp_path / "preview.md").read_text()
    assert f"of shoot dev/web from {source.name} to {target.name}" in summary, summary
    assert f"migrates dev/web's control plane from seed {SEED} to {OTHER['name']}" in summary, summary
    out = up_script(stack)
    assert f"of shoot dev/web from {source.name} to {target.name}, whose update migrates" in out

    (after,) = kube_items(admin, tmp_path, "configmaps", "--field-selector", "metadata.name=settings")
    assert (after["metadata"]["uid"], after["data"]) == (settings["metadata"]["uid"], settings["data"])
    assert {n["metadata"]["name"]: n["metadata"]["uid"] for n in kube_items(admin, tmp_path, "nodes")} == nodes
    moved = items(target, f"seed/{OTHER['name']}", tmp_path, MACHINES, "-n", ns)
    assert sorted(m["metadata"]["name"] for m in moved) == machines
    left = kubectl(source.outputs()["kubeconfigs"][f"seed/{SEED}"], tmp_path, "get", "ns", "-o", "name")
    assert f"namespace/{ns}" not in left
    (record,) = [r for r in items(stack, "garden", tmp_path, "shoots.arbor.dev", "-n", "garden-dev")
                 if r["metadata"]["name"] == "web"]  # fmt: skip
    assert record["spec"]["seedName"] == OTHER["name"]
    assert not [r["urn"] for r in source.export()["deployment"]["resources"] if "dev-web" in r["urn"]]
    urns = [r["urn"] for r in target.export()["deployment"]["resources"]]
    assert any(u.endswith("::arbor-shoot-dev-web") for u in urns)
    assert not [u for u in urns if f"arbor-seed-{SEED}" in u]  # the copies the migration needed are gone
    assert "dev/web" in target.outputs()["shoots"] and "dev/web" not in source.outputs()["shoots"]

    up_script(stack)
    for one in (stack, source, target):
        steps = one.preview_json("--refresh")["steps"]
        assert [(s["op"], s["urn"]) for s in steps if s["op"] not in ("same", "refresh", "read")] == [], one.name
