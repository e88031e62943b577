"""The loopback ports of a new local cluster, chosen by arbor: below Linux's ephemeral range, one block per cluster.

kwokctl alone picks free ports when it creates a cluster and binds them only when the processes start. A port in
the ephemeral range can be taken in between by any outgoing connection (and again at every restart), so arbor
picks them itself, from a window that outgoing connections never use: from PORT_FLOOR (above the well-known
ports of Kubernetes components, 10250 to 10259) up to the start of `ip_local_port_range`. Each cluster gets a
block of BLOCK consecutive ports at a place derived from its directory, so a cluster gets the same ports each
time it is made (lost and made again, it keeps its address) and two clones rarely meet; a block with a port taken
(one of kwokctl's bound now, or any recorded by a stopped cluster of the same work directory) gives way to the next.

Only `kwokctl create` chooses them: an existing cluster keeps the ports in its kwok.yaml, and ports are no input
of LocalCluster, so nothing is replaced or restarted for them (a restart only waits for them to be released). The
two ports after kwokctl's in a block are spare, free when the block was chosen: a hosted shoot's
gardener-resource-manager serves its webhook and health probes there (`spare_ports`), so the webhook's URL stays
the same for as long as the shoot's cluster does.
"""

from __future__ import annotations

import hashlib
import re
import socket
import time
from collections.abc import Callable, Collection
from pathlib import Path

PORT_FLOOR = 20000
# How long a restart waits for the stopped processes to let go of their ports, and how often it looks.
RELEASE_TIMEOUT_S = 30
RELEASE_POLL_S = 0.2
BLOCK = 8
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
# Linux's default start of the ephemeral range, used when the file cannot be read.
DEFAULT_EPHEMERAL_START = 32768
# kwokctl options, in the order they take the ports of a block.
OPTIONS = (
    "kubeApiserverPort",
    "etcdPort",
    "etcdPeerPort",
    "kwokControllerPort",
    "kubeControllerManagerPort",
    "kubeSchedulerPort",
)
# Any port a kwok.yaml records: its options (`etcdPort: 1`) and its components' `port:`/`hostPort:`.
_RECORDED = re.compile(r"(?i)port:\s*(\d+)\s*$", re.MULTILINE)


def ephemeral_start(text: str | None) -> int:
    """The first port of the ephemeral range from `ip_local_port_range`'s text (two numbers, e.g. 32768 60999)."""
    try:
        return int((text or "").split()[0])
    except (IndexError, ValueError):
        return DEFAULT_EPHEMERAL_START


def choose(key: str, low: int, high: int, used: Collection[int], free: Callable[[int], bool]) -> dict[str, int] | None:
    """The kwokctl port options of a cluster: the first usable block from the one `key` hashes to, None if none is.

    A block is usable when its ports lie in [low, high), none is in `used` and each of kwokctl's is `free` now.
    """
    blocks = (high - low) // BLOCK
    if blocks < 1:
        return None
    start = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") % blocks
    for step in range(blocks):
        base = low + ((start + step) % blocks) * BLOCK
        ports = range(base, base + BLOCK)
        # The spare ports need not be free now: only the block's own gardener-resource-manager binds them, and it
        # outlives a cluster that is lost and made again, which so gets its block (its address) back.
        if not any(p in used for p in ports) and all(free(p) for p in ports[: len(OPTIONS)]):
            return dict(zip(OPTIONS, ports, strict=False))
    return None


def spare_ports(apiserver_port: int) -> tuple[int, ...]:
    """The spare ports of the block whose first port is a cluster's kube-apiserver's."""
    return tuple(range(apiserver_port + len(OPTIONS), apiserver_port + BLOCK))


def recorded(kwok_yaml_texts: Collection[str]) -> set[int]:
    """Every port the given kwok.yaml files record (clusters that may be stopped but will start again)."""
    return {int(m) for text in kwok_yaml_texts for m in _RECORDED.findall(text)}


def await_released(recorded_ports: Collection[int], timeout_s: float = RELEASE_TIMEOUT_S) -> list[int]:
    """Waits until a stopped cluster's ports can be bound again; those still taken after `timeout_s`.

    `kwokctl stop` signals the processes and returns: a kube-apiserver shutting down still listens for a moment, and
    one started on its port then exits at once ("address already in use").
    """
    deadline = time.monotonic() + timeout_s
    while True:
        taken = sorted(p for p in recorded_ports if not bindable(p))
        if not taken or time.monotonic() > deadline:
            return taken  # still taken: the start fails naming the port, with the logs
        time.sleep(RELEASE_POLL_S)


def bindable(port: int) -> bool:
    """Whether a server can listen on the port now, on loopback and on every address (as etcd does)."""
    for host in ("127.0.0.1", "0.0.0.0"):  # a test bind, closed at once
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            # As the servers themselves do: a connection in TIME_WAIT does not keep them from listening.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError:
                return False
    return True


def for_new_cluster(cluster_dir: Path) -> dict[str, int] | None:
    """The port options of a cluster about to be made in `cluster_dir`; None leaves the choice to kwokctl.

    Callers hold the work directory's ports lock, so no other cluster of it picks ports at the same time.
    """
    try:
        high = ephemeral_start(EPHEMERAL_RANGE.read_text())
    except OSError:
        high = DEFAULT_EPHEMERAL_START
    others = [p.read_text() for p in cluster_dir.parent.glob("*/kwok.yaml") if p.parent != cluster_dir]
    return choose(str(cluster_dir), PORT_FLOOR, min(high, 65536), recorded(others), bindable)


def for_store(store_dir: Path, clusters_dir: Path) -> int | None:
    """A port for the local object store in `store_dir`: a whole block's first, clear of every cluster's ports.

    Taking the block keeps the kwok clusters made while the store runs off it. Callers hold the ports lock.
    """
    try:
        high = ephemeral_start(EPHEMERAL_RANGE.read_text())
    except OSError:
        high = DEFAULT_EPHEMERAL_START
    clusters = [p.read_text() for p in clusters_dir.glob("*/kwok.yaml")]
    chosen = choose(str(store_dir), PORT_FLOOR, min(high, 65536), recorded(clusters), bindable)
    return None if chosen is None else min(chosen.values())
