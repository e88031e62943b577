"""The shoot's system components: rendered objects (goldens), Gardener's addresses, and the ranges under mocks."""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml

from components import pins
from components.bundles import ClusterAccess
from components.checks import parse_landscape, previous
from components.concerns.system import system_components
from components.kinds import ProviderType
from components.plan.network import kube_dns_ips, plan_network
from components.plan.planner import plan_landscape
from components.plan.values import ShootValues
from components.reconciler.system_components import SystemComponentsProvider
from components.render import objects, system
from components.render.system import coredns, kubeproxy
from components.spec.fields import SpecError
from tests.unit.test_cloud_networks import DUAL, NETWORKS, NetworkMocks, values
from tests.unit.test_rendering import dump
from tests.unit.test_workers import shoot_on

with open("stacks/Pulumi.local.yaml") as f:
    LOCAL = yaml.safe_load(f)["config"]["arbor:landscape"]
PLAN = plan_landscape(parse_landscape(LOCAL), "local")


def on_gcp(shoot: ShootValues) -> ShootValues:
    """The shoot as if its API served its own service ranges (every provider but local's kwokctl clusters)."""
    return dataclasses.replace(shoot, networking=dataclasses.replace(shoot.networking, provider=ProviderType.GCP))


# The local stack's shoots as rendered on a cloud: web is IPv4, db dual-stack, root self-hosted (pool `cp`).
SHOOTS = {s.name: on_gcp(s) for s in PLAN.shoots}
IPV4, DUAL_STACK = SHOOTS["web"], SHOOTS["db"]


def rendered(shoot: ShootValues) -> list[dict[str, Any]]:
    """The shoot's system components on its planned ranges."""
    return system.objects(shoot, shoot.networking.pods, shoot.networking.services)


def one(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    """The object of a kind and name."""
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def kube_proxy_cidr(objects: list[dict[str, Any]]) -> str:
    """kube-proxy's `clusterCIDR`, read back from its ConfigMap."""
    config = one(objects, "ConfigMap", kubeproxy.CONFIG)["data"][kubeproxy.CONFIG_KEY]
    cidr: str = yaml.safe_load(config)["clusterCIDR"]
    return cidr


@pytest.mark.parametrize(("shoot", "file"), [(IPV4, "system-ipv4.yaml"), (DUAL_STACK, "system-dual-stack.yaml")])
def test_system_components_golden(shoot: ShootValues, file: str, golden: Callable[[str, str], None]) -> None:
    """GIVEN an IPv4 and a dual-stack shoot WHEN their system components are rendered THEN they match the goldens."""
    golden(file, dump(rendered(shoot)))


def test_cilium_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN a dual-stack shoot on cilium WHEN rendered THEN cilium replaces calico (golden), kube-proxy stays."""
    golden("system-cilium.yaml", dump(rendered(dataclasses.replace(DUAL_STACK, network_type="cilium"))))


@pytest.mark.parametrize("shoot", list(SHOOTS.values()), ids=lambda s: s.name)
def test_kube_dns_is_the_10th_address_of_every_service_range(shoot: ShootValues) -> None:
    """GIVEN a shoot WHEN rendered THEN kube-dns holds the 10th address of each service range, Gardener's convention."""
    spec = one(rendered(shoot), "Service", coredns.SERVICE)["spec"]
    expected = [str(ipaddress.ip_network(r).network_address + 10) for r in shoot.networking.services]
    assert spec["clusterIPs"] == expected and spec["clusterIP"] == expected[0]
    assert spec["ipFamilyPolicy"] == ("RequireDualStack" if len(expected) == 2 else "SingleStack")


def test_on_local_the_api_server_allocates_kube_dns() -> None:
    """GIVEN a local shoot (a kwokctl cluster on kube-apiserver's default range) WHEN rendered THEN no fixed address."""
    local = PLAN.shoots[1]
    spec = one(rendered(local), "Service", coredns.SERVICE)["spec"]
    assert "clusterIP" not in spec and "clusterIPs" not in spec and "ipFamilyPolicy" not in spec


def test_kube_dns_addresses_by_example() -> None:
    """GIVEN the local stack's db shoot WHEN rendered THEN kube-dns is 100.112.0.10 and fd00:112::a."""
    assert kube_dns_ips(DUAL_STACK.networking.services) == ["100.112.0.10", "fd00:112::a"]


@pytest.mark.parametrize("shoot", list(SHOOTS.values()), ids=lambda s: s.name)
def test_kube_proxy_cluster_cidr_is_the_pod_ranges(shoot: ShootValues) -> None:
    """GIVEN a shoot WHEN rendered THEN kube-proxy's clusterCIDR holds every pod range, in the families' order."""
    assert kube_proxy_cidr(rendered(shoot)) == ",".join(shoot.networking.pods)


@pytest.mark.parametrize("shoot", list(SHOOTS.values()), ids=lambda s: s.name)
def test_a_kube_proxy_per_pool_at_its_version(shoot: ShootValues) -> None:
    """GIVEN a shoot WHEN rendered THEN each pool has `kube-proxy-<pool>-v<version>` on its nodes, its image pinned."""
    objects = rendered(shoot)
    daemonsets = [o for o in objects if o["kind"] == "DaemonSet" and o["metadata"]["name"].startswith("kube-proxy-")]
    assert [d["metadata"]["name"] for d in daemonsets] == [
        f"kube-proxy-{p.name}-v{p.kubernetes_version}" for p in shoot.workers
    ]
    for pool, ds in zip(shoot.workers, daemonsets, strict=True):
        pod = ds["spec"]["template"]["spec"]
        # Only that version's nodes: an upgrade's new kube-proxy never competes with the old one for host ports.
        assert pod["nodeSelector"] == {
            "worker.gardener.cloud/pool": pool.name,
            "worker.gardener.cloud/kubernetes-version": pool.kubernetes_version,
        }
        assert pod["containers"][0]["image"] == f"registry.k8s.io/kube-proxy:v{pool.kubernetes_version}"
        assert ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items()


def test_calico_pools_follow_the_families() -> None:
    """GIVEN an IPv4 and a dual-stack shoot WHEN rendered THEN calico has a VXLAN pool per family of the pod ranges."""
    for shoot in (IPV4, DUAL_STACK):
        node = one(rendered(shoot), "DaemonSet", "calico-node")["spec"]["template"]["spec"]["containers"][0]
        env = {e["name"]: e.get("value") for e in node["env"]}
        pods = shoot.networking.pods
        assert env["CALICO_IPV4POOL_CIDR"] == pods[0] and env["CALICO_IPV4POOL_VXLAN"] == "Always"
        assert env.get("CALICO_IPV6POOL_CIDR") == (pods[1] if len(pods) == 2 else None)
        assert env["FELIX_IPV6SUPPORT"] == str(len(pods) == 2).lower()


def test_images_come_from_the_pins() -> None:
    """GIVEN any shoot WHEN rendered THEN every image is one components/pins.py names."""
    pinned = {pins.COREDNS.ref, pins.CALICO_NODE.ref, pins.CALICO_CNI.ref, pins.CALICO_KUBE_CONTROLLERS.ref}
    pinned |= {pins.CILIUM.ref, pins.CILIUM_OPERATOR.ref} | {pins.kube_proxy(v).ref for v in ("1.34.4", "1.33.6")}
    for shoot in (*SHOOTS.values(), dataclasses.replace(DUAL_STACK, network_type="cilium")):
        for obj in rendered(shoot):
            pod = obj.get("spec", {}).get("template", {}).get("spec", {})
            for c in [*pod.get("initContainers", []), *pod.get("containers", [])]:
                assert c["image"] in pinned, c["image"]


def test_resource_names_are_unique_in_a_shoot() -> None:
    """GIVEN each plugin WHEN rendered THEN every object's resource name is unique within the shoot."""
    for shoot in (DUAL_STACK, dataclasses.replace(DUAL_STACK, network_type="cilium")):
        keys = [objects.key(o) for o in rendered(shoot)]
        assert len(keys) == len(set(keys))


def test_network_type_defaults_to_calico_and_is_refused_otherwise() -> None:
    """GIVEN no type, cilium, and flannel WHEN parsed THEN calico, cilium, and a refusal naming the field."""
    assert [s.network_type for s in PLAN.shoots] == ["calico"] * 3
    shoots = [{**LOCAL["shoots"][0], "networking": {**LOCAL["shoots"][0]["networking"], "type": "cilium"}}]
    assert plan_landscape(parse_landscape({**LOCAL, "shoots": shoots}), "local").shoots[0].network_type == "cilium"
    shoots[0]["networking"]["type"] = "flannel"
    with pytest.raises(SpecError) as raised:
        parse_landscape({**LOCAL, "shoots": shoots})
    lines = [line for line in str(raised.value).splitlines() if "networking.type" in line]
    assert lines and lines[0].startswith("landscape.shoots[0].networking.type: ")
    assert "calico" in lines[0] and "cilium" in lines[0]


def test_changing_the_network_plugin_is_refused() -> None:
    """GIVEN a shoot recorded on calico WHEN the next update asks for cilium THEN the change is refused with the field.

    A record from before the field (no `networkType`) refuses nothing.
    """
    recorded = previous.shoot_outputs(PLAN)
    shoots = [{**s, "networking": {**s["networking"], "type": "cilium"}} for s in LOCAL["shoots"][:1]]
    changed = plan_landscape(parse_landscape({**LOCAL, "shoots": [*shoots, *LOCAL["shoots"][1:]]}), "local")
    lines = previous.shoot_changes(changed, recorded)
    assert len(lines) == 1 and lines[0].startswith("landscape.shoots[0].networking.type: cannot change from calico")
    older = {key: {k: v for k, v in r.items() if k != "networkType"} for key, r in recorded.items()}
    assert previous.shoot_changes(changed, older) == []
    assert previous.shoot_changes(PLAN, recorded) == []


def _registered(provider: ProviderType) -> tuple[dict[str, list[str]], dict[str, dict[str, Any]]]:
    """A dual-stack shoot's network and system components on `provider` under mocks: resolved ranges, objects.

    The objects are those the registered values render.
    """
    mocks = NetworkMocks()
    pulumi.runtime.set_mocks(mocks, project="arbor", stack="test", preview=False)
    shoot = shoot_on(provider)
    network_values = values(provider, DUAL)
    shoot = dataclasses.replace(shoot, networking=network_values, network_plan=plan_network(network_values))
    out: dict[str, list[str]] = {}

    @pulumi.runtime.test
    def program() -> pulumi.Output[None]:
        parent = pulumi.ComponentResource("arbor:shoot:Shoot", "dev-web")
        network = NETWORKS[provider](shoot.network_plan, parent)
        empty = pulumi.Output.from_input("")
        access = ClusterAccess("shoot/dev/web", empty, empty, lambda: k8s.Provider("shoot-k8s"))
        created = system_components("dev-web", shoot, access, network, parent)
        return pulumi.Output.all(network.ranges, *[r.urn for r in created]).apply(lambda a: out.update(a[0]))

    program()
    # One resource keeps the values; its provider renders the objects from them, as here, and hashes them.
    registered = next(i for t, i in mocks.resources.values() if t == "pulumi-python:dynamic/arbor:SystemComponents")
    rendered = system.render(system.SystemValues.from_object(registered["values"]))
    checked = SystemComponentsProvider().check({}, dict(registered)).inputs
    assert objects.hashes(rendered) == checked["objects"]
    return out, {f"dev-web-system-{objects.key(o)}": o for o in rendered}


@pytest.mark.parametrize("provider", [ProviderType.GCP, ProviderType.AWS])
def test_cloud_dual_stack_takes_the_ranges_the_cloud_assigned(provider: ProviderType) -> None:
    """GIVEN a dual-stack shoot on gcp or aws WHEN registered under mocks THEN it takes the cloud's IPv6 ranges.

    kube-proxy's clusterCIDR and kube-dns's addresses hold the ranges the cloud assigned, which the plan does not know.
    """
    ranges, objects = _registered(provider)
    assert len(ranges["pods"]) == 2 and len(ranges["services"]) == 2
    config = objects["dev-web-system-configmap-kube-proxy-config"]["data"][kubeproxy.CONFIG_KEY]
    assert yaml.safe_load(config)["clusterCIDR"] == ",".join(ranges["pods"])
    spec = objects["dev-web-system-service-kube-dns"]["spec"]
    assert spec["clusterIPs"] == [str(ipaddress.ip_network(r).network_address + 10) for r in ranges["services"]]
    assert any(":" in ip for ip in spec["clusterIPs"])
