"""Dual-stack networks on the real engine: nodes of each family, refused changes, migration to dual-stack and back."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.engine import LOCAL_LANDSCAPE, Stack, kubectl

pytestmark = pytest.mark.integration
WEB_DUAL = {
    "ipFamilies": ["IPv4", "IPv6"],
    "nodes": ["10.250.0.0/16", "fd00:250::/56"],
    "pods": ["100.64.0.0/12", "fd00:64::/56"],
    "services": ["100.104.0.0/13", "fd00:104::/108"],
}


def nodes(stack: Stack, key: str, tmp_path: Path) -> list[dict[str, Any]]:
    """The shoot cluster's nodes as (pod CIDRs, InternalIPs)."""
    kubeconfig = stack.outputs()["kubeconfigs"][key]
    items = json.loads(kubectl(kubeconfig, tmp_path, "get", "nodes", "-o", "json"))["items"]
    return [
        {
            "podCIDRs": n["spec"].get("podCIDRs", []),
            "internal": [a["address"] for a in n["status"].get("addresses", []) if a["type"] == "InternalIP"],
        }
        for n in items
    ]


def with_web_networking(networking: dict[str, Any]) -> dict[str, Any]:
    """The local landscape with shoot dev/web's networking replaced."""
    landscape: dict[str, Any] = copy.deepcopy(LOCAL_LANDSCAPE)
    landscape["shoots"][0]["networking"] = networking
    return landscape


def test_dual_stack_shoot_nodes_have_an_address_and_pod_range_of_each_family(
    local_stack: Stack, tmp_path: Path
) -> None:
    """GIVEN the local stack WHEN the dual-stack shoot's nodes are read THEN each has IPv4 and IPv6 of its own."""
    assert nodes(local_stack, "shoot/ops/db", tmp_path) == [
        {"podCIDRs": ["100.80.0.0/24", "fd00:80::/64"], "internal": ["10.251.0.2", "fd00:251::2"]}
    ]
    assert "shoot--ops--db on local (local), ipFamilies [IPv4, IPv6]" in local_stack.outputs()["networkPlan"]


def test_a_refused_network_change_names_the_previous_value(local_stack: Stack) -> None:
    """GIVEN a deployed IPv4 shoot WHEN its pods range changes THEN the preview stops naming the deployed range."""
    local_stack.set_config({"arbor:landscape": with_web_networking({**LOCAL_LANDSCAPE["shoots"][0]["networking"],
                                                                   "pods": "100.66.0.0/16"})})  # fmt: skip
    try:
        proc = local_stack.run("preview", "--suppress-progress", check=False)
    finally:
        local_stack.set_config({"arbor:landscape": LOCAL_LANDSCAPE})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert (
        "landscape.shoots[0].networking.pods: cannot change the IPv4 range once set "
        "(it was 100.64.0.0/12, now 100.66.0.0/16)" in out
    ), out
    assert "Traceback" not in out


def test_migration_to_dual_stack_and_back_runs_in_place(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN the IPv4 shoot dev/web WHEN it becomes dual-stack and then IPv4 again THEN only its pool rolls.

    Nothing is replaced; the pool's zone gets a new class and user data (a node's pod ranges never change in place,
    so MCM replaces the machines, each new node at the lowest free address); the record, kube-apiserver and
    kube-controller-manager are updated with the IPv6 ranges.
    """
    local_stack.set_config({"arbor:landscape": with_web_networking(WEB_DUAL)})
    try:
        preview = local_stack.preview_json()
        changed = {s["urn"].rsplit("::", 1)[-1]: s["op"] for s in preview["steps"] if s["op"] not in ("same", "read")}
        # The pool's zone gets a new class and user data: its ObjectSet is updated, nothing is replaced.
        assert not [n for n, op in changed.items() if op == "replace"], changed
        assert changed["arbor-shoot-dev-web-workers-pool-a-z1"] == "update"
        assert {"arbor-shoot-dev-web-record", "arbor-shoot-dev-web-kube-apiserver"} <= set(changed)
        local_stack.up()
        assert nodes(local_stack, "shoot/dev/web", tmp_path) == [
            # The old node held the first address while the new one joined.
            {"podCIDRs": ["100.64.1.0/24", "fd00:64:0:1::/64"], "internal": ["10.250.0.3", "fd00:250::3"]}
        ]
        assert local_stack.outputs()["networks"]["dev/web"]["ipFamilies"] == ["IPv4", "IPv6"]
    finally:
        local_stack.set_config({"arbor:landscape": LOCAL_LANDSCAPE})
        local_stack.up()
    assert nodes(local_stack, "shoot/dev/web", tmp_path) == [
        {"podCIDRs": ["100.64.0.0/24"], "internal": ["10.250.0.2"]}
    ]
