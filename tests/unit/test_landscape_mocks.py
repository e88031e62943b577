"""The Landscape under Pulumi mocks: which resources, their parents and key inputs, and a URN snapshot."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pytest

from components.landscape import Landscape
from components.plan import plan_landscape
from components.providers.local import LocalProvider, LocalSettings
from components.spec import parse_landscape

LOCAL = {"garden": {"cluster": {"nodes": 1}}, "seeds": [{"name": "local-1", "provider": "local"}]}


class Mocks(pulumi.runtime.Mocks):
    """Records every resource's inputs; outputs echo the inputs, plus what LocalCluster computes."""

    def __init__(self) -> None:
        self.inputs: dict[str, dict[str, Any]] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.inputs[args.name] = args.inputs
        outputs = dict(args.inputs)
        if args.typ == "pulumi-python:dynamic/arbor:LocalCluster":
            outputs |= {"endpoint": "https://127.0.0.1:1", "kubeconfig": f"kubeconfig of {args.name}", "running": True}
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, None


@pytest.fixture
def mocks() -> Mocks:
    """Mocks installed for the local stack."""
    m = Mocks()
    pulumi.runtime.set_mocks(m, project="arbor", stack="local", preview=False)
    return m


def build(
    raw: dict[str, Any], tree: list[str] | None = None, options: dict[str, pulumi.ResourceOptions] | None = None
) -> Landscape:
    """The Landscape of a raw spec on the local provider.

    `tree` collects `type name <- parent` lines, `options` each resource's options by name.
    """

    def record(args: pulumi.ResourceTransformationArgs) -> None:
        parent = args.opts.parent._name if args.opts.parent else "-"
        if tree is not None:
            tree.append(f"{args.type_} {args.name} <- {parent}")
        if options is not None:
            options[args.name] = args.opts

    settings = LocalSettings(workdir="/work/.kwok", kubernetes_version="v1.34.4")
    return Landscape(
        "arbor",
        plan_landscape(parse_landscape(raw), "local"),
        lambda _: LocalProvider(settings),
        pulumi.ResourceOptions(transformations=[record]),
    )


def urns(landscape: Landscape) -> pulumi.Output[list[str]]:
    """URNs of the landscape and the providers below it; resolving them waits for registration."""
    resources: list[pulumi.Resource] = [landscape]
    for access in landscape.clusters.values():
        resources.append(access.provider)
    return pulumi.Output.all(*[r.urn for r in resources]).apply(sorted)


@pulumi.runtime.test
def test_local_landscape_resources_and_inputs(mocks: Mocks, golden: Callable[[str, str], None]) -> pulumi.Output[None]:
    """GIVEN the local landscape WHEN registered THEN clusters, providers and nodes are as the snapshot says."""
    landscape = build(LOCAL)

    def check(_: list[str]) -> None:
        names = sorted(mocks.inputs)
        golden("local-resources.txt", "\n".join(names) + "\n")
        cluster = mocks.inputs["arbor-seed-local-1-cluster"]
        assert (cluster["clusterName"], cluster["workdir"], cluster["kubernetesVersion"]) == (
            "local-seed-local-1", "/work/.kwok", "v1.34.4",
        )  # fmt: skip
        provider = mocks.inputs["arbor-garden-k8s"]
        assert provider["clusterIdentifier"] == "local:local-garden"
        node = mocks.inputs["arbor-garden-node-0"]
        assert node["metadata"]["annotations"] == {"kwok.x-k8s.io/node": "fake"}
        assert node["metadata"]["name"] == "local-garden-node-0"

    return urns(landscape).apply(check)


@pulumi.runtime.test
def test_resource_tree_snapshot(mocks: Mocks, golden: Callable[[str, str], None]) -> pulumi.Output[None]:
    """GIVEN the local landscape WHEN registered THEN types, names and parents match the snapshot.

    Type tokens, names and parents make the URNs: a change here needs an alias, or resources are replaced.
    """
    tree: list[str] = []
    landscape = build(LOCAL, tree)
    return urns(landscape).apply(lambda _: golden("local-tree.txt", "\n".join(sorted(tree)) + "\n"))


@pulumi.runtime.test
def test_kubeconfigs_are_one_secret_map(mocks: Mocks) -> pulumi.Output[None]:
    """GIVEN two clusters WHEN exported THEN kubeconfigs is a secret map keyed garden and seed/<name>."""
    landscape = build(LOCAL)
    out = landscape.kubeconfigs()

    def check(args: list[Any]) -> None:
        value, secret = args
        assert secret is True
        assert value == {
            "garden": "kubeconfig of arbor-garden-cluster",
            "seed/local-1": "kubeconfig of arbor-seed-local-1-cluster",
        }

    return pulumi.Output.all(out, pulumi.Output.from_input(out).is_secret()).apply(check)


@pulumi.runtime.test
def test_node_count_follows_the_spec(mocks: Mocks) -> pulumi.Output[None]:
    """GIVEN a garden with three nodes and a seed with none WHEN registered THEN exactly those nodes exist."""
    landscape = build(
        {"garden": {"cluster": {"nodes": 3}}, "seeds": [{"name": "s", "provider": "local", "cluster": {"nodes": 0}}]}
    )

    def check(_: list[str]) -> None:
        nodes = sorted(n for n in mocks.inputs if "-node-" in n)
        assert nodes == ["arbor-garden-node-0", "arbor-garden-node-1", "arbor-garden-node-2"]

    return urns(landscape).apply(check)


@pulumi.runtime.test
def test_named_objects_are_replaced_delete_first(mocks: Mocks) -> pulumi.Output[None]:
    """GIVEN kwok nodes (named objects) WHEN registered THEN a replacement deletes before it creates.

    Create-first would apply the new Node and then delete that very object: the node would be lost.
    """
    options: dict[str, pulumi.ResourceOptions] = {}
    landscape = build(LOCAL, options=options)

    def check(_: list[str]) -> None:
        nodes = {n: o for n, o in options.items() if "-node-" in n}
        assert nodes and all(o.delete_before_replace for o in nodes.values())

    return urns(landscape).apply(check)
