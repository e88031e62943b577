"""A local cluster that does not get ready: its error quotes its logs, and a cluster with data is never made anew."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.reconciler import kwokctl


def test_a_cluster_that_is_not_ready_is_explained_by_its_logs(tmp_path: Path) -> None:
    """GIVEN a cluster whose logs and pid files exist WHEN diagnosed THEN the error quotes their tails and its files."""
    cluster = kwokctl.Cluster(name="c", workdir=str(tmp_path))
    (cluster.dir / "logs").mkdir(parents=True)
    (cluster.dir / "pids").mkdir()
    (cluster.dir / "pids" / "etcd.pid").write_text("999999999")
    lines = [f"line {i}" for i in range(30)]
    (cluster.dir / "logs" / "kube-apiserver.log").write_text("\n".join(lines) + "\n")
    (cluster.dir / "logs" / "etcd.log").write_text("bind: address already in use\n")
    text = kwokctl.diagnosis(cluster)
    assert f"its files stay in {cluster.dir}" in text and "not running: etcd" in text
    assert "line 29" in text and f"line {29 - kwokctl.LOG_LINES}" not in text
    assert "last lines of etcd.log:\n  bind: address already in use" in text
    with pytest.raises(kwokctl.KwokError, match=r"(?s)is not ready after 0s.*address already in use"):
        kwokctl.wait_ready(cluster, timeout_s=0)


def test_a_cluster_without_files_is_not_said_to_keep_them(tmp_path: Path) -> None:
    """GIVEN a cluster kwokctl removed after a failed create WHEN diagnosed THEN nothing is claimed about files."""
    assert kwokctl.diagnosis(kwokctl.Cluster(name="gone", workdir=str(tmp_path))) == ""


@pytest.mark.parametrize("with_data", [False, True])
def test_a_cluster_that_does_not_start_is_made_anew_only_when_it_never_held_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_data: bool
) -> None:
    """GIVEN a cluster whose start fails WHEN its etcd never started THEN KwokError (made anew), else kept and named."""
    cluster = kwokctl.Cluster(name="c", workdir=str(tmp_path))
    (cluster.dir / "etcd" / ("member" if with_data else "")).mkdir(parents=True, exist_ok=True)

    def failing(_cluster: kwokctl.Cluster, *args: str) -> str:
        raise kwokctl.KwokError(f"kwokctl {args[0]} {args[1]} 'c' failed: address already in use")

    monkeypatch.setattr(kwokctl, "_kwokctl", failing)
    expected = kwokctl.ClusterNotReadyError if with_data else kwokctl.KwokError
    with pytest.raises(expected) as raised:
        kwokctl.start(cluster)
    assert not issubclass(kwokctl.ClusterNotReadyError, kwokctl.KwokError)
    assert ("its etcd data is kept" in str(raised.value)) == with_data
    assert cluster.dir.is_dir()
