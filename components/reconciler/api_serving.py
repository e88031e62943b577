"""ApiServing: waits until a shoot's API answers /readyz where arbor reaches it, before anything is applied to it.

A self-hosted cloud shoot's API exists only once its control-plane machine has booted, fetched its bundle and
started the static pods, minutes after the instance is created; the Kubernetes provider would fail every object
at once. This gate sits between the machine (and its DNS records) and the objects in the shoot: created when the
API first answers, and again when the machine is replaced. It holds no object, so read() finds nothing to drift.

The engine stores the provider pickled by reference to this module: moving or renaming it needs a shim.
"""

from __future__ import annotations

import time
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.reconciler.kube import Kube, server_of
from components.reconciler.provider import Provider

PROVIDER_VERSION = "1"
# A machine boots, pulls its images and starts etcd and kube-apiserver in a few minutes; 20 is generous.
DEFAULT_TIMEOUT_S = 20 * 60
POLL_S = 5.0


def wait_serving(kubeconfig: str, timeout_s: float, what: str) -> None:
    """Polls /readyz until it answers ok; fails naming the server and how long it waited."""
    kube = Kube.from_kubeconfig(kubeconfig)
    deadline = time.monotonic() + timeout_s
    while not kube.ready():
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{what}: the API at {server_of(kubeconfig)} did not answer /readyz within {timeout_s:.0f} s "
                "(see the control-plane machine's serial console or system log)"
            )
        time.sleep(POLL_S)


class ApiServingProvider(Provider):
    """Creates and updates by waiting for the API; nothing to read or delete."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Waits until the API serves."""
        wait_serving(props["kubeconfig"], float(props["timeoutSeconds"]), props["shoot"])
        return CreateResult(id_=props["shoot"], outs=props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """A new machine (or server) waits again; a new kubeconfig of the same server does not."""
        changed = any(olds.get(k) != news.get(k) for k in ("machine", "server", "version"))
        return DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Waits until the API serves again."""
        wait_serving(news["kubeconfig"], float(news["timeoutSeconds"]), news["shoot"])
        return UpdateResult(outs=news)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """Nothing to read: the gate holds no object."""
        return ReadResult(id_=id_, outs=props)


class ApiServing(Resource, module="arbor", name="ApiServing"):
    """Exists once the shoot's API at `server` answered /readyz for the machine `machine`."""

    def __init__(
        self,
        name: str,
        *,
        shoot: str,
        kubeconfig: pulumi.Input[str],
        machine: pulumi.Input[str],
        timeout_s: int = DEFAULT_TIMEOUT_S,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        server = pulumi.Output.unsecret(pulumi.Output.from_input(kubeconfig).apply(server_of))
        props = {"shoot": shoot, "kubeconfig": kubeconfig, "server": server, "machine": machine,
                 "timeoutSeconds": timeout_s, "version": PROVIDER_VERSION}  # fmt: skip
        super().__init__(ApiServingProvider(), name, props, opts)
