"""Derived names and the plan: deterministic, DNS-1123, within length limits."""

from __future__ import annotations

import pytest

from components import naming
from components.checks import parse_landscape
from components.checks.support import unsupported
from components.kinds import ProviderType
from components.plan.planner import plan_landscape
from components.plan.values import ClusterValues
from components.spec.fields import DNS_LABEL, SpecError
from tests.unit.spec_cases import base


@pytest.mark.parametrize(
    ("name", "limit", "expected"),
    [
        ("short", 63, "short"),
        ("a" * 63, 63, "a" * 63),
        ("a" * 64, 63, "a" * 54 + "-" + naming.short_hash("a" * 64)),
        ("abc-def-ghi", 10, "a-" + naming.short_hash("abc-def-ghi")),
    ],
)
def test_capped_keeps_short_names_and_hashes_long_ones(name: str, limit: int, expected: str) -> None:
    """GIVEN a name and a limit WHEN capped THEN it fits, and long names keep a hash of the whole."""
    assert naming.capped(name, limit) == expected
    assert len(naming.capped(name, limit)) <= limit


def test_long_names_that_share_a_prefix_stay_distinct() -> None:
    """GIVEN two long names with the same prefix WHEN capped THEN they differ."""
    assert naming.capped("x" * 70 + "a") != naming.capped("x" * 70 + "b")


@pytest.mark.parametrize(
    ("stack", "key", "expected"),
    [
        ("local", "garden", "local-garden"),
        ("local", "seed/local-1", "local-seed-local-1"),
        ("IT-1", "garden", "it-1-garden"),
    ],
)
def test_local_cluster_names(stack: str, key: str, expected: str) -> None:
    """GIVEN a stack and a cluster key WHEN named THEN the name is a DNS label that includes the stack."""
    name = naming.local_cluster_name(stack, key)
    assert name == expected and DNS_LABEL.fullmatch(name)


def test_plan_of_the_local_landscape() -> None:
    """GIVEN a garden and two seeds WHEN planned THEN every cluster has its key and stack-scoped name."""
    spec = parse_landscape(
        {
            "garden": {"cluster": {"nodes": 2}},
            "seeds": [
                {"name": "s1", "provider": "local"},
                {
                    "name": "s2",
                    "provider": "gcp",
                    "region": "europe-west1",
                    "zones": ["europe-west1-b"],
                    "cluster": {"nodes": 0},
                },
            ],
        }
    )
    plan = plan_landscape(spec, "dev")
    assert plan.garden.cluster == ClusterValues("garden", ProviderType.LOCAL, "dev-garden", 2)
    assert [s.cluster for s in plan.seeds] == [
        ClusterValues("seed/s1", ProviderType.LOCAL, "dev-seed-s1", 1),
        ClusterValues("seed/s2", ProviderType.GCP, "dev-seed-s2", 0, region="europe-west1", zones=("europe-west1-b",)),
    ]
    assert plan_landscape(spec, "dev") == plan  # deterministic


@pytest.mark.parametrize(
    ("change", "lines"),
    [
        ({}, []),
        ({"seeds": [{**base()["seeds"][0], "cluster": {"kubeconfigSecret": "k"}}]}, []),
        (
            {"garden": {**base()["garden"], "cluster": {"kubeconfigSecret": "k"}}},
            ["landscape.garden.cluster.kubeconfigSecret: a local garden is created, not connected to"],
        ),
        ({"shoots": [{**base()["shoots"][2]}]}, []),
        (
            {"garden": {**base()["garden"], "provider": "aws", "region": "eu-central-1", "zones": ["eu-central-1a"]},
             "seeds": [], "shoots": [{**base()["shoots"][2]}]},
            ["landscape.shoots[0].selfHosted: a self-hosted shoot on aws is reached at api.<shoot>.<project>.<domain>, "
             "a load balancer in front of its control-plane machine: set landscape.garden.dns"],
        ),
        (
            {"seeds": [{"name": "local-1", "provider": "gcp", "region": "europe-west1",
                        "zones": ["europe-west1-b", "europe-west1-c"], "backup": {"provider": "gcp"}}],
             "shoots": [{**base()["shoots"][0], "workers": [{**base()["shoots"][0]["workers"][0], "zones": []}]}]},
            ["landscape.shoots[0].seed: a shoot on a gcp seed is reached at api.<shoot>.<project>.<domain>: set "
             "landscape.garden.dns (the zone arbor writes its records in)"],
        ),
        (
            {"garden": {**base()["garden"], "dns": {"provider": "google-clouddns", "zone": "z",
                                                    "domain": "example.com"}},
             "seeds": [{"name": "local-1", "provider": "gcp", "region": "europe-west1", "zones": ["europe-west1-b"],
                        "backup": {"provider": "gcp"}}],
             "shoots": [{**base()["shoots"][0], "workers": [{**base()["shoots"][0]["workers"][0], "zones": []}]}]},
            [],
        ),
        (
            {"garden": {**base()["garden"], "dns": {"provider": "google-clouddns", "zone": "z",
                                                    "domain": "example.com"}},
             "seeds": [{"name": "local-1", "provider": "gcp", "region": "europe-west1", "zones": ["europe-west1-b"]}],
             "shoots": [{**base()["shoots"][0], "workers": [{**base()["shoots"][0]["workers"][0], "zones": []}]}]},
            ["landscape.seeds[0].backup: seed 'local-1' hosts shoots (shoot--dev--web) but has no backup bucket, so "
             "their etcd would live only as long as its volume: give it backup: {provider: gcp}"],
        ),
        (
            {"seeds": [{"name": "local-1", "provider": "aws", "region": "eu-west-1", "zones": ["eu-west-1a"],
                        "networks": {"ipFamilies": ["IPv4", "IPv6"], "pods": "10.0.0.0/12",
                                     "services": "10.16.0.0/16"}}],
             "shoots": []},
            ["landscape.seeds[0].networks.ipFamilies: a seed on aws is created IPv4, IPv6 seeds are not supported "
             "yet: use [IPv4] (it hosts dual-stack shoots, as Gardener's seeds do)"],
        ),
        ({"seeds": [{**base()["seeds"][0], "backup": {"provider": "local"}}]}, []),
        (
            # A sharded landscape's seed stacks keep their buckets in the garden stack's one store.
            {"seeds": [{**base()["seeds"][0], "backup": {"provider": "local"}}], "stacks": "perSeed"},
            [],
        ),
        (
            {"seeds": [{**base()["seeds"][0], "backup": {"provider": "aws", "region": "eu-west-1"}}]},
            ["landscape.seeds[0].backup.provider: a local seed's buckets are in the local object store (MinIO on "
             "loopback): use local, not aws"],
        ),
        (
            {"seeds": [{"name": "local-1", "provider": "gcp", "region": "europe-west1", "zones": ["europe-west1-b"],
                        "backup": {"provider": "local"}}],
             "shoots": []},
            ["landscape.seeds[0].backup.provider: the local object store listens on this machine's loopback, which "
             "etcd-backup-restore on a gcp seed cannot reach: use gcp or aws"],
        ),
        (
            {"seeds": [{"name": "local-1", "provider": "gcp", "region": "europe-west1", "zones": ["europe-west1-b"],
                        "backup": {"provider": "aws", "region": "eu-west-1"}}],
             "shoots": []},
            [],
        ),
        (
            {"seeds": [{**base()["seeds"][0], "extensions": [{"name": "a", "type": "t"},
                                                              {"name": "b", "type": "t", "gardenAccess": True}]}]},
            [],
        ),
    ],
)  # fmt: skip
def test_unsupported_requests_are_refused_before_any_change(change: dict[str, object], lines: list[str]) -> None:
    """GIVEN a valid landscape asking for what arbor does not run yet WHEN planned THEN each request is a line."""
    raw = {**base(), "shoots": [base()["shoots"][0], base()["shoots"][1]], **change}
    assert unsupported(plan_landscape(parse_landscape(raw), "local")) == lines


def test_a_seeds_backup_bucket_is_named_once_for_its_domain_and_stack() -> None:
    """GIVEN seeds with and without a bucket name WHEN planned THEN the default is arbor-<seed>-<hash> in its region.

    The hash covers the landscape's DNS domain and the stack: another landscape's seed of the same name gets another
    bucket name (bucket names are global), and planning again gives the same one.
    """
    seeds = [
        {"name": "s1", "provider": "gcp", "region": "europe-west1", "zones": ["europe-west1-b"],
         "backup": {"provider": "gcp"}},
        {"name": "s2", "provider": "aws", "region": "eu-west-1", "zones": ["eu-west-1a"],
         "backup": {"provider": "aws", "region": "eu-central-1", "bucket": "team-backups"}},
        {"name": "s3", "provider": "aws", "region": "eu-west-1", "zones": ["eu-west-1a"]},
    ]  # fmt: skip
    dns = {"provider": "aws-route53", "zone": "Z1", "domain": "example.com"}
    spec = parse_landscape({"garden": {**base()["garden"], "dns": dns}, "seeds": seeds})
    one, two, three = (s.backup for s in plan_landscape(spec, "prod").seeds)
    assert one is not None and two is not None and three is None
    assert one.bucket == f"arbor-s1-{naming.short_hash('example.com', 'prod', 's1', length=10)}"
    assert (one.provider, one.region, one.seed) == (ProviderType.GCP, "europe-west1", "s1")
    assert (two.bucket, two.region, two.provider) == ("team-backups", "eu-central-1", ProviderType.AWS)
    other = parse_landscape({"garden": {**base()["garden"], "dns": {**dns, "domain": "example.org"}}, "seeds": seeds})
    assert plan_landscape(other, "prod").seeds[0].backup != one
    assert plan_landscape(spec, "prod").seeds[0].backup == one


def test_a_long_seed_name_still_gives_a_bucket_name_of_63_characters() -> None:
    """GIVEN the longest seed name WHEN its bucket is named THEN it is a valid bucket name ending in its hash."""
    name = naming.backup_bucket("s" * 63, "example.com", "prod")
    assert len(name) <= 63 and DNS_LABEL.fullmatch(name)
    assert name.endswith(naming.short_hash("example.com", "prod", "s" * 63, length=10))


def test_two_seeds_naming_one_bucket_are_refused() -> None:
    """GIVEN two seeds naming the same bucket WHEN checked THEN the second is refused at its bucket field."""
    seeds = [
        {"name": n, "provider": "gcp", "region": "europe-west1", "zones": ["europe-west1-b"],
         "backup": {"provider": "gcp", "bucket": "shared-backups"}}
        for n in ("s1", "s2")
    ]  # fmt: skip
    with pytest.raises(SpecError) as refused:
        parse_landscape({"garden": base()["garden"], "seeds": seeds})
    assert refused.value.lines == [
        "landscape.seeds[1].backup.bucket: 'shared-backups' is seeds[0]'s bucket already (a bucket holds one seed's "
        "backups): name another"
    ]
