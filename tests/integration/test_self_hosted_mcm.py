"""machine-controller-manager inside a self-hosted shoot, as arbor runs it on GCP and AWS: real MCM, real RBAC.

On a cloud, a self-hosted shoot's further pools are made by MCM in the shoot's own kube-system, one cluster for
control and target, its rights in the shoot bound to its ServiceAccount (components/render/machines.py). kwok runs
no pods, so here the real MCM and arbor's kwok sidecar run as processes against the local landscape's self-hosted
shoot with exactly that identity: a token of kube-system/machine-controller-manager from a real TokenRequest, for
both clusters. A pool's MachineDeployment in kube-system must then become a running Machine and a Node, with no
right beyond what arbor grants, and go again when the deployment is deleted.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from components.checks import parse_landscape
from components.plan.bootstrap import pool_user_data
from components.plan.network import local_node_ranges
from components.plan.nodes import POOL_LABEL, node_values, zone_deployments
from components.plan.planner import plan_landscape
from components.plan.values import ShootValues, ZoneDeployment
from components.providers.local import (
    CONTROL_KUBECONFIG,
    KWOK_SIDECAR_FLAGS,
    LOCAL_PROCESS_FLAGS,
    TARGET_KUBECONFIG,
    process_args,
)
from components.reconciler import local_process
from components.render import machine_crds, machine_pools, machine_providers, machines, service_account_issuer
from tests.integration.engine import LOCAL_LANDSCAPE, Stack, kube_items, kubectl

pytestmark = pytest.mark.integration
ROOT = "shoot/ops/root"
NS = "kube-system"
# A machine is made within seconds; its deletion waits out MCM's fixed requeues around the drain (bench/README.md).
SETTLE_S = 180.0


def _values(stack: Stack) -> tuple[ShootValues, ZoneDeployment, str]:
    """The local landscape's self-hosted shoot, one zone of a further pool of one machine, and its user data."""
    root = next(s for s in plan_landscape(parse_landscape(LOCAL_LANDSCAPE), stack.name).shoots if s.self_hosted)
    pool = dataclasses.replace(root.workers[0], name="worker", control_plane=False, minimum=1, maximum=1)
    node = node_values(root, pool)
    return root, zone_deployments(root, pool, node)[0], pool_user_data(node)


def _apply(kubeconfig: str, tmp_path: Path, objects: list[dict[str, Any]]) -> None:
    """Applies objects as arbor's admin does, server-side."""
    path = tmp_path / f"objects-{time.monotonic_ns()}.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    kubectl(kubeconfig, tmp_path, "apply", "--server-side", "--force-conflicts", "-f", str(path))


def _token_kubeconfig(admin: str, token: str) -> str:
    """The admin kubeconfig's cluster with a bearer token instead of its user."""
    config = yaml.safe_load(admin)
    config["users"] = [{"name": "mcm", "user": {"token": token}}]
    config["contexts"] = [{"name": "mcm", "context": {"cluster": config["clusters"][0]["name"], "user": "mcm"}}]
    config["current-context"] = "mcm"
    return yaml.safe_dump(config)


@pytest.fixture
def in_shoot_mcm(local_stack: Stack, tmp_path: Path) -> Iterator[tuple[str, Path, ShootValues, ZoneDeployment, str]]:
    """MCM's objects in the shoot and MCM with the kwok sidecar running as its ServiceAccount; all gone afterwards."""
    admin = local_stack.outputs()["kubeconfigs"][ROOT]
    root, zone, user_data = _values(local_stack)
    sidecar = machine_providers.SIDECARS["local"](NS)
    identity = [
        o for o in machines.seed_objects(root, sidecar) if o["kind"] in ("ServiceAccount", "Role", "RoleBinding")
    ]
    installed = [*machine_crds.crds(), *identity, *machines.shoot_objects(root)]
    programs = {
        machines.MCM_NAME: process_args(machines.MCM_FLAGS, NS, LOCAL_PROCESS_FLAGS),
        machine_providers.KWOK_SIDECAR: process_args(machines.SIDECAR_FLAGS, NS, KWOK_SIDECAR_FLAGS),
    }
    processes: list[dict[str, Any]] = []
    try:
        _apply(admin, tmp_path, installed)
        token = kubectl(admin, tmp_path, "create", "token", machines.MCM_NAME, "-n", NS, "--duration=1h").strip()
        files = {name: _token_kubeconfig(admin, token) for name in (CONTROL_KUBECONFIG, TARGET_KUBECONFIG)}
        for program, args in programs.items():
            processes.append({"dir": str(tmp_path / program), "program": program, "args": args, "files": files})
            local_process.start(processes[-1])
        yield admin, tmp_path, root, zone, user_data
    finally:
        # The pool goes first (MCM deletes its machine and node), then MCM, then what was installed for it.
        kubectl(admin, tmp_path, "delete", "machinedeployments.machine.sapcloud.io", "-n", NS, "--all", "--wait=false")
        deadline = time.monotonic() + SETTLE_S
        while kube_items(admin, tmp_path, "machines.machine.sapcloud.io", "-n", NS) and time.monotonic() < deadline:
            time.sleep(2)
        for props in processes:
            local_process.stop(props)
        kubectl(admin, tmp_path, "delete", "nodes", "-l", f"{POOL_LABEL}={zone.pool}", "--ignore-not-found")
        for obj in reversed(installed):
            ns = obj["metadata"].get("namespace")
            scope = ["-n", ns] if ns else []
            kind = obj["kind"] if obj["kind"] != "CustomResourceDefinition" else "crd"
            kubectl(
                admin, tmp_path, "delete", kind, obj["metadata"]["name"], *scope, "--ignore-not-found", "--wait=false"
            )


def test_a_pool_of_a_self_hosted_shoot_is_made_by_mcm_in_its_kube_system(
    in_shoot_mcm: tuple[str, Path, ShootValues, ZoneDeployment, str],
) -> None:
    """GIVEN MCM in the shoot's kube-system as its ServiceAccount WHEN a pool is applied THEN a Machine and a Node."""
    admin, tmp_path, root, zone, user_data = in_shoot_mcm
    before = {n["metadata"]["name"] for n in kube_items(admin, tmp_path, "nodes")}
    # The pool's objects as arbor applies them (concerns/workers.py): credentials, user data, class, deployment.
    pool = [
        machine_pools.credentials_secret(NS),
        machine_pools.user_data_secret(NS, zone, user_data),
        machine_providers.local_machine_class(NS, zone, local_node_ranges(root.networking)),
        machine_pools.machine_deployment(NS, zone),
    ]
    _apply(admin, tmp_path, pool)
    deadline = time.monotonic() + SETTLE_S
    running: list[dict[str, Any]] = []
    while not running and time.monotonic() < deadline:
        found = kube_items(admin, tmp_path, "machines.machine.sapcloud.io", "-n", NS)
        running = [m for m in found if m.get("status", {}).get("currentStatus", {}).get("phase") == "Running"]
        time.sleep(2)
    assert [m["metadata"]["name"] for m in running], _logs(tmp_path)
    [machine] = running
    nodes = {n["metadata"]["name"] for n in kube_items(admin, tmp_path, "nodes")}
    assert nodes - before == {machine["metadata"]["labels"]["node"]}
    # Its rights were enough: neither process was refused anything by the shoot's API server.
    assert "forbidden" not in _logs(tmp_path).lower()
    assert {s["metadata"]["name"] for s in kube_items(admin, tmp_path, "machinesets.machine.sapcloud.io", "-n", NS)}


def _logs(tmp_path: Path) -> str:
    """Both processes' logs, for a failure's message."""
    return "\n".join(
        (tmp_path / program / local_process.LOG_FILE).read_text(errors="replace")[-3000:]
        for program in (machines.MCM_NAME, machine_providers.KWOK_SIDECAR)
        if (tmp_path / program / local_process.LOG_FILE).exists()
    )


def _decoded(part: str) -> bytes:
    """A JWT part, unpadded base64url."""
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def test_the_issuer_keys_arbor_renders_are_what_the_shoots_api_server_serves(
    local_stack: Stack, tmp_path: Path
) -> None:
    """GIVEN the shoot's service-account key WHEN rendered as a cloud shoot's keys THEN its API serves the same.

    The key is the one the engine made; a token the shoot's kube-apiserver issues verifies with the rendered set.

    What AWS STS and a GCP pool do with a self-hosted cloud shoot's MCM token (render/service_account_issuer.py):
    pick the key by the token's `kid`, check the RS256 signature.
    """
    admin = local_stack.outputs()["kubeconfigs"][ROOT]
    keys = local_stack.resource_outputs("pulumi-python:dynamic/arbor:ServiceAccountKey")
    [public] = [o["publicKey"] for name, o in keys.items() if name.startswith("arbor-shoot-ops-root-")]
    served = json.loads(kubectl(admin, tmp_path, "get", "--raw", "/openid/v1/jwks"))
    assert served == service_account_issuer.jwks(public)
    discovery = json.loads(kubectl(admin, tmp_path, "get", "--raw", "/.well-known/openid-configuration"))
    rendered = service_account_issuer.discovery(discovery["issuer"])
    assert {k: v for k, v in discovery.items() if k != "jwks_uri"} == {
        k: v for k, v in rendered.items() if k != "jwks_uri"
    }
    token = kubectl(admin, tmp_path, "create", "token", "default", "-n", NS, "--audience=sts.amazonaws.com").strip()
    header, payload, signature = token.split(".")
    assert json.loads(_decoded(header))["kid"] == service_account_issuer.key_id(public)
    assert json.loads(_decoded(payload))["aud"] == ["sts.amazonaws.com"]
    [jwk] = served["keys"]
    n, e = (int.from_bytes(_decoded(jwk[k]), "big") for k in ("n", "e"))
    key = rsa.RSAPublicNumbers(e, n).public_key()
    key.verify(_decoded(signature), f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
