"""gardener-node-agent's own decoder and validation on the configs arbor renders (hack/nodeagent-validate).

The program is built from gardener's module by hack/tools.sh (cached); a failed build fails these tests.
"""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path
from typing import Any

import pytest

from components.checks import parse_landscape
from components.kinds import SUPPORTED_MINORS
from components.plan.bootstrap import provision_osc
from components.plan.nodeagent_release import release
from components.plan.nodes import node_values
from components.plan.osc import Inline, OperatingSystemConfig
from components.plan.planner import plan_landscape
from components.plan.values import NodeValues
from components.render.nodeagent import reconcile_osc
from tests.integration.engine import ROOT
from tests.unit.spec_cases import base, dual_stack_seed

pytestmark = pytest.mark.integration
# A PEM-shaped bundle: the pinned release takes it from the file `apiServer.caFile` names, older ones inline.
CA_BUNDLE = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUYXJib3I=\n-----END CERTIFICATE-----\n"
DUAL = {
    "ipFamilies": ["IPv4", "IPv6"],
    "nodes": ["10.250.0.0/16", "fd00:10:250::/56"],
    "pods": ["100.64.0.0/12", "fd00:10:64::/56"],
    "services": ["100.104.0.0/13", "fd00:10:104::/108"],
}


@pytest.fixture(scope="module")
def validator() -> Path:
    """The nodeagent-validate binary, built (or taken from the cache) by hack/tools.sh."""
    proc = subprocess.run(
        ["hack/tools.sh", "nodeagent-validate"], cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False
    )
    assert proc.returncode == 0, f"hack/tools.sh nodeagent-validate failed:\n{proc.stdout}\n{proc.stderr}"
    return ROOT / ".bin" / "nodeagent-validate"


def validate(validator: Path, configs: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Runs the validator on each config, written to a file named by its key."""
    for name, text in configs.items():
        (tmp_path / name).write_text(text)
    return subprocess.run(
        [str(validator), *(str(tmp_path / n) for n in configs)], capture_output=True, text=True, check=False
    )


def landscape(provider: str, dual_stack: bool) -> dict[str, Any]:
    """The base landscape on `provider`'s dual-stack seed; every shoot dual-stack when asked.

    A cloud assigns a hosted shoot's IPv6 ranges, so there it names only its families and IPv4 ranges (the
    self-hosted shoot runs on the garden's provider, local).
    """
    doc = base()
    if dual_stack:
        for shoot in doc["shoots"]:
            on_cloud = provider != "local" and "seed" in shoot
            v4 = {k: v[0] for k, v in DUAL.items() if k != "ipFamilies"}
            shoot["networking"] = {**v4, "ipFamilies": DUAL["ipFamilies"]} if on_cloud else DUAL
    return dual_stack_seed(doc, provider)


def config_of(osc: OperatingSystemConfig, node: NodeValues) -> str:
    """node-agent's config file as an OSC carries it, where the node's node-agent release reads it."""
    content = next(f.content for f in osc.files if f.path == release(node.node_agent_version).config_path)
    assert isinstance(content, Inline) and content.encoding == ""
    return content.data


def rendered(nodes: list[NodeValues]) -> dict[str, str]:
    """The reconcile and provision configs of each node, with and without a CA bundle."""
    configs = {}
    for i, node in enumerate(nodes):
        for ca in ("", CA_BUNDLE):
            v = dataclasses.replace(node, ca_bundle=ca)
            tag = f"{i}-{node.pool}-{'ca' if ca else 'noca'}"
            configs[f"{tag}-reconcile.yaml"] = config_of(reconcile_osc(v), v)
            configs[f"{tag}-provision.yaml"] = config_of(provision_osc(v), v)
    return configs


@pytest.mark.parametrize("dual_stack", [False, True], ids=["ipv4", "dual-stack"])
@pytest.mark.parametrize("provider", ["local", "aws", "gcp"])
def test_rendered_configs_pass_node_agents_decoding_and_validation(
    validator: Path, tmp_path: Path, provider: str, dual_stack: bool
) -> None:
    """GIVEN every pool of a landscape on a provider WHEN node-agent reads its configs THEN none is refused."""
    plan = plan_landscape(parse_landscape(landscape(provider, dual_stack)), "test")
    nodes = [node_values(shoot, pool) for shoot in plan.shoots for pool in shoot.workers]
    assert len(nodes) == 3
    configs = rendered(nodes)
    proc = validate(validator, configs, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(configs) == 12


def test_every_minor_arbor_takes_is_one_node_agent_supports(validator: Path, tmp_path: Path) -> None:
    """GIVEN a pool on each Kubernetes minor arbor accepts WHEN node-agent validates its config THEN it passes."""
    plan = plan_landscape(parse_landscape(base()), "test")
    node = node_values(plan.shoots[0], plan.shoots[0].workers[0])
    nodes = [dataclasses.replace(node, kubernetes_version=f"{a}.{b}.1") for a, b in SUPPORTED_MINORS]
    proc = validate(validator, rendered(nodes), tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


BROKEN: list[tuple[str, str, str]] = [
    ("the CA inline, as releases before v1.147 take it", "apiServer: {server: https://api, caBundle: Q0EtMQ==}\n"
     "controllers: {operatingSystemConfig: {secretName: s, kubernetesVersion: 1.34.4}}\n",
     'strict decoding: strict decoding error: unknown field "apiServer.caBundle"'),
    ("no kubernetesVersion", "controllers: {operatingSystemConfig: {secretName: s}}\n",
     "controllers.operatingSystemConfig.kubernetesVersion: Required value"),
    ("an unsupported minor", "controllers: {operatingSystemConfig: {secretName: s, kubernetesVersion: 1.20.0}}\n",
     "controllers.operatingSystemConfig.kubernetesVersion: Invalid value"),
    ("no secret name", "controllers: {operatingSystemConfig: {kubernetesVersion: 1.34.4}}\n",
     "controllers.operatingSystemConfig.secretName: Required value"),
    ("a misspelt field", "controllers: {operatingSystemConfig: {secretName: s, kubernetesVersion: 1.34.4}}\n"
     "apiServer: {server: https://api, cafile: /ca.crt}\n",
     'strict decoding: strict decoding error: unknown field "apiServer.cafile"'),
]  # fmt: skip


@pytest.mark.parametrize(("case", "body", "error"), BROKEN, ids=[b[0] for b in BROKEN])
def test_validator_refuses_a_broken_config(validator: Path, tmp_path: Path, case: str, body: str, error: str) -> None:
    """GIVEN a config node-agent would refuse (or silently misread) WHEN validated THEN it fails, naming why."""
    head = "apiVersion: nodeagent.config.gardener.cloud/v1alpha1\nkind: NodeAgentConfiguration\n"
    proc = validate(validator, {"broken.yaml": head + body}, tmp_path)
    assert proc.returncode == 1
    assert f"{tmp_path / 'broken.yaml'}: " in proc.stdout and error in proc.stdout, proc.stdout
