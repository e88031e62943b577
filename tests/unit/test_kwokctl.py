"""kwokctl helpers that read a cluster's directory: which components' processes are gone, which server runs."""

from __future__ import annotations

import os
from pathlib import Path

from components.reconciler import kwokctl


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
