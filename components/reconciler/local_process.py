"""LocalProcess: a long-running program on this machine (machine-controller-manager on local) as a dynamic resource.

It runs detached in its own session from a directory of its own under the landscape's work dir: the files it reads
(kubeconfigs, secret inputs, written 0600), its log and its pid file. `read()` reports a process that is gone as
`running: false`, so `up --refresh` starts it again; `delete` stops it (TERM, then KILL) and removes the pid file.
A pid is only taken for ours when /proc says that process runs the recorded executable (pids are reused).

The files' contents are inputs only, packed (render/packing.py: kubeconfigs and configurations compress several
times); the outputs keep a hash of each (`fileHashes`), all that diff needs, so the state holds them once (a state
from before kept the contents in its outputs, or unpacked inputs: those are hashed where compared). A
file whose content a Secret holds (`secretFiles`: a certificate's key in the seed namespace) is read from there when
the process starts and stands as that Secret's checksum: the state holds no copy of it.

The engine stores the provider pickled by reference to this module: keep its path and class names.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.reconciler.credential_secrets import secret_keys
from components.reconciler.gather import lifted
from components.reconciler.kube import KubeError
from components.reconciler.provider import Provider
from components.render.packing import pack, unpacked

# Bump when the provider logic changes, so that every LocalProcess shows a diff and is restarted.
PROVIDER_VERSION = "1"
# Inputs that change what runs: a change of one (or of a file's content) restarts the process.
RESTART_ON = ("program", "args", "dir", "version")
PID_FILE = "pid"
LOG_FILE = "process.log"
# In an argument, `{dir}` is the process's directory and `{port}` a free loopback port chosen at each start.
STOP_GRACE_S = 10.0
# How long a start waits to see the process run its program: the kernel resumes a vfork parent before the child's
# /proc cmdline is set, so a process read at once can look like another program; under load that gap grows.
START_WAIT_S = 10.0
# How long it must have run to count as started: a program refusing its flags or files exits well within this.
START_SETTLE_S = 0.5
LOG_TAIL_LINES = 20


class ProcessError(Exception):
    """A process that cannot be started."""


def executable(program: str) -> str:
    """The program's absolute path on PATH; a clear error when `make tools` has not provided it."""
    found = shutil.which(program)
    if not found:
        raise ProcessError(f"{program} is not on PATH: run `make tools`")
    return str(Path(found).resolve())


def process_dir(workdir: str, cluster: str, program: str) -> str:
    """Where a supervised process of a cluster keeps its files and its log, under the landscape's work dir."""
    # Named after the cluster, which the stack's name prefixes: two stacks of one work dir never share one.
    return os.path.join(workdir, "processes", f"{cluster}-{program}")


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def recorded(directory: Path) -> tuple[int, str] | None:
    """The pid and executable the directory records, if any."""
    try:
        pid, exe = (directory / PID_FILE).read_text().strip().split(" ", 1)
        return int(pid), exe
    except (OSError, ValueError):
        return None


def runs(pid: int, exe: str) -> bool:
    """Whether process `pid` is alive (not a zombie) and runs `exe`."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except OSError:
        return False
    # The state follows the command name in parentheses, which may itself hold spaces or parentheses.
    if stat.rsplit(")", 1)[1].split()[0] == "Z":
        return False
    return argv0 == exe


def running_pid(props: dict[str, Any]) -> int | None:
    """The pid of the process the properties describe, when it runs."""
    record = recorded(Path(props["dir"]))
    return record[0] if record and runs(*record) else None


def start(props: dict[str, Any], environment: Mapping[str, str] | None = None) -> int:
    """Writes the files and starts the program detached, its output appended to the log; returns its pid.

    `environment` is added to the engine's (a server's root credentials, say): never written to a file or the state.
    """
    directory = Path(props["dir"])
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    for name, content in {**(files_of(props) or {}), **held_files(props)}.items():
        path = directory / name
        path.write_text(content)
        path.chmod(0o600)
    exe = executable(props["program"])
    values = {"dir": str(directory), "port": str(free_port())}
    argv = [exe, *(a.format(**values) for a in props.get("args") or [])]
    with open(directory / LOG_FILE, "ab") as log:
        log.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} starting: {' '.join(argv)}\n".encode())
        log.flush()
        # Its own session: the process outlives the provider process that started it, and no signal of the
        # engine's process group reaches it.
        proc = subprocess.Popen(
            argv,
            cwd=directory,
            env={**_environment(), **(environment or {})},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    (directory / PID_FILE).write_text(f"{proc.pid} {exe}\n")
    _await_start(proc, exe, directory)
    return proc.pid


def _environment() -> dict[str, str]:
    """The engine's environment without kubeconfig variables: a program reads only the files it is given.

    gardener-resource-manager, for one, takes `KUBECONFIG` and `TARGET_KUBECONFIG` over its configuration's.
    """
    return {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "TARGET_KUBECONFIG")}


def _await_start(proc: subprocess.Popen[bytes], exe: str, directory: Path) -> None:
    """Returns once /proc shows the process running `exe` after it settled; one that exits is a clear error."""
    started = time.monotonic()
    while time.monotonic() < started + START_WAIT_S:
        if time.monotonic() >= started + START_SETTLE_S and runs(proc.pid, exe):
            return
        code = proc.poll()
        if code is not None:
            (directory / PID_FILE).unlink(missing_ok=True)
            lines = (directory / LOG_FILE).read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:]
            said = "\n".join(lines)
            raise ProcessError(f"{Path(exe).name} exited with status {code} as it started; its log ends:\n{said}")
        time.sleep(0.05)


def stop(props: dict[str, Any]) -> None:
    """Stops the process (TERM, then KILL after the grace period) and removes its pid file."""
    directory = Path(props["dir"])
    pid = running_pid(props)
    if pid is not None:
        _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while time.monotonic() < deadline and running_pid(props) == pid:
            time.sleep(0.1)
        if running_pid(props) == pid:
            _signal(pid, signal.SIGKILL)
    (directory / PID_FILE).unlink(missing_ok=True)


def _signal(pid: int, sig: signal.Signals) -> None:
    """Sends a signal to a process that may have exited meanwhile."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def held_files(props: dict[str, Any]) -> dict[str, str]:
    """The files a Secret holds (`secretFiles`: its cluster, namespace, name and key), read from there now."""
    found: dict[str, str] = {}
    for name, source in sorted((props.get("secretFiles") or {}).items()):
        try:
            found[name] = secret_keys(source, source["secret"], [source["key"]])[source["key"]]
        except KubeError as error:
            raise ProcessError(f"{name}: {error}") from None
    return found


# The hashes of files a preview does not know yet (a cluster made again): unlike any hashes of known files.
UNKNOWN_FILES = {"": "unknown"}


def files_of(props: dict[str, Any]) -> dict[str, str] | None:
    """The files' contents by name, packed as the inputs keep them or whole (an older state's); None while unknown."""
    files = unpacked(props.get("files")) or {}
    return dict(files) if isinstance(files, Mapping) else None


def file_hashes(props: dict[str, Any]) -> dict[str, str]:
    """The SHA-256 of each file by name: of the inputs' contents, or as the outputs keep them.

    A file a Secret holds stands as the checksum of that Secret's content, which the program gives.
    """
    if "files" not in props:
        return dict(props.get("fileHashes") or {})
    files = files_of(props)
    if files is None:
        return dict(UNKNOWN_FILES)
    hashes = {name: hashlib.sha256(str(content).encode()).hexdigest() for name, content in files.items()}
    return {**hashes, **{name: str(f["checksum"]) for name, f in (props.get("secretFiles") or {}).items()}}


def _changed(olds: dict[str, Any], news: dict[str, Any]) -> bool:
    """Whether what runs changed: an input that restarts it, or a file's content."""
    return any(olds.get(k) != news.get(k) for k in RESTART_ON) or file_hashes(olds) != file_hashes(news)


def _outputs(props: dict[str, Any], pid: int | None) -> dict[str, Any]:
    """What runs (the files as hashes), the pid and whether it runs."""
    kept = {k: props.get(k) for k in RESTART_ON}
    return {**kept, "fileHashes": file_hashes(props), "pid": pid or 0, "running": pid is not None}


def ensure_running(
    props: dict[str, Any], restart: bool = False, environment: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The process running with these inputs: started when gone, restarted when asked."""
    if restart:
        stop(props)
    pid = running_pid(props)
    return _outputs(props, pid if pid is not None else start(props, environment))


class LocalProcessProvider(Provider):
    """CRUD of one supervised process; nothing is captured, everything is read from the properties."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Starts the process; one a crashed run left behind is restarted with these inputs."""
        return CreateResult(id_=Path(props["dir"]).name, outs=ensure_running(props, restart=True))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """A change of what runs, or a process refresh found gone, is an update."""
        changed = olds.get("running") is False or _changed(olds, news)
        return DiffResult(changes=changed, replaces=[], delete_before_replace=True)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Restarts the process when its inputs changed; starts it when it is gone."""
        changed = _changed(olds, news)
        if olds.get("dir") != news.get("dir"):
            stop(olds)
        return UpdateResult(outs=ensure_running(news, restart=changed))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The process as it is: `running: false` when it is gone."""
        return ReadResult(id_=id_, outs=_outputs(props, running_pid(props)))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Stops the process and removes the files it read (kubeconfigs); its log stays for reading."""
        stop(props)
        for name in file_hashes(props):
            (Path(props["dir"]) / name).unlink(missing_ok=True)


class LocalProcess(Resource, module="arbor", name="LocalProcess"):
    """A program running detached on this machine, supervised through `up`, refresh and `down`."""

    if TYPE_CHECKING:
        pid: pulumi.Output[int]
        running: pulumi.Output[bool]

    def __init__(
        self,
        name: str,
        program: str,
        directory: str,
        args: pulumi.Input[list[str]],
        files: pulumi.Input[dict[str, pulumi.Input[str]]] | None = None,
        secret_files: Mapping[str, Mapping[str, pulumi.Input[str]]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`secret_files`: read from a Secret at start, each {kubeconfig, namespace, secret, key, checksum}."""
        props = {
            "program": program,
            "dir": directory,
            "args": args,
            "files": lifted(files or {}).apply(pack),
            "secretFiles": secret_files or {},
            "version": PROVIDER_VERSION,
            "fileHashes": None,
            "pid": None,
            "running": None,
        }
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=["files"]))
        super().__init__(LocalProcessProvider(), name, props, opts)
