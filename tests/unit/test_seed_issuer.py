"""An existing seed that names its token issuer: its clouds trust its tokens, so no key is made (under mocks).

A seed given by kubeconfig is an EKS or GKE cluster arbor did not make; with `cluster.issuer` its bucket's role (an
IAM role through the account's OIDC provider, named or made; a workload identity pool on gcp) and its shoots'
machines' identities trust its ServiceAccount tokens, as for a seed arbor made. Without it, keys, as before.
A bucket in the other cloud than its seed's trusts the seed's public issuer through a provider or pool of its own.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pytest

from components.checks import parse_landscape
from components.checks.landscape import cross_checks
from components.checks.support import unsupported
from components.layers.landscape import Landscape
from components.plan.planner import plan_landscape
from components.plan.values import STS_AUDIENCE, LandscapePlan
from components.providers.registry import provider_for
from components.spec.fields import SpecError
from components.spec.landscape import parse_fields
from tests.unit.test_cloud_stacks import GARDEN_KUBECONFIG, OIDC_ISSUER, CloudMocks, settled, stack_landscape

EKS_ISSUER = "https://oidc.eks.eu-central-1.amazonaws.com/id/0123456789ABCDEF0123456789ABCDEF"
EKS_PROVIDER = f"arn:aws:iam::111122223333:oidc-provider/{EKS_ISSUER.removeprefix('https://')}"
GKE_ISSUER = "https://container.googleapis.com/v1/projects/their-project/locations/europe-west1/clusters/seed"
OIDC = "aws:iam/openIdConnectProvider:OpenIdConnectProvider"


def existing(stack: str, issuer: dict[str, str] | None) -> dict[str, Any]:
    """The example stack's landscape, its first seed given by kubeconfig (naming `issuer` where given), no shoots."""
    landscape = stack_landscape(stack)
    seed = landscape["seeds"][0]
    seed["cluster"] = {"kubeconfigSecret": "seedKubeconfig", **({"issuer": issuer} if issuer else {})}
    return {**landscape, "seeds": [seed], "shoots": []}


def across(stack: str, backup: dict[str, str]) -> dict[str, Any]:
    """The example stack's landscape, its first seed (made by arbor) keeping backups in `backup`, no shoots."""
    landscape = stack_landscape(stack)
    return {**landscape, "seeds": [{**landscape["seeds"][0], "backup": backup}], "shoots": []}


def planned(stack: str, landscape: dict[str, Any]) -> LandscapePlan:
    """The plan of `landscape`, which the checks accept."""
    plan = plan_landscape(parse_landscape(landscape), stack)
    assert unsupported(plan) == []
    return plan


def registered(stack: str, landscape: dict[str, Any]) -> CloudMocks:
    """`landscape` registered under mocks until every cluster's provider is."""
    mocks = CloudMocks()
    pulumi.runtime.set_mocks(mocks, project="arbor", stack=stack, preview=False)
    config = {"arbor:gardenKubeconfig": GARDEN_KUBECONFIG, "arbor:seedKubeconfig": GARDEN_KUBECONFIG}
    pulumi.runtime.set_all_config(config, list(config))
    plan = planned(stack, landscape)

    @pulumi.runtime.test
    def program() -> pulumi.Output[list[str]]:
        return settled(Landscape("arbor", plan, provider_for))

    program()
    return mocks


def of_type(mocks: CloudMocks, typ: str) -> dict[str, dict[str, Any]]:
    """The inputs of every registered resource of a type, by name."""
    return {name: inputs for name, (t, inputs) in mocks.resources.items() if t == typ}


def trust_of(mocks: CloudMocks, seed: str) -> dict[str, Any]:
    """The one statement of the seed's bucket role's trust policy."""
    [role] = [r for n, r in of_type(mocks, "aws:iam/role:Role").items() if n == f"arbor-seed-{seed}-backup-role"]
    [statement] = json.loads(role["assumeRolePolicy"])["Statement"]
    return dict(statement)


def test_an_eks_seed_by_kubeconfig_trusts_the_named_oidc_provider_and_makes_no_key() -> None:
    """GIVEN an existing aws seed naming its issuer and the account's provider WHEN registered THEN its role, no key.

    An account holds one IAM OIDC provider per issuer, so one that exists (as EKS's IRSA setup makes it) is named,
    and arbor makes none.
    """
    mocks = registered("aws-example", existing("aws-example", {"url": EKS_ISSUER, "oidcProvider": EKS_PROVIDER}))
    assert of_type(mocks, OIDC) == {}
    assert of_type(mocks, "aws:iam/accessKey:AccessKey") == {}
    assert of_type(mocks, "aws:iam/user:User") == {}
    host = EKS_ISSUER.removeprefix("https://")
    statement = trust_of(mocks, "aws-euc1")
    assert statement["Principal"] == {"Federated": EKS_PROVIDER}
    assert statement["Condition"]["StringEquals"] == {f"{host}:aud": STS_AUDIENCE}


def test_an_eks_seed_by_kubeconfig_without_a_provider_gets_one_made_for_its_issuer() -> None:
    """GIVEN an existing aws seed naming its issuer alone WHEN registered THEN an IAM OIDC provider for it, no key."""
    mocks = registered("aws-example", existing("aws-example", {"url": EKS_ISSUER}))
    [(name, oidc)] = of_type(mocks, OIDC).items()
    assert name == "arbor-seed-aws-euc1-oidc"
    assert oidc["url"] == EKS_ISSUER and oidc["clientIdLists"] == [STS_AUDIENCE]
    assert of_type(mocks, "aws:iam/accessKey:AccessKey") == {}


def test_a_gke_seed_by_kubeconfig_gets_a_pool_trusting_its_issuer_and_no_key() -> None:
    """GIVEN an existing gcp seed naming its issuer WHEN registered THEN a pool provider of that issuer, no key."""
    mocks = registered("gcp-example", existing("gcp-example", {"url": GKE_ISSUER}))
    assert of_type(mocks, "gcp:serviceaccount/key:Key") == {}
    [provider] = of_type(mocks, "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider").values()
    assert provider["oidc"] == {"issuerUri": GKE_ISSUER, "allowedAudiences": ["arbor-seed:gcp-euw1"]}


@pytest.mark.parametrize("stack", ["aws-example", "gcp-example"])
def test_an_existing_seed_naming_no_issuer_keeps_a_key(stack: str) -> None:
    """GIVEN an existing seed without an issuer WHEN registered THEN its bucket's identity has a key, no trust."""
    plan = planned(stack, existing(stack, None))
    assert [s.backup.audience for s in plan.seeds if s.backup] == [None]
    mocks = registered(stack, existing(stack, None))
    key = "aws:iam/accessKey:AccessKey" if stack == "aws-example" else "gcp:serviceaccount/key:Key"
    assert len(of_type(mocks, key)) == 1
    assert of_type(mocks, OIDC) == {}
    assert of_type(mocks, "gcp:iam/workloadIdentityPool:WorkloadIdentityPool") == {}


def test_the_plan_gives_a_named_issuers_seed_workload_identity_for_its_bucket_and_machines() -> None:
    """GIVEN an existing aws seed naming its issuer WHEN planned THEN its bucket's and its shoots' audiences are set."""
    landscape = existing("aws-example", {"url": EKS_ISSUER})
    shoots = stack_landscape("aws-example")["shoots"]
    landscape["shoots"] = [s for s in shoots if s.get("seed") == "aws-euc1"]
    plan = plan_landscape(parse_landscape(landscape), "aws-example")
    [seed] = plan.seeds
    assert seed.cluster.issuer == EKS_ISSUER and seed.cluster.oidc_provider is None
    assert seed.backup is not None and seed.backup.audience == STS_AUDIENCE
    assert plan.shoots and {s.machine_audience for s in plan.shoots} == {STS_AUDIENCE}


def _seed_cluster(provider: str, cluster: Any) -> dict[str, Any]:
    """A landscape of one seed of `provider` whose cluster is `cluster`."""
    zone = {"aws": ("eu-central-1", "eu-central-1a"), "gcp": ("europe-west1", "europe-west1-b")}[provider]
    seed = {"name": "s1", "provider": provider, "region": zone[0], "zones": [zone[1]], "cluster": cluster}
    return {"garden": {}, "seeds": [seed]}


@pytest.mark.parametrize(
    ("provider", "cluster", "line"),
    [
        ("aws", {"issuer": {"url": EKS_ISSUER}},
         "landscape.seeds[0].cluster: issuer: only an existing cluster's (kubeconfigSecret) is given; "
         "arbor knows its own"),
        ("aws", {"kubeconfigSecret": "k", "issuer": {"url": "http://oidc.example.com"}},
         "landscape.seeds[0].cluster.issuer.url: 'http://oidc.example.com' is not an https URL "
         "(https://<host>[:<port>][/<path>], no query)"),
        ("aws", {"kubeconfigSecret": "k", "issuer": {"url": f"{EKS_ISSUER}/"}},
         "landscape.seeds[0].cluster.issuer.url: ends in '/': write it as its tokens' `iss` claim says it, without "
         "the trailing slash"),
        ("aws", {"kubeconfigSecret": "k", "issuer": {"url": EKS_ISSUER, "oidcProvider": "arn:aws:iam::1:role/x"}},
         "landscape.seeds[0].cluster.issuer: oidcProvider: 'arn:aws:iam::1:role/x' is not an IAM OIDC provider's "
         "ARN, e.g. arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-central-1.amazonaws.com/id/EXAMPLE"),
        ("aws", {"kubeconfigSecret": "k", "issuer": {"url": "https://oidc.example.com", "oidcProvider": EKS_PROVIDER}},
         "landscape.seeds[0].cluster.issuer: oidcProvider: names another issuer's provider; "
         "https://oidc.example.com's ends in oidc-provider/oidc.example.com"),
        ("aws", {"kubeconfigSecret": "k", "issuer": {"uri": EKS_ISSUER}},
         "landscape.seeds[0].cluster.issuer.uri: unknown field; did you mean 'url'?"),
        ("gcp", {"kubeconfigSecret": "k", "issuer": EKS_ISSUER},
         "landscape.seeds[0].cluster.issuer: must be a mapping (key: value), not a value of 79 characters"),
    ],
)  # fmt: skip
def test_a_wrong_issuer_is_refused_at_its_field(provider: str, cluster: Any, line: str) -> None:
    """GIVEN a seed's issuer written wrong WHEN its fields are parsed THEN one line names the field and the reason."""
    with pytest.raises(SpecError) as refused:
        parse_fields(_seed_cluster(provider, cluster))
    assert line in refused.value.lines


def test_an_oidc_provider_on_a_gcp_seed_is_refused_by_the_checks() -> None:
    """GIVEN a gcp seed's issuer naming an IAM OIDC provider WHEN checked THEN the line says it is aws's alone."""
    issuer = {"url": EKS_ISSUER, "oidcProvider": EKS_PROVIDER}
    spec = parse_fields(_seed_cluster("gcp", {"kubeconfigSecret": "k", "issuer": issuer}))
    assert (
        "landscape.seeds[0].cluster.issuer.oidcProvider: an IAM OIDC provider names an aws seed's issuer; on gcp "
        "arbor makes the trust from the URL alone"
    ) in cross_checks(spec)


def test_a_garden_has_no_issuer_field() -> None:
    """GIVEN a garden cluster with an issuer WHEN parsed THEN refused: only a seed's tokens are trusted by clouds."""
    with pytest.raises(SpecError) as refused:
        parse_fields({"garden": {"cluster": {"kubeconfigSecret": "k", "issuer": {"url": EKS_ISSUER}}}})
    assert any(line.startswith("landscape.garden.cluster.issuer: unknown field") for line in refused.value.lines)


def test_a_gke_seeds_s3_bucket_trusts_the_seeds_issuer_through_a_provider_made_for_it_and_no_key() -> None:
    """GIVEN a GKE seed arbor makes with its bucket on S3 WHEN registered THEN an IAM OIDC provider of its issuer.

    GKE's issuer is public, so AWS can trust it as it trusts an EKS cluster's: the role `<bucket>` is assumed with
    the seed's `etcd-backup` tokens for `sts.amazonaws.com`, and no access key exists.
    """
    landscape = across("gcp-example", {"provider": "aws", "region": "eu-central-1"})
    [seed] = planned("gcp-example", landscape).seeds
    assert seed.backup is not None and seed.backup.audience == STS_AUDIENCE
    mocks = registered("gcp-example", landscape)
    assert of_type(mocks, "aws:iam/accessKey:AccessKey") == {}
    [(name, oidc)] = of_type(mocks, OIDC).items()
    issuer = (
        f"https://container.googleapis.com/v1/projects/my-project/locations/europe-west1/clusters/{seed.cluster.name}"
    )
    assert name == "arbor-seed-gcp-euw1-oidc" and oidc["url"] == issuer
    statement = trust_of(mocks, "gcp-euw1")
    host = issuer.removeprefix("https://")
    assert statement["Condition"]["StringEquals"] == {f"{host}:aud": STS_AUDIENCE}


def test_an_eks_seeds_gcs_bucket_trusts_the_seeds_issuer_through_a_pool_of_its_own_and_no_key() -> None:
    """GIVEN an EKS seed arbor makes with its bucket on Cloud Storage WHEN registered THEN a pool of its issuer."""
    landscape = across("aws-example", {"provider": "gcp", "region": "europe-west1"})
    [seed] = planned("aws-example", landscape).seeds
    assert seed.backup is not None and seed.backup.audience == "arbor-seed:aws-euc1"
    mocks = registered("aws-example", landscape)
    assert of_type(mocks, "gcp:serviceaccount/key:Key") == {}
    [pool] = of_type(mocks, "gcp:iam/workloadIdentityPool:WorkloadIdentityPool").values()
    assert pool["workloadIdentityPoolId"].startswith("arbor-bk-")
    [provider] = of_type(mocks, "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider").values()
    assert provider["oidc"] == {"issuerUri": OIDC_ISSUER, "allowedAudiences": ["arbor-seed:aws-euc1"]}
