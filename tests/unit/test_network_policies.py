"""Network policy rules as plain functions: records of the real renderers, and cloud resources' properties."""

from __future__ import annotations

from typing import Any

import pytest
from arbor_policies import network as rules

from components.checks import parse_landscape
from components.plan.planner import plan_landscape
from components.render import api
from tests.unit.spec_cases import base


def records(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(type token, props) of every Shoot record the landscape registers."""
    plan = plan_landscape(parse_landscape(doc), "test")
    return [(rules.SHOOT_RECORD, api.shoot_record(s)) for s in plan.shoots]


def landscape() -> dict[str, Any]:
    """The base landscape with shoot 1 (db) moved apart from shoot 0 (web)."""
    doc = base()
    doc["shoots"][1]["networking"] = {"nodes": "10.251.0.0/16", "pods": "100.80.0.0/12", "services": "100.112.0.0/13"}
    return doc


def test_overlapping_shoots_of_one_seed_violate() -> None:
    """GIVEN two shoots of one seed with the same ranges (the spec allows it) WHEN checked THEN each overlap shows."""
    doc = base()  # web and db share every range in the base landscape
    problems = rules.overlapping_shoots(records(doc))
    assert "shoots garden-dev/web and garden-ops/db on seed 'local-1' overlap: nodes 10.250.0.0/16 and nodes " \
           "10.250.0.0/16" in problems  # fmt: skip
    assert len(problems) == 3


def test_disjoint_shoots_pass() -> None:
    """GIVEN shoots with disjoint ranges WHEN checked THEN nothing is reported."""
    assert rules.overlapping_shoots(records(landscape())) == []


@pytest.mark.parametrize(
    ("resource_type", "props", "violates"),
    [
        (rules.AWS_INGRESS_RULE, {"cidrIpv4": "0.0.0.0/0", "fromPort": 22}, True),
        (rules.AWS_INGRESS_RULE, {"cidrIpv6": "::/0", "description": "nodeports"}, True),
        (rules.AWS_INGRESS_RULE, {"cidrIpv4": "0.0.0.0/0", "description": "load balancer: http"}, False),
        (rules.AWS_INGRESS_RULE, {"cidrIpv4": "10.250.0.0/16"}, False),
        (rules.AWS_SECURITY_GROUP, {"ingress": [{"cidrBlocks": ["0.0.0.0/0"]}]}, True),
        (rules.AWS_SECURITY_GROUP, {"ingress": [{"ipv6CidrBlocks": ["::/0"], "description": "Health checks"}]}, False),
        (rules.GCP_FIREWALL, {"sourceRanges": ["::/0"]}, True),
        (rules.GCP_FIREWALL, {"sourceRanges": ["0.0.0.0/0"], "direction": "EGRESS"}, False),
        (rules.GCP_FIREWALL, {"sourceRanges": ["35.191.0.0/16"], "description": "health checks"}, False),
        ("aws:ec2/vpc:Vpc", {"cidrBlock": "0.0.0.0/0"}, False),
    ],
)
def test_no_ingress_from_the_world(resource_type: str, props: dict[str, Any], violates: bool) -> None:
    """GIVEN a rule WHEN checked THEN only world ingress not described as health check or load balancer violates."""
    message = rules.world_ingress(resource_type, props)
    assert (message is not None) == violates
    if message:
        assert message.startswith("ingress from ")


@pytest.mark.parametrize(
    ("props", "violates"),
    [
        ({"ipv6CidrBlock": "2600:1f18:abcd:ef00::/64"}, False),
        ({"ipv6CidrBlock": "2600:1f18:abcd:ef00::/80"}, True),
        ({"ipv6CidrBlock": "2600:1f18:abcd:ef00::/56"}, True),
        ({"cidrBlock": "10.250.0.0/19"}, False),
    ],
)
def test_ipv6_subnets_are_64(props: dict[str, Any], violates: bool) -> None:
    """GIVEN an aws subnet WHEN checked THEN an IPv6 block other than a /64 violates."""
    assert (rules.ipv6_subnet_not_64(rules.AWS_SUBNET, props) is not None) == violates
