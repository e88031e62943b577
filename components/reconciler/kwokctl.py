"""kwokctl's binary runtime, as arbor uses it: real local clusters made only from binaries on PATH.

Each cluster is etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok as processes on
loopback; every binary is passed explicitly (hack/tools.sh puts them on PATH), so nothing is ever downloaded.

arbor's own kube-apiserver files (encryption configuration, client CA bundle) live in the cluster's `arbor/`
directory. kwokctl passes extra flags at creation (`--extra-args`); on an existing cluster the flags are edited in
its kwok.yaml, which `kwokctl start` runs, and the cluster restarts with its etcd data kept.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import yaml

from components.reconciler import node_leases, ports
from components.reconciler.files import write_file
from components.reconciler.kube import Kube

# kwokctl flag -> binary on PATH. Every component gets an explicit local binary: kwokctl's defaults are URLs.
BINARIES = {
    "--etcd-binary": "etcd",
    "--kube-apiserver-binary": "kube-apiserver",
    "--kube-controller-manager-binary": "kube-controller-manager",
    "--kube-scheduler-binary": "kube-scheduler",
    "--kwok-controller-binary": "kwok",
}
# One of each per cluster, nothing to elect: renewing their leases every 2 s was a fifth of an idle cluster's CPU.
SINGLE_INSTANCE_ARGS = ("kube-controller-manager=leader-elect=false", "kube-scheduler=leader-elect=false")
READY_TIMEOUT_S = 90
CHECK_AGAIN_S = 5
# kube-apiserver flags whose values arbor sets; every other flag stays as kwokctl made it.
ENCRYPTION_FLAGS = ("--encryption-provider-config", "--encryption-provider-config-automatic-reload")
CLIENT_CA_FLAG = "--client-ca-file"
SERVER = "{server}"  # the API server's URL in a flag's value, known once its port is chosen
# The document kwokctl reads its options from (`--config`); only the ports are set, every other option as flags.
PORTS_CONFIG = {"apiVersion": "config.kwok.x-k8s.io/v1alpha1", "kind": "KwokctlConfiguration"}
# Whose logs explain a cluster that does not get ready, and how many of their last lines an error quotes.
DIAGNOSED = ("kube-apiserver", "etcd")
KWOK = "kwok-controller"
LOG_LINES = 8


class KwokError(RuntimeError):
    """A kwokctl call or a cluster check that failed; the message says what to do."""


class ClusterNotReadyError(RuntimeError):  # not a KwokError: no caller may answer it by deleting the cluster
    """A cluster whose etcd holds data did not start; its files are kept and the message quotes its logs."""


@dataclass(frozen=True)
class Cluster:
    """One kwokctl cluster: its name and the work directory that holds its files and processes."""

    name: str
    workdir: str

    @property
    def dir(self) -> Path:
        """Where kwokctl keeps the cluster's config, pki, etcd data, logs and pids."""
        return Path(self.workdir) / "clusters" / self.name

    @property
    def scratch_kubeconfig(self) -> Path:
        """The kubeconfig kwokctl edits; never the user's ~/.kube/config."""
        return Path(self.workdir) / f"{self.name}.kubeconfig"

    def exists(self) -> bool:
        """Whether kwokctl has the cluster (running or not)."""
        return (self.dir / "kwok.yaml").is_file()

    @property
    def encryption_file(self) -> Path:
        """The EncryptionConfiguration kube-apiserver reads (and reloads when it changes)."""
        return self.dir / "arbor" / "encryption-configuration.yaml"

    @property
    def client_ca_file(self) -> Path:
        """The bundle kube-apiserver verifies client certificates with: kwokctl's CA, then the extra ones."""
        return self.dir / "arbor" / "client-ca.crt"

    @property
    def own_ca_file(self) -> Path:
        """The CA kwokctl made, which signed the cluster's admin certificate."""
        return self.dir / "pki" / "ca.crt"


def _which(binary: str) -> str:
    """The absolute path of a tool on PATH, or an error that says how to get it."""
    found = shutil.which(binary)
    if not found:
        raise KwokError(f"'{binary}' is not on PATH: run `make tools` (or eval \"$(make -s env)\") first")
    return found


def _kwokctl(cluster: Cluster, *args: str) -> str:
    """Runs kwokctl for the cluster with its own work directory; raises KwokError with the tail of stderr."""
    env = dict(os.environ, KWOK_WORKDIR=cluster.workdir)
    cmd = [_which("kwokctl"), *args, "--name", cluster.name]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        starting = args[0] in ("create", "start")
        raise KwokError(
            f"kwokctl {args[0]} {args[1]} '{cluster.name}' failed: {tail}{diagnosis(cluster) if starting else ''}"
        )
    return proc.stdout


def diagnosis(cluster: Cluster) -> str:
    """Why a cluster may not get ready: the last lines of kube-apiserver's and etcd's logs, and where all are kept."""
    if not cluster.dir.is_dir():
        return ""
    logs = f"`kwokctl logs <component> --name {cluster.name}`"
    parts = [f"\nits files stay in {cluster.dir} (logs: {cluster.dir / 'logs'}, or {logs})"]
    if gone := stopped_components(cluster):
        parts.append(f"not running: {', '.join(gone)}")
    for component in DIAGNOSED:
        log = cluster.dir / "logs" / f"{component}.log"
        try:
            lines = log.read_text(errors="replace").rstrip().splitlines()[-LOG_LINES:]
        except OSError:
            continue
        parts.append(f"last lines of {component}.log:\n" + "\n".join(f"  {line[:300]}" for line in lines))
    return "\n".join(parts)


def server_version() -> str:
    """The version the kube-apiserver on PATH reports, e.g. `v1.34.4`."""
    out = subprocess.run([_which("kube-apiserver"), "--version"], capture_output=True, text=True, check=True)
    return out.stdout.split()[-1]


@contextlib.contextmanager
def ports_lock(workdir: str) -> Iterator[None]:
    """Serialises cluster starts (and the object store's port choice) in a work directory.

    kwokctl picks free ports when it creates a cluster, but only binds them when the processes start: two
    clusters created at once (the garden and a seed, say) pick the same ports and one fails to start.
    """
    Path(workdir).mkdir(parents=True, exist_ok=True)
    with open(Path(workdir) / ".ports.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def create(cluster: Cluster, apiserver_flags: Mapping[str, str] | None = None) -> None:
    """Creates and starts the cluster from the binaries on PATH, waiting until it is ready.

    `apiserver_flags` (`--flag` -> value, where `SERVER` is its URL) are kube-apiserver's from its first start on.
    Its ports are arbor's choice (components/reconciler/ports.py), given to kwokctl as a configuration file.
    """
    flags = [f"{flag}={_which(binary)}" for flag, binary in BINARIES.items()]
    flags += [a for arg in SINGLE_INSTANCE_ARGS for a in ("--extra-args", arg)]
    with ports_lock(cluster.workdir):
        chosen = ports.for_new_cluster(cluster.dir)
        server = f"https://127.0.0.1:{chosen['kubeApiserverPort']}" if chosen else ""  # else set after a restart
        given = {f: v.replace(SERVER, server) for f, v in (apiserver_flags or {}).items() if server or SERVER not in v}
        flags += [a for f, v in given.items() for a in ("--extra-args", f"kube-apiserver={f.removeprefix('--')}={v}")]
        config = Path(cluster.workdir) / f".{cluster.name}.ports.yaml"
        if chosen is not None:
            write_file(config, yaml.safe_dump({**PORTS_CONFIG, "options": chosen}, sort_keys=False))
            flags += ["--config", str(config)]
        try:
            _kwokctl(
                cluster, "create", "cluster", "--runtime", "binary", *flags,
                "--kubeconfig", str(cluster.scratch_kubeconfig), "--wait", f"{READY_TIMEOUT_S}s",
            )  # fmt: skip
        finally:
            config.unlink(missing_ok=True)
        # kwokctl ends well even when its wait ran out: say so now, with the logs, and keep the files.
        try:
            wait_ready(cluster, timeout_s=CHECK_AGAIN_S)
        except KwokError:
            waited = f"after `kwokctl create` waited {READY_TIMEOUT_S}s"
            raise KwokError(f"cluster '{cluster.name}' is not ready {waited}{diagnosis(cluster)}") from None


def holds_data(cluster: Cluster) -> bool:
    """Whether the cluster's etcd has ever started (its member directory exists): deleting it would lose objects."""
    return (cluster.dir / "etcd" / "member").is_dir()


def start(cluster: Cluster) -> None:
    """Starts the processes of an existing, stopped cluster and waits until it is ready.

    A cluster that never held data and does not start (a `kwokctl create` stopped half-way) fails with KwokError,
    which its caller answers by making it anew. One whose etcd holds data fails with ClusterNotReadyError instead,
    which no caller catches: the error names its logs, and its files stay for the user to look at.
    """
    with ports_lock(cluster.workdir):
        try:
            _start_processes(cluster)
        except KwokError as error:
            if not holds_data(cluster):
                raise
            advice = (
                f"\nits etcd data is kept: fix the cause and run `make up` again, or delete the cluster (`kwokctl "
                f"delete cluster --name {cluster.name}`, its objects are lost) and `make up` makes it anew"
            )
            raise ClusterNotReadyError(f"{error}{advice}") from None


def restart(cluster: Cluster, while_stopped: Callable[[], None] | None = None) -> None:
    """Stops every process of the cluster, runs `while_stopped`, starts them again from its kwok.yaml."""
    with ports_lock(cluster.workdir):
        _kwokctl(cluster, "stop", "cluster")
        if while_stopped is not None:
            while_stopped()
        ports.await_released(ports.recorded([(cluster.dir / "kwok.yaml").read_text()]) if cluster.exists() else set())
        _start_processes(cluster)


def _start_processes(cluster: Cluster) -> None:
    """`kwokctl start` until ready; a kwok it started is handed its nodes' leases at once (node_leases.py)."""
    since, kwok = datetime.now(UTC), _running_pid(cluster, KWOK)
    _kwokctl(cluster, "start", "cluster")
    wait_ready(cluster)
    if _running_pid(cluster, KWOK) != kwok:
        node_leases.release_stale(Kube.from_kubeconfig(kubeconfig(cluster)), since)


def _own_ca(cluster: Cluster) -> str:
    """The CA certificate kwokctl made, ending in a newline so that another PEM can follow."""
    own = cluster.own_ca_file.read_text()
    return own if own.endswith("\n") else own + "\n"


def client_ca_bundle(cluster: Cluster, extra_cas: str) -> str:
    """The CA kwokctl made (its admin must keep working), followed by `extra_cas`."""
    return _own_ca(cluster) + extra_cas


def extra_client_cas(cluster: Cluster) -> str | None:
    """The extra client CAs the cluster's bundle holds now, None without a bundle."""
    if not cluster.client_ca_file.is_file():
        return None
    return cluster.client_ca_file.read_text().removeprefix(_own_ca(cluster))


def flag_name(arg: str) -> str:
    """`--flag=value` -> `--flag`."""
    return arg.split("=", 1)[0]


def apiserver_proc(cluster: Cluster) -> Path:
    """/proc/<pid> of the cluster's kube-apiserver, from kwokctl's pid file (OSError when there is none)."""
    return Path("/proc", (cluster.dir / "pids" / "kube-apiserver.pid").read_text().strip())


def running_apiserver_args(cluster: Cluster) -> list[str]:
    """The command line of the cluster's running kube-apiserver, [] when it does not run."""
    try:
        cmdline = (apiserver_proc(cluster) / "cmdline").read_bytes()
    except (OSError, ValueError):
        return []
    return [arg.decode() for arg in cmdline.split(b"\0") if arg]


def config(cluster: Cluster) -> list[dict[str, object]]:
    """The documents of the cluster's kwok.yaml (its KwokctlConfiguration first, then kwok's stages)."""
    return [d for d in yaml.safe_load_all((cluster.dir / "kwok.yaml").read_text()) if d is not None]


def set_apiserver_flags(cluster: Cluster, flags: Mapping[str, str | None]) -> bool:
    """Sets kube-apiserver's `flags` in kwok.yaml (None removes one); True when the running server lacks them.

    The caller restarts the cluster then. Checking the running process, not the file, covers a crash before it.
    """
    docs = config(cluster)
    components = cast(list[dict[str, Any]], docs[0].get("components") or [])
    apiserver = next((c for c in components if c.get("name") == "kube-apiserver"), None)
    if apiserver is None:
        raise KwokError(f"cluster '{cluster.name}' has no kube-apiserver in {cluster.dir}/kwok.yaml")
    wanted = [f"{flag}={value}" for flag, value in flags.items() if value is not None]
    args = [a for a in apiserver["args"] if flag_name(a) not in flags] + wanted
    if args != apiserver["args"]:
        apiserver["args"] = args
        # Flags given at creation are also recorded as patches; keep them from bringing back an old value.
        patches = cast(list[dict[str, Any]], docs[0].get("componentsPatches") or [])
        for patch in patches:
            extra = patch.get("extraArgs") or []
            patch["extraArgs"] = [e for e in extra if f"--{e.get('key')}" not in flags]
        write_file(cluster.dir / "kwok.yaml", yaml.safe_dump_all(docs, sort_keys=False))
    running = running_apiserver_args(cluster)
    return sorted(a for a in running if flag_name(a) in flags) != sorted(wanted)


def delete(cluster: Cluster) -> None:
    """Stops every process of the cluster and removes its files; a missing cluster is fine."""
    if cluster.exists():
        _kwokctl(cluster, "delete", "cluster", "--kubeconfig", str(cluster.scratch_kubeconfig))
    shutil.rmtree(cluster.dir, ignore_errors=True)
    cluster.scratch_kubeconfig.unlink(missing_ok=True)


def _kubeconfig_files(cluster: Cluster) -> tuple[str, str, str, str]:
    """Server URL and CA, client certificate and key paths of the cluster's own kubeconfig."""
    config = yaml.safe_load((cluster.dir / "kubeconfig.yaml").read_text())
    server = config["clusters"][0]["cluster"]
    user = config["users"][0]["user"]
    return server["server"], server["certificate-authority"], user["client-certificate"], user["client-key"]


def endpoint(cluster: Cluster) -> str:
    """The API server URL of the cluster."""
    return _kubeconfig_files(cluster)[0]


def ready(cluster: Cluster) -> bool:
    """Whether the API server answers /readyz with ok, checked for real over TLS with the admin certificate."""
    if not cluster.exists():
        return False
    try:
        return Kube.from_kubeconfig(kubeconfig(cluster)).ready()
    except (OSError, ValueError, KeyError, StopIteration, yaml.YAMLError):
        return False


def stopped_components(cluster: Cluster) -> list[str]:
    """Components whose process is gone (kwokctl's binary runtime starts them but restarts none that exits)."""
    return [f.stem for f in sorted((cluster.dir / "pids").glob("*.pid")) if _running_pid(cluster, f.stem) is None]


def _running_pid(cluster: Cluster, component: str) -> str | None:
    """The pid of the component's process while it runs, from kwokctl's pid file."""
    with contextlib.suppress(OSError):
        if (pid := (cluster.dir / "pids" / f"{component}.pid").read_text().strip()).isdigit():
            return pid if Path(f"/proc/{pid}").exists() else None
    return None


def wait_ready(cluster: Cluster, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Waits until /readyz answers ok; raises KwokError after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not ready(cluster):
        if time.monotonic() > deadline:
            raise KwokError(f"cluster '{cluster.name}' is not ready after {timeout_s:.0f}s{diagnosis(cluster)}")
        time.sleep(0.5)


def apiserver_instance(cluster: Cluster) -> str:
    """An ID of the running kube-apiserver process (boot, pid, start time): it changes exactly when it restarts."""
    try:
        proc = apiserver_proc(cluster)
        # Field 22 of /proc/<pid>/stat, the start time; counted after the command name, which may hold spaces.
        started = (proc / "stat").read_text().rsplit(")", 1)[1].split()[19]
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except (OSError, IndexError):
        return "none"
    return hashlib.sha256(f"{boot}/{proc.name}/{started}".encode()).hexdigest()[:12]


def kubeconfig(cluster: Cluster) -> str:
    """The cluster admin's kubeconfig, context named after the cluster, referencing kwokctl's own PKI files.

    The credentials are held once, by the cluster: the state and every resource that reaches the cluster keep
    these paths, not a copy of the key (bench/README.md, state per shoot). Its first line names the running
    kube-apiserver instance. A restarted server (a reboot, new flags) so makes a new kubeconfig, and the
    kubernetes provider built on it connects again: one configured while the cluster was down would otherwise
    keep taking it for unreachable.
    """
    server, ca, cert, key = (_absolute(cluster, p) for p in _kubeconfig_files(cluster))
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster.name, "cluster": {"server": server, "certificate-authority": ca}}],
        "users": [{"name": cluster.name, "user": {"client-certificate": cert, "client-key": key}}],
        "contexts": [{"name": cluster.name, "context": {"cluster": cluster.name, "user": cluster.name}}],
        "current-context": cluster.name,
    }
    return f"# kube-apiserver instance {apiserver_instance(cluster)}\n" + yaml.safe_dump(config, sort_keys=False)


def _absolute(cluster: Cluster, path: str) -> str:
    """A path of kwokctl's kubeconfig made absolute (relative ones are relative to the kubeconfig), URLs as they are."""
    if "://" in path or Path(path).is_absolute():
        return path
    return str(cluster.dir / path)
