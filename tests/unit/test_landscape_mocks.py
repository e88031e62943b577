"""The Landscape under Pulumi mocks: which resources, their parents, key inputs, flow order, a tree snapshot."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
import yaml

from components.render import packing
from tests.unit.landscape_mocks import Mocks, build

with open("stacks/Pulumi.local.yaml") as f:
    LOCAL = yaml.safe_load(f)["config"]["arbor:landscape"]


@pytest.fixture
def mocks() -> Mocks:
    """Mocks installed for the local stack."""
    m = Mocks()
    pulumi.runtime.set_mocks(m, project="arbor", stack="local", preview=False)
    return m


@pulumi.runtime.test
def test_resource_tree_snapshot(mocks: Mocks, golden: Callable[[str, str], None]) -> pulumi.Output[None]:
    """GIVEN the local stack WHEN registered THEN types, names and parents match the snapshot.

    Type tokens, names and parents make the URNs: a change here needs an alias, or resources are replaced.
    """
    built = build(LOCAL)
    return built.settled().apply(lambda _: golden("local-tree.txt", "\n".join(sorted(built.tree)) + "\n"))


@pulumi.runtime.test
def test_urn_snapshot(mocks: Mocks, golden: Callable[[str, str], None]) -> pulumi.Output[None]:
    """GIVEN the local stack WHEN registered THEN every URN matches the snapshot (a rename needs an alias)."""
    built = build(LOCAL)
    return built.settled().apply(lambda _: golden("local-urns.txt", "\n".join(built.urns()) + "\n"))


@pulumi.runtime.test
def test_cluster_inputs(mocks: Mocks) -> pulumi.Output[None]:
    """GIVEN the local stack WHEN registered THEN clusters, providers and nodes carry the planned names."""
    built = build(LOCAL)

    def check(_: list[str]) -> None:
        cluster = mocks.inputs["arbor-seed-local-1-cluster"]
        assert (cluster["clusterName"], cluster["workdir"], cluster["kubernetesVersion"]) == (
            "local-seed-local-1",
            "/work/.kwok",
            "v1.34.4",
        )
        assert mocks.inputs["arbor-garden-k8s"]["clusterIdentifier"] == "local:local-garden"
        assert mocks.inputs["arbor-shoot-ops-root-k8s"]["clusterIdentifier"] == "local:local-shoot-ops-root"
        # A hosted shoot's cluster is reached by reconcilers alone: no Kubernetes provider of its own is made.
        assert "arbor-shoot-dev-web-k8s" not in mocks.inputs
        node = mocks.inputs["arbor-garden-node-0"]
        assert node["metadata"]["annotations"] == {"kwok.x-k8s.io/node": "fake", "pulumi.com/patchForce": "true"}
        assert node["metadata"]["name"] == "local-garden-node-0"

    return built.settled().apply(check)


@pulumi.runtime.test
def test_garden_projects_and_rbac(mocks: Mocks) -> pulumi.Output[None]:
    """GIVEN two projects WHEN registered THEN each has a record, a namespace and bindings per role."""
    built = build(LOCAL)

    def check(_: list[str]) -> None:
        assert mocks.inputs["arbor-garden-project-dev-namespace"]["metadata"]["name"] == "garden-dev"
        admins = mocks.inputs["arbor-garden-project-dev-admins"]
        assert admins["subjects"] == [
            {"kind": "User", "name": "alice@example.com", "apiGroup": "rbac.authorization.k8s.io"}
        ]
        assert admins["roleRef"]["name"] == "arbor.dev:project:admin"
        assert mocks.inputs["arbor-garden-project-dev-viewers"]["roleRef"]["name"] == "arbor.dev:project:viewer"
        assert "arbor-garden-project-ops-viewers" not in mocks.inputs  # no viewer in ops: no empty binding
        crds = sorted(
            n for n, t in mocks.types.items() if t.endswith("CustomResourceDefinition") and n.startswith("arbor-garden")
        )
        assert crds == [
            "arbor-garden-crd-backupbuckets",
            "arbor-garden-crd-backupentries",
            "arbor-garden-crd-internalsecrets",
            "arbor-garden-crd-projects",
            "arbor-garden-crd-seeds",
            "arbor-garden-crd-shoots",
            "arbor-garden-crd-shootstates",
        ]

    return built.settled().apply(check)


@pulumi.runtime.test
def test_shoot_control_plane_in_its_seed_namespace(mocks: Mocks) -> pulumi.Output[None]:
    """GIVEN a hosted shoot WHEN registered THEN its control plane lives in `shoot--<project>--<shoot>`."""
    built = build(LOCAL)

    def check(_: list[str]) -> None:
        # Components that start together share one resource (etcd main and events; the two controllers).
        workloads = {}
        for group in ("etcd", "kube-apiserver", "controllers"):
            for obj in packing.unpacked(mocks.inputs[f"arbor-shoot-dev-web-{group}"]["manifests"]):
                if obj["kind"] in ("StatefulSet", "Deployment"):
                    workloads[obj["metadata"]["name"]] = obj["metadata"]["namespace"]
        components = ("etcd-main", "etcd-events", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
        assert workloads == dict.fromkeys(components, "shoot--dev--web")
        assert mocks.inputs["arbor-seed-local-1-shoot--ops--db"]["metadata"]["name"] == "shoot--ops--db"
        record = mocks.inputs["arbor-shoot-ops-db-record"]
        assert (record["metadata"]["namespace"], record["spec"]["seedName"]) == ("garden-ops", "local-1")
        status = mocks.inputs["arbor-shoot-dev-web-status"]
        assert (status["namespace"], status["name"], status["seedNamespace"]) == (
            "garden-dev",
            "web",
            "shoot--dev--web",
        )

    return built.settled().apply(check)


FLOW = [
    "arbor-seed-local-1-shoot--dev--web",  # namespace
    "arbor-shoot-dev-web-etcd",
    "arbor-shoot-dev-web-kube-apiserver",
    "arbor-shoot-dev-web-controllers",
    "arbor-shoot-dev-web-cluster",  # the shoot's API (workers and node configuration follow)
    "arbor-shoot-dev-web-workers-mcm-process",  # MCM, then what it holds finalizers on
    "arbor-shoot-dev-web-workers-mcm-released",
    "arbor-shoot-dev-web-workers-pool-a-z1",
    "arbor-shoot-dev-web-status",  # health
]


@pulumi.runtime.test
def test_reconciliation_flow_order(mocks: Mocks) -> pulumi.Output[None]:
    """GIVEN a shoot WHEN registered THEN each step of the flow waits for the one before it."""
    built = build(LOCAL)

    def check(_: list[str]) -> None:
        for earlier, later in itertools.pairwise(FLOW):
            assert earlier in built.before(later), f"{later} does not wait for {earlier}"
        # System components once the API serves, before the health is read.
        assert "arbor-shoot-dev-web-cluster" in built.before("arbor-shoot-dev-web-system")
        assert "arbor-shoot-dev-web-system" in built.before("arbor-shoot-dev-web-status")
        assert "arbor-shoot-dev-web-workers-sidecar-process" in built.before("arbor-shoot-dev-web-workers-mcm-released")
        # Minimal: the two shoots never wait for each other.
        assert not any(n.startswith("arbor-shoot-ops-db") for n in built.before("arbor-shoot-dev-web-status"))

    return built.settled().apply(check)


# A shoot's objects in the garden, each with the CRD of its kind (an ObjectSet's: the InternalSecret it writes).
GARDEN_OBJECTS = {
    "arbor-shoot-dev-web-record": "shoots",
    "arbor-shoot-dev-web-ca-client": "internalsecrets",
    "arbor-shoot-ops-db-backup-entry": "backupentries",
    "arbor-shoot-ops-db-shoot-state-record": "shootstates",
    "arbor-shoot-ops-db-extensions": "shoots",
}


@pulumi.runtime.test
def test_a_shoots_garden_objects_wait_for_their_crd_through_the_project_namespace(
    mocks: Mocks,
) -> pulumi.Output[None]:
    """GIVEN a landscape WHEN registered THEN each garden object waits for its kind's CRD, naming no CRD itself."""
    built = build(LOCAL)

    def check(_: list[str]) -> None:
        for name, plural in GARDEN_OBJECTS.items():
            assert f"arbor-garden-crd-{plural}" in built.before(name), f"{name} does not wait for its CRD"
            assert not any("-crd-" in d for d in built.edges[name]), f"{name} names CRDs beside its namespace"
        namespace = "arbor-garden-project-dev-namespace"
        assert built.edges["arbor-shoot-dev-web-record"] == {namespace, "arbor-garden-k8s"}
        assert {f"arbor-garden-crd-{p}" for p in GARDEN_OBJECTS.values()} <= built.edges[namespace]

    return built.settled().apply(check)


@pulumi.runtime.test
def test_kubeconfigs_are_one_secret_map(mocks: Mocks) -> pulumi.Output[None]:
    """GIVEN the local stack WHEN exported THEN kubeconfigs is a secret map keyed by cluster."""
    built = build(LOCAL)
    out = built.landscape.kubeconfigs()

    def check(args: list[Any]) -> None:
        value, secret = args
        assert secret is True
        assert sorted(value) == ["garden", "seed/local-1", "shoot/dev/web", "shoot/ops/db", "shoot/ops/root"]
        assert value["shoot/dev/web"] == "kubeconfig of arbor-shoot-dev-web-cluster"

    return pulumi.Output.all(out, pulumi.Output.from_input(out).is_secret()).apply(check)


@pulumi.runtime.test
def test_node_count_follows_the_spec(mocks: Mocks) -> pulumi.Output[None]:
    """GIVEN a garden with three nodes and a seed with none WHEN registered THEN exactly those nodes exist."""
    built = build(
        {"garden": {"cluster": {"nodes": 3}}, "seeds": [{"name": "s", "provider": "local", "cluster": {"nodes": 0}}]}
    )

    def check(_: list[str]) -> None:
        nodes = sorted(n for n in mocks.inputs if "-node-" in n)
        assert nodes == ["arbor-garden-node-0", "arbor-garden-node-1", "arbor-garden-node-2"]

    return built.settled().apply(check)


@pulumi.runtime.test
def test_named_objects_are_replaced_delete_first(mocks: Mocks) -> pulumi.Output[None]:
    """GIVEN kwok nodes and namespaces (named objects) WHEN registered THEN a replacement deletes first.

    Create-first would apply the new object and then delete that very object: it would be lost.
    """
    built = build(LOCAL)

    def check(_: list[str]) -> None:
        named = {
            n: o
            for n, o in built.options.items()
            if n.endswith("-namespace") or ("-node-" in n and "addr" not in n and "-node-agent-" not in n)
        }
        assert named and all(o.delete_before_replace for o in named.values())

    return built.settled().apply(check)


@pulumi.runtime.test
def test_the_names_checked_are_the_names_registered(mocks: Mocks) -> pulumi.Output[None]:
    """GIVEN the local stack WHEN registered THEN each shoot's names are those checks/names.py keeps unique."""
    from components.checks.names import derived_names

    built = build(LOCAL)
    shoots = {name for type_, name, _ in built.records if type_ == "arbor:shoot:Shoot"}
    names = [derived_names(s["project"], s["name"]) for s in LOCAL["shoots"]]
    assert shoots == {f"arbor-{n['resource and cluster name']}" for n in names}
    clusters = {s.values.cluster.name for s in built.landscape.shoots.values()}
    assert clusters == {f"local-{n['resource and cluster name']}" for n in names}
    assert {s.values.technical_id for s in built.landscape.shoots.values()} == {n["namespace"] for n in names}
    return built.settled().apply(lambda _: None)
