"""hack/recover.py's decisions: which lock is stale, which process is an orphan of a killed run, which op is dropped."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from components.reconciler.local_cluster import LocalCluster

sys.path.insert(0, str(Path(__file__).parents[2] / "hack"))
import recover

ROOT = "/work/clone"
OTHER = "/work/other-clone"
HOST = "vm"
T0 = 1_800_000_000.0  # when the killed run started and took its lock
PULUMI = ("pulumi", "up", "--stack", "local", "--yes")
ENV = {"KWOK_WORKDIR": f"{ROOT}/.kwok"}


def proc(
    pid: int,
    ppid: int,
    *argv: str,
    cwd: str = ROOT,
    env: Mapping[str, str] | None = None,
    started: float = T0,
) -> recover.Proc:
    """A process of the table; by default one started for the clone at ROOT when the run began."""
    return recover.Proc(pid, ppid, argv, cwd, ENV if env is None else env, started)


def table(*procs: recover.Proc) -> dict[int, recover.Proc]:
    """A process table by pid, with init."""
    return {p.pid: p for p in (proc(1, 0, "/sbin/init", cwd="/", env={}), *procs)}


def killed_run(pulumi_alive: bool) -> dict[int, recover.Proc]:
    """One run's processes as `ps` shows them, its `pulumi` (pid 100) alive or killed (children under init)."""
    parent = 100 if pulumi_alive else 1
    engine = [proc(100, 50, *PULUMI)] if pulumi_alive else []
    return table(
        *engine,
        proc(101, parent, f"{ROOT}/.bin/pulumi-language-python", "127.0.0.1:1"),
        proc(102, 101, f"{ROOT}/.venv/bin/python", "/cache/pulumi-language-python-exec", "--monitor", "x"),
        proc(103, parent, "/bin/sh", f"{ROOT}/.bin/pulumi-resource-pulumi-python", "127.0.0.1:1"),
        proc(104, 103, f"{ROOT}/.venv/bin/python", "-u", "-m", "pulumi.dynamic", "127.0.0.1:1"),
        proc(105, parent, "/cache/plugins/resource-kubernetes-v4.25.0/pulumi-resource-kubernetes", "127.0.0.1:1"),
        # A local cluster's processes are started detached by kwokctl: they are the landscape, never orphans.
        proc(106, 1, f"{ROOT}/.kwok/clusters/local-garden/bin/kube-apiserver", "--secure-port=20001"),
        proc(107, 1, f"{ROOT}/.kwok/clusters/local-garden/bin/etcd", "--name=node0"),
    )


def test_a_killed_runs_host_program_plugins_and_dynamic_providers_are_orphans() -> None:
    """GIVEN a run whose `pulumi` was killed WHEN looked at THEN its five engine children are orphans, no cluster."""
    found = recover.orphans(killed_run(pulumi_alive=False), ROOT)
    assert [p.pid for p in found] == [101, 102, 103, 104, 105]
    assert [recover.label(p) for p in found] == [
        "pulumi-language-python",
        "pulumi-language-python-exec",
        "pulumi-resource-pulumi-python",
        "pulumi.dynamic",
        "pulumi-resource-kubernetes",
    ]


def test_a_kwokctl_the_killed_run_started_is_stopped_but_not_the_cluster_it_starts() -> None:
    """GIVEN a kwokctl of the killed run starting a cluster WHEN looked at THEN kwokctl goes, the cluster stays."""
    procs = killed_run(pulumi_alive=False)
    procs[110] = proc(110, 104, f"{ROOT}/.bin/kwokctl", "start", "cluster", "--name", "local-garden")
    procs[111] = proc(111, 110, f"{ROOT}/.kwok/clusters/local-garden/bin/etcd", "--name=node0")
    assert [p.pid for p in recover.orphans(procs, ROOT)] == [101, 102, 103, 104, 105, 110]
    assert recover.label(procs[110]) == "kwokctl" and not recover.is_engine_child(procs[110])  # it may finish first


def test_the_children_of_a_live_run_are_kept() -> None:
    """GIVEN the same processes under a live `pulumi` WHEN looked at THEN nothing is an orphan."""
    assert recover.orphans(killed_run(pulumi_alive=True), ROOT) == []


def test_a_live_run_started_by_a_test_under_pytest_keeps_its_children() -> None:
    """GIVEN a `pulumi` started by pytest and its grand-children WHEN looked at THEN the live ancestor keeps them."""
    procs = table(
        proc(90, 1, f"{ROOT}/.venv/bin/python", "-m", "pytest"),
        proc(100, 90, f"{ROOT}/.bin/pulumi", "up"),
        proc(101, 100, f"{ROOT}/.bin/pulumi-language-python"),
        proc(102, 101, "python", "/cache/pulumi-language-python-exec"),
    )
    assert recover.orphans(procs, ROOT) == []


def test_another_clones_orphans_are_left_to_that_clone() -> None:
    """GIVEN orphans started in and for another clone WHEN this clone looks THEN none is its own."""
    procs = table(
        proc(201, 1, f"{OTHER}/.bin/pulumi-language-python", cwd=OTHER, env={"KWOK_WORKDIR": f"{OTHER}/.kwok"}),
        proc(202, 1, "/cache/pulumi-resource-kubernetes", cwd="/", env={"KWOK_WORKDIR": f"{OTHER}/.kwok"}),
        # A clone whose path starts with this one's is another clone.
        proc(203, 1, "/cache/pulumi-resource-kubernetes", cwd=f"{ROOT}-2", env={}),
    )
    assert recover.orphans(procs, ROOT) == []


def test_an_orphan_is_known_by_its_environment_when_its_directory_is_elsewhere() -> None:
    """GIVEN a plugin running from `/` with this clone's environment WHEN looked at THEN it is this clone's."""
    procs = table(proc(301, 1, "/cache/pulumi-resource-kubernetes", cwd="/"))
    assert [p.pid for p in recover.orphans(procs, ROOT)] == [301]


def test_unrelated_python_and_pulumi_named_files_are_not_engine_children() -> None:
    """GIVEN processes that only mention pulumi in a later argument WHEN looked at THEN none is an engine child."""
    procs = table(
        proc(401, 1, "python", "-m", "pytest", "tests/unit/test_recover.py", "pulumi-resource-x"),
        proc(402, 1, "vim", "a", "b", "pulumi-language-python"),
    )
    assert recover.orphans(procs, ROOT) == []


def lock(pid: int | None = 100, host: str | None = HOST, taken: float | None = T0) -> recover.Lock:
    """A lock file as `pulumi` writes it."""
    return recover.Lock("/state/.pulumi/locks/organization/arbor/local/x.json", pid, host, taken)


@pytest.mark.parametrize(
    ("the_lock", "procs", "stale"),
    [
        pytest.param(lock(), table(), True, id="holder-gone"),
        pytest.param(lock(), table(proc(100, 1, *PULUMI)), False, id="holder-live-pulumi"),
        pytest.param(lock(), table(proc(100, 1, "/usr/bin/bash")), True, id="pid-reused-by-another-program"),
        pytest.param(lock(), table(proc(100, 1, *PULUMI, started=T0 + 60)), True, id="pid-reused-by-a-later-pulumi"),
        pytest.param(lock(), table(proc(100, 1, *PULUMI, started=T0 + 1)), False, id="clock-rounding"),
        pytest.param(lock(taken=None), table(proc(100, 1, *PULUMI, started=T0 + 60)), False, id="no-time-live"),
        pytest.param(lock(host="other"), table(), False, id="other-host"),
        pytest.param(lock(pid=None), table(), False, id="unreadable"),
    ],
)
def test_a_lock_is_removed_only_when_its_holder_is_provably_gone(
    the_lock: recover.Lock, procs: dict[int, recover.Proc], stale: bool
) -> None:
    """GIVEN a lock and the process table WHEN judged THEN it is stale exactly when no live `pulumi` may hold it."""
    reason = recover.lock_holder(the_lock, procs, HOST)
    assert (reason is None) == stale
    if reason is not None:
        assert "pid" in reason or "cannot be read" in reason


def test_a_lock_file_is_read_as_pulumi_writes_it() -> None:
    """GIVEN the JSON of a file backend lock WHEN parsed THEN pid, host and time (nanoseconds, Z) are read."""
    text = json.dumps(
        {"pid": 2745, "username": "root", "hostname": "vm", "timestamp": "2026-11-23T15:09:18.163352191Z"}
    )
    parsed = recover.parse_lock("x.json", text)
    assert (parsed.pid, parsed.host) == (2745, "vm")
    assert parsed.taken == pytest.approx(1795446558.163352)


@pytest.mark.parametrize("text", ["", "{", "[]", '{"pid": "12", "hostname": 3}'])
def test_a_damaged_lock_file_is_unreadable_and_kept(text: str) -> None:
    """GIVEN a lock file that is not what `pulumi` writes WHEN parsed and judged THEN it is kept."""
    assert recover.lock_holder(recover.parse_lock("x.json", text), table(), HOST) is not None


def test_only_pending_creates_that_adopt_are_dropped() -> None:
    """GIVEN pending creates (kubernetes, dynamic, gcp), an update and a delete WHEN cleared THEN the first ones go."""

    def op(kind: str, name: str, typ: str = "kubernetes:core/v1:Secret") -> dict[str, object]:
        return {"resource": {"urn": f"urn:pulumi:local::arbor::t::{name}", "type": typ}, "type": kind}

    cloud = op("creating", "gke", "gcp:container/cluster:Cluster")
    # arbor's local cluster as the engine types it (`dynamic/arbor:LocalCluster`), and an older state's untyped one.
    typed = op("creating", "lc", f"pulumi-python:{LocalCluster._resource_type_name}")
    dynamic = op("creating", "d", "pulumi-python:dynamic:Resource")
    # A snapshot step (`command.local.Command`) is simply taken again.
    step = op("creating", "s", "command:local:Command")
    deployment = {
        "resources": [],
        "pending_operations": [op("creating", "a"), typed, dynamic, step, cloud, op("updating", "b"),
                               op("deleting", "c")],
    }  # fmt: skip
    assert recover.pending_creates(deployment) == [f"urn:pulumi:local::arbor::t::{n}" for n in ("a", "lc", "d", "s")]
    assert recover.pending_creates(deployment, adopting=False) == ["urn:pulumi:local::arbor::t::gke"]
    cleared = recover.without_pending_creates(deployment)
    assert cleared["pending_operations"] == [cloud, op("updating", "b"), op("deleting", "c")]
    assert cleared["resources"] == [] and recover.pending_creates(cleared) == []
    assert recover.pending_creates({"resources": []}) == []


@pytest.mark.parametrize(("text", "damaged"), [("", True), ('{"md5":', True), ("[]", True), ('{"md5": "x"}', False)])
def test_a_sidecar_the_kill_cut_short_is_damaged(text: str, damaged: bool) -> None:
    """GIVEN a `.attrs` sidecar (the store truncates it, then writes) WHEN judged THEN only a whole object is intact."""
    assert recover.is_damaged(text) == damaged


def test_damaged_sidecars_are_rewritten_and_unfinished_writes_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """GIVEN an empty checkpoint sidecar and a temp file WHEN repaired THEN both are fixed, other stacks untouched."""
    stacks = tmp_path / "stacks" / "arbor"
    stacks.mkdir(parents=True)
    (stacks / "it-1.json").write_text('{"version": 3}')
    (stacks / "it-1.json.attrs").write_text("")
    (stacks / "it-1.json.18eab6fdec0b902f.tmp").write_text('{"vers')
    (stacks / "it-10.json.attrs").write_text("")  # another stack's: not ours to touch
    recover.repair_files(tmp_path, "arbor", "it-1")
    attrs = json.loads((stacks / "it-1.json.attrs").read_text())
    assert attrs["md5"] == "yIZccQFoWD3MO8TNidxqIA==" and attrs["user.content_type"].startswith("text/plain")
    assert attrs == json.loads(recover.attrs_for(b'{"version": 3}'))
    assert sorted(p.name for p in stacks.iterdir()) == ["it-1.json", "it-1.json.attrs", "it-10.json.attrs"]
    assert (stacks / "it-10.json.attrs").read_text() == ""
    assert capsys.readouterr().out.count("recover: ") == 2


def test_the_file_backend_directory_drops_the_urls_options(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN a file backend URL with options (metadata=skip) WHEN its directory is asked THEN the path alone."""
    monkeypatch.setenv("PULUMI_BACKEND_URL", "file:///work/arbor/.state?metadata=skip")
    assert recover.backend_dir() == Path("/work/arbor/.state/.pulumi")
    monkeypatch.setenv("PULUMI_BACKEND_URL", "s3://bucket/arbor")
    assert recover.backend_dir() is None
