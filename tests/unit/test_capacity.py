"""Inputs that once crashed `checks.check` (issue 14): each is now refused with its lines, before any plan is built."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.checks import RefusalError, check
from tests.unit.spec_cases import base, changed

S0 = "landscape.shoots[0]"


def _pools(*sizes: tuple[int, int], shoot: int = 0) -> dict[str, Any]:
    """The base landscape with shoot `shoot`'s pools replaced by pools of these (minimum, maximum)."""
    doc = base()
    pool = doc["shoots"][shoot]["workers"][0]
    doc["shoots"][shoot]["workers"] = [
        {**copy.deepcopy(pool), "name": f"pool-{j}", "minimum": low, "maximum": high}
        for j, (low, high) in enumerate(sizes)
    ]
    return doc


def _net(**ranges: Any) -> dict[str, Any]:
    """The base landscape with shoot 0's networking fields replaced."""
    doc = base()
    doc["shoots"][0]["networking"].update(ranges)
    return doc


def _on(provider: str, region: str) -> dict[str, Any]:
    """The base landscape with the garden (so the self-hosted shoot) on a cloud."""
    doc = base()
    doc["garden"].update(provider=provider, region=region, zones=[f"{region}-b" if provider == "gcp" else f"{region}b"])
    return doc


def _refused(raw: object) -> list[str]:
    """The lines `check` refuses `raw` with; fails on acceptance and on any other exception."""
    with pytest.raises(RefusalError) as err:
        check(raw, "local", dict)
    return err.value.lines


CASES: list[tuple[str, object, list[str]]] = [
    (
        "local pools over the local node limit",
        _pools((25, 25), (30, 30)),
        [
            f"{S0}.workers: the pools' minimums add up to 55 nodes (pool-0 25, pool-1 30), more than the 50 a local "
            "cluster runs: lower their minimum"
        ],
    ),
    (
        "huge minimum",
        _pools((10**9, 10**9)),
        [
            f"{S0}.workers[0].minimum: must be at most 5000, not 1000000000",
            f"{S0}.workers[0].maximum: must be at most 5000, not 1000000000",
        ],
    ),
    (
        "pools over Kubernetes' node limit",
        _pools(*[(0, 5000)] * 2),
        [
            f"{S0}.workers: the pools' maximums add up to 10000 nodes, more than the 5000 Kubernetes runs in one "
            "cluster: lower their maximum",
            f"{S0}.networking.pods: 100.64.0.0/12 holds the pod ranges of 4096 nodes (/24 each), not the 10000 of the "
            "pools' maximums: use a /10 or larger, or lower their maximum",
        ],
    ),
    (
        "pods cannot hold the maximum nodes",
        _net(pods="100.64.0.0/24"),
        [
            f"{S0}.networking.pods: 100.64.0.0/24 holds the pod ranges of 1 node (/24 each), not the 2 of the pools' "
            "maximums: use a /23 or larger, or lower their maximum"
        ],
    ),
    (
        "pods smaller than the default node mask",
        _net(pods="100.64.0.64/26"),
        [
            f"{S0}.networking.pods: 100.64.0.64/26 is smaller than a node's pod range (/24, the default of "
            "nodeMaskSizes.IPv4): use a /24 or larger, or set nodeMaskSizes.IPv4"
        ],
    ),
    (
        "nodes at the top of the address space",
        _net(nodes="255.255.255.254/31"),
        [
            f"{S0}.networking.nodes: 255.255.255.254/31 has room for no machine (its first 2 addresses and its last "
            "are reserved), not the 2 of the pools' maximums: use a /29 or larger, or lower their maximum"
        ],
    ),
    (
        "nodes cannot hold the machines",
        _net(nodes="10.250.0.0/30"),
        [
            f"{S0}.networking.nodes: 10.250.0.0/30 has room for 1 machine (its first 2 addresses and its last are "
            "reserved), not the 2 of the pools' maximums: use a /29 or larger, or lower their maximum"
        ],
    ),
    (
        "services too small for kube-apiserver",
        _net(services="100.104.0.0/30"),
        [
            f"{S0}.networking.services: 100.104.0.0/30 has 4 addresses, kube-apiserver needs at least 8: use a /29 "
            "or larger"
        ],
    ),
    (
        "pod ranges at the top of the IPv6 space",
        _net(
            ipFamilies=["IPv6"],
            nodes="fd00:10::/64",
            pods="fd00:20::/120",
            services="fd00:30::/112",
            nodeMaskSizes={"IPv6": 120},
        ),
        [
            f"{S0}.networking.ipFamilies: [IPv6] needs a seed with IPv6 (its primary family), but seed 'local-1' "
            "has [IPv4]: add IPv6 to the seed's networks.ipFamilies (with its ranges) or host the shoot on a seed "
            "that has it",
            f"{S0}.networking.pods: fd00:20::/120 holds the pod ranges of 1 node (/120 each), not the 2 of the pools' "
            "maximums: use a /119 or larger, or lower their maximum",
        ],
    ),
    (
        "absurdly long volume size",
        changed("shoots[0].workers[0].volume", {"size": "9" * 5000 + "Gi"}),
        [f"{S0}.workers[0].volume.size: not a size in GiB from 1Gi to 65536Gi, like 50Gi"],
    ),
    (
        "volume over the largest disk",
        changed("shoots[0].workers[0].volume", {"size": "65537Gi"}),
        [f"{S0}.workers[0].volume.size: not a size in GiB from 1Gi to 65536Gi, like 50Gi"],
    ),
    (
        "a rotation counter past int32",
        changed("shoots[0].credentials", {"rotation": {"ca": 10**5000}}),
        [f"{S0}.credentials.rotation.ca: must be at most 2147483647, not a number of more than 40 digits"],
    ),
    (
        "a node mask far out of bounds",
        _net(nodeMaskSizes={"IPv4": -(10**12)}),
        [f"{S0}.networking.nodeMaskSizes.IPv4: must be at least 0, not -1000000000000"],
    ),
    (
        "a node mask of 5000 digits",
        _net(nodeMaskSizes={"IPv4": 10**5000}),
        [f"{S0}.networking.nodeMaskSizes.IPv4: must be at most 128, not a number of more than 40 digits"],
    ),
    (
        "a Kubernetes version of 5000 digits",
        changed("shoots[0].kubernetes.version", "1." + "3" * 5000 + ".4"),
        [f"{S0}.kubernetes.version: a value of 5004 characters is not a version <major>.<minor>.<patch>"],
    ),
    (
        "an admin kubeconfig expiration of 5000 digits",
        changed("shoots[0].adminKubeconfig", {"expiration": "9" * 5000 + "h"}),
        [f"{S0}.adminKubeconfig.expiration: a value of 5001 characters is not a duration like 1h, 30m or 1h30m"],
    ),
]


@pytest.mark.parametrize(("case", "raw", "lines"), CASES, ids=[c[0] for c in CASES])
def test_refused_before_the_plan(case: str, raw: object, lines: list[str]) -> None:
    """GIVEN input that once crashed WHEN checked THEN it is refused with exactly these lines."""
    assert _refused(raw) == lines


@pytest.mark.parametrize(("provider", "region"), [("gcp", "europe-west1"), ("aws", "eu-west-1")])
def test_self_hosted_shoot_on_a_cloud_garden_without_dns_is_refused(provider: str, region: str) -> None:
    """GIVEN the garden on a cloud without DNS WHEN its self-hosted shoot is checked THEN the DNS line, no crash."""
    assert _refused(_on(provider, region)) == [
        f"{S0.replace('0', '2')}.selfHosted: a self-hosted shoot on {provider} is reached at "
        "api.<shoot>.<project>.<domain>, a load balancer in front of its control-plane machine: "
        "set landscape.garden.dns"
    ]


@pytest.mark.parametrize(("provider", "region"), [("gcp", "europe-west1"), ("aws", "eu-west-1")])
def test_self_hosted_shoot_on_a_cloud_runs_one_control_plane_machine(provider: str, region: str) -> None:
    """GIVEN a self-hosted cloud shoot: 3 control-plane machines, a second pool WHEN checked THEN only the first."""
    doc = _on(provider, region)
    doc["garden"]["dns"] = {"provider": "aws-route53" if provider == "aws" else "google-clouddns", "zone": "z",
                            "domain": "example.com"}  # fmt: skip
    root = doc["shoots"][2]
    root["workers"] = [{**root["workers"][0], "minimum": 3, "maximum": 3},
                       {**root["workers"][0], "name": "pool-b", "controlPlane": False}]  # fmt: skip
    at = S0.replace("0", "2")
    assert _refused(doc) == [
        f"{at}.workers[0].minimum: a self-hosted shoot on {provider} runs its control plane on exactly one machine "
        "(one etcd member; minimum and maximum 1), not 3..3",
    ]
    root["workers"][0].update(minimum=1, maximum=1)
    shoot = next(s for s in check(doc, "local", dict).plan.shoots if s.self_hosted)
    assert [(p.name, p.control_plane) for p in shoot.workers] == [(root["workers"][0]["name"], True), ("pool-b", False)]


def test_aws_nodes_range_split_per_zone() -> None:
    """GIVEN an aws self-hosted shoot whose nodes range cannot split per zone WHEN checked THEN refused at nodes."""
    doc = _on("aws", "eu-west-1")
    doc["garden"]["zones"] = [f"eu-west-1{z}" for z in "abc"]
    doc["shoots"] = [doc["shoots"][2]]
    doc["shoots"][0]["networking"]["nodes"] = "10.250.0.0/26"
    assert _refused(doc)[0] == (
        f"{S0}.networking.nodes: 10.250.0.0/26 cannot be split into workers and utility subnets for 3 zones on aws "
        "(each at least a /28, the smallest AWS subnet): use a /24 or larger"
    )


def test_cloud_shoot_minimums_are_not_bound_by_the_local_limit() -> None:
    """GIVEN a hosted shoot on a gcp seed with 60 machines WHEN checked THEN no pydantic dump about local nodes."""
    doc = _pools((60, 60))
    doc["seeds"][0].update(provider="gcp", region="europe-west1", zones=["europe-west1-b"], backup={"provider": "gcp"})
    doc["shoots"][0]["workers"][0]["zones"] = ["europe-west1-b"]
    doc["shoots"] = doc["shoots"][:1]
    # No credentials named: arbor makes them (cloudCredentials: managed), so only the seed is refused.
    assert _refused(doc) == [
        f"{S0}.seed: a shoot on a gcp seed is reached at api.<shoot>.<project>.<domain>: set landscape.garden.dns "
        "(the zone arbor writes its records in)"
    ]
