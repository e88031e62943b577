"""kwokctl helpers that read a cluster's directory: which components' processes are gone."""

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
