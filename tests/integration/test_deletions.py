"""Changes with no way back on the real engine: refused before anything changes, a minor upgrade's roll, a deletion.

One small stack (garden, a seed, two hosted shoots of one project), its tests in order: data-bearing resources are
protected in the state; a downgrade fails the preview with its line; a Kubernetes minor upgrade rolls the pool,
as the preview says, by machine-controller-manager replacing the machine; an unconfirmed removal fails the
preview with its line; with `confirmDeletion` the `make up` path (hack/deletions.py, then `pulumi up`) deletes the
shoot, its cluster (after a final snapshot into its entry) and its protected CAs and keys, and nothing of the other
shoot, which shares its seed and its project's namespace in the garden: all a deletion could wrongly reach.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import preview_summary
import pytest

from components.reconciler import entry_status as listed_status
from components.reconciler import entry_store
from tests.integration.engine import (
    LOCAL_LANDSCAPE,
    ROOT,
    SECOND_SEED,
    Stack,
    cluster_dir,
    items,
    kube_items,
    kubectl,
    make_stack,
    processes_of,
    remove_stack,
    require_environment,
    steps_by_type,
)
from tests.integration.test_backups import from_seed, restored_keys, secret_data, seed_client
from tests.integration.test_encryption import etcd_value

pytestmark = [pytest.mark.integration, pytest.mark.own_landscape]

# web moved into db's project, so the two share the project's namespace in the garden as well as the seed.
WEB, DB = {**LOCAL_LANDSCAPE["shoots"][0], "project": "ops"}, LOCAL_LANDSCAPE["shoots"][1]


def landscape(**fields: Any) -> dict[str, Any]:
    """The local garden and seed with ops/web and ops/db, and `fields` at the top of the landscape."""
    garden = {**LOCAL_LANDSCAPE["garden"]}
    garden.pop("encryption", None)
    return {"garden": garden, "seeds": [*LOCAL_LANDSCAPE["seeds"], SECOND_SEED], "shoots": [WEB, DB], **fields}


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    """The small stack, converged once."""
    require_environment()
    stack = make_stack(ROOT, ROOT / "stacks", {"arbor:landscape": landscape()})
    try:
        stack.make_up()
        yield stack
    finally:
        remove_stack(stack, destroy=False)


def hack_deletions(stack: Stack, *args: str) -> str:
    """hack/deletions.py on the stack, as `make preview` runs it; its output."""
    cmd = [sys.executable, str(ROOT / "hack" / "deletions.py"), stack.name, *args]
    return subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def refused_preview(stack: Stack) -> str:
    """The output of a preview that must fail before any step."""
    proc = stack.run("preview", "--json", check=False)
    assert proc.returncode != 0
    preview = json.loads(proc.stdout)
    steps = preview.get("steps") or []
    assert [s["op"] for s in steps if s["op"] != "same" and "Stack" not in s["urn"]] == []
    # The diagnostics as written (the JSON on stdout escapes `>`).
    return "\n".join(str(d.get("message", "")) for d in preview.get("diagnostics") or []) + proc.stderr


def names(stack: Stack, protected: bool = False) -> set[str]:
    """Names of the resources in the stack's state (only the protected ones with `protected`)."""
    resources = stack.export()["deployment"]["resources"]
    return {r["urn"].rsplit("::", 1)[-1] for r in resources if r.get("protect") or not protected}


def test_data_bearing_resources_are_protected_in_the_state(stack: Stack) -> None:
    """GIVEN the converged stack THEN its clusters, encryption keys, CAs and keys are protected, leaves are not."""
    protected = names(stack, protected=True)
    assert {"arbor-garden-cluster", "arbor-seed-local-1-cluster", "arbor-shoot-ops-web-cluster"} <= protected
    assert {"arbor-shoot-ops-web-encryption-keys", "arbor-shoot-ops-web-pki-ca-etcd"} <= protected
    assert "arbor-shoot-ops-web-pki-leaves" not in protected


def test_a_downgrade_is_refused(stack: Stack) -> None:
    """GIVEN dev/web at 1.34.4 WHEN previewed at 1.33.0 THEN the preview fails with the downgrade line."""
    stack.set_config({"arbor:landscape": landscape(shoots=[{**WEB, "kubernetes": {"version": "1.33.0"}}, DB])})
    try:
        out = refused_preview(stack)
    finally:
        stack.set_config({"arbor:landscape": landscape()})
    assert (
        "landscape.shoots[0].kubernetes.version: 1.34.4 -> 1.33.0 is a downgrade; Kubernetes does not support "
        "downgrading a control plane (etcd data is written by the newer version)" in out
    )


def test_a_kubernetes_minor_upgrade_rolls_the_pool(stack: Stack, tmp_path: Path) -> None:
    """GIVEN ops/db at 1.33 WHEN upgraded to 1.34 THEN the preview says its pool rolls and MCM replaces its machine."""
    ns, key = "shoot--ops--db", "shoot/ops/db"
    seed = "seed/local-1"
    before = {m["metadata"]["name"] for m in items(stack, seed, tmp_path, "machines.machine.sapcloud.io", "-n", ns)}
    assert len(before) == 1 and DB["kubernetes"]["version"].startswith("1.33.")
    stack.set_config({"arbor:landscape": landscape(shoots=[WEB, {**DB, "kubernetes": {"version": "1.34.4"}}])})
    summary = preview_summary.render(json.loads(stack.run("preview", "--json").stdout))
    assert "`arbor-shoot-ops-db` pool `pool-a`: **rolls**" in summary, summary
    stack.up()
    machines = items(stack, seed, tmp_path, "machines.machine.sapcloud.io", "-n", ns)
    assert len(machines) == 1 and machines[0]["metadata"]["name"] not in before
    assert machines[0]["status"]["currentStatus"]["phase"] == "Running"
    nodes = items(stack, key, tmp_path, "nodes")
    assert [n["metadata"]["name"] for n in nodes] == [machines[0]["metadata"]["name"]]


def test_removing_a_shoot_needs_a_confirmation_and_then_one_up_deletes_it_and_nothing_else(
    stack: Stack, tmp_path: Path
) -> None:
    """GIVEN ops/db removed WHEN previewed THEN refused with how to confirm; WHEN confirmed THEN `up` deletes it.

    Only ops/db's parts go: its namespace in the seed, its record, its cluster, its protected CAs and keys; no
    resource of ops/web changes, and the project's namespace in the garden stays.
    """
    stack.set_config({"arbor:landscape": landscape(shoots=[WEB])})
    out = refused_preview(stack)
    assert "landscape.shoots: ops/db was removed;" in out
    assert "add to the landscape `confirmDeletion: {shoots: [ops/db]}`" in out
    assert "arbor-shoot-ops-db-cluster" in names(stack)

    # Written after the last snapshot: the final one, taken before the cluster goes, keeps it.
    kubectl(stack.admin_kubeconfig("ops/db"), tmp_path, "create", "configmap", "final-words")
    entry = secret_data(stack, tmp_path, "shoot--ops--db")
    stack.set_config({"arbor:landscape": landscape(shoots=[WEB], confirmDeletion={"shoots": ["ops/db"]})})
    # As `make preview`: the confirmed deletion is previewed, and nothing else is deleted, replaced or changed.
    assert hack_deletions(stack, "--preview-flags") == "--ignore-protect"
    preview = stack.run("preview", "--json", "--refresh", "--ignore-protect")
    changes = {
        (step.get("newState") or step.get("oldState") or {}).get("urn", step["urn"]).rsplit("::", 1)[-1]: step["op"]
        for step in json.loads(preview.stdout)["steps"]
        if step["op"] not in ("same", "refresh")
    }
    assert changes and set(changes.values()) == {"delete"}, changes
    assert all("ops-db" in name or "ops--db" in name for name in changes), changes
    assert {
        "arbor-shoot-ops-db-record",
        "arbor-seed-local-1-shoot--ops--db",
        "arbor-shoot-ops-db-cluster",
        "arbor-shoot-ops-db-pki-ca",
    } <= set(changes)
    (tmp_path / "preview.json").write_text(preview.stdout)
    assert hack_deletions(stack, "--verify", str(tmp_path / "preview.json")) == ""

    stack.make_up()
    assert not {n for n in names(stack) if n.startswith("arbor-shoot-ops-db")}
    assert not cluster_dir(f"{stack.name}-shoot-ops-db").exists()
    assert processes_of(f"{stack.name}-shoot-ops-db/") == []
    assert "ops/db" not in stack.outputs()["shoots"]
    assert "arbor-shoot-ops-web-cluster" in names(stack, protected=True)
    kubeconfigs = stack.outputs()["kubeconfigs"]
    assert "shoot/ops/db" not in kubeconfigs
    namespaces = kubectl(kubeconfigs["seed/local-1"], tmp_path, "get", "namespaces", "-o", "name").split()
    assert "namespace/shoot--ops--db" not in namespaces and "namespace/shoot--ops--web" in namespaces
    shoots = kubectl(kubeconfigs["garden"], tmp_path, "get", "shoots", "-A", "-o", "name").split()
    assert shoots == ["shoot.arbor.dev/web"]
    assert steps_by_type(stack.preview_json("--refresh"), ops=("same", "refresh")) == {}
    # Its entry outlives it, its newest full snapshot the one taken right before its cluster was deleted.
    # Its namespace is gone, and the ServiceAccount that assumed the bucket's role with it: read as the seed.
    entry = from_seed(stack, entry)
    latest = listed_status.latest_full(entry_store.entry_store(entry).keys(f"{entry['storePrefix']}/v2/"))
    assert latest is not None
    snapshot = seed_client(entry).get_object(entry["bucketName"], latest[0]).read()
    assert "/registry/configmaps/default/final-words" in restored_keys(snapshot, tmp_path)


WIDGETS = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
            "type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
        }}}],
    },
}  # fmt: skip


def user_objects(admin: str, tmp_path: Path) -> dict[str, tuple[str, Any]]:
    """The user objects of namespace `moving` in a shoot: kind/name to uid and data (or spec)."""
    found = kube_items(admin, tmp_path, "namespaces,configmaps,secrets,widgets,crd", "-n", "moving")
    return {
        f"{o['kind']}/{o['metadata']['name']}": (o["metadata"]["uid"], o.get("data") or o.get("spec"))
        for o in found
        if o["metadata"]["name"] in ("moving", "settings", "password", "w1", "widgets.example.com")
    }


def test_a_new_seed_migrates_the_control_plane_and_nothing_is_lost(stack: Stack, tmp_path: Path) -> None:
    """GIVEN user objects in ops/web WHEN its seed changes THEN the preview lists a migration; after it, all is there.

    The same objects (uids, data, a custom resource), Secrets encrypted in etcd, the same Nodes and Machines, its
    CA and service-account key byte-identical, the admin kubeconfig from before still works; nothing of it is left
    on the source seed; both buckets hold the final snapshot; the record went Migrate, Restore, Reconcile.
    """
    admin = stack.admin_kubeconfig("ops/web")
    (tmp_path / "widgets.json").write_text(json.dumps(WIDGETS))
    kubectl(admin, tmp_path, "apply", "-f", str(tmp_path / "widgets.json"))
    kubectl(admin, tmp_path, "wait", "--for=condition=Established", "crd/widgets.example.com")
    kubectl(admin, tmp_path, "create", "namespace", "moving")
    kubectl(admin, tmp_path, "-n", "moving", "create", "configmap", "settings", "--from-literal=colour=blue")
    kubectl(admin, tmp_path, "-n", "moving", "create", "secret", "generic", "password", "--from-literal=v=s3cret")
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3}}
    (tmp_path / "w1.json").write_text(json.dumps(widget))
    kubectl(admin, tmp_path, "-n", "moving", "apply", "-f", str(tmp_path / "w1.json"))
    objects, nodes = user_objects(admin, tmp_path), items(stack, "shoot/ops/web", tmp_path, "nodes")
    assert len(objects) == 5 and nodes
    source, target, ns = "seed/local-1", "seed/local-2", "shoot--ops--web"
    machines = sorted(m["metadata"]["name"] for m in items(stack, source, tmp_path, "machines.machine.sapcloud.io",
                                                           "-n", ns))  # fmt: skip
    persisted = {s["metadata"]["name"]: s["data"] for s in items(stack, source, tmp_path, "secrets", "-n", ns)
                 if s["metadata"]["name"] in ("ca", "service-account-key", "etcd-encryption-secret")}  # fmt: skip
    assert len(persisted) == 3 and machines
    entry = secret_data(stack, tmp_path, ns)

    stack.set_config({"arbor:landscape": landscape(shoots=[{**WEB, "seed": "local-2"}])})
    preview = stack.preview_json("--refresh")
    ops = {(s.get("newState") or s.get("oldState") or {}).get("type", ""): s["op"] for s in preview["steps"]}
    assert ops.get("pulumi-python:dynamic/arbor:ShootMigration") == "update", ops
    replaced = [s["urn"] for s in preview["steps"] if s["op"] in ("replace", "create-replacement", "delete-replaced")]
    assert not [u for u in replaced if "core/v1:Node" in u or "LocalCluster" in u], replaced
    said = "\n".join(str(d.get("message", "")) for d in preview.get("diagnostics") or [])
    assert "this update migrates ops/web's control plane from seed local-1 to local-2" in said
    (tmp_path / "garden").write_text(stack.outputs()["kubeconfigs"]["garden"])
    watch = subprocess.Popen(
        ["kubectl", "--kubeconfig", str(tmp_path / "garden"), "-n", "garden-ops", "get", "shoots.arbor.dev", "web",
         "--watch", "--output-watch-events", "-o", "jsonpath={.object.status.lastOperation.type}{'\\n'}"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        stack.make_up()
    finally:
        watch.terminate()
        seen = [line for line in watch.communicate(timeout=30)[0].splitlines() if line]
    assert [op for i, op in enumerate(seen) if not i or seen[i - 1] != op][-3:] == ["Migrate", "Restore", "Reconcile"]

    assert user_objects(admin, tmp_path) == objects
    assert [(n["metadata"]["name"], n["metadata"]["uid"]) for n in items(stack, "shoot/ops/web", tmp_path, "nodes")] \
        == [(n["metadata"]["name"], n["metadata"]["uid"]) for n in nodes]  # fmt: skip
    assert etcd_value(stack, "/registry/secrets/moving/password", "shoot-ops-web").startswith(b"k8s:enc:")
    moved = items(stack, target, tmp_path, "machines.machine.sapcloud.io", "-n", ns)
    assert sorted(m["metadata"]["name"] for m in moved) == machines
    assert {s["metadata"]["name"]: s["data"] for s in items(stack, target, tmp_path, "secrets", "-n", ns)
            if s["metadata"]["name"] in persisted} == persisted  # fmt: skip
    assert f"namespace/{ns}" not in kubectl(stack.outputs()["kubeconfigs"][source], tmp_path, "get", "ns", "-o", "name")
    record = items(stack, "garden", tmp_path, "shoots.arbor.dev", "-n", "garden-ops")
    (web,) = [r for r in record if r["metadata"]["name"] == "web"]
    assert web["spec"]["seedName"] == "local-2"
    assert web["status"]["lastOperation"]["state"] == "Succeeded", web["status"]["conditions"]
    final = stack.resource_outputs("pulumi-python:dynamic/arbor:ShootMigration")["arbor-shoot-ops-web-migration"]
    target_entry = secret_data(stack, tmp_path, ns, seed=target)
    for data in (from_seed(stack, entry, source), target_entry):
        keys = entry_store.entry_store(data).keys(f"{data['storePrefix']}/v2/")
        assert final["finalSnapshot"].rsplit("/", 1)[1] in {k.rsplit("/", 1)[1] for k in keys}
    after = stack.preview_json("--refresh")
    changed = [(s["op"], s["urn"].rsplit("::", 1)[-1], s.get("diffReasons"), s.get("replaceReasons"))
               for s in after["steps"] if s["op"] not in ("same", "refresh")]  # fmt: skip
    assert changed == [], "\n".join(map(str, changed))


def events(log: Path) -> list[dict[str, Any]]:
    """The engine's events written so far (whole lines only)."""
    text = log.read_text() if log.exists() else ""
    return [json.loads(line) for line in text.splitlines(keepends=True) if line.endswith("\n")]


def step_seen(log: Path, kind: str, ops: str, urn_part: str) -> bool:
    """Whether the event log has a `kind` event (resourcePreEvent, resOutputsEvent) of one of `ops` (`a|b`) on a URN."""
    return any(
        (meta := (e.get(kind) or {}).get("metadata") or {}).get("op") in ops.split("|")
        and urn_part in meta.get("urn", "")
        for e in events(log)
    )


def up_killed(stack: Stack, tmp_path: Path, name: str, kind: str, op: str, urn_part: str, after_s: float) -> bool:
    """`up --refresh` as `make up` runs it, SIGKILLed `after_s` after its event log shows the step; whether it was.

    A run that ends before the step is not killed (the step was done by an earlier one).
    """
    log, out = tmp_path / f"events-{name}.jsonl", (tmp_path / f"up-{name}.txt").open("w")
    cmd = ["pulumi", "up", "--stack", stack.name, "--yes", "--refresh", "--skip-preview", "--non-interactive",
           "--suppress-progress", "--event-log", str(log)]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PULUMI_DEBUG_COMMANDS": "true"}, stdout=out, stderr=out)
    # No deadline of its own: the run either shows the step or ends (the engine's own timeouts bound it).
    while not step_seen(log, kind, op, urn_part):
        if proc.poll() is not None:
            out.close()
            return False
        time.sleep(0.05)
    time.sleep(after_s)
    proc.kill()  # the engine alone, as a crash leaves its plugins and providers
    proc.wait()
    out.close()
    lines = subprocess.run([sys.executable, str(ROOT / "hack" / "recover.py"), stack.name], capture_output=True,
                           text=True, check=True).stdout  # fmt: skip
    assert "removed stale lock" in lines, lines
    return True


# Where the migration back is killed: in the migrate half, right after it, while the target's cluster is restored,
# and while the source's namespace is deleted.
KILLS = (
    ("migrating", "resourcePreEvent", "update", "ShootMigration::arbor-shoot-ops-web-migration", 1.5),
    ("migrated", "resOutputsEvent", "update", "ShootMigration::arbor-shoot-ops-web-migration", 0.0),
    # An update, or a create where refresh already found the source's cluster gone.
    ("restoring", "resourcePreEvent", "update|create", "LocalCluster::arbor-shoot-ops-web-cluster", 2.0),
    ("leaving", "resourcePreEvent", "delete", "Namespace::arbor-seed-local-2-shoot--ops--web", 0.5),
)


def test_a_migration_killed_at_four_points_is_finished_by_the_next_up_with_nothing_lost(
    stack: Stack, tmp_path: Path
) -> None:
    """GIVEN ops/web on local-2 WHEN moved back and `up` is SIGKILLed along the way THEN the next `up` finishes it.

    Killed inside the migrate half, after it, during the restore and during the source's clean-up, each run
    resumed after hack/recover.py: the same objects, Nodes and Machines end up on local-1, nothing on local-2.
    """
    admin = stack.admin_kubeconfig("ops/web")
    objects, ns = user_objects(admin, tmp_path), "shoot--ops--web"
    nodes = sorted(n["metadata"]["uid"] for n in items(stack, "shoot/ops/web", tmp_path, "nodes"))
    machines = sorted(m["metadata"]["name"] for m in items(stack, "seed/local-2", tmp_path,
                                                           "machines.machine.sapcloud.io", "-n", ns))  # fmt: skip
    assert len(objects) == 5 and nodes and machines
    stack.set_config({"arbor:landscape": landscape(shoots=[WEB])})
    killed = [name for name, kind, op, urn, delay in KILLS if up_killed(stack, tmp_path, name, kind, op, urn, delay)]
    assert killed == [name for name, *_ in KILLS], killed
    stack.make_up()

    assert user_objects(admin, tmp_path) == objects
    assert sorted(n["metadata"]["uid"] for n in items(stack, "shoot/ops/web", tmp_path, "nodes")) == nodes
    back = items(stack, "seed/local-1", tmp_path, "machines.machine.sapcloud.io", "-n", ns)
    assert sorted(m["metadata"]["name"] for m in back) == machines
    assert etcd_value(stack, "/registry/secrets/moving/password", "shoot-ops-web").startswith(b"k8s:enc:")
    assert f"namespace/{ns}" not in kubectl(stack.outputs()["kubeconfigs"]["seed/local-2"], tmp_path, "get", "ns",
                                            "-o", "name")  # fmt: skip
    assert steps_by_type(stack.preview_json("--refresh"), ops=("same", "refresh")) == {}
