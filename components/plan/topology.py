"""Where a shoot's control-plane components reach each other: hosted in the seed, or as static pods on a node.

The only difference between the two ways of running a control plane (components/render/controlplane.py renders
both), so the planner chooses it once per shoot and every workload reads it from ShootValues.topology.
"""

from __future__ import annotations

from dataclasses import dataclass

ETCD_CLIENT_PORT = 2379
ETCD_PEER_PORT = 2380
ETCD_METRICS_PORT = 2381
# On a control-plane node both etcds share the host network: events listens on ports of its own.
ETCD_EVENTS_HOST_PORTS = (2382, 2383, 2384)
APISERVER_PORT = 443


@dataclass(frozen=True)
class Topology:
    """Where the components reach each other: etcd (client, peer, metrics ports per role) and kube-apiserver."""

    static: bool
    etcd_hosts: dict[str, str]
    etcd_ports: dict[str, tuple[int, int, int]]
    apiserver: str

    def etcd_url(self, role: str) -> str:
        """The client URL of etcd `main` or `events`."""
        return f"https://{self.etcd_hosts[role]}:{self.etcd_ports[role][0]}"


def hosted(ns: str) -> Topology:
    """A control plane in the seed namespace `ns`: Services in front of every component, the same ports for all."""
    ports = (ETCD_CLIENT_PORT, ETCD_PEER_PORT, ETCD_METRICS_PORT)
    return Topology(
        static=False,
        etcd_hosts={r: f"etcd-{r}-client.{ns}.svc" for r in ("main", "events")},
        etcd_ports={"main": ports, "events": ports},
        apiserver=f"https://kube-apiserver.{ns}.svc:{APISERVER_PORT}",
    )


def static() -> Topology:
    """A control plane as static pods: every component on the node's loopback."""
    return Topology(
        static=True,
        etcd_hosts={"main": "127.0.0.1", "events": "127.0.0.1"},
        etcd_ports={"main": (ETCD_CLIENT_PORT, ETCD_PEER_PORT, ETCD_METRICS_PORT), "events": ETCD_EVENTS_HOST_PORTS},
        apiserver=f"https://127.0.0.1:{APISERVER_PORT}",
    )
