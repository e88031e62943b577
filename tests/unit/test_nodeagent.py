"""Node configuration: which units a change restarts, and which changes roll the pool (a new OSC key)."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from components.checks import parse_landscape
from components.pins import GARDENER_VERSION
from components.plan import bootstrap, osc
from components.plan.bootstrap import secret_name
from components.plan.nodeagent_release import NODE_AGENT_DIR
from components.plan.nodes import node_values
from components.plan.osc import Inline
from components.plan.planner import plan_landscape
from components.plan.quantity import canonical
from components.plan.values import NodeValues
from components.render import nodeagent
from tests.unit.spec_cases import base

BASE = NodeValues(
    pool="pool-a",
    kubernetes_version="1.34.3",
    machine_type="m5.large",
    image="gardenlinux",
    image_version="1877.0.0",
    node_agent_version=GARDENER_VERSION,
    ca_bundle="CA-1",
    kubelet_ca="CLIENT-CA-1",
    kubelet={"maxPods": 110},
    kube_reserved={"cpu": "80m", "memory": "1Gi"},
    eviction_hard={"memory.available": "100Mi"},
    cluster_dns=("100.64.0.10",),
)


def changed(**fields: Any) -> NodeValues:
    """BASE with fields replaced."""
    return dataclasses.replace(BASE, **fields)


SCENARIOS: list[tuple[str, NodeValues, set[str], bool]] = [
    ("nothing", BASE, set(), False),
    ("a shoot label (not part of the node values)", changed(), set(), False),
    ("a kubelet flag", changed(kubelet={"maxPods": 64}), {"kubelet.service"}, False),
    ("a containerd registry mirror", changed(registry_mirrors={"docker.io": "https://mirror.example.com"}),
     set(), False),
    ("the node-agent version", changed(node_agent_version="v1.121.0"), {"gardener-node-agent.service"}, False),
    ("a Kubernetes patch release", changed(kubernetes_version="1.34.4"),
     {"kubelet.service", "gardener-node-agent.service"}, False),
    ("a Kubernetes minor upgrade", changed(kubernetes_version="1.35.0"), set(), True),
    ("a sysctl", changed(sysctls={"net.core.somaxconn": "4096"}), {"systemd-sysctl.service"}, False),
    ("journald retention", changed(journald={"MaxRetentionSec": "7day"}), {"systemd-journald.service"}, False),
    ("new CA bundle content", changed(ca_bundle="CA-1+CA-2"), {"gardener-node-agent.service"}, False),
    ("new kubelet client CA content", changed(kubelet_ca="CLIENT-CA-1+CLIENT-CA-2"), {"kubelet.service"}, False),
    ("new node root certificates", changed(root_certs="ROOT-1"), {"containerd.service", "kubelet.service"}, False),
    ("a CA rotation", changed(ca_rotation=1), set(), True),
    ("the machine type", changed(machine_type="m5.xlarge"), set(), True),
    ("the image version", changed(image_version="1877.1.0"), set(), True),
    ("kube reserved", changed(kube_reserved={"cpu": "100m", "memory": "1Gi"}), set(), True),
    ("kube reserved, same value (1024Mi for 1Gi)", changed(kube_reserved={"cpu": "0.08", "memory": "1024Mi"}),
     set(), False),
    ("eviction thresholds", changed(eviction_hard={"memory.available": "200Mi"}), set(), True),
    ("eviction thresholds, same value", changed(eviction_hard={"memory.available": "102400Ki"}), set(), False),
    ("the CPU manager policy", changed(kubelet={"maxPods": 110, "cpuManagerPolicy": "static"}), set(), True),
    ("the API server address", changed(api_server="https://api.new"), {"gardener-node-agent.service"}, False),
    ("the kube-dns addresses", changed(cluster_dns=("100.64.0.10", "fd00::a")), {"kubelet.service"}, False),
]  # fmt: skip


@pytest.mark.parametrize(("case", "new", "restart", "rolls"), SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_change_restarts_exactly(case: str, new: NodeValues, restart: set[str], rolls: bool) -> None:
    """GIVEN a pool's node values WHEN one thing changes THEN the pool rolls, or exactly these units restart.

    A new OSC key (what must replace machines) rolls the pool: new machines start from the new configuration,
    so no unit restarts in place. Any other change restarts exactly the units it touches, on running nodes.
    """
    assert (secret_name(new) != secret_name(BASE)) == rolls
    if not rolls:
        plan = osc.plan_between(nodeagent.reconcile_osc(BASE), nodeagent.reconcile_osc(new))
        assert set(plan.restart) == restart
        assert plan.stop == ()
    else:
        assert restart == set(), "a rolling change restarts nothing in place"


def test_there_are_at_least_twelve_scenarios() -> None:
    """The table covers the issue's twelve scenarios or more."""
    assert len(SCENARIOS) >= 12


def test_node_agent_upgrade_changes_only_its_own_files() -> None:
    """GIVEN a new node-agent version WHEN planned THEN its binary and its versioned config are written, nothing else.

    From v1.125 node-agent reads `config-<its version>.yaml`, so the config moves with the binary; the old file goes.
    """
    plan = osc.plan_between(
        nodeagent.reconcile_osc(BASE), nodeagent.reconcile_osc(changed(node_agent_version="v2.0.0"))
    )
    assert plan.write == ("/opt/bin/gardener-node-agent", "/var/lib/gardener-node-agent/config-v2.0.0.yaml")
    assert plan.delete == (f"/var/lib/gardener-node-agent/config-{GARDENER_VERSION}.yaml",)
    assert plan.restart == ("gardener-node-agent.service",)


@pytest.mark.parametrize(
    ("version", "config", "ca"),
    [
        ("v1.120.0", "config.yaml", "caBundle"),
        ("v1.124.9", "config.yaml", "caBundle"),
        ("v1.125.0", "config-v1.125.0.yaml", "caBundle"),
        ("v1.146.2", "config-v1.146.2.yaml", "caBundle"),
        ("v1.147.0", "config-v1.147.0.yaml", "caFile"),
        (GARDENER_VERSION, f"config-{GARDENER_VERSION}.yaml", "caFile"),
    ],
)
def test_config_path_and_ca_follow_the_release(version: str, config: str, ca: str) -> None:
    """GIVEN a node-agent release WHEN its files are rendered THEN the config path and the CA follow that release."""
    files = {f.path: f for f in nodeagent.reconcile_osc(changed(node_agent_version=version)).files}
    content = files[f"/var/lib/gardener-node-agent/{config}"].content
    assert isinstance(content, Inline)
    api = yaml.safe_load(content.data)["apiServer"]
    assert set(api) == {"server", ca}
    ca_file = files.get("/var/lib/gardener-node-agent/cluster-ca.crt")
    if ca == "caFile":
        assert api["caFile"] == "/var/lib/gardener-node-agent/cluster-ca.crt"
        assert ca_file is not None and ca_file.permissions == 0o640
        assert isinstance(ca_file.content, Inline) and base64.b64decode(ca_file.content.data).decode() == "CA-1"
    else:
        assert base64.b64decode(api["caBundle"]).decode() == "CA-1" and ca_file is None


def test_mirrors_reach_containerd_through_node_agent_without_a_restart() -> None:
    """GIVEN a registry mirror added WHEN planned THEN it is in criConfig (Gardener's), no file, nothing restarts.

    node-agent writes the registry's hosts.toml into containerd's hosts directory, read at each pull.
    """
    with_mirror = changed(registry_mirrors={"ghcr.io": "https://m", "docker.io": "https://hub-mirror"})
    config = nodeagent.reconcile_osc(with_mirror)
    assert config.to_object()["spec"]["criConfig"] == {
        "name": "containerd",
        "containerd": {
            "registries": [
                {"upstream": "docker.io", "server": "https://registry-1.docker.io",
                 "hosts": [{"url": "https://hub-mirror", "capabilities": ["pull", "resolve"]}]},
                {"upstream": "ghcr.io", "server": "https://ghcr.io",
                 "hosts": [{"url": "https://m", "capabilities": ["pull", "resolve"]}]},
            ]
        },
    }  # fmt: skip
    added = osc.plan_between(nodeagent.reconcile_osc(BASE), config)
    assert added.write == () and added.restart == ()
    assert nodeagent.reconcile_osc(BASE).to_object()["spec"]["criConfig"] == {"name": "containerd"}


def test_removed_unit_stops() -> None:
    """GIVEN a unit in the old hashes only WHEN planned THEN it stops and nothing restarts."""
    gone = osc.restart_plan({"a.service": "1", "b.service": "2"}, {"a.service": "1"}, {}, {})
    assert gone.stop == ("b.service",) and gone.restart == ()


def test_merge_refuses_a_unit_twice_and_dangling_file_paths() -> None:
    """GIVEN two components claiming one unit, or a unit listing an unwritten file WHEN merged THEN refused."""
    unit = osc.Unit("x.service")
    with pytest.raises(osc.MergeError, match=r"unit x\.service is defined twice"):
        osc.merge("n", osc.Purpose.RECONCILE, [osc.Part(units=(unit,)), osc.Part(units=(unit,))])
    with pytest.raises(osc.MergeError, match="lists files that no component writes: /missing"):
        osc.merge("n", osc.Purpose.RECONCILE, [osc.Part(units=(osc.Unit("y.service", file_paths=("/missing",)),))])


def test_osc_secret_shape() -> None:
    """GIVEN a pool WHEN its OSC secret is rendered THEN name, labels, checksum and key follow Gardener's."""
    secret = nodeagent.osc_secret(nodeagent.reconcile_osc(BASE), BASE.pool)
    meta: dict[str, Any] = secret["metadata"]  # type: ignore[assignment]
    assert meta["name"].startswith("gardener-node-agent-pool-a-") and len(meta["name"].rsplit("-", 1)[1]) == 16
    assert meta["labels"] == {"gardener.cloud/role": "operating-system-config", "worker.gardener.cloud/pool": "pool-a"}
    data = secret["stringData"]["osc.yaml"]  # type: ignore[index]
    assert len(meta["annotations"]["checksum/data-script"]) == 64
    assert {u["name"] for u in yaml.safe_load(data)["spec"]["units"]} == {
        "containerd.service", "gardener-node-agent.service", "kubelet.service", "systemd-journald.service",
        "systemd-sysctl.service",
    }  # fmt: skip
    assert len(data.encode()) < 1024 * 1024


def test_reconcile_osc_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN the base pool WHEN its reconcile OSC is rendered THEN it matches the golden file."""
    golden("osc-reconcile-pool-a.yaml", yaml.safe_dump(nodeagent.reconcile_osc(BASE).to_object(), sort_keys=False))


def test_user_data_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN the base pool WHEN its provision user data is rendered THEN it matches the golden script.

    The script is the same on every provider; only the budget differs (tests below).
    """
    golden("user-data-pool-a.sh", bootstrap.user_data(bootstrap.provision_osc(BASE)))


def test_provision_osc_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN the base pool WHEN its provision OSC is rendered THEN it matches the golden file."""
    golden("osc-provision-pool-a.yaml", yaml.safe_dump(bootstrap.provision_osc(BASE).to_object(), sort_keys=False))


@pytest.mark.parametrize(
    "new",
    [s[1] for s in SCENARIOS if not s[3] and s[0] not in ("the node-agent version", "new CA bundle content",
                                                          "the API server address", "a Kubernetes patch release")],
)  # fmt: skip
def test_user_data_is_byte_identical_when_only_the_reconcile_osc_changes(new: NodeValues) -> None:
    """GIVEN a change that only reaches running nodes WHEN the user data is rendered THEN not one byte differs.

    Left out: what node-init's own node-agent config holds (version, CA, API server, kubelet version), as upstream.
    """
    before = bootstrap.user_data(bootstrap.provision_osc(BASE))
    assert bootstrap.user_data(bootstrap.provision_osc(new)) == before


def test_user_data_keeps_upstream_placeholders_and_fits_every_budget() -> None:
    """GIVEN the provision user data WHEN inspected THEN it carries the placeholders raw and fits AWS's 16 KiB.

    machine-controller-manager replaces `<<BOOTSTRAP_TOKEN>>` and `<<MACHINE_NAME>>` by plain string search in
    the user data, so the files holding them are written unencoded (Gardener's `transmitUnencoded`).
    """
    data = bootstrap.user_data(bootstrap.provision_osc(BASE))
    provision = bootstrap.provision_osc(BASE).to_object()
    raw = {f["path"] for f in provision["spec"]["files"] if f["content"].get("transmitUnencoded")}
    assert raw == {
        f"{NODE_AGENT_DIR}/credentials/bootstrap-token",
        f"{NODE_AGENT_DIR}/machine-name",
    }
    assert f"printf '%s' '<<BOOTSTRAP_TOKEN>>' > '{NODE_AGENT_DIR}/credentials/bootstrap-token'" in data
    assert f"printf '%s' '<<MACHINE_NAME>>' > '{NODE_AGENT_DIR}/machine-name'" in data
    assert len(data.encode()) <= bootstrap.USER_DATA_BUDGET["aws"]
    for provider in bootstrap.USER_DATA_BUDGET:
        bootstrap.check_user_data(provider, data, "pool")


def test_user_data_over_budget_is_a_clear_error() -> None:
    """GIVEN user data over the provider's budget WHEN checked THEN the error names the pool, size and budget."""
    with pytest.raises(bootstrap.UserDataTooLargeError) as err:
        bootstrap.check_user_data("aws", "x" * 20000, "landscape.shoots[0].workers[1]")
    assert str(err.value) == "landscape.shoots[0].workers[1]: user data is 20000 bytes, more than aws's 16384"


def test_over_budget_pools_are_listed_before_any_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN a budget smaller than a pool's user data WHEN the plan is checked THEN each pool is one line."""
    from components.checks.workers import user_data_problems

    plan = plan_landscape(parse_landscape({**base(), "shoots": base()["shoots"][:2]}), "local")
    monkeypatch.setitem(bootstrap.USER_DATA_BUDGET, "local", 100)
    size = len(bootstrap.user_data(bootstrap.provision_osc(node_values(plan.shoots[0], plan.shoots[0].workers[0]))))
    lines = user_data_problems(plan)
    assert lines[0] == f"landscape.shoots[0].workers[0]: user data is {size} bytes, more than local's 100"
    assert len(lines) == 2


@pytest.mark.parametrize(
    ("written", "printed"),
    [("1Gi", "1Gi"), ("1024Mi", "1Gi"), ("1536Mi", "1536Mi"), ("0.5Gi", "512Mi"), ("512Ki", "512Ki"),
     ("0.5Ki", "512"), ("80m", "80m"), ("0.08", "80m"), ("1.5", "1500m"), ("1000", "1k"), ("20000", "20k"),
     ("1073741824", "1073741824"), ("0", "0"), ("10%", "10%")],
)  # fmt: skip
def test_quantities_print_as_kubernetes_prints_them(written: str, printed: str) -> None:
    """GIVEN a quantity as written WHEN made canonical THEN it reads as Kubernetes' Quantity.String() prints it."""
    assert canonical(written) == printed


def kubelet_config(v: NodeValues) -> dict[str, Any]:
    """The KubeletConfiguration of a pool's reconcile OSC, read back."""
    files = nodeagent.reconcile_osc(v).to_object()["spec"]["files"]
    content = next(f["content"]["inline"]["data"] for f in files if f["path"] == "/var/lib/kubelet/config/kubelet")
    config: dict[str, Any] = yaml.safe_load(content)
    return config


@pytest.mark.parametrize(
    ("families", "services", "dns"),
    [
        (("IPv4",), ("100.104.0.0/13",), ["100.104.0.10"]),
        (("IPv6",), ("fd00:104::/108",), ["fd00:104::a"]),
        (("IPv4", "IPv6"), ("100.104.0.0/13", "fd00:104::/108"), ["100.104.0.10", "fd00:104::a"]),
        (("IPv6", "IPv4"), ("fd00:104::/108", "100.104.0.0/13"), ["fd00:104::a", "100.104.0.10"]),
    ],
    ids=["ipv4", "ipv6", "dual-stack", "dual-stack-ipv6-first"],
)
def test_kubelet_resolves_through_kube_dns(
    families: tuple[str, ...], services: tuple[str, ...], dns: list[str]
) -> None:
    """GIVEN a shoot's families and service ranges WHEN its pool's kubelet config is rendered THEN kube-dns.

    `clusterDNS` is the 10th address of each service range in the shoot's family order (Gardener's), and
    `clusterDomain` is `cluster.local`.
    """
    plan = plan_landscape(parse_landscape(base()), "local")
    shoot = plan.shoots[0]
    shoot = dataclasses.replace(
        shoot, networking=dataclasses.replace(shoot.networking, ip_families=families, services=services)
    )
    config = kubelet_config(node_values(shoot, shoot.workers[0]))
    assert config["clusterDNS"] == dns
    assert config["clusterDomain"] == "cluster.local"
