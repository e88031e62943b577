"""Pulumi mocks for the landscape: every resource's inputs, options and place in the tree, recorded."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.checks import parse_landscape
from components.layers.landscape import Landscape
from components.plan.planner import plan_landscape
from components.plan.values import LandscapePlan
from components.providers.local import LocalProvider, LocalSettings
from components.reconciler.signing import new_key, public_pem

# A real public key for the service-account keys: a self-hosted cloud shoot publishes its issuer's keys from it.
PUBLIC_KEY = public_pem(new_key())

OUTPUTS: dict[str, dict[str, Any]] = {
    "pulumi-python:dynamic/arbor:LocalCluster": {"endpoint": "https://127.0.0.1:1", "running": True},
    "pulumi-python:dynamic/arbor:ShootStatus": {"conditions": {}, "state": "Succeeded"},
    # The provider generates keys; a fixed one stands in here.
    "pulumi-python:dynamic/arbor:EncryptionKeys": {
        "keys": [{"name": "key1", "provider": "aescbc", "secret": "bW9jaw=="}],
        # What a hosted shoot's keys report of the configuration they wrote.
        "configHash": "c0" * 32,
        "writeKey": "key1",
        "checksums": {"etcd-encryption-secret": "<encryption checksum>"},
    },
    "pulumi-python:dynamic/arbor:EncryptionRewrite": {"rewritten": {}},
    # The PKI provider generates keys and certificates; placeholders stand in here.
    "pulumi-python:dynamic/arbor:CertificateAuthority": {"cert": "<ca cert>", "key": "<ca key>"},
    "pulumi-python:dynamic/arbor:Certificate": {"cert": "<cert>", "key": "<key>"},
    "pulumi-python:dynamic/arbor:ServiceAccountKey": {"privateKey": "<private>", "publicKey": PUBLIC_KEY},
    "pulumi-python:dynamic/arbor:BootstrapToken": {"tokenId": "abcdef", "tokenSecret": "<secret>"},
    "pulumi-python:dynamic/arbor:AdminKubeconfig": {"kubeconfig": "<admin kubeconfig>", "notAfter": 0.0},
    "pulumi-python:dynamic/arbor:ShootStateKey": {"key": "<state key>", "digest": "<state key digest>"},
    # What the clouds compute for a self-hosted shoot's control-plane machine and its balancer.
    "aws:lb/loadBalancer:LoadBalancer": {"dnsName": "cp-0123.elb.eu-west-1.amazonaws.com"},
    "aws:secretsmanager/secret:Secret": {"arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:cp-AbCdEf"},
    "gcp:compute/address:Address": {"address": "34.1.2.4"},
    "gcp:secretmanager/secret:Secret": {"name": "projects/123456/secrets/cp-first-boot"},
    "gcp:serviceaccount/account:Account": {"email": "cp@project.iam.gserviceaccount.com"},
}


class Mocks(pulumi.runtime.Mocks):
    """Records every resource's inputs; outputs echo the inputs, plus what the reconciler computes."""

    def __init__(self) -> None:
        self.inputs: dict[str, dict[str, Any]] = {}
        self.types: dict[str, str] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.inputs[args.name] = args.inputs
        self.types[args.name] = args.typ
        outputs = dict(args.inputs) | OUTPUTS.get(args.typ, {})
        if args.typ.endswith(":LocalCluster"):
            outputs["kubeconfig"] = f"kubeconfig of {args.name}"
        return f"{args.name}-id", with_uid(args, outputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, []  # the SDK iterates the failures: None would crash it


def with_uid(args: pulumi.runtime.MockResourceArgs, outputs: dict[str, Any]) -> dict[str, Any]:
    """The outputs of a Kubernetes object with the uid its API server gives it (a Shoot record's names its entry)."""
    metadata = outputs.get("metadata")
    if args.typ.startswith("kubernetes:") and isinstance(metadata, dict):
        return {**outputs, "metadata": {**metadata, "uid": f"uid-{args.name}"}}
    return outputs


@dataclass
class Built:
    """A landscape registered under mocks, with what the transformation saw of each resource."""

    landscape: Landscape
    resources: list[pulumi.Resource] = field(default_factory=list)
    tree: list[str] = field(default_factory=list)
    options: dict[str, pulumi.ResourceOptions] = field(default_factory=dict)
    edges: dict[str, set[str]] = field(default_factory=dict)
    # (type, name, parent name) of every resource; names repeat across types, parents (components) do not.
    records: list[tuple[str, str, str | None]] = field(default_factory=list)
    # What each resource waits for by (type, name), where names repeat across types (a Service and a Deployment).
    typed_edges: dict[tuple[str, str], set[tuple[str, str]]] = field(default_factory=dict)
    ids: dict[int, tuple[str, str]] = field(default_factory=dict)

    def urns(self, stack: str = "local") -> list[str]:
        """The URN the engine gives each resource: its type chain through its parents (the stack not included)."""
        components = {name: (type_, parent) for type_, name, parent in self.records if type_.startswith("arbor:")}
        out = []
        for type_, name, parent in self.records:
            chain = [type_]
            while parent is not None:
                parent_type, parent = components[parent]
                chain.insert(0, parent_type)
            out.append(f"urn:pulumi:{stack}::arbor::{'$'.join(chain)}::{name}")
        return sorted(out)

    def settled(self) -> pulumi.Output[list[str]]:
        """Resolves once every resource is registered: the sorted URNs."""
        return pulumi.Output.all(*[r.urn for r in self.resources]).apply(sorted)

    def before(self, name: str) -> set[str]:
        """Every resource `name` waits for: explicit depends_on and providers, transitively."""
        seen: set[str] = set()
        todo = [name]
        while todo:
            for dep in self.edges.get(todo.pop(), set()):
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return seen


def build(
    raw: dict[str, Any],
    plan: LandscapePlan | None = None,
    provider_for: Callable[[Any], Any] | None = None,
    keep_object_store: bool = False,
    garden_stack: str | None = None,
) -> Built:
    """The Landscape of a raw spec (or of a plan made from one) on the local provider (or `provider_for`'s).

    `garden_stack`: registered as that garden stack's seed stack (its outputs come from the mocks' StackReference).
    """
    built = Built(landscape=None)  # type: ignore[arg-type]

    def record(args: pulumi.ResourceTransformationArgs) -> None:
        opts = args.opts
        built.resources.append(args.resource)
        built.tree.append(f"{args.type_} {args.name} <- {opts.parent._name if opts.parent else '-'}")
        built.options[args.name] = opts
        built.records.append((args.type_, args.name, opts.parent._name if opts.parent else None))
        deps = opts.depends_on if isinstance(opts.depends_on, list) else [opts.depends_on] if opts.depends_on else []
        edges = {d._name for d in deps if isinstance(d, pulumi.Resource)}
        if isinstance(opts.provider, pulumi.ProviderResource):
            edges.add(opts.provider._name)
        built.edges[args.name] = edges
        built.typed_edges[(args.type_, args.name)] = {built.ids[id(d)] for d in deps if id(d) in built.ids}
        built.ids[id(args.resource)] = (args.type_, args.name)

    settings = LocalSettings(workdir="/work/.kwok", kubernetes_version="v1.34.4")
    built.landscape = Landscape(
        "arbor",
        plan or plan_landscape(parse_landscape(raw), "local"),
        # One provider for the whole landscape, as the program has: the local one keeps the object store.
        provider_for or functools.cache(lambda _: LocalProvider(settings)),
        pulumi.ResourceOptions(transformations=[record]),
        keep_object_store=keep_object_store,
        garden_stack=garden_stack,
    )
    return built


def registered(
    plan: LandscapePlan,
    provider_for: Callable[[Any], Any] | None = None,
    mocks: Any = None,
    keep_store: bool = False,
    garden_stack: str | None = None,
) -> tuple[Built, Any]:
    """A plan's Landscape registered under fresh mocks (or `mocks`) until every output settled; raises its errors."""
    mocks = mocks or Mocks()
    pulumi.runtime.set_mocks(mocks, project="arbor", stack="local", preview=False)
    built: list[Built] = []

    @pulumi.runtime.test
    def register() -> pulumi.Output[list[str]]:
        built.append(build({}, plan, provider_for, keep_store, garden_stack))
        return built[0].settled()

    register()
    return built[0], mocks
