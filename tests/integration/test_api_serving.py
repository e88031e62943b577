"""ApiServing with the real engine: the gate before a self-hosted cloud shoot's API, against real API servers.

A cloud machine cannot boot here; the gate is the part of that flow the engine runs, so it is checked on the local
landscape's real kube-apiservers: it exists once an API answers /readyz, and an API that never answers fails the
update with the server named, before anything after the gate is applied.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import yaml

from tests.integration.engine import ROOT, Stack, make_stack, remove_stack, require_environment

pytestmark = pytest.mark.integration

PROGRAM = """
import pulumi
import pulumi_command as command

from components.reconciler.api_serving import ApiServing

config = pulumi.Config()
gate = ApiServing("gate", shoot="platform/edge", kubeconfig=config.require_secret("kubeconfig"),
                  machine=config.require("machine"), timeout_s=int(config.require("timeout")))
after = command.local.Command("after-gate", create="printf applied", opts=pulumi.ResourceOptions(depends_on=[gate]))
pulumi.export("after", after.stdout)
"""


def free_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_gate_opens_on_a_serving_api_and_an_api_that_never_serves_fails_the_update_naming_it(
    tmp_path: Path, local_stack: Stack
) -> None:
    """GIVEN the garden's real API, then an address nothing serves WHEN `up` THEN applied, then refused by name."""
    require_environment()
    (tmp_path / "Pulumi.yaml").write_text(
        "name: gate-check\nruntime:\n  name: python\n  options:\n"
        f"    toolchain: pip\n    virtualenv: {ROOT / '.venv'}\n"
    )
    (tmp_path / "__main__.py").write_text(PROGRAM)
    garden = local_stack.outputs()["kubeconfigs"]["garden"]
    config = {"gate-check:kubeconfig": garden, "gate-check:machine": "i-1", "gate-check:timeout": "60"}
    # The dynamic provider is imported by reference in the engine's provider process.
    stack = make_stack(tmp_path, tmp_path, config, env={"PYTHONPATH": str(ROOT)})
    try:
        stack.up()
        assert stack.outputs()["after"] == "applied"
        # A new machine whose API never answers: the gate fails the update, naming the server; nothing after it runs.
        unreachable = yaml.safe_load(garden)
        server = f"https://127.0.0.1:{free_port()}"
        unreachable["clusters"][0]["cluster"]["server"] = server
        stack.set_config({"gate-check:kubeconfig": yaml.safe_dump(unreachable), "gate-check:machine": "i-2",
                          "gate-check:timeout": "10"})  # fmt: skip
        failed = stack.run("up", "--yes", "--skip-preview", check=False)
        assert failed.returncode != 0
        assert f"platform/edge: the API at {server} did not answer /readyz within 10 s" in failed.stdout + failed.stderr
    finally:
        remove_stack(stack)
