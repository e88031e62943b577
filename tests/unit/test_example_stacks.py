"""The gcp and aws example stacks, checked and registered as `pulumi up` would, under mocks: the whole cloud flow.

Each stack is checked by `checks.check` (what `__main__` runs first) and registered once on its cloud's provider;
the tests read what was registered: every step of Gardener's flow for a hosted shoot on GKE or EKS, the order the
resource graph puts them in, the user data machines boot from, and the pull-request summary of the first preview.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from components import checks
from components.checks import previous, records
from components.plan import network
from components.plan.values import LandscapePlan
from components.providers.registry import provider_for
from components.render import pki, system
from tests.unit.landscape_mocks import OUTPUTS as LANDSCAPE_OUTPUTS
from tests.unit.landscape_mocks import Built, build
from tests.unit.object_sets import expanded
from tests.unit.test_cloud_networks import cloud_computed
from tests.unit.test_cloud_stacks import GARDEN_KUBECONFIG, stack_landscape
from tests.unit.test_shoot_exposure import (
    CLUSTER_CA,
    RECORD_TYPES,
    ExposureMocks,
    node_agent_trust,
    unwrapped,
    written_files,
)

sys.path.insert(0, str(Path(__file__).parents[2] / "hack"))
import preview_summary

PROVIDERS = ("gcp", "aws")
SHOOTS = {"web": "arbor-shoot-platform-web", "analytics": "arbor-shoot-data-analytics"}
SERVICE = "kubernetes:core/v1:Service"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
# A hosted control plane's component: its ConfigMaps, Service and workload (StatefulSet or Deployment), applied as one.
OBJECT_SET = "pulumi-python:dynamic/arbor:ObjectSet"
SECRET = "kubernetes:core/v1:Secret"
SYSTEM_COMPONENTS = "pulumi-python:dynamic/arbor:SystemComponents"
MACHINE_CLASS = "kubernetes:machine.sapcloud.io/v1alpha1:MachineClass"
MACHINE_DEPLOYMENT = "kubernetes:machine.sapcloud.io/v1alpha1:MachineDeployment"
OSC = "pulumi-python:dynamic/arbor:OperatingSystemConfig"
LEAF_SET = "pulumi-python:dynamic/arbor:LeafSet"
CLUSTER_ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
K8S_PROVIDER = "pulumi:providers:kubernetes"
# What each cloud makes for a shoot's network and its machines' identity, and the image lookup a class carries.
NETWORK_TYPES = {
    "gcp": {"gcp:compute/network:Network", "gcp:compute/subnetwork:Subnetwork", "gcp:compute/routerNat:RouterNat"},
    "aws": {"aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "aws:ec2/natGateway:NatGateway"},
}
IDENTITY_TYPES = {
    "gcp": {
        "gcp:serviceaccount/account:Account",
        "gcp:projects/iAMCustomRole:IAMCustomRole",
        "gcp:serviceaccount/iAMMember:IAMMember",
    },
    # A hosted aws shoot on an EKS seed: a role MCM assumes with its ServiceAccount's token (workload identity).
    "aws": {"aws:iam/role:Role", "aws:iam/rolePolicy:RolePolicy"},
}
IMAGE_LOOKUPS = {"gcp": "gcp:compute/getImage:getImage", "aws": "aws:ec2/getAmi:getAmi"}
LOOKED_UP = {"gcp": "ubuntu-2404-noble-amd64-v20251101", "aws": "ami-0fedcba9876543210"}
CNI = {"web": "calico-node", "analytics": "cilium"}
# The self-hosted shoot: its control-plane machine, bundle, identity and balancer, by cloud.
EDGE = "arbor-shoot-platform-edge"
INSTANCE = {"gcp": "gcp:compute/instance:Instance", "aws": "aws:ec2/instance:Instance"}
BUNDLE_VERSION = {
    "gcp": "gcp:secretmanager/secretVersion:SecretVersion",
    "aws": "aws:secretsmanager/secretVersion:SecretVersion",
}
BUNDLE_READER = {"gcp": "gcp:secretmanager/secretIamMember:SecretIamMember", "aws": "aws:iam/rolePolicy:RolePolicy"}
BALANCER = {"gcp": "gcp:compute/forwardingRule:ForwardingRule", "aws": "aws:lb/listener:Listener"}
API_SERVING = "pulumi-python:dynamic/arbor:ApiServing"


class ExampleMocks(ExposureMocks):
    """The exposure mocks, with the IPv6 blocks the clouds assign to a dual-stack shoot's network."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        rid, outputs = super().new_resource(args)
        outputs |= cloud_computed(args.typ, args.inputs)
        self.typed[(args.typ, args.name)] = outputs
        return rid, outputs


class Example:
    """One example stack, checked and registered: its plan, what the transformation saw, what the mocks got."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.stack = f"{provider}-example"
        self.mocks = ExampleMocks(provider)
        pulumi.runtime.set_mocks(self.mocks, project="arbor", stack=self.stack, preview=False)
        config = {"arbor:gardenKubeconfig": GARDEN_KUBECONFIG}
        pulumi.runtime.set_all_config(config, list(config))
        # As __main__: the checks first, on a stack without a previous update; they must refuse nothing.
        self.plan: LandscapePlan = checks.check(stack_landscape(self.stack), self.stack, dict).plan
        built: list[Built] = []

        @pulumi.runtime.test
        def register() -> pulumi.Output[list[str]]:
            built.append(build({}, self.plan, provider_for))
            return built[0].settled()

        register()
        self.built = built[0]

    def of(self, type_: str, shoot: str = "") -> dict[str, dict[str, Any]]:
        """The outputs of every resource of a type (of one shoot: its key or prefix), by name without the prefix."""
        prefix = f"{SHOOTS.get(shoot, shoot)}-" if shoot else ""
        typed = expanded(self.mocks.typed).items()
        return {n.removeprefix(prefix): o for (t, n), o in typed if t == type_ and n.startswith(prefix)}

    def waits_for(self, type_: str, name: str) -> set[tuple[str, str]]:
        """Every resource (type, name) the resource waits for, through depends_on and its provider, transitively."""
        seen: set[tuple[str, str]] = set()
        todo = [(type_, name)]
        while todo:
            key = todo.pop()
            provider = self.built.options[key[1]].provider
            deps = set(self.built.typed_edges.get(key, set()))
            if provider is not None and id(provider) in self.built.ids:
                deps.add(self.built.ids[id(provider)])
            for dep in deps - seen:
                seen.add(dep)
                todo.append(dep)
        return seen


@pytest.fixture(scope="module", params=PROVIDERS)
def example(request: pytest.FixtureRequest) -> Example:
    """Each example stack, registered once for the tests of this module."""
    return Example(request.param)


def test_the_example_is_checked_as_a_realistic_landscape(example: Example) -> None:
    """GIVEN an example stack WHEN checked THEN two seeds, a dual-stack and an IPv4 hosted shoot, a self-hosted one."""
    plan = example.plan
    assert len(plan.seeds) == 2 and {s.cluster.provider.value for s in plan.seeds} == {example.provider}
    families = {s.name: s.networking.ip_families for s in plan.shoots}
    assert families == {"web": ("IPv4", "IPv6"), "analytics": ("IPv4",), "edge": ("IPv4",)}
    hosted = [s for s in plan.shoots if not s.self_hosted]
    assert {s.seed for s in hosted} == {s.name for s in plan.seeds}  # one hosted shoot per seed
    assert all(s.dns is not None for s in plan.shoots)
    assert [s.name for s in plan.shoots if s.self_hosted] == ["edge"]


@pytest.mark.parametrize("shoot", SHOOTS)
def test_a_hosted_shoots_machines_identity_is_used_by_mcms_token_no_key(example: Example, shoot: str) -> None:
    """GIVEN a hosted shoot of an example (on an EKS or GKE seed) WHEN registered THEN MCM's identity has no key.

    As Gardener's provider extensions with a WorkloadIdentity. aws: the role `<technical id>-machines` trusts only
    MCM's ServiceAccount of the shoot's seed namespace, through the seed's IAM OIDC provider; the `cloudprovider`
    Secret names the role and the token file. gcp: only that ServiceAccount of the seed's pool may act as the
    machines' service account; the Secret holds an external account (`credentialsConfig`) reading the token file and
    `projectID`. Either way MCM's Deployment projects the token into the sidecar where Gardener mounts it.
    """
    values = next(s for s in example.plan.shoots if s.name == shoot)
    secret = unwrapped(example.of(SECRET, shoot)["workers-cloudprovider"]["stringData"])
    token_file = "/var/run/secrets/gardener.cloud/workload-identity/token"
    subject = f"system:serviceaccount:{values.technical_id}:machine-controller-manager"
    if example.provider == "gcp":
        assert values.machine_audience == f"arbor-seed:{values.seed}"
        assert not example.of("gcp:serviceaccount/key:Key", shoot)
        pool = example.of("gcp:iam/workloadIdentityPool:WorkloadIdentityPool", f"arbor-seed-{values.seed}")["pool"]
        acting = example.of("gcp:serviceaccount/iAMMember:IAMMember", shoot)["workers-machines-acts-as"]
        assert acting["member"] == f"principal://iam.googleapis.com/{pool['name']}/subject/{subject}"
        assert set(secret) == {"credentialsConfig", "projectID", "tokenAudience"}
        config = json.loads(secret["credentialsConfig"])
        assert config["type"] == "external_account" and config["credential_source"]["file"] == token_file
    else:
        assert values.machine_audience == "sts.amazonaws.com"
        assert not example.of("aws:iam/accessKey:AccessKey", shoot) and not example.of("aws:iam/user:User", shoot)
        role = example.of("aws:iam/role:Role", shoot)["workers-machines-role"]
        assert role["name"] == f"{values.technical_id}-machines"
        oidc = example.of("aws:iam/openIdConnectProvider:OpenIdConnectProvider", f"arbor-seed-{values.seed}")["oidc"]
        host = oidc["url"].removeprefix("https://")
        assert json.loads(role["assumeRolePolicy"])["Statement"][0]["Condition"] == {
            "StringEquals": {f"{host}:sub": subject, f"{host}:aud": "sts.amazonaws.com"}
        }
        assert example.of("aws:iam/rolePolicy:RolePolicy", shoot)["workers-machines-policy"]["role"] == role["name"]
        assert secret == {"roleARN": role["arn"], "workloadIdentityTokenFile": token_file}
    manager = unwrapped(example.of(OBJECT_SET, shoot)["workers-mcm"]["manifests"])
    [deployment] = [o for o in manager if o["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    token = {"audience": values.machine_audience, "expirationSeconds": 3600, "path": "token"}
    assert {"name": "workload-identity", "projected": {"sources": [{"serviceAccountToken": token}]}} in pod["volumes"]
    mount = {"name": "workload-identity", "mountPath": token_file.removesuffix("/token"), "readOnly": True}
    assert mount in pod["containers"][1]["volumeMounts"] and mount not in pod["containers"][0]["volumeMounts"]


@pytest.mark.parametrize("shoot", SHOOTS)
def test_every_step_of_the_cloud_flow_is_registered(example: Example, shoot: str) -> None:
    """GIVEN an example stack WHEN registered THEN each shoot has every step: network to machines, DNS, add-ons."""
    types = {t for (t, n) in example.mocks.typed if n.startswith(f"{SHOOTS[shoot]}-")}
    assert NETWORK_TYPES[example.provider] | IDENTITY_TYPES[example.provider] <= types
    # The API behind the cloud's load balancer, named in the zone, served with a certificate for both names.
    assert example.of(SERVICE, shoot)["kube-apiserver"]["spec"]["type"] == "LoadBalancer"
    assert set(example.of(RECORD_TYPES[example.provider], shoot)) == {"dns-external", "dns-internal"}
    dns = next(s.dns for s in example.plan.shoots if s.name == shoot)
    assert dns is not None
    serving = example.of(LEAF_SET, shoot)["pki-leaves"]["leaves"][pki.KUBE_APISERVER]
    assert {dns.external, dns.internal} <= set(serving["dnsNames"])
    # etcd on the seed's persistent volumes, Gardener's class.
    for role in ("main", "events"):
        claims = example.mocks.workload(f"{SHOOTS[shoot]}-etcd-{role}")["spec"]["volumeClaimTemplates"]
        assert [c["spec"]["storageClassName"] for c in claims] == ["gardener.cloud-fast"]
    # MCM with its provider sidecar under upstream's name; a class and a deployment per zone of the pool.
    manager = unwrapped(example.of(OBJECT_SET, shoot)["workers-mcm"]["manifests"])
    [deployment] = [o for o in manager if o["kind"] == "Deployment"]
    containers = deployment["spec"]["template"]["spec"]["containers"]
    sidecar = f"machine-controller-manager-provider-{example.provider}"
    assert [c["name"] for c in containers] == ["machine-controller-manager", sidecar]
    zones = [d.name for d in next(s for s in example.plan.shoots if s.name == shoot).deployments["pool-a"]]
    assert len(example.of(MACHINE_CLASS, shoot)) == len(example.of(MACHINE_DEPLOYMENT, shoot)) == len(zones) >= 2
    # The shoot's own system components (one resource, the objects its values render): its CNI, kube-proxy per
    # pool, CoreDNS; the RBAC machines join with.
    values = example.of(SYSTEM_COMPONENTS, shoot)["system"]["values"]
    rendered = system.render(system.SystemValues.from_object(values))
    daemonsets = {o["metadata"]["name"] for o in rendered if o["kind"] == "DaemonSet"}
    assert CNI[shoot] in daemonsets and any(d.startswith("kube-proxy-pool-a") for d in daemonsets)
    assert {o["metadata"]["name"] for o in rendered if o["kind"] == "Deployment"} >= {"coredns"}
    bindings = {o["metadata"]["name"] for o in example.of(CLUSTER_ROLE_BINDING, shoot).values()}
    assert {"system:node-bootstrapper", "gardener-node-agent"} <= bindings
    assert set(example.of(OSC, shoot)) == {"osc-pool-a"}


def test_images_are_looked_up_and_pinned_in_the_classes(example: Example) -> None:
    """GIVEN the built-in ubuntu image WHEN registered THEN it is looked up per region and each class carries it."""
    lookups = [args for token, args in example.mocks.calls if token == IMAGE_LOOKUPS[example.provider]]
    assert lookups  # one per image and region
    for machine_class in example.of(MACHINE_CLASS).values():
        assert LOOKED_UP[example.provider] in yaml.safe_dump(machine_class["providerSpec"])


def test_seeds_hold_what_persistent_etcd_needs(example: Example) -> None:
    """GIVEN the two seeds WHEN registered THEN each has Gardener's StorageClass (on EKS, after the EBS CSI add-on)."""
    for seed in (s.name for s in example.plan.seeds):
        assert f"arbor-seed-{seed}-storage-class" in example.of(STORAGE_CLASS)
        if example.provider == "aws":
            waits = example.waits_for(STORAGE_CLASS, f"arbor-seed-{seed}-storage-class")
            assert ("aws:eks/addon:Addon", f"arbor-seed-{seed}-ebs-csi") in waits


@pytest.mark.parametrize("shoot", SHOOTS)
def test_the_graph_orders_the_flow_as_gardener_does(example: Example, shoot: str) -> None:
    """GIVEN a registered example WHEN its resource graph is read THEN each step waits for the ones it needs."""
    p = SHOOTS[shoot]
    records = {(RECORD_TYPES[example.provider], f"{p}-dns-{kind}") for kind in ("external", "internal")}
    seed = next(s.seed for s in example.plan.shoots if s.name == shoot)
    storage = (STORAGE_CLASS, f"arbor-seed-{seed}-storage-class")
    # etcd on its volumes; the API after etcd and its serving certificate; the records after the balancer.
    assert storage in example.waits_for(OBJECT_SET, f"{p}-etcd")
    # The shoot's leaves write the serving certificate's Secret in the seed namespace, where kube-apiserver mounts it.
    assert {(OBJECT_SET, f"{p}-etcd"), (LEAF_SET, f"{p}-pki-leaves")} <= example.waits_for(
        OBJECT_SET, f"{p}-kube-apiserver"
    )
    for record in records:
        assert (SERVICE, f"{p}-kube-apiserver") in example.waits_for(*record)
    # arbor reaches the shoot by name: its provider waits for both records; so does all in the shoot.
    assert records <= example.waits_for(K8S_PROVIDER, f"{p}-k8s")
    assert records <= example.waits_for(SYSTEM_COMPONENTS, f"{p}-system")
    # A machine is made by MCM (after the API serves) from its class, credentials and user data, and only once
    # node-agent's OSC Secret and the join RBAC are in the shoot.
    # A zone's user data, class and MachineDeployment are one ObjectSet, applied in that order.
    zones = [n for n in example.of(OBJECT_SET, shoot) if re.fullmatch(r"workers-.+-z\d+", n)]
    assert zones and [o["kind"] for o in unwrapped(example.of(OBJECT_SET, shoot)[zones[0]]["manifests"])] == [
        "Secret", "MachineClass", "MachineDeployment"
    ]  # fmt: skip
    for name in zones:
        waits = example.waits_for(OBJECT_SET, f"{p}-{name}")
        assert {
            (SECRET, f"{p}-workers-cloudprovider"),
            (OBJECT_SET, f"{p}-workers-mcm"),
            (OBJECT_SET, f"{p}-kube-apiserver"),
            (OSC, f"{p}-osc-pool-a"),
            (CLUSTER_ROLE_BINDING, f"{p}-join-clusterrolebinding-system-node-bootstrapper"),
        } | records <= waits
    # The Shoot record's status is written last.
    status = example.waits_for("pulumi-python:dynamic/arbor:ShootStatus", f"{p}-status")
    assert {(OBJECT_SET, f"{p}-{n}") for n in zones} <= status


@pytest.mark.parametrize("shoot", SHOOTS)
def test_user_data_keeps_the_placeholders_raw_and_carries_the_ca(example: Example, shoot: str) -> None:
    """GIVEN each zone's user data WHEN decoded THEN MCM's placeholders are raw and node-agent trusts the CA."""
    secrets = {n: o for n, o in example.of(SECRET, shoot).items() if re.fullmatch(r"workers-.+-z\d+/secret-.+", n)}
    assert secrets
    ca = CLUSTER_CA.replace("platform-web", SHOOTS[shoot].removeprefix("arbor-shoot-"))
    for secret in secrets.values():
        script = base64.b64decode(unwrapped(secret["data"])["userData"]).decode()
        assert "'<<BOOTSTRAP_TOKEN>>'" in script and "'<<MACHINE_NAME>>'" in script
        dns = next(s.dns for s in example.plan.shoots if s.name == shoot)
        assert dns is not None and node_agent_trust(written_files(script)) == (f"https://{dns.internal}", ca)


def first_preview(example: Example) -> dict[str, Any]:
    """What `pulumi preview --json` reports for the stack's first update: a create per resource, the plans logged."""
    records = example.built.records
    urns = example.built.urns(example.stack)
    # Names repeat across types (a Service and a Deployment), never among the components that are parents.
    urn = {(t, n): next(u for u in urns if u.endswith(f"{t}::{n}")) for t, n, _ in records}
    components = {n: urn[(t, n)] for t, n, _ in records if t.startswith("arbor:")}
    steps = [
        {
            "op": "create",
            "urn": urn[(type_, name)],
            "newState": {"urn": urn[(type_, name)], "type": type_, "parent": components[parent] if parent else ""},
        }
        for type_, name, parent in records
    ]
    info = [network.PLAN_PREFIX + network.table(s.network_plan) for s in example.plan.shoots]
    return {"steps": steps, "diagnostics": [{"severity": "info", "message": m} for m in info]}


def test_the_first_previews_summary(example: Example, golden: Callable[[str, str], None]) -> None:
    """GIVEN an example's first preview WHEN summarized for the pull request THEN per layer, nothing replaced."""
    summary = preview_summary.render(first_preview(example), stack=example.stack)
    layers = ["garden", *(f"seed arbor-seed-{s.name}" for s in example.plan.seeds)]
    layers += [f"shoot {prefix}" for prefix in [*SHOOTS.values(), EDGE]]
    for layer in layers:
        assert f"\n| {layer} | " in summary
    assert "replacement" not in summary and "| 0 | 0 | 0 |\n" in summary
    golden(f"preview-{example.stack}.md", summary)


def written(script: str) -> dict[str, str]:
    """The files a first-boot script writes from inline content, by path."""
    out = {}
    for line in script.splitlines():
        if line.startswith("echo '") and '> "$ROOT"' in line:
            data, path = line.split("'")[1], line.split('> "$ROOT"')[1]
            out[path.strip("'")] = base64.b64decode(data).decode()
    return out


def test_the_self_hosted_shoot_runs_on_one_machine_arbor_makes_behind_a_balancer(example: Example) -> None:
    """GIVEN the self-hosted shoot WHEN registered THEN its machine (protected), bundle, identity and balancer."""
    p, cloud = EDGE, example.provider
    shoot = next(s for s in example.plan.shoots if s.name == "edge")
    machine = shoot.control_plane_machine
    assert machine is not None
    instances = example.of(INSTANCE[cloud], p)
    assert list(instances) == ["cp-instance"]
    options = example.built.options[f"{p}-cp-instance"]
    # Protected, and a newer image from the lookup never replaces it (nor restarts it with new user data).
    assert options.protect is True
    assert set(options.ignore_changes or ()) == (
        {"bootDisk.initializeParams.image", "metadataStartupScript"} if cloud == "gcp" else {"ami", "userData"}
    )
    instance = instances["cp-instance"]
    if cloud == "gcp":
        assert instance["name"] == machine.name and instance["deletionProtection"] is True
        assert instance["bootDisk"]["autoDelete"] is False
        user_data = instance["metadataStartupScript"]
        member = example.of(BUNDLE_READER[cloud], p)["cp-bundle-reader"]
        assert member["role"] == "roles/secretmanager.secretAccessor" and member["secretId"].endswith("cp-bundle-id")
    else:
        assert instance["disableApiTermination"] is True and instance["metadataOptions"]["httpTokens"] == "required"
        assert instance["rootBlockDevice"]["deleteOnTermination"] is False
        assert instance["rootBlockDevice"]["encrypted"] is True
        user_data = instance["userData"]
        policy = json.loads(example.of(BUNDLE_READER[cloud], p)["cp-bundle-reader"]["policy"])
        arn = LANDSCAPE_OUTPUTS["aws:secretsmanager/secret:Secret"]["arn"]
        assert policy["Statement"] == [
            {"Effect": "Allow", "Action": ["secretsmanager:GetSecretValue"], "Resource": arn}
        ]
    # The user data fetches the bundle and holds no secret; the bundle is kept secret and carries the control plane.
    assert "PRIVATE KEY" not in user_data and "<secret>" not in user_data and "first-boot" in user_data
    version = example.of(BUNDLE_VERSION[cloud], p)["cp-bundle-version"]
    sealed = version["secretData" if cloud == "gcp" else "secretString"]
    assert unwrapped(sealed) is not sealed, "the bundle is not kept secret"
    script = gzip.decompress(base64.b64decode(unwrapped(sealed))).decode()
    files = written(script)
    assert "kind: Pod" in files["/etc/kubernetes/manifests/kube-apiserver.yaml"]
    assert files["/var/lib/gardener-node-agent/credentials/bootstrap-token"] == "abcdef.<secret>"
    assert files["/var/lib/kubelet/pki/kubelet-client-current.pem"] == "<cert><key>"
    # The API behind the balancer, named in the zone; node-agent's token in the shoot; MCM never makes this machine.
    assert set(example.of(RECORD_TYPES[cloud], p)) == {"dns-external", "dns-internal"}
    assert example.of(SECRET, p)["bootstrap-token"]["metadata"]["name"] == "bootstrap-token-abcdef"
    assert not [d for d in example.of(MACHINE_DEPLOYMENT, p).values() if "control-plane" in d["metadata"]["name"]]


def test_the_self_hosted_shoots_further_pool_is_made_by_mcm_inside_the_shoot(example: Example) -> None:
    """GIVEN the self-hosted shoot's worker pool WHEN registered THEN MCM runs in its kube-system, in-cluster."""
    p, cloud = EDGE, example.provider
    shoot = next(s for s in example.plan.shoots if s.name == "edge")
    zones = [d.name for d in shoot.deployments["worker"]]
    deployments = example.of(MACHINE_DEPLOYMENT, p)
    assert sorted(d["metadata"]["name"] for d in deployments.values()) == sorted(zones) and len(zones) >= 2
    for machine_class in example.of(MACHINE_CLASS, p).values():
        assert machine_class["metadata"]["namespace"] == "kube-system"
        assert machine_class["credentialsSecretRef"] == {"name": "cloudprovider", "namespace": "kube-system"}
    assert {d["metadata"]["namespace"] for d in deployments.values()} == {"kube-system"}
    # As upstream's MCM of a self-hosted shoot: in-cluster for both clusters, no mounted kubeconfig, the
    # control-plane node tolerated; its rights in the shoot bound to its ServiceAccount, not a certificate's user.
    manager = unwrapped(example.of(OBJECT_SET, p)["workers-mcm"]["manifests"])
    assert [o["kind"] for o in manager] == ["ServiceAccount", "Role", "RoleBinding", "Deployment", "Service"]
    assert {o["metadata"]["namespace"] for o in manager} == {"kube-system"}
    pod = manager[3]["spec"]["template"]["spec"]
    # No kubeconfig mounted: only the sidecar's token of the shoot's own issuer (tests/unit/test_shoot_issuer.py).
    assert [v["name"] for v in pod["volumes"]] == ["workload-identity"] and pod["tolerations"] == [
        {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}
    ]
    for container in pod["containers"]:
        flags = container.get("command", container.get("args"))
        assert {"--target-kubeconfig=", "--namespace=kube-system"} <= set(flags)
    assert [[m["name"] for m in c.get("volumeMounts", [])] for c in pod["containers"]] == [[], ["workload-identity"]]
    rights = unwrapped(example.of(OBJECT_SET, p)["workers-mcm-shoot"]["manifests"])
    service_account = {"kind": "ServiceAccount", "name": "machine-controller-manager", "namespace": "kube-system"}
    assert [o["subjects"] for o in rights if o["kind"].endswith("Binding")] == [[service_account]] * 2
    # The machine kinds in the shoot itself, from the pinned module's CRDs.
    crds = {n for n in example.of("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", p)}
    assert crds == {f"crd-{k}" for k in ("machineclasses", "machinedeployments", "machines", "machinesets")}
    # MCM starts once the API serves behind the balancer; machines once their OSC and the join RBAC are there.
    assert (API_SERVING, f"{p}-api-serving") in example.waits_for(OBJECT_SET, f"{p}-workers-mcm")
    for zone in (n for n in example.of(OBJECT_SET, p) if re.fullmatch(r"workers-worker-z\d+", n)):
        assert {
            (OBJECT_SET, f"{p}-workers-mcm"),
            (SECRET, f"{p}-workers-cloudprovider"),
            (OSC, f"{p}-osc-worker"),
            (CLUSTER_ROLE_BINDING, f"{p}-join-clusterrolebinding-system-node-bootstrapper"),
            (INSTANCE[cloud], f"{p}-cp-instance"),
        } <= example.waits_for(OBJECT_SET, f"{p}-{zone}")


def test_the_self_hosted_graph_boots_the_machine_before_anything_reaches_its_api(example: Example) -> None:
    """GIVEN the self-hosted shoot WHEN its graph is read THEN bundle, machine, balancer, records, gate, then API."""
    p, cloud = EDGE, example.provider
    records = {(RECORD_TYPES[cloud], f"{p}-dns-{kind}") for kind in ("external", "internal")}
    machine = example.waits_for(INSTANCE[cloud], f"{p}-cp-instance")
    assert {
        (BUNDLE_VERSION[cloud], f"{p}-cp-bundle-version"),
        (BUNDLE_READER[cloud], f"{p}-cp-bundle-reader"),
    } <= machine
    for record in records:
        assert {(INSTANCE[cloud], f"{p}-cp-instance"), (BALANCER[cloud], f"{p}-cp-api")} & example.waits_for(*record)
    gate = example.waits_for(API_SERVING, f"{p}-api-serving")
    assert records | {(INSTANCE[cloud], f"{p}-cp-instance")} <= gate
    assert (API_SERVING, f"{p}-api-serving") in example.waits_for(K8S_PROVIDER, f"{p}-k8s")
    assert (API_SERVING, f"{p}-api-serving") in example.waits_for(SECRET, f"{p}-bootstrap-token")
    assert (API_SERVING, f"{p}-api-serving") in example.waits_for(OBJECT_SET, f"{p}-user-data-control-plane")
    assert (OSC, f"{p}-osc-control-plane") in example.waits_for(
        "pulumi-python:dynamic/arbor:ShootStatus", f"{p}-status"
    )


def test_a_new_image_for_the_self_hosted_control_plane_machine_is_refused(example: Example) -> None:
    """GIVEN the self-hosted shoot recorded WHEN its control-plane pool's image changes THEN refused with the old one.

    Nothing would replace that machine (it holds the only etcd member); another pool's image rolls as any pool's.
    """
    before = records(example.plan)["shoots"]
    i, shoot = next((i, s) for i, s in enumerate(example.plan.shoots) if s.name == "edge")
    j, pool = next((j, p) for j, p in enumerate(shoot.workers) if p.control_plane)
    newer = dataclasses.replace(pool, image_version="9999.0.0")
    workers = tuple(newer if p is pool else p for p in shoot.workers)
    shoots = tuple(dataclasses.replace(s, workers=workers) if s is shoot else s for s in example.plan.shoots)
    changed = dataclasses.replace(example.plan, shoots=shoots)
    assert previous.shoot_changes(changed, before) == [
        f"landscape.shoots[{i}].workers[{j}].machine.image: the control-plane machine of a self-hosted shoot on "
        f"{example.provider} runs {pool.image} {pool.image_version} and is not replaced (it holds the shoot's only "
        f"etcd member): keep {pool.image} {pool.image_version}"
    ]
    assert previous.shoot_changes(example.plan, before) == []
    hosted = next(s for s in example.plan.shoots if not s.self_hosted)
    other = dataclasses.replace(hosted.workers[0], image_version="9999.0.0")
    moved = tuple(dataclasses.replace(s, workers=(other, *s.workers[1:])) if s is hosted else s for s in shoots)
    assert len(previous.shoot_changes(dataclasses.replace(changed, shoots=moved), before)) == 1
