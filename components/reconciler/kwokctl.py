"""kwokctl's binary runtime, as arbor uses it: real local clusters made only from binaries on PATH.

Each cluster is etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok as processes on
loopback; every binary is passed explicitly (hack/tools.sh puts them on PATH), so nothing is ever downloaded.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from components.reconciler.kube import Kube

# kwokctl flag -> binary on PATH. Every component gets an explicit local binary: kwokctl's defaults are URLs.
BINARIES = {
    "--etcd-binary": "etcd",
    "--kube-apiserver-binary": "kube-apiserver",
    "--kube-controller-manager-binary": "kube-controller-manager",
    "--kube-scheduler-binary": "kube-scheduler",
    "--kwok-controller-binary": "kwok",
}
READY_TIMEOUT_S = 90


class KwokError(RuntimeError):
    """A kwokctl call or a cluster check that failed; the message says what to do."""


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
        raise KwokError(f"kwokctl {args[0]} {args[1]} '{cluster.name}' failed: {tail}")
    return proc.stdout


def server_version() -> str:
    """The version the kube-apiserver on PATH reports, e.g. `v1.34.4`."""
    out = subprocess.run([_which("kube-apiserver"), "--version"], capture_output=True, text=True, check=True)
    return out.stdout.split()[-1]


@contextlib.contextmanager
def _ports_lock(workdir: str) -> Iterator[None]:
    """Serialises cluster starts in a work directory.

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


def create(cluster: Cluster) -> None:
    """Creates and starts the cluster from the binaries on PATH, waiting until it is ready."""
    flags = [f"{flag}={_which(binary)}" for flag, binary in BINARIES.items()]
    with _ports_lock(cluster.workdir):
        _kwokctl(
            cluster, "create", "cluster", "--runtime", "binary", *flags,
            "--kubeconfig", str(cluster.scratch_kubeconfig), "--wait", f"{READY_TIMEOUT_S}s",
        )  # fmt: skip


def start(cluster: Cluster) -> None:
    """Starts the processes of an existing, stopped cluster and waits until it is ready."""
    with _ports_lock(cluster.workdir):
        _kwokctl(cluster, "start", "cluster")
        wait_ready(cluster)


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


def wait_ready(cluster: Cluster, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Waits until /readyz answers ok; raises KwokError after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not ready(cluster):
        if time.monotonic() > deadline:
            raise KwokError(f"cluster '{cluster.name}' is not ready after {timeout_s:.0f}s; logs: {cluster.dir}/logs")
        time.sleep(0.5)


def kubeconfig(cluster: Cluster) -> str:
    """A self-contained kubeconfig (certificates embedded) for the cluster's admin, context named after it."""
    server, ca, cert, key = _kubeconfig_files(cluster)

    def data(path: str) -> str:
        return base64.b64encode(Path(path).read_bytes()).decode()

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster.name, "cluster": {"server": server, "certificate-authority-data": data(ca)}}],
        "users": [
            {"name": cluster.name, "user": {"client-certificate-data": data(cert), "client-key-data": data(key)}}
        ],
        "contexts": [{"name": cluster.name, "context": {"cluster": cluster.name, "user": cluster.name}}],
        "current-context": cluster.name,
    }
    return yaml.safe_dump(config, sort_keys=False)
