"""NodeAddresses: a kwok node's InternalIP of each IP family, written to the Node's status.

No provider sets a Node's status: kubelet does on a real node, and kwok sets one InternalIP (its own `--node-ip`)
on a fake one unless the node has one already. This resource writes the addresses the network plan gives the
node (a JSON merge patch replaces the whole list: a strategic merge would fold two InternalIPs into one, since
addresses merge by type). `read()` compares the Node's addresses with the state, so `refresh` shows drift.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.reconciler.kube import Kube
from components.reconciler.provider import Provider

PROVIDER_VERSION = "1"
NODES = "/api/v1/nodes"
INPUTS = ("node", "nodeUid", "addresses", "version")


def _write(props: dict[str, Any]) -> None:
    """Replaces the node's status addresses with the planned ones."""
    kube = Kube.from_kubeconfig(props["kubeconfig"])
    kube.merge_patch(f"{NODES}/{props['node']}/status", {"status": {"addresses": props["addresses"]}})


class NodeAddressesProvider(Provider):
    """Keeps a node's status addresses as planned."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Writes the addresses."""
        _write(props)
        return CreateResult(id_=props["node"], outs=props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """Any change (a new node object too) rewrites the addresses in place."""
        changed = [k for k in INPUTS if olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Writes the new addresses."""
        _write(news)
        return UpdateResult(outs=news)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The node's addresses as the cluster has them; gone with the node, or with an unreachable cluster."""
        node = Kube.from_kubeconfig(props["kubeconfig"]).find(f"{NODES}/{props['node']}")
        if node is None:
            return ReadResult(id_="", outs={})
        actual = (node.get("status") or {}).get("addresses") or []
        uid = (node.get("metadata") or {}).get("uid", "")
        return ReadResult(id_=id_, outs={**props, "addresses": actual, "nodeUid": uid})

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """Nothing to undo: the addresses go with the node."""


class NodeAddresses(Resource, module="arbor", name="NodeAddresses"):
    """The planned InternalIPs (one per family) and Hostname of one kwok node."""

    def __init__(
        self,
        name: str,
        *,
        kubeconfig: pulumi.Input[str],
        node: str,
        node_uid: pulumi.Input[str],
        addresses: list[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "kubeconfig": kubeconfig,
            "node": node,
            "nodeUid": node_uid,
            "addresses": [{"type": "InternalIP", "address": a} for a in addresses]
            + [{"type": "Hostname", "address": node}],
            "version": PROVIDER_VERSION,
        }
        super().__init__(NodeAddressesProvider(), name, props, opts)
