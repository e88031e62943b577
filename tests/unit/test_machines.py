"""Worker machinery rendered pure: machine CRDs, MCM with each provider's sidecar, classes, deployments, rolls."""

from __future__ import annotations

import base64
import dataclasses
import re
from collections.abc import Callable
from typing import Any

import pytest

from components import pins
from components.checks import parse_landscape
from components.plan.network import local_node_ranges
from components.plan.nodes import distribute, node_values, roll_hash, with_nodes, zone_deployments
from components.plan.planner import plan_landscape
from components.plan.values import PoolValues, ShootValues, VolumeValues, ZoneDeployment
from components.render import machine_crds, machine_pools, machine_providers, machines
from tests.unit.spec_cases import base
from tests.unit.test_rendering import dump

PLAN = plan_landscape(parse_landscape(base()), "local")
WEB = PLAN.shoots[0]
NS = WEB.seed_namespace
# A pool over three zones with an uneven minimum, maximum and surge, so every distribution has a remainder.
POOL = dataclasses.replace(
    WEB.workers[0], zones=("zone-a", "zone-b", "zone-c"), minimum=4, maximum=7, max_surge=2, max_unavailable=1
)
SHOOT = dataclasses.replace(WEB, workers=(POOL,))
IMAGE = (POOL.image, POOL.image_version)
AMI = "ami-0123456789abcdef0"
GCP_IMAGE = "projects/example/global/images/gardenlinux-1877-0"


def _deployments(shoot: ShootValues = SHOOT, pool: PoolValues = POOL) -> tuple[ZoneDeployment, ...]:
    """The zone deployments of a pool of a shoot."""
    return zone_deployments(shoot, pool, node_values(shoot, pool))


def _aws(d: ZoneDeployment, families: tuple[str, ...] = ("IPv4",)) -> dict[str, Any]:
    """The aws class of a zone deployment, with example infrastructure IDs."""
    values = machine_providers.AwsMachineValues(
        NS, "eu-central-1", f"subnet-{d.zone}", "sg-0abc", f"{NS}-nodes", ip_families=families
    )
    return machine_providers.aws_machine_class(NS, d, values, AMI)


def _gcp(d: ZoneDeployment) -> dict[str, Any]:
    """The gcp class of a zone deployment, with an example subnetwork and service account."""
    values = machine_providers.GcpMachineValues(
        NS, "europe-west1", f"{NS}-nodes", "nodes@example.iam.gserviceaccount.com"
    )
    return machine_providers.gcp_machine_class(NS, d, values, GCP_IMAGE)


CLASSES: dict[str, Callable[[ZoneDeployment], dict[str, Any]]] = {
    "aws": _aws,
    "gcp": _gcp,
    "local": lambda d: machine_providers.local_machine_class(NS, d, local_node_ranges(WEB.networking)),
}


# --- goldens ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", sorted(machine_providers.SIDECARS))
def test_mcm_golden(provider: str, golden: Callable[[str, str], None]) -> None:
    """GIVEN a provider WHEN MCM is rendered with its sidecar THEN seed and shoot objects match the golden files."""
    sidecar = machine_providers.SIDECARS[provider](NS)
    objects = [*machines.seed_objects(WEB, sidecar), *machines.shoot_objects(WEB)]
    golden(f"mcm-{provider}.yaml", dump(objects))


@pytest.mark.parametrize("provider", ["aws", "gcp"])
def test_mcm_in_a_self_hosted_shoot_golden(provider: str, golden: Callable[[str, str], None]) -> None:
    """GIVEN a self-hosted shoot WHEN MCM is rendered THEN in its kube-system, in-cluster, as the golden files."""
    root = next(s for s in PLAN.shoots if s.self_hosted)
    sidecar = machine_providers.SIDECARS[provider](root.machine_namespace)
    golden(
        f"mcm-self-hosted-{provider}.yaml", dump([*machines.seed_objects(root, sidecar), *machines.shoot_objects(root)])
    )


@pytest.mark.parametrize("provider", sorted(CLASSES))
def test_machine_class_golden(provider: str, golden: Callable[[str, str], None]) -> None:
    """GIVEN a 3-zone pool WHEN its first zone's class and user data are rendered THEN they match the golden."""
    d = _deployments()[0]
    objects = [CLASSES[provider](d), machine_pools.user_data_secret(NS, d, "#!/bin/bash\necho hello\n")]
    golden(f"machine-class-{provider}.yaml", dump(objects))


def test_machine_deployments_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN a pool over three zones WHEN its MachineDeployments are rendered THEN they match the golden."""
    golden("machine-deployments-3-zones.yaml", dump([machine_pools.machine_deployment(NS, d) for d in _deployments()]))


# --- MCM and its sidecars --------------------------------------------------------------------------------

SIDECAR_IMAGES = {
    "aws": "europe-docker.pkg.dev/gardener-project/releases/gardener/machine-controller-manager-provider-aws",
    "gcp": "europe-docker.pkg.dev/gardener-project/releases/gardener/machine-controller-manager-provider-gcp",
    "local": "europe-docker.pkg.dev/gardener-project/releases/gardener/extensions/"
    "machine-controller-manager-provider-local",
}


@pytest.mark.parametrize("provider", sorted(SIDECAR_IMAGES))
def test_one_mcm_with_the_providers_sidecar(provider: str) -> None:
    """GIVEN a provider WHEN MCM is rendered THEN one Deployment runs MCM and exactly that provider's sidecar."""
    objects = machines.seed_objects(WEB, machine_providers.SIDECARS[provider](NS))
    deployments = [o for o in objects if o["kind"] == "Deployment"]
    assert len(deployments) == 1
    mcm, sidecar = deployments[0]["spec"]["template"]["spec"]["containers"]
    assert mcm["name"] == "machine-controller-manager"
    assert mcm["image"] == pins.MCM.ref
    # Gardener's name of a provider's sidecar (the extensions are named `provider-<provider>`).
    assert sidecar["name"] == f"machine-controller-manager-provider-{provider}"
    assert sidecar["image"] == f"{SIDECAR_IMAGES[provider]}:{pins.MCM_PROVIDERS[provider].tag}"
    for container, port in ((mcm, 10258), (sidecar, 10259)):
        flags = container.get("command", []) + container.get("args", [])
        assert f"--namespace={NS}" in flags
        assert f"--port={port}" in flags
        assert f"--target-kubeconfig={machines.TARGET_KUBECONFIG}" in flags
        assert container["livenessProbe"]["httpGet"]["port"] == port


def test_metrics_service_selects_mcm_and_serves_both_ports() -> None:
    """GIVEN MCM WHEN its Service is rendered THEN it selects MCM's pods and exposes 10258 and 10259."""
    sidecar = machine_providers.sidecar_aws(NS)
    service = machines.metrics_service(WEB, sidecar)
    labels = machines.mcm_deployment(WEB, sidecar)["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert [p["port"] for p in service["spec"]["ports"]] == [10258, 10259]


def test_every_mounted_volume_exists_and_the_kubeconfig_is_one_of_them() -> None:
    """GIVEN MCM WHEN rendered THEN each container's mounts are pod volumes, the target kubeconfig among them."""
    pod = machines.mcm_deployment(WEB, machine_providers.sidecar_gcp(NS))["spec"]["template"]["spec"]
    volumes = {v["name"] for v in pod["volumes"]}
    for container in pod["containers"]:
        assert {m["name"] for m in container["volumeMounts"]} == volumes
    assert machines.target_kubeconfig(WEB)["metadata"]["name"] in volumes


def test_local_sidecar_may_manage_machine_pods_and_others_may_not() -> None:
    """GIVEN the sidecars WHEN the seed Role is rendered THEN only provider-local's adds pods and services."""

    def pods_rule(provider: str) -> bool:
        role = machines.seed_role(WEB, machine_providers.SIDECARS[provider](NS))
        return any("pods" in r["resources"] for r in role["rules"])

    assert [pods_rule(p) for p in ("aws", "gcp", "local")] == [False, False, True]


# --- machine CRDs ----------------------------------------------------------------------------------------


def _pruned(value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """The paths of `value` that a CRD's structural schema does not know, which the API server would drop."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return []
    found: list[str] = []
    if isinstance(value, dict):
        known, more = schema.get("properties", {}), schema.get("additionalProperties")
        for name, sub in value.items():
            if name in known:
                found += _pruned(sub, known[name], f"{path}.{name}")
            elif isinstance(more, dict):
                found += _pruned(sub, more, f"{path}.{name}")
            else:
                found.append(f"{path}.{name}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _pruned(item, schema.get("items", {}), f"{path}[{i}]")
    return found


def _schema(kind: str) -> dict[str, Any]:
    """The schema of a machine kind in MCM's CRD."""
    [crd] = [c for c in machine_crds.crds() if c["spec"]["names"]["kind"] == kind]
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


@pytest.mark.parametrize("provider", sorted(CLASSES))
def test_nothing_arbor_writes_is_pruned_by_mcms_crds(provider: str) -> None:
    """GIVEN a zone's class and deployment WHEN held against MCM's CRDs THEN every field arbor writes is kept."""
    d = _deployments()[0]
    for obj in (CLASSES[provider](d), machine_pools.machine_deployment(NS, d)):
        # The API server keeps an object's metadata by its own rules, not by the CRD's schema.
        body = {k: v for k, v in obj.items() if k != "metadata"}
        assert _pruned(body, _schema(obj["kind"])) == [], obj["kind"]
    # The check finds what a schema lacks.
    assert _pruned({"spec": {"replicaz": 1}}, _schema("MachineDeployment")) == [".spec.replicaz"]


def test_machine_set_status_holds_what_mcm_writes() -> None:
    """GIVEN MCM's MachineSet CRD WHEN its status is read THEN it holds machineSetCondition and lastOperation."""
    status = _schema("MachineSet")["properties"]["status"]["properties"]
    assert {"machineSetCondition", "lastOperation", "failedMachines"} <= status.keys()
    assert "conditions" not in status


# --- classes and deployments -----------------------------------------------------------------------------


def test_names_follow_gardener() -> None:
    """GIVEN a 3-zone pool WHEN planned THEN deployments are `<id>-<pool>-z<N>` and classes add a 5-digit hash."""
    ds = _deployments()
    assert [d.name for d in ds] == [f"shoot--dev--web-pool-a-z{n}" for n in (1, 2, 3)]
    for d in ds:
        prefix, digest = d.class_name.rsplit("-", 1)
        assert prefix == d.name
        assert len(digest) == 5 and int(digest, 16) >= 0


@pytest.mark.parametrize("provider", sorted(CLASSES))
def test_class_references_its_user_data_and_the_shoots_credentials(provider: str) -> None:
    """GIVEN a zone's class WHEN rendered THEN its user-data Secret is named like the class, credentials shared."""
    d = _deployments()[1]
    cls = CLASSES[provider](d)
    secret = machine_pools.user_data_secret(NS, d, "script")
    assert cls["secretRef"] == {"name": secret["metadata"]["name"], "namespace": NS}
    assert cls["credentialsSecretRef"] == {"name": "cloudprovider", "namespace": NS}
    assert base64.b64decode(secret["data"]["userData"]) == b"script"
    assert cls["metadata"]["labels"]["topology.kubernetes.io/zone"] == "zone-b"


def test_deployment_selects_its_machines_and_labels_their_nodes() -> None:
    """GIVEN a zone's MachineDeployment WHEN rendered THEN its selector matches its template, nodes get labels."""
    d = _deployments()[2]
    spec = machine_pools.machine_deployment(NS, d)["spec"]
    assert spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()
    assert spec["template"]["spec"]["class"] == {"kind": "MachineClass", "name": d.class_name}
    assert spec["template"]["spec"]["nodeTemplate"]["metadata"]["labels"] == {
        "worker.gardener.cloud/pool": "pool-a",
        "topology.kubernetes.io/zone": "zone-c",
        "node.kubernetes.io/instance-type": POOL.machine_type,
        "worker.gardener.cloud/kubernetes-version": POOL.kubernetes_version,
    }


def test_aws_ipv6_nodes_get_an_address_and_a_prefix() -> None:
    """GIVEN a dual-stack shoot on aws WHEN its class is rendered THEN the interface asks for IPv6."""
    interface = _aws(_deployments()[0], ("IPv4", "IPv6"))["providerSpec"]["networkInterfaces"][0]
    assert (interface["ipv6AddressCount"], interface["ipv6PrefixCount"]) == (1, 1)
    assert "ipv6AddressCount" not in _aws(_deployments()[0])["providerSpec"]["networkInterfaces"][0]


# --- what rolls a pool ----------------------------------------------------------------------------------

ROLLS: list[tuple[str, Callable[[ShootValues, PoolValues], tuple[ShootValues, PoolValues]], bool]] = [
    ("kubernetes minor", lambda s, p: (s, dataclasses.replace(p, kubernetes_version="1.33.6")), True),
    ("machine type", lambda s, p: (s, dataclasses.replace(p, machine_type="m5.xlarge")), True),
    ("image version", lambda s, p: (s, dataclasses.replace(p, image_version="1877.1")), True),
    ("image name", lambda s, p: (s, dataclasses.replace(p, image="ubuntu")), True),
    ("cri", lambda s, p: (s, dataclasses.replace(p, cri="docker")), True),
    ("kube reserved", lambda s, p: (s, dataclasses.replace(p, kube_reserved={"cpu": "100m"})), True),
    ("eviction", lambda s, p: (s, dataclasses.replace(p, eviction_hard={"memory.available": "5%"})), True),
    ("cpu manager", lambda s, p: (s, dataclasses.replace(p, kubelet={"cpuManagerPolicy": "static"})), True),
    ("ca rotation", lambda s, p: (dataclasses.replace(s, credentials=dataclasses.replace(
        s.credentials, rotation={**s.credentials.rotation, "ca": 1})), p), True),
    ("kubernetes patch", lambda s, p: (s, dataclasses.replace(p, kubernetes_version="1.34.9")), False),
    ("minimum", lambda s, p: (s, dataclasses.replace(p, minimum=6)), False),
    ("maximum", lambda s, p: (s, dataclasses.replace(p, maximum=12)), False),
    ("max surge", lambda s, p: (s, dataclasses.replace(p, max_surge=3)), False),
    ("max unavailable", lambda s, p: (s, dataclasses.replace(p, max_unavailable=0)), False),
    ("max pods", lambda s, p: (s, dataclasses.replace(p, kubelet={"maxPods": 64})), False),
    ("registry mirror", lambda s, p: (s, dataclasses.replace(p, registry_mirrors={"docker.io": "https://m"})), False),
    ("sysctl", lambda s, p: (s, dataclasses.replace(p, sysctls={"vm.swappiness": "1"})), False),
    ("node-agent version", lambda s, p: (dataclasses.replace(s, node_agent_version="v1.121.0"), p), False),
    ("volume size", lambda s, p: (s, dataclasses.replace(p, volume=VolumeValues(size_gb=100))), True),
    ("volume type", lambda s, p: (s, dataclasses.replace(p, volume=VolumeValues(type="io2"))), True),
    ("volume encryption", lambda s, p: (s, dataclasses.replace(p, volume=VolumeValues(encrypted=False))), True),
    ("etcd CA rotation", lambda s, p: (dataclasses.replace(s, credentials=dataclasses.replace(
        s.credentials, rotation={**s.credentials.rotation, "etcdCA": 1})), p), False),
]  # fmt: skip


def _class_names(shoot: ShootValues, pool: PoolValues) -> list[str]:
    """The class name of each zone of a pool."""
    return [d.class_name for d in zone_deployments(shoot, pool, node_values(shoot, pool))]


@pytest.mark.parametrize(("change", "rolls"), [(c, r) for c, _, r in ROLLS], ids=[c for c, _, _ in ROLLS])
def test_roll_table(change: str, rolls: bool) -> None:
    """GIVEN a pool WHEN one setting changes THEN every zone's class name changes exactly if machines must go."""
    apply = next(f for c, f, _ in ROLLS if c == change)
    shoot, pool = apply(SHOOT, POOL)
    before, after = _class_names(SHOOT, POOL), _class_names(shoot, pool)
    assert [a != b for a, b in zip(before, after, strict=True)] == [rolls] * 3


def test_reordered_zones_roll_only_the_moved_deployments() -> None:
    """GIVEN a pool WHEN two of its zones swap places THEN z1 and z2 roll into their new zones, z3 does not."""
    swapped = dataclasses.replace(POOL, zones=("zone-b", "zone-a", "zone-c"))
    before, after = _class_names(SHOOT, POOL), _class_names(SHOOT, swapped)
    assert [a != b for a, b in zip(before, after, strict=True)] == [True, True, False]


def test_other_pools_do_not_roll() -> None:
    """GIVEN two pools WHEN one's machine type changes THEN the other's class names stay."""
    other = dataclasses.replace(POOL, name="pool-b")
    changed = dataclasses.replace(POOL, machine_type="m5.xlarge")
    assert _class_names(SHOOT, other) == _class_names(dataclasses.replace(SHOOT, workers=(changed, other)), other)


# --- spreading over zones -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("total", "zones", "shares"),
    [(4, 3, [2, 1, 1]), (7, 3, [3, 2, 2]), (3, 3, [1, 1, 1]), (1, 3, [1, 0, 0]), (0, 2, [0, 0]), (5, 1, [5]),
     (2, 3, [1, 1, 0])],
)  # fmt: skip
def test_distribution_table(total: int, zones: int, shares: list[int]) -> None:
    """GIVEN a total and zones WHEN spread THEN each zone gets total // zones and the first ones the remainder."""
    assert [distribute(i, total, zones) for i in range(zones)] == shares
    assert sum(shares) == total


def test_zone_deployments_spread_replicas_and_budget() -> None:
    """GIVEN minimum 4, maximum 7, maxSurge 2, maxUnavailable 1 over 3 zones WHEN planned THEN each is spread."""
    got = [(d.minimum, d.maximum, d.max_surge, d.max_unavailable) for d in _deployments()]
    assert got == [(2, 3, 1, 1), (1, 2, 1, 0), (1, 2, 0, 0)]
    strategy = machine_pools.machine_deployment(NS, _deployments()[1])["spec"]["strategy"]
    assert strategy == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}


def test_pool_without_zones_uses_the_shoots_zones() -> None:
    """GIVEN a pool naming no zones WHEN planned THEN it spans the shoot's zones."""
    pool = dataclasses.replace(POOL, zones=())
    shoot = dataclasses.replace(SHOOT, networking=dataclasses.replace(SHOOT.networking, zones=("x", "y")))
    assert [d.zone for d in zone_deployments(shoot, pool, node_values(shoot, pool))] == ["x", "y"]


# --- local nodes: a self-hosted shoot's, which arbor makes (MCM makes a hosted shoot's) ----------------------

SELF_HOSTED = with_nodes(dataclasses.replace(WEB, seed=None))


def test_a_hosted_shoot_has_no_nodes_of_arbors() -> None:
    """GIVEN a hosted local shoot WHEN planned THEN arbor makes none of its nodes: MCM's sidecar does."""
    assert WEB.local_nodes == ()
    assert WEB.cluster.nodes == 0
    assert len(SELF_HOSTED.local_nodes) == sum(p.minimum for p in WEB.workers)


@pytest.mark.parametrize(
    ("minimum", "zones", "spread"),
    [(1, ("local-a",), {"local-a": 1}), (3, ("local-a", "local-b"), {"local-a": 2, "local-b": 1}),
     (2, ("local-a", "local-b", "local-c"), {"local-a": 1, "local-b": 1}), (0, ("local-a",), {}),
     (4, (), {"seed-a": 2, "seed-b": 2})],
)  # fmt: skip
def test_local_node_spread(minimum: int, zones: tuple[str, ...], spread: dict[str, int]) -> None:
    """GIVEN a pool's minimum and zones WHEN local nodes are planned THEN they spread as its deployments would."""
    pool = dataclasses.replace(POOL, minimum=minimum, zones=zones)
    networking = dataclasses.replace(SHOOT.networking, zones=("seed-a", "seed-b"))
    nodes = with_nodes(dataclasses.replace(SHOOT, seed=None, workers=(pool,), networking=networking)).local_nodes
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node.zone] = counts.get(node.zone, 0) + 1
        assert node.labels == {"worker.gardener.cloud/pool": "pool-a", "topology.kubernetes.io/zone": node.zone,
                               "node.kubernetes.io/instance-type": POOL.machine_type,
                               "worker.gardener.cloud/kubernetes-version": POOL.kubernetes_version}  # fmt: skip
    assert counts == spread
    assert len({n.name for n in nodes}) == len({n.key for n in nodes}) == len(nodes) == minimum


def test_local_nodes_are_named_after_their_class() -> None:
    """GIVEN the base shoot WHEN its local nodes are planned THEN each is named as MCM names a machine of its class."""
    [node] = SELF_HOSTED.local_nodes
    [d] = SELF_HOSTED.deployments[WEB.workers[0].name]
    assert (node.key, node.machine_class) == ("pool-a-z1-0", d.class_name)
    assert re.fullmatch(rf"{d.class_name}-[0-9a-f]{{5}}", node.name)


@pytest.mark.parametrize(
    ("change", "renamed"),
    [("machine type", True), ("minimum", False)],
)
def test_local_nodes_roll_with_their_class(change: str, renamed: bool) -> None:
    """GIVEN a local node WHEN a rolling (or an in-place) pool change is planned THEN its name changes (or stays)."""
    pool = WEB.workers[0]
    changed = dataclasses.replace(pool, machine_type="big") if change == "machine type" else dataclasses.replace(
        pool, minimum=2, maximum=2)  # fmt: skip
    before = SELF_HOSTED.local_nodes[0].name
    after = with_nodes(dataclasses.replace(SELF_HOSTED, workers=(changed,))).local_nodes[0].name
    assert (before != after) is renamed


def test_a_new_pod_range_makes_a_new_node() -> None:
    """GIVEN a local node WHEN its pod ranges change (a new family) THEN its name changes."""
    [node] = SELF_HOSTED.local_nodes
    assert node.network is not None
    dual = dataclasses.replace(node.network, pod_cidrs=(*node.network.pod_cidrs, "fd00::/64"))
    assert node.name != dataclasses.replace(node, network=dual).name


def test_a_second_ip_family_rolls_the_pool_and_a_single_stack_hash_stays() -> None:
    """GIVEN a pool's node settings WHEN a second family joins THEN the hash (class name) changes; one family: none."""
    node = node_values(SHOOT, POOL)
    single = roll_hash(node, "zone-a", POOL.volume, ("IPv4",))
    assert single == roll_hash(node, "zone-a", POOL.volume)  # what single-stack classes were named by before
    assert roll_hash(node, "zone-a", POOL.volume, ("IPv4", "IPv6")) != single
