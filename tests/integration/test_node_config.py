"""Node configuration on the real engine: what the preview says a change does to running nodes.

The preview names the units a change restarts, or says the pool rolls; a deleted OSC Secret is restored.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import preview_summary
import pytest
import yaml

from tests.integration.engine import Stack, kubectl, preview_with

pytestmark = pytest.mark.integration
OSC = "pulumi-python:dynamic/arbor:OperatingSystemConfig"


def osc_step(preview: dict[str, Any], shoot: str = "dev-web") -> dict[str, Any] | None:
    """The OSC step of a shoot's pool-a, if the preview changes it."""
    for step in preview.get("steps") or []:
        if step["op"] != "same" and step["urn"].endswith(f"arbor-shoot-{shoot}-osc-pool-a"):
            return dict(step)
    return None


def changed_units(step: dict[str, Any]) -> set[str]:
    """Units whose effective hash differs between the step's old and new inputs."""
    old, new = step["oldState"]["inputs"]["unitHashes"], step["newState"]["inputs"]["unitHashes"]
    return {u for u, h in new.items() if old.get(u) != h}


def test_node_agent_upgrade_restarts_only_node_agent(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN a new node-agent version WHEN previewed THEN only gardener-node-agent.service restarts, nothing rolls."""
    preview = preview_with(local_stack, tmp_path, {"nodeAgent": {"version": "v1.150.0"}})
    step = osc_step(preview)
    assert step is not None and step["op"] == "update"
    assert changed_units(step) == {"gardener-node-agent.service"}
    assert step["oldState"]["inputs"]["secretName"] == step["newState"]["inputs"]["secretName"]
    assert not [s for s in preview["steps"] if s["op"] in ("replace", "create-replacement", "delete")]
    summary = preview_summary.render(preview)
    assert "`arbor-shoot-dev-web` pool `pool-a`: restarts gardener-node-agent.service" in summary


@pytest.mark.parametrize(
    ("pool", "units"),
    [
        ({"kubelet": {"maxPods": 64}}, {"kubelet.service"}),
        # A mirror is in the OSC's criConfig; node-agent writes its hosts.toml, read at each pull: nothing restarts.
        ({"cri": {"registryMirrors": {"docker.io": "https://mirror.example.com"}}}, set()),
        ({"sysctls": {"net.core.somaxconn": "4096"}}, {"systemd-sysctl.service"}),
    ],
    ids=["kubelet flag", "registry mirror", "sysctl"],
)
def test_pool_change_restarts_exactly_its_unit(
    local_stack: Stack, tmp_path: Path, pool: dict[str, Any], units: set[str]
) -> None:
    """GIVEN a change of one pool setting WHEN previewed THEN exactly its units restart and the pool does not roll."""
    config = yaml.safe_load((local_stack.config_dir / f"Pulumi.{local_stack.name}.yaml").read_text())
    workers = [{**config["config"]["arbor:landscape"]["shoots"][0]["workers"][0], **pool}]
    preview = preview_with(local_stack, tmp_path, {"workers": workers})
    step = osc_step(preview)
    assert step is not None and changed_units(step) == units
    assert step["oldState"]["inputs"]["secretName"] == step["newState"]["inputs"]["secretName"]
    assert not [s for s in preview["steps"] if s["op"] != "same" and "user-data" in s["urn"]]


def test_minor_upgrade_rolls_the_pool(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN a shoot moving to a new Kubernetes minor WHEN previewed THEN its pool gets a new OSC key: it rolls."""
    config_path = local_stack.config_dir / f"Pulumi.{local_stack.name}.yaml"
    config = yaml.safe_load(config_path.read_text())
    assert config["config"]["arbor:landscape"]["shoots"][1]["kubernetes"]["version"] == "1.33.6"
    config["config"]["arbor:landscape"]["shoots"][1]["kubernetes"] = {"version": "1.34.4"}
    path = tmp_path / "minor.yaml"
    path.write_text(yaml.safe_dump(config))
    preview = json.loads(local_stack.run("preview", "--json", "--config-file", str(path)).stdout)
    step = osc_step(preview, "ops-db")
    assert step is not None
    assert step["oldState"]["inputs"]["secretName"] != step["newState"]["inputs"]["secretName"]
    assert "`arbor-shoot-ops-db` pool `pool-a`: **rolls**" in preview_summary.render(preview)


def test_a_label_changes_no_node(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN a new shoot label WHEN previewed THEN the OSC and the user data are untouched."""
    preview = preview_with(local_stack, tmp_path, {"labels": {"team": "web", "tier": "frontend"}})
    assert osc_step(preview) is None
    assert not [s for s in preview["steps"] if s["op"] != "same" and "user-data" in s["urn"]]
    assert "### node restarts" not in preview_summary.render(preview)


def test_deleted_osc_secret_is_drift_and_up_restores_it(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN the pool's OSC Secret deleted in the shoot WHEN refreshed THEN it is gone from state; `up` writes it."""
    shoot = local_stack.outputs()["kubeconfigs"]["shoot/dev/web"]
    names = kubectl(shoot, tmp_path, "get", "secrets", "-n", "kube-system", "-l", "worker.gardener.cloud/pool=pool-a",
                    "-o", "name").split()  # fmt: skip
    assert len(names) == 1 and names[0].startswith("secret/gardener-node-agent-pool-a-")
    path = tmp_path / "shoot"
    path.write_text(shoot)
    subprocess.run(["kubectl", "--kubeconfig", str(path), "delete", "-n", "kube-system", names[0]], check=True)
    refresh = local_stack.run("refresh", "--yes", "--skip-preview", "--suppress-progress")
    assert f"{OSC} arbor-shoot-dev-web-osc-pool-a deleted" in refresh.stdout, refresh.stdout
    local_stack.up()
    assert kubectl(shoot, tmp_path, "get", "-n", "kube-system", names[0], "-o", "name").strip() == names[0]
