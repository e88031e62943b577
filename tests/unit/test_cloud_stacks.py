"""The gcp and aws example stacks under Pulumi mocks: what a user would run for their gardens and seeds."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pulumi
import pytest
import yaml

from components.checks import parse_landscape
from components.checks.support import unsupported
from components.layers.landscape import Landscape
from components.plan.planner import plan_landscape
from components.providers.registry import provider_for
from tests.unit.landscape_mocks import with_uid
from tests.unit.test_cloud_networks import cloud_computed

GARDEN_KUBECONFIG = yaml.safe_dump(
    {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "g", "cluster": {"server": "https://garden.example.com"}}],
        "contexts": [{"name": "g", "context": {"cluster": "g", "user": "g"}}],
        "current-context": "g",
        "users": [{"name": "g", "user": {}}],
    }
)
INVOKES: dict[str, dict[str, Any]] = {
    "aws:ec2/getVpc:getVpc": {"id": "vpc-0123"},
    "aws:ec2/getSubnets:getSubnets": {"ids": ["subnet-a", "subnet-b", "subnet-c"]},
    "gcp:organizations/getClientConfig:getClientConfig": {"project": "my-project"},
    "aws:index/getCallerIdentity:getCallerIdentity": {"accountId": "123456789012"},
    "aws:index/getPartition:getPartition": {"partition": "aws"},
    # The images a cloud profile's lookups find (components/plan/catalogue.py).
    "aws:ec2/getAmi:getAmi": {"id": "ami-0fedcba9876543210"},
    "gcp:compute/getImage:getImage": {"name": "ubuntu-2404-noble-amd64-v20251101"},
}
# The OIDC issuer EKS gives a cluster (its service accounts' tokens), which IRSA trusts.
OIDC_ISSUER = "https://oidc.eks.eu-central-1.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"


# What a cloud makes of a key: an access key's secret, a service account key's credentials file (base64).
MOCK_ACCESS_SECRET = "mock-secret-access-key"
MOCK_KEY_FILE = '{"type": "service_account", "project_id": "my-project", "private_key": "mock"}'
CREATED: dict[str, dict[str, Any]] = {
    "aws:iam/accessKey:AccessKey": {"secret": MOCK_ACCESS_SECRET},
    "gcp:serviceaccount/key:Key": {"privateKey": base64.b64encode(MOCK_KEY_FILE.encode()).decode()},
}


class CloudMocks(pulumi.runtime.Mocks):
    """Echoes inputs, adds what the clouds compute (endpoints, CA data), answers the data-source invokes."""

    def __init__(self) -> None:
        self.resources: dict[str, tuple[str, dict[str, Any]]] = {}
        # Every invoke, in order: its token and arguments.
        self.calls: list[tuple[str, dict[str, Any]]] = []
        # What each resource waits for by name (explicit depends_on), where a test records it.
        self.edges: dict[str, set[str]] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        outputs = with_uid(args, dict(args.inputs)) | cloud_computed(args.typ, args.inputs)
        if args.typ == "gcp:container/cluster:Cluster":
            outputs |= {"endpoint": "34.0.0.1", "masterAuth": {"clusterCaCertificate": "Q0E="}}
        if args.typ == "aws:eks/cluster:Cluster":
            outputs |= {
                "endpoint": "https://eks.example.com",
                "certificateAuthority": {"data": "Q0E="},
                "identities": [{"oidcs": [{"issuer": OIDC_ISSUER}]}],
            }
        if args.typ == "aws:iam/openIdConnectProvider:OpenIdConnectProvider":
            outputs["arn"] = f"arn:aws:iam::123456789012:oidc-provider/{OIDC_ISSUER.removeprefix('https://')}"
        if args.typ == "aws:iam/role:Role":
            outputs["arn"] = f"arn:aws:iam::123456789012:role/{args.name}"
        if args.typ == "gcp:serviceaccount/account:Account":
            outputs["email"] = f"{args.inputs['accountId']}@my-project.iam.gserviceaccount.com"
            outputs["name"] = f"projects/my-project/serviceAccounts/{outputs['email']}"
        outputs |= CREATED.get(args.typ, {})
        if args.typ == "gcp:projects/iAMCustomRole:IAMCustomRole":
            outputs["name"] = f"projects/my-project/roles/{args.inputs['roleId']}"
        self.resources[args.name] = (args.typ, outputs)
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        self.calls.append((args.token, dict(args.args)))
        return INVOKES.get(args.token, {}), []  # the SDK iterates the failures: None would crash it


def stack_landscape(stack: str) -> dict[str, Any]:
    """The landscape of a committed stack file."""
    with open(f"stacks/Pulumi.{stack}.yaml") as f:
        landscape: dict[str, Any] = yaml.safe_load(f)["config"]["arbor:landscape"]
    return landscape


def register(stack: str) -> tuple[CloudMocks, Landscape]:
    """The stack's landscape under mocks, with the secret config it names."""
    mocks = CloudMocks()
    pulumi.runtime.set_mocks(mocks, project="arbor", stack=stack, preview=False)
    pulumi.runtime.set_all_config({"arbor:gardenKubeconfig": GARDEN_KUBECONFIG}, ["arbor:gardenKubeconfig"])
    # The garden and seeds only: the shoots' flow is registered in test_example_stacks.py.
    plan = plan_landscape(parse_landscape({**stack_landscape(stack), "shoots": []}), stack)
    assert unsupported(plan) == []
    return mocks, Landscape("arbor", plan, provider_for)


def settled(landscape: Landscape) -> pulumi.Output[list[str]]:
    """Resolves once every cluster's provider is registered."""
    return pulumi.Output.all(*[a.provider.urn for a in landscape.clusters.values()])


@pytest.mark.parametrize("stack", ["gcp-example", "aws-example"])
def test_example_stack_is_a_valid_landscape(stack: str) -> None:
    """GIVEN an example stack WHEN its landscape is parsed THEN it is valid and marks its placeholders."""
    assert parse_landscape(stack_landscape(stack))
    with open(f"stacks/Pulumi.{stack}.yaml") as f:
        assert "<YOUR-GCP-PROJECT>" in f.read() or stack == "aws-example"


@pulumi.runtime.test
def test_gcp_example_registers_regional_gke_clusters() -> pulumi.Output[None]:
    """GIVEN the gcp example WHEN registered THEN garden and seed are regional GKE clusters with node pools."""
    mocks, landscape = register("gcp-example")

    def check(_: list[str]) -> None:
        clusters = {n: o for n, (t, o) in mocks.resources.items() if t == "gcp:container/cluster:Cluster"}
        assert sorted(clusters) == ["arbor-garden-gke", "arbor-seed-gcp-euw1-gke", "arbor-seed-gcp-euw4-gke"]
        seed = clusters["arbor-seed-gcp-euw1-gke"]
        assert seed["location"] == "europe-west1"
        assert seed["nodeLocations"] == ["europe-west1-b", "europe-west1-c", "europe-west1-d"]
        assert seed["deletionProtection"] is True and seed["removeDefaultNodePool"] is True
        assert seed["workloadIdentityConfig"] == {"workloadPool": "my-project.svc.id.goog"}
        pool = mocks.resources["arbor-seed-gcp-euw1-pool"][1]
        assert pool["nodeCount"] == 2
        provider = mocks.resources["arbor-seed-gcp-euw1-k8s"][1]
        assert provider["clusterIdentifier"] == "gcp:gcp-example-seed-gcp-euw1"

    return settled(landscape).apply(check)


@pytest.mark.parametrize("stack", ["gcp-example", "aws-example"])
@pulumi.runtime.test
def test_every_cloud_clusters_kubeconfig_is_secret(stack: str) -> pulumi.Output[None]:
    """GIVEN an example stack WHEN registered THEN each cluster's kubeconfig (what reconcilers keep) is secret.

    Reconcilers mark no kubeconfig output secret themselves: the engine keeps one secret where its input was.
    """
    _, landscape = register(stack)

    async def secrets() -> dict[str, bool]:
        return {key: await access.kubeconfig.is_secret() for key, access in landscape.clusters.items()}

    def check(seen: dict[str, bool]) -> None:
        assert seen and all(seen.values()), seen

    found: pulumi.Output[dict[str, bool]] = pulumi.Output.from_input(asyncio.ensure_future(secrets()))
    return found.apply(check)


@pulumi.runtime.test
def test_aws_example_registers_eks_seed_and_uses_the_existing_garden() -> pulumi.Output[None]:
    """GIVEN the aws example WHEN registered THEN the seed is EKS with roles and nodes; the garden is existing."""
    mocks, landscape = register("aws-example")

    def check(_: list[str]) -> None:
        types = {t for t, _ in mocks.resources.values()}
        eks = mocks.resources["arbor-seed-aws-euc1-eks"][1]
        assert eks["version"] == "1.34"
        assert eks["vpcConfig"]["subnetIds"] == ["subnet-a", "subnet-b", "subnet-c"]
        assert eks["roleArn"] == "arn:aws:iam::123456789012:role/arbor-seed-aws-euc1-cluster-role"
        nodes = mocks.resources["arbor-seed-aws-euc1-nodes"][1]
        assert nodes["scalingConfig"] == {"desiredSize": 3, "minSize": 3, "maxSize": 6}
        assert "aws:eks/nodeGroup:NodeGroup" in types
        # The garden is an existing cluster: no EKS cluster for it, only a provider with its kubeconfig.
        assert "arbor-garden-eks" not in mocks.resources
        garden = mocks.resources["arbor-garden-k8s"][1]
        assert garden["clusterIdentifier"] == "aws:aws-example-garden"

    return settled(landscape).apply(check)


@pulumi.runtime.test
def test_cloud_kubeconfigs_use_exec_credentials_and_stay_secret() -> pulumi.Output[None]:
    """GIVEN the gcp example WHEN its kubeconfigs are exported THEN they are secret and hold no static token."""
    _, landscape = register("gcp-example")
    out = landscape.kubeconfigs()

    def check(args: list[Any]) -> None:
        value, secret = args
        assert secret is True
        seed = yaml.safe_load(value["seed/gcp-euw1"])
        assert seed["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
        assert seed["clusters"][0]["cluster"]["server"] == "https://34.0.0.1"

    return pulumi.Output.all(out, pulumi.Output.from_input(out).is_secret()).apply(check)
