"""kwokctl helpers that read a cluster's directory: which components' processes are gone, which server runs."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from components.reconciler import kwokctl, node_leases, ports
from components.reconciler.kube import Kube


def test_components_whose_process_is_gone_are_named(tmp_path: Path) -> None:
    """GIVEN pid files of a live and of a gone process WHEN read THEN only the gone component is named."""
    cluster = kwokctl.Cluster(name="c", workdir=str(tmp_path))
    pids = cluster.dir / "pids"
    pids.mkdir(parents=True)
    (pids / "kube-apiserver.pid").write_text(str(os.getpid()))
    (pids / "kube-controller-manager.pid").write_text("999999999")
    (pids / "kube-scheduler.pid").write_text("")
    assert kwokctl.stopped_components(cluster) == ["kube-controller-manager", "kube-scheduler"]


def test_a_cluster_without_pid_files_has_nothing_stopped(tmp_path: Path) -> None:
    """GIVEN a cluster directory that was never started WHEN read THEN no component is named."""
    assert kwokctl.stopped_components(kwokctl.Cluster(name="c", workdir=str(tmp_path))) == []


def _with_apiserver_pid(tmp_path: Path, pid: int) -> kwokctl.Cluster:
    """A cluster directory whose kube-apiserver pid file names `pid`."""
    cluster = kwokctl.Cluster(name="c", workdir=str(tmp_path))
    (cluster.dir / "pids").mkdir(parents=True, exist_ok=True)
    (cluster.dir / "pids" / "kube-apiserver.pid").write_text(str(pid))
    return cluster


def test_the_apiserver_instance_is_stable_while_it_runs_and_new_when_it_restarts(tmp_path: Path) -> None:
    """GIVEN a running kube-apiserver WHEN its instance is read twice, or another process runs THEN it holds, or not."""
    cluster = _with_apiserver_pid(tmp_path, os.getpid())
    first = kwokctl.apiserver_instance(cluster)
    assert first != "none" and kwokctl.apiserver_instance(cluster) == first
    # A restart is another process: another pid (and start time).
    assert kwokctl.apiserver_instance(_with_apiserver_pid(tmp_path, os.getppid())) != first


def test_a_stopped_apiserver_has_no_instance(tmp_path: Path) -> None:
    """GIVEN no pid file, or a pid that is gone WHEN its instance is read THEN it is `none`."""
    assert kwokctl.apiserver_instance(kwokctl.Cluster(name="c", workdir=str(tmp_path))) == "none"
    assert kwokctl.apiserver_instance(_with_apiserver_pid(tmp_path, 999999999)) == "none"


def _listening() -> socket.socket:
    """A server socket on a free port of every address, as a kube-apiserver still shutting down holds its own."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("0.0.0.0", 0))
    server.listen()
    return server


def test_a_port_still_held_after_a_stop_is_awaited_until_released() -> None:
    """GIVEN a stopped cluster whose API server still listens WHEN awaited THEN it returns once the port is free."""
    server = _listening()
    releaser = threading.Timer(0.5, server.close)
    releaser.start()
    try:
        # Taken when the wait began: an empty answer means it waited for the release.
        assert ports.await_released({server.getsockname()[1]}, timeout_s=20) == []
    finally:
        releaser.cancel()
        server.close()


def test_a_port_never_released_is_named_after_the_timeout() -> None:
    """GIVEN a port another process keeps WHEN awaited THEN the wait ends in time and names the port."""
    with _listening() as server:
        port = server.getsockname()[1]
        assert ports.await_released({port}, timeout_s=0.3) == [port]


def test_a_restart_starts_only_once_the_stopped_ports_are_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a cluster WHEN restarted THEN it is stopped, its ports awaited, then started and awaited ready."""
    calls: list[str] = []

    def recorded(step: str, result: object = None) -> Callable[..., object]:
        def call(*args: object) -> object:
            calls.append(step if step != "verb" else str(args[1]))
            return result

        return call

    monkeypatch.setattr(kwokctl, "_kwokctl", recorded("verb", ""))
    monkeypatch.setattr(ports, "await_released", recorded("released", []))
    monkeypatch.setattr(kwokctl, "wait_ready", recorded("ready"))
    kwokctl.restart(kwokctl.Cluster(name="c", workdir=str(tmp_path)), lambda: calls.append("while stopped"))
    assert calls == ["stop", "while stopped", "released", "start", "ready"]


@pytest.mark.parametrize("chosen", [{"kubeApiserverPort": 31000, "etcdPort": 31001}, None])
def test_a_flag_naming_the_servers_url_is_given_at_creation_where_its_port_is_chosen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chosen: dict[str, int] | None
) -> None:
    """GIVEN a flag holding the server's URL WHEN a cluster is made THEN given its URL; with kwokctl's ports, later.

    A seed's JWKS URI names its own API: known once arbor chose the port, else set (with a restart) once made. The
    controller manager and the scheduler, one of each, run without leader election.
    """
    args: list[str] = []

    def called(cluster: kwokctl.Cluster, *given: str) -> str:
        args.extend(given)
        return ""

    monkeypatch.setattr(kwokctl, "_which", lambda binary: f"/bin/{binary}")
    monkeypatch.setattr(ports, "for_new_cluster", lambda _: chosen)
    monkeypatch.setattr(kwokctl, "_kwokctl", called)
    monkeypatch.setattr(kwokctl, "wait_ready", lambda cluster, timeout_s: None)
    flags = {"--service-account-jwks-uri": kwokctl.SERVER + "/openid/v1/jwks", "--enable-bootstrap-token-auth": "true"}
    kwokctl.create(kwokctl.Cluster(name="c", workdir=str(tmp_path)), flags)
    extra = [args[i + 1] for i, a in enumerate(args) if a == "--extra-args"]
    jwks = ["kube-apiserver=service-account-jwks-uri=https://127.0.0.1:31000/openid/v1/jwks"] if chosen else []
    single = ["kube-controller-manager=leader-elect=false", "kube-scheduler=leader-elect=false"]
    assert extra == [*single, *jwks, "kube-apiserver=enable-bootstrap-token-auth=true"]


@pytest.mark.parametrize(("kwok_before", "kwok_after", "released"), [(None, "222", True), ("111", "111", False)])
def test_a_started_kwok_is_handed_its_node_leases_one_kept_running_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kwok_before: str | None, kwok_after: str, released: bool
) -> None:
    """GIVEN kwok stopped (or running) WHEN the cluster is started THEN stale node leases are released (or not)."""
    cluster = kwokctl.Cluster(name="c", workdir=str(tmp_path))
    pids = iter([kwok_before, kwok_after])
    calls: list[str] = []
    monkeypatch.setattr(kwokctl, "_running_pid", lambda c, component: next(pids))
    monkeypatch.setattr(kwokctl, "_kwokctl", lambda c, *args: calls.append(args[0]))
    monkeypatch.setattr(kwokctl, "wait_ready", lambda c: calls.append("ready"))
    monkeypatch.setattr(kwokctl, "kubeconfig", lambda c: "kubeconfig")
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda k: k))
    monkeypatch.setattr(node_leases, "release_stale", lambda kube, since: calls.append(f"release {kube}"))
    kwokctl.start(cluster)
    assert calls == ["start", "ready", *(["release kubeconfig"] if released else [])]
