"""Integration helpers: throwaway stacks of the real program on the real engine, against real local clusters.

Each stack is named `it-<random>`, so its clusters (`it-…-garden`, …) never meet the user's `local` stack,
and is removed afterwards with its clusters and their processes, whatever state a test or a failure left it in.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from process_tree import kill_tree

from components.providers.local_nodes import KWOK_NODE_ANNOTATION
from components.reconciler import kwokctl, local_process
from components.reconciler.kube import certificate_authority
from components.reconciler.local_cluster import JWKS_FLAG, JWKS_PATH

ROOT = Path(__file__).resolve().parents[2]
LOCAL_LANDSCAPE = yaml.safe_load((ROOT / "stacks" / "Pulumi.local.yaml").read_text())["config"]["arbor:landscape"]
# A second local seed with backups, where a control plane migrates to (test_deletions, bench/migration_downtime.py).
SECOND_SEED = {
    "name": "local-2", "provider": "local", "zones": ["local-a", "local-b"], "cluster": {"nodes": 1},
    "backup": {"provider": "local"}, "networks": {"pods": "10.32.0.0/12", "services": "10.48.0.0/16"},
}  # fmt: skip


# What an operator of a local seed arbor is given adds to its kwokctl cluster: a node kwok runs pods on, and anyone
# may read the issuer's discovery document and keys (Kubernetes' own role), so the object store can fetch them.
GIVEN_SEED_OBJECTS = [
    {"apiVersion": "v1", "kind": "Node",
     "metadata": {"name": "given-node-0", "annotations": KWOK_NODE_ANNOTATION, "labels": {"type": "kwok"}}},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
     "metadata": {"name": "operator:service-account-issuer-discovery"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                 "name": "system:service-account-issuer-discovery"},
     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:unauthenticated"}]},
]  # fmt: skip


def given_seed(stack: Stack, seed: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """`seed` given by kubeconfig, as its operator runs it: a kwokctl cluster `<stack>-given-<seed>` of its own.

    Its API server publishes its issuer (`--service-account-jwks-uri`), its kubeconfig goes into the stack's secret
    config, and the seed's spec names both; the cluster goes with the stack's (`remove_stack`).
    """
    cluster = kwokctl.Cluster(f"{stack.name}-given-{seed['name']}", os.environ["KWOK_WORKDIR"])
    kwokctl.create(cluster, {JWKS_FLAG: kwokctl.SERVER + JWKS_PATH})
    kubeconfig = kwokctl.kubeconfig(cluster)
    manifests = tmp_path / f"{cluster.name}.yaml"
    manifests.write_text(yaml.safe_dump_all(GIVEN_SEED_OBJECTS))
    kubectl(kubeconfig, tmp_path, "apply", "-f", str(manifests))
    key = f"{seed['name'].replace('-', '')}Kubeconfig"
    stack.run("config", "set", "--secret", f"arbor:{key}", kubeconfig)
    given = {"kubeconfigSecret": key, "issuer": {"url": kwokctl.endpoint(cluster)}}
    return {**seed, "cluster": given}


def require_environment() -> None:
    """Integration tests run through make (hack/env.sh): say so clearly when run otherwise."""
    missing = [v for v in ("KWOK_WORKDIR", "PULUMI_BACKEND_URL", "PULUMI_CONFIG_PASSPHRASE") if v not in os.environ]
    if missing or not shutil.which("pulumi"):
        pytest.fail(f"integration tests need the environment of hack/env.sh (missing: {missing}); run `make test`")


@dataclass
class Stack:
    """One stack of a Pulumi project, driven through the real `pulumi` CLI."""

    name: str
    project_dir: Path
    config_dir: Path
    env: dict[str, str] | None = None

    def run(self, *args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """`pulumi <args> --stack <name>` in the project; raises with its output when it fails and `check`."""
        cmd = ["pulumi", *args, "--stack", self.name, "--non-interactive"]
        env = {**os.environ, **(self.env or {})}
        with subprocess.Popen(
            cmd, cwd=self.project_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        ) as running:
            try:
                out, err = running.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                # The CLI with its plugins: killed alone, they would run on and hold the stack's clusters busy.
                kill_tree(running.pid)
                out, err = running.communicate()
                # As `make up` would first: the killed run's lock and pending creates go, so later tests can run.
                subprocess.run([sys.executable, str(ROOT / "hack" / "recover.py"), self.name], env=env, check=False)
                raise AssertionError(
                    f"{' '.join(cmd)} did not end in {timeout} s:\n{out[-4000:]}\n{err[-4000:]}"
                ) from None
        proc = subprocess.CompletedProcess(cmd, running.returncode, out, err)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            )
        return proc

    def up(self, *flags: str) -> subprocess.CompletedProcess[str]:
        """Converges the stack, refreshing first as `make up` does."""
        return self.run("up", "--yes", "--refresh", "--skip-preview", "--suppress-progress", *flags)

    def make_up(self) -> subprocess.CompletedProcess[str]:
        """Converges the stack as `make up` does: first lifting the protection of confirmed deletions."""
        env = {**os.environ, **(self.env or {})}
        cmd = [sys.executable, str(ROOT / "hack" / "deletions.py"), self.name]
        subprocess.run(cmd, cwd=self.project_dir, env=env, check=True, capture_output=True, text=True, timeout=300)
        return self.up()

    def preview_json(self, *flags: str) -> dict[str, Any]:
        """`pulumi preview --json` as data."""
        return dict(json.loads(self.run("preview", "--json", *flags).stdout))

    def outputs(self) -> dict[str, Any]:
        """Stack outputs, secrets shown."""
        return dict(json.loads(self.run("stack", "output", "--json", "--show-secrets").stdout))

    def admin_kubeconfig(self, ref: str, *flags: str) -> str:
        """A shoot's admin kubeconfig (`<project>/<shoot>`), issued now as `make kubeconfig` issues it."""
        cmd = [sys.executable, str(ROOT / "hack" / "admin_kubeconfig.py"), ref, "--stack", self.name, *flags]
        env = {**os.environ, **(self.env or {})}
        proc = subprocess.run(cmd, cwd=self.project_dir, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def export(self) -> dict[str, Any]:
        """The stack's state as the backend stores it (secrets stay encrypted)."""
        return dict(json.loads(self.run("stack", "export").stdout))

    def resource_outputs(self, type_: str) -> dict[str, dict[str, Any]]:
        """The outputs of each resource of a type in the state, by name, secrets shown."""

        def shown(value: Any) -> Any:
            # A secret shown by the export is a wrapper holding the value as JSON text.
            return json.loads(value["plaintext"]) if isinstance(value, dict) and "plaintext" in value else value

        state = json.loads(self.run("stack", "export", "--show-secrets").stdout)
        return {
            r["urn"].rsplit("::", 1)[1]: {k: shown(v) for k, v in r["outputs"].items()}
            for r in state["deployment"]["resources"]
            if r["type"] == type_
        }

    def set_config(self, config: dict[str, object]) -> None:
        """Writes structured config values into the stack's config file (keeping its encryption salt)."""
        path = self.config_dir / f"Pulumi.{self.name}.yaml"
        data = yaml.safe_load(path.read_text()) if path.exists() else {}
        data = data or {}
        data.setdefault("config", {}).update(config)
        path.write_text(yaml.safe_dump(data, sort_keys=False))


def cluster_dir(cluster: str) -> Path:
    """Where kwokctl keeps a cluster of this clone."""
    return Path(os.environ["KWOK_WORKDIR"]) / "clusters" / cluster


def processes_of(prefix: str) -> list[str]:
    """Command lines of processes running from clusters whose names start with `prefix`."""
    pattern = f"^{Path(os.environ['KWOK_WORKDIR']) / 'clusters' / prefix}"
    out = subprocess.run(["pgrep", "-af", pattern], capture_output=True, text=True, check=False).stdout
    return [line for line in out.splitlines() if line.strip()]


def cleanup_clusters(prefix: str) -> None:
    """Deletes every cluster named `prefix…` with its scratch kubeconfig, and stops its processes."""
    workdir = Path(os.environ["KWOK_WORKDIR"])
    clusters = workdir / "clusters"
    for d in clusters.glob(f"{prefix}*") if clusters.is_dir() else []:
        # The kubeconfig kwokctl made it with (components/reconciler/kwokctl.py), never the user's ~/.kube/config.
        scratch = workdir / f"{d.name}.kubeconfig"
        cmd = ["kwokctl", "delete", "cluster", "--name", d.name, "--kubeconfig", str(scratch)]
        subprocess.run(cmd, capture_output=True, check=False)
        shutil.rmtree(d, ignore_errors=True)
        scratch.unlink(missing_ok=True)
    for line in processes_of(prefix):
        subprocess.run(["kill", "-9", line.split()[0]], check=False)
    # The supervised processes of those clusters (machine-controller-manager): state dropped, nothing stops them.
    processes = workdir / "processes"
    for d in processes.glob(f"{prefix}*") if processes.is_dir() else []:
        local_process.stop({"dir": str(d)})
        shutil.rmtree(d, ignore_errors=True)
    # Their self-hosted shoots' machine directories (the credentials' files).
    machines = workdir / "machines"
    for d in machines.glob(f"{prefix}*") if machines.is_dir() else []:
        shutil.rmtree(d, ignore_errors=True)


def make_stack(
    project_dir: Path, config_dir: Path, config: dict[str, object], env: dict[str, str] | None = None
) -> Stack:
    """Creates a fresh `it-<random>` stack with `config` (key -> structured value) and extra `env`."""
    stack = Stack(name=f"it-{secrets.token_hex(3)}", project_dir=project_dir, config_dir=config_dir, env=env)
    stack.run("stack", "init", "--secrets-provider", "passphrase")
    stack.set_config(config)
    return stack


def remove_stack(stack: Stack, destroy: bool = True) -> None:
    """Destroys (unless not `destroy`) and removes the stack, then deletes its clusters and stops their processes.

    Without `destroy` the state is dropped whole: for a stack whose every resource lives in its kwok clusters,
    a destroy would only delete up to hundreds of Kubernetes objects one by one from clusters deleted right after
    (55 s for the local landscape). A stack with effects outside them (a command's files) needs the destroy.
    """
    try:
        if destroy:
            # As `make down`: a throwaway stack's protected clusters and keys go too.
            stack.run("destroy", "--yes", "--skip-preview", "--suppress-progress", "--ignore-protect", check=False)
        stack.run("stack", "rm", "--yes", "--force", check=False)
    finally:
        cleanup_clusters(f"{stack.name}-")
        # Its object store's objects (the store itself was one of the processes).
        shutil.rmtree(Path(os.environ["KWOK_WORKDIR"]) / "object-store" / stack.name, ignore_errors=True)
        (stack.config_dir / f"Pulumi.{stack.name}.yaml").unlink(missing_ok=True)


def kubectl(kubeconfig: str, tmp_path: Path, *args: str) -> str:
    """Kubectl with a kubeconfig given as text; returns stdout."""
    path = tmp_path / f"kubeconfig-{secrets.token_hex(4)}"
    path.write_text(kubeconfig)
    cmd = ["kubectl", "--kubeconfig", str(path), *args]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise KubectlError(out.returncode, cmd, out.stdout, out.stderr)
    return out.stdout


def kube_items(kubeconfig: str, tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    """`kubectl get <args> -o json` in the cluster of a kubeconfig (as text), as its items."""
    return list(json.loads(kubectl(kubeconfig, tmp_path, "get", *args, "-o", "json"))["items"])


def items(stack: Stack, key: str, tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    """`kubectl get <args> -o json` in the cluster `key` of the stack's kubeconfigs output, as its items."""
    return kube_items(stack.outputs()["kubeconfigs"][key], tmp_path, *args)


class KubectlError(subprocess.CalledProcessError):
    """A failed kubectl, saying what kubectl said."""

    def __str__(self) -> str:
        return f"{super().__str__()}: {str(self.stderr).strip()}"


def token_kubeconfig(kubeconfig: str, server: str, token: str) -> str:
    """A kubeconfig for `server` (CA taken from `kubeconfig`) whose user is a bearer token."""
    ca = base64.b64encode(certificate_authority(kubeconfig).encode()).decode()
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server, "certificate-authority-data": ca}}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
    })  # fmt: skip


def preview_with(stack: Stack, tmp_path: Path, change: dict[str, Any], shoot: int = 0) -> dict[str, Any]:
    """`pulumi preview --json` of the stack with one shoot's fields replaced, the stack itself unchanged."""
    config = yaml.safe_load((stack.config_dir / f"Pulumi.{stack.name}.yaml").read_text())
    landscape = copy.deepcopy(config["config"]["arbor:landscape"])
    landscape["shoots"][shoot].update(change)
    config["config"]["arbor:landscape"] = landscape
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(config))
    return dict(json.loads(stack.run("preview", "--json", "--config-file", str(path)).stdout))


def steps_by_type(preview: dict[str, Any], ops: Sequence[str] = ("same",)) -> dict[str, list[str]]:
    """The preview's step operations per resource type, leaving out `ops`."""
    out: dict[str, list[str]] = {}
    for step in preview.get("steps") or []:
        if step["op"] not in ops:
            state = step.get("newState") or step.get("oldState") or {}
            out.setdefault(state.get("type", "?"), []).append(step["op"])
    return out
