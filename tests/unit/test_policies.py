"""Policy rules as plain functions: each policy has a passing and a violating case, with the message it gives."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from arbor_policies.catalog import LEVELS, load_config, run, settings
from arbor_policies.catalog import POLICIES as POLICIES_LIST
from arbor_policies.kubernetes import SERVICE, load_balancer_on_local, missing_cluster_identifier
from arbor_policies.resource import Resource

from components.render import system
from tests.unit.policy_fixtures import CASES, CLOUD, LOCAL, etcd
from tests.unit.test_system_components import PLAN


@pytest.mark.parametrize(
    ("resource_type", "props", "violates"),
    [
        ("pulumi:providers:kubernetes", {"kubeconfig": "x"}, True),
        ("pulumi:providers:kubernetes", {"clusterIdentifier": ""}, True),
        ("pulumi:providers:kubernetes", {"clusterIdentifier": "local-garden"}, False),
        ("pulumi:providers:aws", {}, False),
        ("kubernetes:core/v1:Namespace", {}, False),
    ],
)
def test_kubernetes_provider_needs_cluster_identifier(
    resource_type: str, props: dict[str, Any], violates: bool
) -> None:
    """GIVEN a resource WHEN checked THEN only a Kubernetes provider without identifier violates."""
    message = missing_cluster_identifier(resource_type, props)
    assert (message is not None) == violates
    if message:
        assert message.startswith("Kubernetes provider without cluster_identifier")


@pytest.mark.parametrize(
    ("resource_type", "props", "provider", "violates"),
    [
        (SERVICE, {"spec": {"type": "LoadBalancer"}}, {"clusterIdentifier": "local:local-garden"}, True),
        (SERVICE, {"spec": {"type": "ClusterIP"}}, {"clusterIdentifier": "local:local-garden"}, False),
        (SERVICE, {"spec": {"type": "LoadBalancer"}}, {"clusterIdentifier": "gcp:prod-seed"}, False),
        (SERVICE, {"spec": {"type": "LoadBalancer"}}, {}, False),
        (SERVICE, {}, {"clusterIdentifier": "local:x"}, False),
        ("kubernetes:core/v1:Namespace", {"spec": {"type": "LoadBalancer"}}, {"clusterIdentifier": "local:x"}, False),
    ],
)
def test_no_load_balancer_on_local_clusters(
    resource_type: str, props: dict[str, Any], provider: dict[str, Any], violates: bool
) -> None:
    """GIVEN a resource and its provider WHEN checked THEN only a LoadBalancer Service on a local cluster violates."""
    assert (load_balancer_on_local(resource_type, props, provider) is not None) == violates


POLICIES = {p.name: p for p in POLICIES_LIST}


@pytest.mark.parametrize(
    ("policy", "resources", "message"), CASES, ids=[f"{c[0]}-{'violates' if c[2] else 'passes'}" for c in CASES]
)
def test_policy_case(policy: str, resources: list[Resource], message: str | None) -> None:
    """GIVEN resources WHEN a policy runs with config.json's settings THEN it passes, or names the fault."""
    found = run(POLICIES[policy], resources, settings(policy))
    if message is None:
        assert found == []
    else:
        assert len(found) == 1, found
        assert message in found[0], found


def test_every_policy_has_a_passing_and_a_violating_case() -> None:
    """GIVEN the case table WHEN grouped by policy THEN each policy of the pack shows both outcomes."""
    outcomes = {(policy, message is None) for policy, _, message in CASES}
    assert {(name, passes) for name in POLICIES for passes in (True, False)} <= outcomes


def test_the_pack_has_at_least_twenty_kebab_case_policies() -> None:
    """GIVEN the catalog WHEN listed THEN it has twenty or more policies, named in kebab-case, each once."""
    names = [p.name for p in POLICIES_LIST]
    assert len(names) >= 20
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", n) for n in names), names


def test_config_names_every_policy_with_a_level() -> None:
    """GIVEN config.json WHEN read THEN it has an entry with a valid level for each policy, and no other entry."""
    config = load_config()
    assert set(config) == set(POLICIES)
    assert {name: entry["enforcementLevel"] in LEVELS for name, entry in config.items()} == dict.fromkeys(config, True)


def test_a_config_file_changes_a_level_and_a_setting(tmp_path: Path) -> None:
    """GIVEN a config file with a stricter lifetime WHEN read THEN its level and setting are the policy's."""
    path = tmp_path / "strict.json"
    path.write_text(json.dumps({"admin-kubeconfig-lifetime": {"enforcementLevel": "advisory", "maxHours": 0.5}}))
    config = load_config(path)
    kubeconfig = Resource("pulumi-python:dynamic/arbor:AdminKubeconfig", {"expirationSeconds": 3600}, name="k")
    assert config["admin-kubeconfig-lifetime"]["enforcementLevel"] == "advisory"
    assert run(POLICIES["admin-kubeconfig-lifetime"], [kubeconfig], settings("admin-kubeconfig-lifetime", config)) == [
        "admin kubeconfig k is valid for 1h, longer than 0.5h: lower the shoot's adminKubeconfig.expiration to 0.5h or "
        "less"
    ]


def test_a_shoots_system_components_are_checked_object_by_object() -> None:
    """GIVEN one SystemComponents resource (values, not objects) WHEN the pack runs THEN it checks each object.

    calico-node and kube-proxy run privileged, which config.json allows by name; without that, each is named.
    """
    shoot = PLAN.shoots[0]
    values = system.values_of(shoot, shoot.networking.pods, shoot.networking.services).to_object()
    components = Resource(type="pulumi-python:dynamic/arbor:SystemComponents", props={"values": values}, name="s")
    policy = POLICIES["no-privileged-containers"]
    assert run(policy, [components], settings(policy.name)) == []
    found = run(policy, [components], {**settings(policy.name), "allowed": []})
    assert any("DaemonSet kube-system/calico-node" in m for m in found)
    assert any(m.startswith("DaemonSet kube-system/kube-proxy-") for m in found)


@pytest.mark.parametrize("cluster", [LOCAL, CLOUD])
def test_a_control_plane_components_object_set_is_checked_object_by_object_on_its_cluster(
    cluster: dict[str, str],
) -> None:
    """GIVEN etcd's objects as one ObjectSet WHEN the pack runs THEN its StatefulSet is checked on the set's cluster.

    An emptyDir etcd is refused on a cloud seed and allowed on a local one, as for a StatefulSet of its own.
    """
    statefulset = etcd(cluster, claims=False)
    manifest = {"apiVersion": "apps/v1", "kind": "StatefulSet", **statefulset.props}
    objects = Resource(
        type="pulumi-python:dynamic/arbor:ObjectSet",
        props={"cluster": cluster["clusterIdentifier"], "manifests": [manifest]},
        name="etcd-main",
    )
    policy = POLICIES["etcd-persistent-on-cloud-seeds"]
    found = run(policy, [objects], settings(policy.name))
    assert found == run(policy, [statefulset], settings(policy.name))
    assert bool(found) is (cluster is CLOUD)
