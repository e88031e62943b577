"""The Workers component under Pulumi mocks, per provider: one MCM with the provider's sidecar, classes, deployments.

Each run registers a hosted shoot's network with the provider (so a cloud class points at the subnet and nodes'
identity the network made), a seed namespace, and the Workers component, then reads what was registered.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml

from components import pins
from components.bundles import ClusterAccess, SeedAccess
from components.checks.workers import worker_problems
from components.concerns.workers import Workers
from components.kinds import ProviderType
from components.plan.catalogue import ImageSource
from components.plan.network import plan_network
from components.plan.planner import derive
from components.plan.values import GardenValues, LandscapePlan, ShootValues
from components.providers.aws import AwsProvider
from components.providers.contract import InfrastructureProvider
from components.providers.gcp import GcpProvider
from components.providers.local import LocalProvider, LocalSettings
from components.render import machine_pools, machine_providers, machines, packing, pki
from tests.unit.object_sets import expanded
from tests.unit.test_cloud_stacks import CloudMocks
from tests.unit.test_machines import AMI, GCP_IMAGE, WEB

OBJECT_SET = "pulumi-python:dynamic/arbor:ObjectSet"
CLASS = "kubernetes:machine.sapcloud.io/v1alpha1:MachineClass"
MACHINE_DEPLOYMENT = "kubernetes:machine.sapcloud.io/v1alpha1:MachineDeployment"
SECRET = "kubernetes:core/v1:Secret"
REGIONS = {ProviderType.AWS: "eu-central-1", ProviderType.GCP: "europe-west1", ProviderType.LOCAL: "local"}
ZONES = {
    ProviderType.AWS: ("eu-central-1a", "eu-central-1b"),
    ProviderType.GCP: ("europe-west1-b", "europe-west1-c"),
    ProviderType.LOCAL: ("local-a", "local-b"),
}
MACHINE_TYPES = {ProviderType.AWS: "m5.large", ProviderType.GCP: "n2-standard-4", ProviderType.LOCAL: "local"}
CREDENTIALS = {
    ProviderType.AWS: {"accessKeyID": "AKIAEXAMPLE", "secretAccessKey": "example-secret"},
    ProviderType.GCP: {"serviceaccount.json": '{"type": "service_account"}'},
}
CONFIG_KEY = "cloudCredentials"
# Each cloud pool's image as its profile pins it (the planner fills `images` from the catalogue).
PINNED = {ProviderType.AWS: ImageSource(pinned=AMI), ProviderType.GCP: ImageSource(pinned=GCP_IMAGE)}
# The same images by lookup, which the providers resolve with an invoke (answered by CloudMocks).
LOOKUPS = {
    ProviderType.AWS: ImageSource(
        owner="099720109477", name="ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-arm64-*", architecture="arm64"
    ),
    ProviderType.GCP: ImageSource(project="ubuntu-os-cloud", family="ubuntu-2404-lts-amd64"),
}
PROVIDERS: dict[ProviderType, Callable[[], InfrastructureProvider]] = {
    ProviderType.AWS: AwsProvider,
    ProviderType.GCP: GcpProvider,
    ProviderType.LOCAL: lambda: LocalProvider(LocalSettings("/tmp/unused", "v1.34.4")),
}


def of_type(mocks: CloudMocks, typ: str) -> dict[str, dict[str, Any]]:
    """Inputs of every registered resource of one type, and objects of that kind an ObjectSet applies, by name."""
    typed = {(t, name): inputs for name, (t, inputs) in mocks.resources.items()}
    return {name: inputs for (t, name), inputs in expanded(typed).items() if t == typ}


def shoot_on(
    provider: ProviderType, images: dict[ProviderType, ImageSource] = PINNED, pasted: bool = True
) -> ShootValues:
    """Shoot dev/web hosted on a seed of `provider`, its one pool over two zones with minimum 3 (pasted: its key)."""
    zones = ZONES[provider]
    networking = dataclasses.replace(WEB.networking, provider=provider, region=REGIONS[provider], zones=zones)
    pool = dataclasses.replace(WEB.workers[0], zones=zones, minimum=3, maximum=4, machine_type=MACHINE_TYPES[provider])
    credentials = CONFIG_KEY if provider in CREDENTIALS and pasted else None
    sources = {pool.name: images[provider]} if provider in images else {}
    return derive(
        dataclasses.replace(
            WEB, networking=networking, workers=(pool,), cloud_credentials_secret=credentials, images=sources
        )
    )


def register(
    provider: ProviderType, images: dict[ProviderType, ImageSource] = PINNED, pasted: bool = True
) -> CloudMocks:
    """The Workers of shoot_on(provider) registered under fresh mocks until settled, their edges recorded."""
    mocks = CloudMocks()
    pulumi.runtime.set_mocks(mocks, project="arbor", stack="test", preview=False)
    if provider in CREDENTIALS:
        pulumi.runtime.set_all_config({f"arbor:{CONFIG_KEY}": json.dumps(CREDENTIALS[provider])}, [])
    shoot = shoot_on(provider, images, pasted)

    def record(args: pulumi.ResourceTransformationArgs) -> None:
        deps = args.opts.depends_on if isinstance(args.opts.depends_on, list) else []
        mocks.edges[args.name] = {d._name for d in deps if isinstance(d, pulumi.Resource)}

    @pulumi.runtime.test
    def program() -> pulumi.Output[None]:
        parent = pulumi.ComponentResource("arbor:shoot:Shoot", "dev-web")
        infra = PROVIDERS[provider]()
        network = infra.network(plan_network(shoot.networking), parent)
        cluster = k8s.Provider("seed-k8s", kubeconfig="seed")
        seed = SeedAccess(
            name="seed",
            cluster=ClusterAccess(
                "seed/s", pulumi.Output.from_input(""), pulumi.Output.from_input(""), lambda: cluster
            ),
            namespaces={shoot.seed_namespace: k8s.core.v1.Namespace("ns", opts=pulumi.ResourceOptions(parent=parent))},
        )
        api = ClusterAccess(
            "shoot/dev/web",
            pulumi.Output.from_input(""),
            pulumi.Output.from_input(""),
            lambda: k8s.Provider("shoot-k8s"),
        )
        sources = {
            machines.MCM_NAME: pulumi.Output.from_input({pki.KEY_CERT: "cert", pki.KEY_KEY: "key"}),
            pki.CA: pulumi.Output.from_input({pki.KEY_CA_CERT: "ca"}),
        }
        recorded = pulumi.ResourceOptions(parent=parent, transformations=[record])
        workers = Workers("dev-web-workers", shoot, infra, seed, network, api, sources, after=[], opts=recorded)
        return pulumi.Output.all(*[d.urn for d in workers.deployments]).apply(lambda _: None)

    program()
    return mocks


@pytest.mark.parametrize("provider", [ProviderType.AWS, ProviderType.GCP, ProviderType.LOCAL])
def test_exactly_one_mcm_with_the_providers_sidecar(provider: ProviderType) -> None:
    """GIVEN a hosted shoot on a provider WHEN its workers are registered THEN one MCM runs that provider's sidecar."""
    mocks = register(provider)
    manager = of_type(mocks, OBJECT_SET)["dev-web-workers-mcm"]
    [deployment] = [o for o in packing.unpacked(manager["manifests"]) if o["kind"] == "Deployment"]
    assert deployment["metadata"]["name"] == machines.MCM_NAME
    mcm, sidecar = deployment["spec"]["template"]["spec"]["containers"]
    assert mcm["image"] == pins.MCM.ref
    expected = machine_providers.SIDECARS[provider.value](WEB.seed_namespace).container
    assert (sidecar["name"], sidecar["image"]) == (expected["name"], expected["image"])
    assert sidecar["name"] == f"machine-controller-manager-provider-{provider.value}"
    assert sidecar["image"].split(":")[0].endswith(f"machine-controller-manager-provider-{provider.value}")
    assert f"--namespace={WEB.seed_namespace}" in sidecar["args"]
    assert f"--target-kubeconfig={machines.TARGET_KUBECONFIG}" in sidecar["args"]
    # A rotated client certificate (or CA) restarts MCM: the pod template carries a checksum of each.
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert sorted(annotations) == sorted(f"checksum/{n}" for n, _ in machines.TARGET_VOLUMES)


@pytest.mark.parametrize("provider", [ProviderType.AWS, ProviderType.GCP, ProviderType.LOCAL])
def test_classes_per_zone_point_at_the_shoots_infrastructure(
    provider: ProviderType, golden: Callable[[str, str], None]
) -> None:
    """GIVEN a pool over two zones WHEN registered THEN each zone has a class (golden) and a deployment to it."""
    mocks = register(provider)
    classes = sorted(of_type(mocks, CLASS).values(), key=lambda c: c["metadata"]["name"])
    # The mocks hand inputs back in no fixed order: keys are sorted for the golden file.
    golden(f"workers-classes-{provider.value}.yaml", yaml.safe_dump_all(classes, sort_keys=True))
    deployments = sorted(of_type(mocks, MACHINE_DEPLOYMENT).values(), key=lambda d: d["metadata"]["name"])
    assert [d["metadata"]["name"] for d in deployments] == ["shoot--dev--web-pool-a-z1", "shoot--dev--web-pool-a-z2"]
    assert [d["spec"]["replicas"] for d in deployments] == [2, 1]
    assert [d["spec"]["template"]["spec"]["class"]["name"] for d in deployments] == [
        c["metadata"]["name"] for c in classes
    ]
    # Every class boots from its own user data, with the shoot's credentials.
    secrets = {s["metadata"]["name"]: s for s in of_type(mocks, SECRET).values()}
    for c in classes:
        assert (
            c["secretRef"]["name"] in secrets and c["credentialsSecretRef"]["name"] == machine_pools.CREDENTIALS_SECRET
        )


@pytest.mark.parametrize("provider", [ProviderType.AWS, ProviderType.GCP, ProviderType.LOCAL])
def test_the_cloudprovider_secret_holds_the_shoots_credentials(provider: ProviderType) -> None:
    """GIVEN the shoot's credentials in secret config WHEN registered THEN `cloudprovider` holds them (none locally)."""
    mocks = register(provider)
    secret = next(
        s for s in of_type(mocks, SECRET).values() if s["metadata"]["name"] == machine_pools.CREDENTIALS_SECRET
    )
    if provider in CREDENTIALS:
        # The mocks see the secret's wrapper: the value inside it is what the Secret holds.
        assert secret["stringData"]["value"] == CREDENTIALS[provider]
    else:
        assert "stringData" not in secret


@pytest.mark.parametrize(
    ("provider", "given", "error"),
    [
        ("aws", '{"accessKeyID": "a"}', "the aws credentials need secretAccessKey"),
        ("gcp", "{}", r"the gcp credentials need serviceaccount\.json"),
        ("aws", "AKIA...", "the credentials are not JSON: Expecting value"),
        ("gcp", '["a"]', "the credentials are not a JSON object"),
    ],
)
def test_bad_credentials_name_what_is_wrong(provider: str, given: str, error: str) -> None:
    """GIVEN credentials that are not what the sidecar reads WHEN turned into the Secret THEN the error says why."""
    with pytest.raises(ValueError, match=rf"arbor:creds: {error}"):
        machine_providers.credentials_data(provider, given, "arbor:creds")


def _landscape(shoot: ShootValues) -> LandscapePlan:
    """A plan of just `shoot`, as the checks take it."""
    return LandscapePlan(garden=GardenValues(cluster=shoot.cluster), seeds=(), shoots=(shoot,))


def test_worker_problems_accept_pasted_and_managed_credentials() -> None:
    """GIVEN cloud shoots with pasted or no credentials, and a local one WHEN checked THEN none is refused."""
    for shoot in (shoot_on(ProviderType.AWS), shoot_on(ProviderType.GCP, pasted=False), shoot_on(ProviderType.LOCAL)):
        assert worker_problems(_landscape(shoot)) == []


@pytest.mark.parametrize(
    ("provider", "token", "image"),
    [
        (ProviderType.AWS, "aws:ec2/getAmi:getAmi", "ami-0fedcba9876543210"),
        (ProviderType.GCP, "gcp:compute/getImage:getImage",
         "projects/ubuntu-os-cloud/global/images/ubuntu-2404-noble-amd64-v20251101"),
    ],
)  # fmt: skip
def test_an_image_by_lookup_is_resolved_and_pinned_in_the_class(
    provider: ProviderType, token: str, image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a pool whose profile names its image by lookup WHEN registered THEN every class carries the found ID."""
    notes: list[str] = []
    monkeypatch.setattr(pulumi.log, "info", lambda message, *args, **kwargs: notes.append(message))
    mocks = register(provider, LOOKUPS)
    # Once per image and region, in the update's diagnostics: the preview names what the lookup found.
    arch = LOOKUPS[provider].architecture
    assert notes == [f"dev/web: gardenlinux 1877.0 ({arch}) in {REGIONS[provider]} is {image}"]
    classes = of_type(mocks, CLASS).values()
    disks = [c["providerSpec"].get("ami") or c["providerSpec"]["disks"][0]["image"] for c in classes]
    assert disks == [image, image]
    [call] = [args for t, args in mocks.calls if t == token]
    if provider is ProviderType.AWS:
        # The newest AMI of the owner whose name and architecture match, in the shoot's own region.
        assert call["owners"] == ["099720109477"] and call["mostRecent"] and call["region"] == "eu-central-1"
        assert {f["name"]: f["values"] for f in call["filters"]} == {
            "name": ["ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-arm64-*"], "architecture": ["arm64"]
        }  # fmt: skip
    else:
        assert (call["project"], call["family"]) == ("ubuntu-os-cloud", "ubuntu-2404-lts-amd64")


def test_a_pinned_image_needs_no_lookup() -> None:
    """GIVEN a pool whose profile pins its AMI WHEN registered THEN no lookup is made."""
    mocks = register(ProviderType.AWS)
    assert [t for t, _ in mocks.calls if t == "aws:ec2/getAmi:getAmi"] == []
    assert {c["providerSpec"]["ami"] for c in of_type(mocks, CLASS).values()} == {AMI}
