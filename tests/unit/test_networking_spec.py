"""Shoot networking as Gardener validates it: a table of invalid networks with their exact lines, and valid ones."""

from __future__ import annotations

from typing import Any

import pytest

from components.checks import parse_landscape
from components.spec.fields import SpecError
from tests.unit.spec_cases import base, dual_stack_seed

N = "landscape.shoots[0].networking"
DUAL = {
    "ipFamilies": ["IPv4", "IPv6"],
    "nodes": ["10.250.0.0/16", "fd00:10:250::/56"],
    "pods": ["100.64.0.0/12", "fd00:10:64::/56"],
    "services": ["100.104.0.0/13", "fd00:10:104::/108"],
}
IPV6 = {
    "ipFamilies": ["IPv6"],
    "nodes": "fd00:10:250::/56",
    "pods": "fd00:10:64::/56",
    "services": "fd00:10:104::/108",
}
CLOUD_DUAL = {"ipFamilies": ["IPv4", "IPv6"], "nodes": "10.250.0.0/16", "pods": "100.64.0.0/12",
              "services": "100.104.0.0/13"}  # fmt: skip


def network(changes: dict[str, Any], start: dict[str, Any] | None = None, provider: str = "local") -> dict[str, Any]:
    """The base landscape on a dual-stack seed, shoot 0's networking `start` (IPv4 by default) with `changes`."""
    doc = base()
    net = dict(start) if start is not None else dict(doc["shoots"][0]["networking"])
    doc["shoots"][0]["networking"] = {k: v for k, v in {**net, **changes}.items() if v is not None}
    return dual_stack_seed(doc, provider)


def with_pool(doc: dict[str, Any], **kubelet: Any) -> dict[str, Any]:
    """`doc` with kubelet settings on shoot 0's first pool."""
    doc["shoots"][0]["workers"][0]["kubelet"] = kubelet
    return doc


INVALID: list[tuple[str, dict[str, Any], list[str]]] = [
    # families
    ("IPv6 first", network({"ipFamilies": ["IPv6", "IPv4"]}, DUAL),
     [f"{N}.ipFamilies: [IPv6, IPv4] is not one of [IPv4], [IPv6], [IPv4, IPv6]"]),
    ("no family", network({"ipFamilies": []}),
     [f"{N}.ipFamilies: [] is not one of [IPv4], [IPv6], [IPv4, IPv6]"]),
    ("IPv6 twice", network({"ipFamilies": ["IPv6", "IPv6"]}, IPV6),
     [f"{N}.ipFamilies: [IPv6, IPv6] is not one of [IPv4], [IPv6], [IPv4, IPv6]"]),
    ("three families", network({"ipFamilies": ["IPv4", "IPv6", "IPv4"]}, DUAL),
     [f"{N}.ipFamilies: [IPv4, IPv6, IPv4] is not one of [IPv4], [IPv6], [IPv4, IPv6]"]),
    # range syntax
    ("IPv6 not canonical", network({"pods": ["100.64.0.0/12", "fd00:10:64::1/56"]}, DUAL),
     [f"{N}.pods: 'fd00:10:64::1/56' is not canonical, use fd00:10:64::/56"]),
    ("IPv6 not a CIDR", network({"services": ["100.104.0.0/13", "fd00::zz/108"]}, DUAL),
     [f"{N}.services: 'fd00::zz/108' is not a CIDR"]),
    ("IPv6 spelled long", network({"nodes": ["10.250.0.0/16", "fd00:0010:0250::/56"]}, DUAL),
     [f"{N}.nodes: 'fd00:0010:0250::/56' is not canonical, use fd00:10:250::/56"]),
    ("three ranges", network({"nodes": ["10.250.0.0/16", "fd00:10:250::/56", "10.0.0.0/8"]}, DUAL),
     [f"{N}.nodes: 3 ranges, at most one per IP family"]),
    # ranges and families
    ("IPv6 range on IPv4", network({"pods": ["100.64.0.0/12", "fd00:10:64::/56"]}),
     [f"{N}.pods: fd00:10:64::/56 is not of ipFamilies [IPv4]"]),
    ("IPv4 range on IPv6", network({"services": "100.104.0.0/13"}, IPV6),
     [f"{N}.services: 100.104.0.0/13 is not of ipFamilies [IPv6]",
      f"{N}.services: an IPv6 range is required (ipFamilies has IPv6)"]),
    ("dual without IPv6 pods", network({"pods": "100.64.0.0/12"}, DUAL),
     [f"{N}.pods: an IPv6 range is required (ipFamilies has IPv6)"]),
    ("dual without IPv4 nodes", network({"nodes": "fd00:10:250::/56"}, DUAL),
     [f"{N}.nodes: an IPv4 range is required (ipFamilies has IPv4)"]),
    ("two IPv4 pods ranges", network({"pods": ["100.64.0.0/12", "100.80.0.0/12"]}, DUAL),
     [f"{N}.pods: one range per family, got 100.64.0.0/12, 100.80.0.0/12",
      f"{N}.pods: an IPv6 range is required (ipFamilies has IPv6)"]),
    ("ranges out of order", network({"services": ["fd00:10:104::/108", "100.104.0.0/13"]}, DUAL),
     [f"{N}.services: ranges must follow the order of ipFamilies [IPv4, IPv6]"]),
    # masks
    ("IPv4 node mask too large", network({"nodeMaskSizes": {"IPv4": 15}}),
     [f"{N}.nodeMaskSizes.IPv4: /15 is not between /16 and /28"]),
    ("IPv4 node mask too small", network({"nodeMaskSizes": {"IPv4": 29}}),
     [f"{N}.nodeMaskSizes.IPv4: /29 is not between /16 and /28",
      "landscape.shoots[0].workers[0].kubelet.maxPods: 110 pods do not fit a /29 IPv4 node range (6 addresses): "
      "lower maxPods or nodeMaskSizes.IPv4"]),
    ("IPv6 node mask too large", network({"nodeMaskSizes": {"IPv6": 56}}, DUAL),
     [f"{N}.nodeMaskSizes.IPv6: /56 is not between /64 and /124"]),
    ("IPv6 node mask too small", network({"nodeMaskSizes": {"IPv6": 125}}, DUAL),
     [f"{N}.nodeMaskSizes.IPv6: /125 is not between /64 and /124",
      "landscape.shoots[0].workers[0].kubelet.maxPods: 110 pods do not fit a /125 IPv6 node range (6 addresses): "
      "lower maxPods or nodeMaskSizes.IPv6"]),
    ("mask for a missing family", network({"nodeMaskSizes": {"IPv6": 64}}),
     [f"{N}.nodeMaskSizes.IPv6: IPv6 is not one of ipFamilies [IPv4]"]),
    ("node mask wider than pods", network({"pods": "100.64.0.0/20", "nodeMaskSizes": {"IPv4": 18}}),
     [f"{N}.nodeMaskSizes.IPv4: /18 is larger than the pods range 100.64.0.0/20"]),
    ("max pods beyond the node range", with_pool(network({"nodeMaskSizes": {"IPv4": 26}}), maxPods=110),
     ["landscape.shoots[0].workers[0].kubelet.maxPods: 110 pods do not fit a /26 IPv4 node range (62 addresses): "
      "lower maxPods or nodeMaskSizes.IPv4"]),
    ("default max pods beyond an IPv6 node range", network({"nodeMaskSizes": {"IPv6": 122}}, DUAL),
     ["landscape.shoots[0].workers[0].kubelet.maxPods: 110 pods do not fit a /122 IPv6 node range "
      "(62 addresses): lower maxPods or nodeMaskSizes.IPv6"]),
    # reserved ranges
    ("Gardener's kube-apiserver mapping", network({"pods": "240.0.0.0/12"}),
     [f"{N}.pods: 240.0.0.0/12 overlaps 240.0.0.0/8, reserved (Gardener's kube-apiserver mapping range)"]),
    ("Gardener's seed pod mapping", network({"nodes": "244.10.0.0/16"}),
     [f"{N}.nodes: 244.10.0.0/16 overlaps 244.0.0.0/8, reserved (Gardener's seed pod mapping range)"]),
    ("loopback", network({"services": "127.0.0.0/16"}),
     [f"{N}.services: 127.0.0.0/16 overlaps 127.0.0.0/8, reserved (loopback)"]),
    ("link-local", network({"nodes": "169.254.0.0/16"}),
     [f"{N}.nodes: 169.254.0.0/16 overlaps 169.254.0.0/16, reserved (link-local)"]),
    ("multicast", network({"pods": "224.0.0.0/12"}),
     [f"{N}.pods: 224.0.0.0/12 overlaps 224.0.0.0/4, reserved (multicast)"]),
    ("IPv6 link-local", network({"nodes": ["10.250.0.0/16", "fe80::/56"]}, DUAL),
     [f"{N}.nodes: fe80::/56 overlaps fe80::/10, reserved (link-local)"]),
    ("NAT64 prefix", network({"services": ["100.104.0.0/13", "64:ff9b::/108"]}, DUAL),
     [f"{N}.services: 64:ff9b::/108 overlaps 64:ff9b::/96, reserved (the NAT64 prefix)"]),
    ("Gardener's VPN range", network({"services": "fd8f:6d53:b97a:1::/108"}, IPV6),
     [f"{N}.services: fd8f:6d53:b97a:1::/108 overlaps fd8f:6d53:b97a:1::/96, reserved (Gardener's VPN range)"]),
    ("IPv6 multicast", network({"pods": "ff00::/56"}, IPV6),
     [f"{N}.pods: ff00::/56 overlaps ff00::/8, reserved (multicast)"]),
    ("IPv4 services too large", network({"services": "100.96.0.0/11", "pods": "100.64.0.0/12"}),
     [f"{N}.services: 100.96.0.0/11 is too large for kube-apiserver, use /12 or smaller"]),
    ("IPv6 services too large", network({"services": ["100.104.0.0/13", "fd00:10:104::/64"]}, DUAL),
     [f"{N}.services: fd00:10:104::/64 is too large for kube-apiserver, use /108 or smaller"]),
    # overlaps
    ("IPv6 pods overlap nodes", network({"pods": ["100.64.0.0/12", "fd00:10:250::/64"]}, DUAL),
     [f"{N}.pods: fd00:10:250::/64 overlaps the shoot's nodes fd00:10:250::/56",
      # A /64 holds one node's pod range at the default IPv6 node mask, the pools' maximums are two.
      f"{N}.pods: fd00:10:250::/64 holds the pod ranges of 1 node (/64 each), not the 2 of the pools' maximums: "
      "use a /63 or larger, or lower their maximum"]),
    ("IPv6 overlap with an IPv6 seed", {**network({}, DUAL), "seeds": [
        {**base()["seeds"][0], "networks": {"ipFamilies": ["IPv4", "IPv6"], "pods": ["10.0.0.0/12", "fd00:10::/32"],
                                           "services": ["10.16.0.0/16", "fd00:20::/108"]}}]},
     [f"{N}.nodes: fd00:10:250::/56 overlaps seed 'local-1' pods fd00:10::/32",
      f"{N}.pods: fd00:10:64::/56 overlaps seed 'local-1' pods fd00:10::/32",
      f"{N}.services: fd00:10:104::/108 overlaps seed 'local-1' pods fd00:10::/32"]),
    # providers
    ("GCP IPv6-only", network({}, IPV6, provider="gcp"),
     [f"{N}.ipFamilies: GCP does not run IPv6-only shoots, use [IPv4, IPv6]",
      f"{N}.nodes: IPv6 ranges are assigned by Google (each subnet's /64); leave them out",
      f"{N}.pods: IPv6 ranges are assigned by Google (each subnet's /64); leave them out",
      f"{N}.services: IPv6 ranges are assigned by Google (each subnet's /64); leave them out"]),
    ("IPv6 range given on aws", network({}, DUAL, provider="aws"),
     [f"{N}.{kind}: IPv6 ranges are assigned by Amazon (the VPC's /56); leave them out"
      for kind in ("nodes", "pods", "services")]),
    ("IPAM pool on gcp", network({"ipv6IpamPool": "ipam-pool-0abc"}, CLOUD_DUAL, provider="gcp"),
     [f"{N}.ipv6IpamPool: only an aws shoot with IPv6 takes its /56 from an IPAM pool"]),
    ("IPAM pool without IPv6", network({"ipv6IpamPool": "ipam-pool-0abc"}, provider="aws"),
     [f"{N}.ipv6IpamPool: only an aws shoot with IPv6 takes its /56 from an IPAM pool"]),
    # seed networks
    ("seed IPv6 range on an IPv4 seed", {**base(), "seeds": [
        {**base()["seeds"][0], "networks": {"pods": ["10.0.0.0/12", "fd00:10::/48"], "services": "10.16.0.0/16"}}]},
     ["landscape.seeds[0].networks.pods: fd00:10::/48 is not of ipFamilies [IPv4]"]),
    ("dual-stack seed without IPv6 services", {**base(), "seeds": [
        {**base()["seeds"][0], "networks": {"ipFamilies": ["IPv4", "IPv6"], "pods": ["10.0.0.0/12", "fd00:10::/48"],
                                           "services": "10.16.0.0/16"}}]},
     ["landscape.seeds[0].networks.services: an IPv6 range is required (ipFamilies has IPv6)"]),
]  # fmt: skip


@pytest.mark.parametrize(("case", "raw", "lines"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_network(case: str, raw: dict[str, Any], lines: list[str]) -> None:
    """GIVEN an invalid network WHEN the landscape is parsed THEN exactly these lines name field and reason."""
    with pytest.raises(SpecError) as err:
        parse_landscape(raw)
    assert err.value.lines == lines


def test_the_network_table_has_at_least_thirty_cases() -> None:
    """The networking issue asks for thirty or more validation cases."""
    assert len(INVALID) >= 30


VALID: list[tuple[str, dict[str, Any]]] = [
    ("local dual-stack", network({}, DUAL)),
    ("local IPv6-only", network({}, IPV6)),
    ("ranges as one-item lists", network({"pods": ["100.64.0.0/12"]})),
    ("gcp dual-stack with IPv4 ranges only", network({}, CLOUD_DUAL, provider="gcp")),
    ("aws IPv6-only without ranges", network({"nodes": None, "pods": None, "services": None}, {"ipFamilies": ["IPv6"]},
                                            provider="aws")),
    ("aws dual-stack from an IPAM pool", network({"ipv6IpamPool": "ipam-pool-0abc"}, CLOUD_DUAL, provider="aws")),
    ("small node masks with few pods", with_pool(network({"nodeMaskSizes": {"IPv4": 26, "IPv6": 120}}, DUAL),
                                                 maxPods=60)),
]  # fmt: skip


@pytest.mark.parametrize(("case", "raw"), VALID, ids=[c[0] for c in VALID])
def test_valid_network(case: str, raw: dict[str, Any]) -> None:
    """GIVEN a valid network WHEN parsed THEN its families and ranges are kept as given."""
    net = parse_landscape(raw).shoots[0].networking
    given = raw["shoots"][0]["networking"]
    assert [f.value for f in net.ip_families] == given.get("ipFamilies", ["IPv4"])
    pods = given.get("pods", [])
    assert list(net.pods) == ([pods] if isinstance(pods, str) else pods)
