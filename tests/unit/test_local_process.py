"""LocalProcess (components/reconciler/local_process.py) with a fake program: `tail -f` of a file it is given."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest
from pulumi.output import Unknown

from components.providers import local
from components.reconciler import local_process
from components.reconciler.kube import Kube
from components.reconciler.local_process import LocalProcessProvider, ProcessError
from components.render import machines, packing
from tests.unit.test_shoot_state import SeedSecrets

FAKE = "fake-controller"


@pytest.fixture
def props(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Inputs of a process whose program is `tail` under another name, following a file of its directory."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tail = shutil.which("tail")
    assert tail
    (bin_dir / FAKE).symlink_to(tail)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return {
        "program": FAKE,
        "dir": str(tmp_path / "processes" / "mcm-shoot--p--s"),
        "args": ["-f", "{dir}/target.kubeconfig"],
        "files": {"target.kubeconfig": "kind: Config\n"},
        "version": local_process.PROVIDER_VERSION,
    }


@pytest.fixture
def provider(props: dict[str, Any]) -> Any:
    """The provider; whatever a test started is stopped afterwards."""
    p = LocalProcessProvider()
    yield p
    p.delete("", props)


def test_create_starts_the_program_with_its_files_and_records_its_pid(provider: Any, props: dict[str, Any]) -> None:
    outs = provider.create(props).outs
    directory = Path(props["dir"])
    assert outs["running"] is True
    assert local_process.running_pid(props) == outs["pid"]
    assert (directory / "target.kubeconfig").stat().st_mode & 0o777 == 0o600
    log = (directory / local_process.LOG_FILE).read_text()
    assert f"-f {directory}/target.kubeconfig" in log
    assert provider.read("x", outs).outs["running"] is True


def test_a_process_that_is_gone_is_drift_and_update_starts_it_again(provider: Any, props: dict[str, Any]) -> None:
    outs = provider.create(props).outs
    os.kill(outs["pid"], signal.SIGKILL)
    os.waitpid(outs["pid"], 0)
    read = provider.read("x", outs).outs
    assert read["running"] is False
    assert provider.diff("x", read, props).changes is True
    again = provider.update("x", read, props).outs
    assert again["running"] is True
    assert again["pid"] != outs["pid"]


def test_a_running_process_with_the_same_inputs_shows_no_diff(provider: Any, props: dict[str, Any]) -> None:
    outs = provider.create(props).outs
    assert provider.diff("x", provider.read("x", outs).outs, props).changes is False
    changed = {**props, "args": ["-f", "{dir}/target.kubeconfig", "-n", "1"]}
    assert provider.diff("x", outs, changed).changes is True


def test_the_state_keeps_each_files_hash_and_a_changed_file_is_a_diff(provider: Any, props: dict[str, Any]) -> None:
    """GIVEN a process with a file WHEN created THEN its outputs hold the file's hash, not its content."""
    outs = provider.create(props).outs
    assert "files" not in outs and "kind: Config" not in json.dumps(outs)
    assert outs["fileHashes"] == local_process.file_hashes(props)
    assert provider.diff("x", outs, props).changes is False
    assert provider.diff("x", outs, {**props, "files": {"target.kubeconfig": "kind: Config\n# rotated\n"}}).changes
    # A state from before kept the contents in its outputs: the same files are no change.
    assert provider.diff("x", {**{k: v for k, v in outs.items() if k != "fileHashes"}, "files": props["files"]},
                         props).changes is False  # fmt: skip


def test_packed_files_are_written_whole_and_an_older_states_whole_files_are_no_change(
    provider: Any, props: dict[str, Any]
) -> None:
    """GIVEN the files packed, as the program sends them now WHEN created THEN written whole; whole ones are no diff."""
    packed = {**props, "files": packing.pack(props["files"])}
    outs = provider.create(packed).outs
    assert (Path(props["dir"]) / "target.kubeconfig").read_text() == "kind: Config\n"
    assert outs["fileHashes"] == local_process.file_hashes(props)
    # An older state whose inputs held the files whole against the packed ones: the same files, no restart.
    assert provider.diff("x", provider.read("x", outs).outs, packed).changes is False
    assert provider.diff("x", provider.read("x", provider.create(props).outs).outs, packed).changes is False
    assert len(packing.pack({"a.kubeconfig": "kind: Config\n" * 50})) < len("kind: Config\n" * 50) / 4


def test_files_a_preview_does_not_know_yet_are_a_change_not_an_error(provider: Any, props: dict[str, Any]) -> None:
    """GIVEN packed files unknown in a preview (a cluster made again) WHEN diffed THEN a change, no exception."""
    outs = provider.create(props).outs
    unknown = Unknown()  # type: ignore[no-untyped-call]  # the SDK's marker, as a preview gives it
    assert provider.diff("x", outs, {**props, "files": unknown}).changes is True
    assert local_process.file_hashes({**props, "files": unknown}) == local_process.UNKNOWN_FILES


def test_new_inputs_restart_the_process(provider: Any, props: dict[str, Any]) -> None:
    outs = provider.create(props).outs
    news = {**props, "files": {"target.kubeconfig": "kind: Config\n# rotated\n"}}
    again = provider.update("x", outs, news).outs
    assert again["pid"] != outs["pid"]
    assert local_process.runs(outs["pid"], str(Path(shutil.which(FAKE) or "").resolve())) is False
    assert "rotated" in (Path(props["dir"]) / "target.kubeconfig").read_text()


def test_delete_stops_the_process_and_forgets_its_pid(provider: Any, props: dict[str, Any]) -> None:
    outs = provider.create(props).outs
    provider.delete("x", outs)
    assert local_process.running_pid(props) is None
    assert not (Path(props["dir"]) / local_process.PID_FILE).exists()
    assert provider.read("x", outs).outs["running"] is False
    # The credentials it was given go with it; its log stays for reading.
    assert outs["fileHashes"] and not any((Path(props["dir"]) / name).exists() for name in outs["fileHashes"])
    assert (Path(props["dir"]) / local_process.LOG_FILE).exists()


def test_a_reused_pid_running_another_program_is_not_taken_for_ours(props: dict[str, Any]) -> None:
    directory = Path(props["dir"])
    directory.mkdir(parents=True)
    # This test's own pid, recorded with an executable it does not run: not ours, so never signalled.
    (directory / local_process.PID_FILE).write_text(f"{os.getpid()} /nonexistent/{FAKE}\n")
    assert local_process.running_pid(props) is None
    local_process.stop(props)
    assert not (directory / local_process.PID_FILE).exists()


def test_a_program_missing_from_path_says_to_run_make_tools(props: dict[str, Any]) -> None:
    with pytest.raises(ProcessError, match="not on PATH: run `make tools`"):
        LocalProcessProvider().create({**props, "program": "no-such-controller"})


def test_a_program_that_exits_as_it_starts_is_an_error_with_its_log(props: dict[str, Any]) -> None:
    # `tail -f` of a file that does not exist exits at once with status 1 and says why.
    with pytest.raises(ProcessError, match=r"(?s)exited with status 1 as it started.*missing"):
        LocalProcessProvider().create({**props, "args": ["-f", "{dir}/missing"]})
    assert local_process.recorded(Path(props["dir"])) is None


def test_create_waits_until_proc_shows_the_program(
    provider: Any, props: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Right after a vfork'ed exec the child's cmdline can still be empty: the first looks see another program.
    real, looks = local_process.runs, []

    def slow_to_show(pid: int, exe: str) -> bool:
        looks.append(pid)
        return len(looks) > 3 and real(pid, exe)

    monkeypatch.setattr(local_process, "runs", slow_to_show)
    outs = provider.create(props).outs
    assert len(looks) > 3
    assert local_process.running_pid(props) == outs["pid"]


def test_local_controller_flags_are_the_containers_with_files_of_its_directory() -> None:
    args = local.process_args(machines.SIDECAR_FLAGS, "shoot--p--s", local.KWOK_SIDECAR_FLAGS)
    assert "--control-kubeconfig=inClusterConfig" not in args
    assert "--control-kubeconfig={dir}/control.kubeconfig" in args
    assert "--target-kubeconfig={dir}/target.kubeconfig" in args
    assert "--namespace=shoot--p--s" in args
    # An override replaces the container's flag of that name, never adds a second one.
    assert [a for a in args if a.startswith("--machine-health-timeout=")] == ["--machine-health-timeout=1m"]


def test_a_file_a_secret_holds_is_read_there_and_stands_as_its_checksum(
    provider: Any, props: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a file named by its Secret WHEN the process starts THEN written from it; the state keeps a checksum.

    A new checksum (the certificate issued again) restarts the process with the new content; a Secret without the
    key stops the start with one line naming it.
    """
    held = {"server": {"tls.key": "KEY-1"}}
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: SeedSecrets(held)))
    source = {"kubeconfig": "kubeconfig-file:/seed", "namespace": "shoot--p--s", "secret": "server", "key": "tls.key"}
    props = {**props, "secretFiles": {"tls.key": {**source, "checksum": "c1"}}}
    made = provider.create(props).outs
    assert (Path(props["dir"]) / "tls.key").read_text() == "KEY-1"
    assert made["fileHashes"]["tls.key"] == "c1" and "KEY-1" not in json.dumps(made)
    held["server"]["tls.key"] = "KEY-2"
    renewed = {**props, "secretFiles": {"tls.key": {**source, "checksum": "c2"}}}
    assert provider.diff("p", made, renewed).changes
    provider.update("p", made, renewed)
    assert (Path(props["dir"]) / "tls.key").read_text() == "KEY-2"
    held["server"] = {}
    with pytest.raises(ProcessError, match=r"^tls.key: Secret shoot--p--s/server has no tls.key$"):
        local_process.start({**renewed, "dir": str(Path(props["dir"]).parent / "another")})
    provider.delete("p", made)
