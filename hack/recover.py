"""`make up`'s first step: clears what a killed `pulumi up` (kill -9, a crash, a lost terminal) left behind.

Four leftovers block or leak after such a run, and each is cleared only when it provably belongs to no live run:
- the file backend's lock (`.pulumi/locks/<org>/<project>/<stack>/<id>.json`, which records pid, host and time):
  removed when its holder, on this host, is gone or is no longer a `pulumi` process started before the lock;
- the run's language host, program, provider plugins and dynamic providers, which outlive the engine: stopped
  when they belong to this clone and no live `pulumi` is among their ancestors (never a local cluster's process),
  after the tools they started (a kwokctl making a cluster) have finished, so no cluster is left half-made;
- the state files a write cut short: the blob store truncates a checkpoint's `.attrs` sidecar before writing it, so a
  kill there leaves it empty and every command fails (`failed to load checkpoint: EOF`); it is written again from
  the (whole) checkpoint, and the store's unfinished `*.tmp` files of the stack are removed;
- pending CREATE operations in the checkpoint, which the engine keeps until someone decides: dropped, since
  every arbor resource's create adopts what a killed run made (the refresh and `up` that follow do the rest).
  Pending updates and deletes need nothing: `up --refresh` reads the resources and the engine drops them.

Prints one line per thing cleared; exits 1 (touching no state) when a live run holds the stack.
Usage: python hack/recover.py <stack>
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import json
import os
import re
import signal
import socket
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pulumi_cli import export, import_state

# Programs a `pulumi` run starts: the language host and its exec script, resource plugins, the dynamic provider.
ENGINE_CHILDREN = ("pulumi-language-", "pulumi-resource-", "pulumi-analyzer-", "pulumi-converter-")
DYNAMIC_PROVIDER = ("-m", "pulumi.dynamic")
# A lock's timestamp and its holder's start time come from different clocks' roundings: allow this much.
START_SLACK_S = 2.0
STOP_GRACE_S = 3.0
# How long a tool the killed run started (a kwokctl creating a cluster) may take to finish: kwokctl's wait and more.
FINISH_S = 120.0
# Resources whose create adopts what a killed create made: Kubernetes objects (applied), local clusters (kept
# by name) and arbor's dynamic providers (keys made anew, never used), typed `pulumi-python:dynamic/arbor:<Name>`
# (the untyped `dynamic:Resource` of older states too), and arbor's command steps (a snapshot before a risky change,
# simply taken again). A cloud resource's create does not: its pending create is kept for the user to look for, so
# no second cluster or network is made beside the first.
ADOPTING = ("kubernetes:", "pulumi-python:dynamic:Resource", "pulumi-python:dynamic/arbor:", "command:local:Command")


@dataclass(frozen=True)
class Proc:
    """One process as /proc shows it: enough to tell whose it is."""

    pid: int
    ppid: int
    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    started: float  # seconds since the epoch


@dataclass(frozen=True)
class Lock:
    """One lock file of the file backend, as written by `pulumi` (pid, host, time); None where unreadable."""

    path: str
    pid: int | None
    host: str | None
    taken: float | None  # seconds since the epoch


def is_pulumi_cli(proc: Proc) -> bool:
    """Whether the process is the `pulumi` CLI itself (an engine run), not one of its plugins."""
    return bool(proc.argv) and os.path.basename(proc.argv[0]) == "pulumi"


def is_engine_child(proc: Proc) -> bool:
    """Whether the process is one a `pulumi` run starts: language host, program, plugin, dynamic provider."""
    names = [os.path.basename(arg) for arg in proc.argv[:3]]
    if any(name.startswith(ENGINE_CHILDREN) for name in names):
        return True
    return any(proc.argv[i : i + 2] == DYNAMIC_PROVIDER for i in range(len(proc.argv) - 1))


def label(proc: Proc) -> str:
    """The program's name: the engine child's own name, not the interpreter that runs it."""
    names = [os.path.basename(arg) for arg in proc.argv[:3]]
    named = [name for name in names if name.startswith(ENGINE_CHILDREN)]
    if named:
        return named[0]
    return "pulumi.dynamic" if DYNAMIC_PROVIDER[1] in proc.argv else names[0] if names else "?"


def belongs_to(proc: Proc, root: str) -> bool:
    """Whether the process was started for this clone: from its directory, or with its environment (hack/env.sh)."""
    markers = {"KWOK_WORKDIR": f"{root}/.kwok", "ARBOR_ROOT": root}
    if any(proc.env.get(key) == value for key, value in markers.items()):
        return True
    return proc.cwd == root or proc.cwd.startswith(root + "/")


def has_live_engine(proc: Proc, procs: Mapping[int, Proc]) -> bool:
    """Whether a live `pulumi` CLI is the process's parent, grand-parent, and so on."""
    seen: set[int] = set()
    parent = procs.get(proc.ppid)
    while parent is not None and parent.pid not in seen:
        if is_pulumi_cli(parent):
            return True
        seen.add(parent.pid)
        parent = procs.get(parent.ppid)
    return False


def is_cluster_component(proc: Proc, root: str) -> bool:
    """Whether the process is a local cluster's etcd, kube-apiserver and so on: the landscape, never an orphan."""
    clusters = [f"{root}/.kwok/clusters/", f"{proc.env.get('KWOK_WORKDIR', root + '/.kwok')}/clusters/"]
    return bool(proc.argv) and proc.argv[0].startswith(tuple(clusters))


def orphans(procs: Mapping[int, Proc], root: str) -> list[Proc]:
    """The clone's engine children whose `pulumi` is gone, and what they started (a kwokctl), oldest first.

    A live run's processes are kept, and so are the clusters' components a kwokctl may have started.
    """
    found = {
        p.pid
        for p in procs.values()
        if is_engine_child(p) and belongs_to(p, root) and not has_live_engine(p, procs) and not is_pulumi_cli(p)
    }
    grown = True
    while grown:
        below = {p.pid for p in procs.values() if p.ppid in found and not is_cluster_component(p, root)}
        grown = not below <= found
        found |= below
    return sorted((procs[pid] for pid in found), key=lambda p: (p.started, p.pid))


def lock_holder(lock: Lock, procs: Mapping[int, Proc], host: str) -> str | None:
    """Why the lock must stay (its holder may be live), or None when it is stale and safe to remove."""
    if lock.pid is None or lock.host is None:
        return "it cannot be read; remove it by hand if no `pulumi` runs on this stack"
    if lock.host != host:
        return f"it is held by pid {lock.pid} on host '{lock.host}', which this host cannot check"
    holder = procs.get(lock.pid)
    if holder is None or not is_pulumi_cli(holder):
        return None
    if lock.taken is not None and holder.started > lock.taken + START_SLACK_S:
        return None  # the pid was reused by a later `pulumi`, which did not take this lock
    return f"`pulumi` pid {lock.pid} holds it and still runs; wait for it to end"


def _adopts(op: Mapping[str, Any]) -> bool:
    """Whether the create of this pending operation's resource adopts what a killed create made (ADOPTING)."""
    return str(op["resource"].get("type", "")).startswith(ADOPTING)


def pending_creates(deployment: Mapping[str, object], adopting: bool = True) -> list[str]:
    """URNs of the pending CREATE operations of an exported deployment whose creates adopt (or, False, do not)."""
    ops = deployment.get("pending_operations") or []
    assert isinstance(ops, list)
    return [op["resource"]["urn"] for op in ops if op.get("type") == "creating" and _adopts(op) == adopting]


def without_pending_creates(deployment: Mapping[str, object]) -> dict[str, object]:
    """The deployment with the pending CREATE operations of adopting resources dropped, every other one kept."""
    ops = deployment.get("pending_operations") or []
    assert isinstance(ops, list)
    kept = [op for op in ops if not (op.get("type") == "creating" and _adopts(op))]
    return {**deployment, "pending_operations": kept}


def parse_lock(path: str, text: str) -> Lock:
    """A lock file's content; a field that cannot be read is None."""
    try:
        data = json.loads(text)
        pid, host, taken = data.get("pid"), data.get("hostname"), data.get("timestamp")
    except (ValueError, AttributeError):
        return Lock(path, None, None, None)
    try:
        when = datetime.fromisoformat(taken).timestamp() if isinstance(taken, str) else None
    except ValueError:
        when = None
    return Lock(path, pid if isinstance(pid, int) else None, host if isinstance(host, str) else None, when)


def read_proc(pid: int, boot: float, tick: int) -> Proc | None:
    """The process from /proc, or None when it is gone or not readable (another user's)."""
    base = Path("/proc", str(pid))
    try:
        stat = (base / "stat").read_text()
        argv = tuple(a.decode(errors="replace") for a in (base / "cmdline").read_bytes().split(b"\0") if a)
        fields = stat.rsplit(")", 1)[1].split()
        cwd = os.readlink(base / "cwd")
        raw_env = (base / "environ").read_bytes().split(b"\0")
    except (OSError, IndexError):
        return None
    env = dict(e.decode(errors="replace").split("=", 1) for e in raw_env if b"=" in e)
    return Proc(pid, int(fields[1]), argv, cwd, env, boot + int(fields[19]) / tick)


def process_table() -> dict[int, Proc]:
    """Every readable process of this host, by pid."""
    boot = next(
        float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime")
    )
    tick = os.sysconf("SC_CLK_TCK")
    procs = (read_proc(int(d.name), boot, tick) for d in Path("/proc").iterdir() if d.name.isdigit())
    return {p.pid: p for p in procs if p is not None}


def stop(victims: Iterable[Proc]) -> list[Proc]:
    """SIGTERM, then SIGKILL after a grace period; a process is re-checked (same start time) before each signal."""
    victims = list(victims)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        now = process_table()
        alive = [v for v in victims if v.pid in now and abs(now[v.pid].started - v.started) < 0.5]
        for victim in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(victim.pid, sig)
        deadline = time.monotonic() + STOP_GRACE_S
        while sig == signal.SIGTERM and alive and time.monotonic() < deadline:
            time.sleep(0.1)
            alive = [v for v in alive if Path("/proc", str(v.pid)).exists()]
    return victims


def backend_dir() -> Path | None:
    """The file backend's `.pulumi` directory, None for any other backend."""
    url = os.environ.get("PULUMI_BACKEND_URL", "")
    return Path(urlparse(url).path, ".pulumi") if url.startswith("file://") else None


def checkpoint(backend: Path, project: str, stack: str) -> dict[str, object] | None:
    """The stack's latest checkpoint as the file backend stores it (plain or gzipped), None without one."""
    for path in (backend / "stacks" / project / f"{stack}.json", backend / "stacks" / project / f"{stack}.json.gz"):
        if path.is_file():
            data = path.read_bytes()
            text = gzip.decompress(data) if path.suffix == ".gz" else data
            latest = json.loads(text).get("checkpoint", {}).get("latest")
            return dict(latest) if latest else None
    return None


def clear_locks(backend: Path, project: str, stack: str, procs: Mapping[int, Proc]) -> bool:
    """Removes the stack's stale locks; returns whether a live (or unknown) holder keeps one."""
    kept = False
    for path in sorted(backend.glob(f"locks/*/{project}/{stack}/*.json")):
        lock = parse_lock(str(path), path.read_text(errors="replace"))
        reason = lock_holder(lock, procs, socket.gethostname())
        if reason is None:
            path.unlink(missing_ok=True)
            path.with_name(path.name + ".attrs").unlink(missing_ok=True)  # the blob store's metadata beside it
            print(f"recover: removed stale lock {path.name} of stack '{stack}' (pid {lock.pid}: no `pulumi`)")
        else:
            kept = True
            print(f"recover: stack '{stack}' is locked by {path}: {reason}", file=sys.stderr)
    return kept


def attrs_for(data: bytes) -> str:
    """The `.attrs` sidecar the file backend's blob store writes beside `data` (its content type and MD5)."""
    md5 = base64.b64encode(hashlib.md5(data).digest()).decode()  # the store's checksum, not for security
    fields = ("cache_control", "content_disposition", "content_encoding", "content_language")
    attrs: dict[str, object] = {f"user.{f}": "" for f in fields}
    attrs |= {"user.content_type": "text/plain; charset=utf-8", "user.metadata": None, "md5": md5}
    return json.dumps(attrs, separators=(",", ":")) + "\n"


def is_damaged(attrs_text: str) -> bool:
    """Whether a `.attrs` sidecar cannot be read: the store truncates it before writing, so a kill leaves it empty."""
    try:
        return not isinstance(json.loads(attrs_text), dict)
    except ValueError:
        return True


def repair_files(backend: Path, project: str, stack: str) -> None:
    """Rewrites the stack's damaged `.attrs` sidecars and removes the temporary files of writes the kill cut short.

    With an empty sidecar every later command fails with `failed to load checkpoint: EOF`; the checkpoint itself is
    whole (the store renames it into place only after writing the sidecar).
    """
    own = list((backend / "stacks" / project).glob(f"{stack}.json*"))
    for folder in (backend / "history" / project / stack, backend / "backups" / project / stack):
        own += folder.glob("*")
    for path in sorted(own):
        if path.suffix == ".tmp":
            path.unlink(missing_ok=True)
            print(f"recover: removed {path.name}, a write of the killed `pulumi` that never finished")
        elif path.suffix == ".attrs" and is_damaged(path.read_text(errors="replace")):
            data = path.with_suffix("")
            if data.is_file():
                path.write_text(attrs_for(data.read_bytes()))
            else:
                path.unlink()
            print(f"recover: repaired {path.name}, which the killed `pulumi` left unreadable")


def clear_pending_creates(backend: Path, project: str, stack: str) -> None:
    """Drops pending CREATE operations through `pulumi stack export`/`import`, naming each one."""
    latest = checkpoint(backend, project, stack)
    if not latest:
        return
    for urn in pending_creates(latest, adopting=False):
        print(
            f"recover: kept the pending create of {urn.rsplit('::', 1)[-1]}: the killed run may have made it in the "
            "cloud; import it (`pulumi import`) or, once you know it does not exist, run `pulumi refresh "
            "--clear-pending-creates`"
        )
    if not pending_creates(latest):
        return
    exported = export(stack, who="recover")
    urns = pending_creates(exported["deployment"])
    exported["deployment"] = without_pending_creates(exported["deployment"])
    import_state(stack, exported, who="recover")
    for urn in urns:
        print(f"recover: dropped the pending create of {urn.rsplit('::', 1)[-1]} (this `up` creates or adopts it)")


def let_tools_finish(root: str, timeout_s: float = FINISH_S) -> list[Proc]:
    """Waits until the tools the killed run started (kwokctl, kubectl) have ended, at most `timeout_s`.

    Stopped half-way, a `kwokctl create` leaves a cluster that cannot start; its parent still reads its output (a
    Go program writing to a closed pipe dies), so the engine children are stopped only after this.
    """
    waited: dict[int, Proc] = {}
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        tools = [p for p in orphans(process_table(), root) if not is_engine_child(p)]
        if not tools:
            break
        waited.update({p.pid: p for p in tools if p.pid not in waited})
        time.sleep(0.2)
    return list(waited.values())


def main() -> None:
    """Stops orphans, removes stale locks, then (no live run left) drops pending creates."""
    stack = sys.argv[1]
    root = str(Path(__file__).resolve().parents[1])
    for proc in let_tools_finish(root):
        print(f"recover: let {label(proc)} (pid {proc.pid}) of a killed `pulumi` finish: {' '.join(proc.argv[1:4])}")
    for proc in stop(orphans(process_table(), root)):
        print(f"recover: stopped {label(proc)} (pid {proc.pid}), left running by a killed `pulumi`")
    backend = backend_dir()
    if backend is None:
        return
    names = re.findall(r"^name:\s*(\S+)", (Path(root) / "Pulumi.yaml").read_text(), re.MULTILINE)
    project = names[0] if names else "arbor"
    if clear_locks(backend, project, stack, process_table()):
        raise SystemExit(1)
    repair_files(backend, project, stack)
    clear_pending_creates(backend, project, stack)


if __name__ == "__main__":
    main()
