"""The pull-request summary of a preview: per layer, replacements and deletions flagged."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[2] / "hack"))
import preview_events
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


def test_kube_dns_in_the_kubelet_config_restarts_kubelet_without_a_roll() -> None:
    """GIVEN a pool's OSC before and after its kubelets learn kube-dns WHEN summarised THEN kubelet restarts.

    Only kubelet restarts, and the OSC key stays (no roll of the pool).
    """
    import dataclasses

    from components.plan import osc as oscs
    from components.plan.bootstrap import secret_name
    from components.render import nodeagent
    from tests.unit.test_nodeagent import BASE

    def inputs(v: Any) -> dict[str, Any]:
        rendered = nodeagent.reconcile_osc(v)
        return {
            "secretName": secret_name(v),
            "unitHashes": oscs.unit_hashes(rendered),
            "fileHashes": oscs.file_hashes(rendered),
        }

    urn = P + "arbor:landscape:Landscape$arbor:shoot:Shoot$pulumi-python:dynamic/arbor:OperatingSystemConfig::"
    urn += "arbor-shoot-dev-web-osc-pool-a"
    osc = "pulumi-python:dynamic/arbor:OperatingSystemConfig"
    before, after = dataclasses.replace(BASE, cluster_dns=()), BASE
    change = {
        "op": "update",
        "urn": urn,
        "oldState": {"type": osc, "inputs": inputs(before)},
        "newState": {"type": osc, "inputs": inputs(after)},
    }
    expected = "- `arbor-shoot-dev-web` pool `pool-a`: restarts kubelet.service"
    assert preview_summary.node_restarts([change]) == [expected]
    # A configuration made from what the same update changes: its hashes unknown in the preview, its key known.
    pending = {**inputs(after), "unitHashes": preview_summary.UNKNOWN, "fileHashes": preview_summary.UNKNOWN}
    unknown = {**change, "newState": {"type": osc, "inputs": pending}}
    assert preview_summary.node_restarts([unknown]) == [
        "- `arbor-shoot-dev-web` pool `pool-a`: known after `up` (its configuration is made from what the update "
        "changes)"
    ]
    rolled = {**change, "newState": {"type": osc, "inputs": {**pending, "secretName": "gardener-node-agent-x"}}}
    assert "**rolls**" in preview_summary.node_restarts([rolled])[0]


def test_credential_rotations_logged_by_the_program_are_a_section() -> None:
    """GIVEN a preview whose program logged a rotation plan WHEN rendered THEN a section shows it."""
    from components.render import pki

    message = pki.rotation_message("dev/web", {}, {"etcdCA": 1})
    assert message is not None and message.startswith("credential rotation of dev/web: restarts etcd-events")
    diagnostics = [{"severity": "info", "message": message + "\n"}]
    text = preview_summary.render({"steps": preview()["steps"], "diagnostics": diagnostics}, "local")
    assert f"### credential rotations\n\n```\n{message.removeprefix(pki.ROTATION_PREFIX)}\n```" in text


def stream(preview_: dict[str, Any], *extra: dict[str, Any]) -> list[dict[str, Any]]:
    """The events `pulumi preview --json` streams for a preview's steps, then `extra` events."""
    events: list[dict[str, Any]] = []
    for s in preview_["steps"]:
        meta = {"op": s["op"], "urn": s["urn"], "new": s.get("newState"), "old": s.get("oldState")}
        meta |= {"diffs": s.get("diffReasons"), "keys": s.get("replaceReasons")}
        events.append({"sequence": len(events), "resourcePreEvent": {"metadata": meta, "planning": True}})
    return events + [{"sequence": len(events) + i, **e} for i, e in enumerate(extra)]


def policy(name: str, level: str, resource: str, message: str) -> dict[str, Any]:
    """A policy event as the engine streams it: the description, then the rule's message."""
    urn = P + f"kubernetes:core/v1:Secret::{resource}"
    text = f"What the policy enforces.\n{message}\n"
    return {"policyEvent": {"resourceUrn": urn, "message": text, "policyName": name, "enforcementLevel": level}}


def test_a_streamed_preview_renders_as_its_digest() -> None:
    """GIVEN the events of a preview WHEN their digest is rendered THEN it reads as the digest of the same preview."""
    events = stream(preview(), {"diagnosticEvent": {"prefix": "debug: ", "message": "x", "severity": "debug"}})
    text = "\n".join(json.dumps(e) for e in events)
    assert preview_events.is_stream(text) and not preview_events.is_stream(json.dumps(preview()))
    digest = preview_events.digest(preview_events.parse(text))
    assert digest["diagnostics"] == []
    assert preview_summary.render(digest, "local") == preview_summary.render(preview(), "local")


def test_policy_findings_are_a_section_per_policy() -> None:
    """GIVEN advisory findings and an unchecked resource WHEN summarised THEN each policy lists its resources."""
    events = stream(
        preview(),
        policy("shoot-owner-labels", "advisory", "db-record", "shoot garden-ops/db has no label team"),
        policy("x", "advisory", "pod", "can't run policy 'x' from policy pack 'arbor@v0.1.0' during preview: ..."),
    )
    found = preview_events.violations(events)
    text = preview_summary.summary(preview_events.digest(events), found, "local")
    assert text.endswith(
        "### policies\n\n- **[advisory] shoot-owner-labels**: 1 resource(s)\n"
        "  - `db-record`: shoot garden-ops/db has no label team\n"
        "- 1 resource(s) not checked by some policies: their values are known only after `up`\n"
    )


def test_a_mandatory_violation_fails_the_summary_with_its_message() -> None:
    """GIVEN a preview stopped by a mandatory policy WHEN summarised THEN the policy and its message are the report."""
    events = stream(
        preview(),
        policy("admin-kubeconfig-lifetime", "mandatory", "web-admin", "admin kubeconfig web-admin is valid for 24h"),
        {"diagnosticEvent": {"prefix": "error: ", "message": "preview failed\n", "severity": "error"}},
    )
    found = preview_events.violations(events)
    digest = preview_events.digest(events)
    assert preview_summary.summary(digest, found, "local") == (
        "## arbor preview: stack `local`: failed\n\nThe preview stopped; fix these before merging:\n\n```\n"
        "[mandatory] admin-kubeconfig-lifetime: web-admin: admin kubeconfig web-admin is valid for 24h\n```\n"
    )


def test_a_sharded_landscape_is_one_summary_with_a_row_per_stack() -> None:
    """GIVEN the previews of a garden stack and a seed stack WHEN summed up THEN one table, totals, then each."""
    failed = {"diagnostics": [{"severity": "error", "message": "error: landscape.shoots[0].seed: refused"}]}
    parts: list[tuple[str, dict[str, Any], list[preview_events.Violation]]] = [
        ("prod", preview(), []),
        ("prod.local-1", preview(), []),
        ("prod.local-2", failed, []),
    ]
    text = preview_summary.landscape_summary("prod", parts)
    assert text.startswith("## arbor preview: landscape `prod`, 3 stacks\n")
    assert "| `prod` | 1 | 1 | 1 | 1 | 0 |" in text
    assert "| `prod.local-1` | 1 | 1 | 1 | 1 | 0 |" in text
    assert "| `prod.local-2` | failed |" in text
    assert "| **landscape** | **2** | **2** | **2** | **2** | **0** |" in text
    # Each stack's own summary follows, the failed one with its error.
    assert text.count("## arbor preview: stack `prod.local-1`") == 1
    assert "landscape.shoots[0].seed: refused" in text


def test_the_checks_notices_are_listed() -> None:
    """GIVEN a preview whose program logged a migration notice WHEN rendered THEN a section lists it, nothing else."""
    said = "landscape.shoots[0].seed: this update migrates dev/web's control plane from seed local-1 to local-2"
    diagnostics = [
        {"severity": "info", "message": said + "\n"},
        {"severity": "info", "message": "something else\n"},
        {"severity": "warning", "message": "landscape.garden: a warning\n"},
    ]
    text = preview_summary.render({**preview(), "diagnostics": diagnostics})
    assert text.split("### notices\n\n", 1)[1].split("\n\n", 1)[0] == f"- {said}"
