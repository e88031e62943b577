"""The pull-request summary of a preview: per layer, replacements and deletions flagged."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[2] / "hack"))
import preview_summary

P = "urn:pulumi:local::arbor::"
LANDSCAPE = P + "arbor:landscape:Landscape::arbor"
GARDEN = P + "arbor:landscape:Landscape$arbor:garden:Garden::arbor-garden"
SEED = P + "arbor:landscape:Landscape$arbor:seed:Seed::arbor-seed-local-1"


def step(op: str, urn: str, type_: str, parent: str, **extra: Any) -> dict[str, Any]:
    """One preview step as `pulumi preview --json` writes it."""
    state = {"urn": urn, "type": type_, "parent": parent}
    key = "oldState" if op in ("delete", "delete-replaced") else "newState"
    return {"op": op, "urn": urn, key: state, **extra}


def preview() -> dict[str, Any]:
    """A preview with a create, an update, a replacement (three steps) and a delete across two layers."""
    cluster = SEED.replace(
        "::arbor-seed-local-1", "$pulumi-python:dynamic/arbor:LocalCluster::arbor-seed-local-1-cluster"
    )
    node = GARDEN.replace("::arbor-garden", "$kubernetes:core/v1:Node::arbor-garden-node-1")
    old_node = GARDEN.replace("::arbor-garden", "$kubernetes:core/v1:Node::arbor-garden-node-0")
    provider = GARDEN.replace("::arbor-garden", "$pulumi:providers:kubernetes::arbor-garden-k8s")
    return {
        "steps": [
            step("same", LANDSCAPE, "arbor:landscape:Landscape", ""),
            step("same", GARDEN, "arbor:garden:Garden", LANDSCAPE),
            step("same", SEED, "arbor:seed:Seed", LANDSCAPE),
            step("create", node, "kubernetes:core/v1:Node", GARDEN),
            step("update", provider, "pulumi:providers:kubernetes", GARDEN, diffReasons=["kubeconfig"]),
            step("delete", old_node, "kubernetes:core/v1:Node", GARDEN),
            step("delete-replaced", cluster, "pulumi-python:dynamic/arbor:LocalCluster", SEED),
            step(
                "replace",
                cluster,
                "pulumi-python:dynamic/arbor:LocalCluster",
                SEED,
                replaceReasons=["kubernetesVersion"],
            ),
            step("create-replacement", cluster, "pulumi-python:dynamic/arbor:LocalCluster", SEED),
        ]
    }


def test_summary_groups_by_layer_and_flags_replacements(golden: Callable[[str, str], None]) -> None:
    """GIVEN a preview with changes in two layers WHEN rendered THEN the Markdown matches the golden file."""
    golden("preview-summary.md", preview_summary.render(preview(), stack="local"))


def test_replacement_counts_once() -> None:
    """GIVEN a replacement spelled as three steps WHEN rendered THEN the seed shows one replace."""
    text = preview_summary.render(preview())
    assert "| seed arbor-seed-local-1 | 0 | 0 | 1 | 0 |" in text
    assert "| garden | 1 | 1 | 0 | 1 |" in text
    assert "**2 replacement(s) or deletion(s): read them before merging.**" in text


def test_no_changes() -> None:
    """GIVEN a preview of unchanged resources WHEN rendered THEN it says so."""
    steps = [step("same", LANDSCAPE, "arbor:landscape:Landscape", "")]
    assert preview_summary.render({"steps": steps}, "local") == "## arbor preview: stack `local`\n\nNo changes.\n"


def test_errors_of_a_failed_preview_are_the_program_lines() -> None:
    """GIVEN a preview that stopped on an invalid spec WHEN its errors are read THEN the spec lines come back."""
    preview = {
        "diagnostics": [
            {"severity": "error", "message": "invalid landscape:\nlandscape.seeds[0].zones: duplicate 'a'\n"},
            {"severity": "error", "message": "an unhandled error occurred: program exited with non-zero exit code: 1"},
            {"severity": "warning", "message": "ignored"},
        ]
    }
    assert preview_summary.errors(preview) == ["invalid landscape:", "landscape.seeds[0].zones: duplicate 'a'"]


def test_network_tables_logged_by_the_shoots_end_the_summary() -> None:
    """GIVEN a preview whose shoots logged their network tables WHEN rendered THEN a networks section shows them."""
    from components.kinds import ProviderType
    from components.plan import network
    from tests.unit.test_network_plan import FAMILIES, values

    table = network.table(network.plan_network(values(ProviderType.AWS, FAMILIES["dual"])))
    diagnostics = [
        {"severity": "info", "message": network.PLAN_PREFIX + table + "\n"},
        {"severity": "info", "message": "something else"},
    ]
    text = preview_summary.render({"steps": preview()["steps"], "diagnostics": diagnostics}, "local")
    assert text.endswith(f"### networks\n\n```\n{table}\n```\n")
    assert text.count("```") == 2


def test_a_changed_static_pod_manifest_is_named_as_a_restart() -> None:
    """GIVEN a control-plane pool's OSC whose kube-apiserver manifest changed WHEN summarised THEN it is named."""
    urn = P + "arbor:landscape:Landscape$arbor:shoot:Shoot$pulumi-python:dynamic/arbor:OperatingSystemConfig::"
    urn += "arbor-shoot-ops-root-osc-cp"
    manifest, etcd = "/etc/kubernetes/manifests/kube-apiserver.yaml", "/etc/kubernetes/manifests/etcd-main.yaml"
    old = {"secretName": "k", "unitHashes": {"kubelet.service": "a"}, "fileHashes": {manifest: "1", etcd: "2"}}
    new = {**old, "fileHashes": {manifest: "3", etcd: "2"}}
    osc = "pulumi-python:dynamic/arbor:OperatingSystemConfig"
    step = {
        "op": "update",
        "urn": urn,
        "oldState": {"type": osc, "inputs": old},
        "newState": {"type": osc, "inputs": new},
    }
    assert preview_summary.node_restarts([step]) == [
        "- `arbor-shoot-ops-root` pool `cp`: restarts nothing; static pods restart: kube-apiserver"
    ]


def test_credential_rotations_logged_by_the_program_are_a_section() -> None:
    """GIVEN a preview whose program logged a rotation plan WHEN rendered THEN a section shows it."""
    from components.render import pki

    message = pki.rotation_message("dev/web", {}, {"etcdCA": 1})
    assert message is not None and message.startswith("credential rotation of dev/web: restarts etcd-events")
    diagnostics = [{"severity": "info", "message": message + "\n"}]
    text = preview_summary.render({"steps": preview()["steps"], "diagnostics": diagnostics}, "local")
    assert f"### credential rotations\n\n```\n{message.removeprefix(pki.ROTATION_PREFIX)}\n```" in text
