"""A new local cluster's ports: below the ephemeral range, the same for the same cluster, never one that is taken."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from components.reconciler import ports

LOW, HIGH = ports.PORT_FLOOR, 32768


def always(_: int) -> bool:
    """Every port is free."""
    return True


def test_a_cluster_gets_one_block_of_distinct_ports_below_the_ephemeral_range() -> None:
    """GIVEN a window below the ephemeral range WHEN ports are chosen THEN each option has its own port in it."""
    chosen = ports.choose("/clone/.kwok/clusters/local-garden", LOW, HIGH, set(), always)
    assert chosen is not None and set(chosen) == set(ports.OPTIONS)
    values = sorted(chosen.values())
    assert len(set(values)) == len(values) and values[0] >= LOW and values[-1] < HIGH
    assert values[-1] - values[0] < ports.BLOCK


def test_the_same_cluster_gets_the_same_ports_and_others_get_others() -> None:
    """GIVEN clusters of two clones WHEN ports are chosen twice THEN each gets its own, stable block."""
    a = ports.choose("/a/.kwok/clusters/local-garden", LOW, HIGH, set(), always)
    assert a == ports.choose("/a/.kwok/clusters/local-garden", LOW, HIGH, set(), always)
    assert a != ports.choose("/b/.kwok/clusters/local-garden", LOW, HIGH, set(), always)


def test_a_block_with_a_taken_or_recorded_port_gives_way_to_the_next() -> None:
    """GIVEN the cluster's block has a port bound now, or one a stopped cluster records WHEN chosen THEN it moves on."""
    key = "/a/.kwok/clusters/local-seed"
    first = ports.choose(key, LOW, HIGH, set(), always)
    assert first is not None
    bound = first["etcdPort"]
    moved = ports.choose(key, LOW, HIGH, set(), lambda port: port != bound)
    assert moved is not None and bound not in moved.values()
    recorded = ports.choose(key, LOW, HIGH, {first["kubeSchedulerPort"]}, always)
    assert recorded is not None and not set(recorded.values()) & set(first.values())


def test_a_cluster_made_again_gets_its_block_back_while_its_spare_ports_are_bound() -> None:
    """GIVEN the block's spare ports bound (its shoot's resource manager outlived the cluster) WHEN chosen THEN it."""
    key = "/a/.kwok/clusters/local-shoot-dev-web"
    first = ports.choose(key, LOW, HIGH, set(), always)
    assert first is not None
    spare = ports.spare_ports(first["kubeApiserverPort"])
    assert spare and ports.choose(key, LOW, HIGH, set(), lambda port: port not in spare) == first
    # Recorded by another cluster's kwok.yaml, a spare port still moves the block.
    assert ports.choose(key, LOW, HIGH, {spare[0]}, always) != first


def test_no_choice_when_no_block_is_free_or_the_window_is_empty() -> None:
    """GIVEN every port taken, or an ephemeral range that starts below the floor WHEN chosen THEN kwokctl picks."""
    assert ports.choose("k", LOW, LOW + 3 * ports.BLOCK, set(), lambda _: False) is None
    assert ports.choose("k", LOW, 1024, set(), always) is None


@pytest.mark.parametrize(
    ("text", "start"), [("32768\t60999\n", 32768), ("49152 65535", 49152), ("", 32768), ("x y", 32768)]
)
def test_the_ephemeral_range_is_read_from_procs_text(text: str, start: int) -> None:
    """GIVEN ip_local_port_range's text (or garbage) WHEN read THEN its first port (or Linux's default)."""
    assert ports.ephemeral_start(text) == start


def test_ports_recorded_by_a_kwok_yaml_are_taken() -> None:
    """GIVEN a stopped cluster's kwok.yaml WHEN read THEN its options and its components' ports count as used."""
    text = "options:\n  etcdPort: 20001\n  kubeApiserverPort: 20000\ncomponents:\n- ports:\n  - port: 20002\n"
    text += "    hostPort: 20009\n  args: ['--secure-port=1']\n"
    assert ports.recorded([text]) == {20000, 20001, 20002, 20009}


def test_a_port_someone_listens_on_is_not_bindable() -> None:
    """GIVEN a listening socket WHEN its port is tried THEN it is not free; after it closes, it is."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert not ports.bindable(port)
    assert ports.bindable(port)


def test_a_new_cluster_avoids_the_ports_its_siblings_record(tmp_path: Path) -> None:
    """GIVEN a work directory with a stopped cluster WHEN a new cluster's ports are chosen THEN it avoids its."""
    clusters = tmp_path / "clusters"
    (clusters / "old").mkdir(parents=True)
    new = clusters / "new"
    first = ports.for_new_cluster(new)
    assert first is not None
    (clusters / "old" / "kwok.yaml").write_text(f"options:\n  etcdPort: {first['etcdPort']}\n")
    second = ports.for_new_cluster(new)
    assert second is not None and first["etcdPort"] not in second.values()
    assert max(second.values()) < ports.ephemeral_start(ports.EPHEMERAL_RANGE.read_text())
