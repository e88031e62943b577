"""The control plane on the real engine: a self-hosted shoot's static pods, credential rotation, admin access."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import preview_summary
import pytest
import yaml
from cryptography import x509

from components.providers.local_nodes import MIRROR_ANNOTATION
from tests.integration.engine import LOCAL_LANDSCAPE, Stack, kubectl

pytestmark = pytest.mark.integration
MANIFESTS = "/etc/kubernetes/manifests"
COMPONENTS = ("etcd-events", "etcd-main", "kube-apiserver", "kube-controller-manager", "kube-scheduler")


def shoot_kubectl(stack: Stack, key: str, tmp_path: Path, *args: str) -> Any:
    """Runs kubectl against one shoot's API with the cluster admin kubeconfig; JSON output parsed."""
    return json.loads(kubectl(stack.outputs()["kubeconfigs"][key], tmp_path, *args, "-o", "json"))


def test_self_hosted_control_plane_is_in_its_pools_osc_and_runs(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN the self-hosted shoot ops/root WHEN its cluster is read THEN its OSC holds the static pods and they run.

    node-agent's Secret of the control-plane pool carries every manifest (with its config hash) and the files
    of its volumes; the mirror pods run on the control-plane node, and the Shoot record is healthy.
    """
    selector = "worker.gardener.cloud/pool=cp,gardener.cloud/role=operating-system-config"
    secrets = shoot_kubectl(local_stack, "shoot/ops/root", tmp_path, "get", "secrets", "-n", "kube-system", "-l",
                            selector)["items"]  # fmt: skip
    assert len(secrets) == 1
    kubeconfig = local_stack.outputs()["kubeconfigs"]["shoot/ops/root"]
    name = secrets[0]["metadata"]["name"]
    osc_text = kubectl(kubeconfig, tmp_path, "get", "secret", "-n", "kube-system", name, "-o",
                       "jsonpath={.data.osc\\.yaml}")  # fmt: skip
    files = {f["path"]: f for f in yaml.safe_load(base64.b64decode(osc_text))["spec"]["files"]}
    for component in COMPONENTS:
        manifest = yaml.safe_load(files[f"{MANIFESTS}/{component}.yaml"]["content"]["inline"]["data"])
        assert manifest["metadata"]["annotations"]["arbor.dev/config-hash"]
        assert all("hostPath" in v for v in manifest["spec"]["volumes"])
    key = files["/var/lib/static-pods/kube-apiserver/kube-apiserver/tls.key"]
    assert key["permissions"] == 0o600 and "PRIVATE KEY" in key["content"]["inline"]["data"]

    pods = shoot_kubectl(local_stack, "shoot/ops/root", tmp_path, "get", "pods", "-n", "kube-system")["items"]
    # Mirror pods only: kube-system also runs the shoot's system components (network plugin, kube-proxy, CoreDNS).
    static = [p for p in pods if MIRROR_ANNOTATION in (p["metadata"].get("annotations") or {})]
    mirrors = {p["metadata"]["name"].removesuffix("-" + p["spec"]["nodeName"]): p for p in static}
    assert sorted(mirrors) == sorted(COMPONENTS)
    assert all(p["status"]["phase"] == "Running" for p in mirrors.values())
    garden = local_stack.outputs()["kubeconfigs"]["garden"]
    record = json.loads(kubectl(garden, tmp_path, "get", "shoot", "-n", "garden-ops", "root", "-o", "json"))
    conditions = {c["type"]: c["status"] for c in record["status"]["conditions"]}
    assert conditions == {"APIServerAvailable": "True", "ControlPlaneHealthy": "True", "EveryNodeReady": "True"}


def rotated(stack: Stack, tmp_path: Path, group: str) -> dict[str, Any]:
    """`pulumi preview --json` with the rotation counter `group` of every shoot raised by one."""
    config = yaml.safe_load((stack.config_dir / f"Pulumi.{stack.name}.yaml").read_text())
    landscape = copy.deepcopy(LOCAL_LANDSCAPE)
    for shoot in landscape["shoots"]:
        shoot["credentials"] = {"rotation": {group: 1}}
    config["config"]["arbor:landscape"] = landscape
    path = tmp_path / "rotated.yaml"
    path.write_text(yaml.safe_dump(config))
    return dict(json.loads(stack.run("preview", "--json", "--config-file", str(path)).stdout))


def test_rotating_the_etcd_ca_replaces_its_certificates_and_restarts_only_what_uses_them(
    local_stack: Stack, tmp_path: Path
) -> None:
    """GIVEN the etcd CA rotation counter raised WHEN previewed THEN its credentials are issued again, etcd restarts.

    The etcd CA is replaced (reason rotation) and the shoot's LeafSet issues the etcd leaves again, and only etcd and
    kube-apiserver restart: the hosted workloads' pod templates and the self-hosted shoot's static manifests change,
    nothing else. The LeafSet's checksums are known in the preview, so it names exactly those.
    """
    preview = rotated(local_stack, tmp_path, "etcdCA")
    changed = {s["urn"].rsplit("::", 1)[-1]: s for s in preview["steps"] if s["op"] not in ("same", "read")}
    pki = {n.removeprefix("arbor-shoot-dev-web-pki-"): s["op"] for n, s in changed.items()
           if n.startswith("arbor-shoot-dev-web-pki-")}  # fmt: skip
    assert pki == {"ca-etcd": "replace", "leaves": "update"}
    assert changed["arbor-shoot-dev-web-pki-ca-etcd"]["replaceReasons"] == ["rotation"]
    leaves = changed["arbor-shoot-dev-web-pki-leaves"]
    issued_before, issued_now = leaves["oldState"]["inputs"]["issued"], leaves["newState"]["inputs"]["issued"]
    moved = sorted(n for n in issued_now if issued_now[n] != issued_before[n])
    assert moved == ["etcd-client", "etcd-peer", "etcd-server"]
    workloads = sorted(
        n.removeprefix("arbor-shoot-dev-web-") for n, s in changed.items()
        if s["newState"]["type"].endswith(":ObjectSet") and n.startswith("arbor-shoot-dev-web-")
    )  # fmt: skip
    # etcd main and events are one resource (they start together); the controllers' resource does not change.
    assert workloads == ["etcd", "kube-apiserver"]
    # The new certificates are known only at the update, so the preview says what restarts from the plan.
    summary = preview_summary.render(preview)
    for shoot in ("dev/web", "ops/db", "ops/root"):
        assert f"{shoot}: restarts etcd-events, etcd-main, kube-apiserver" in summary


def test_admin_kubeconfig_is_issued_on_request_and_kept_nowhere(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN `make kubeconfig`'s script WHEN a shoot's is asked for THEN `admin` in system:masters, not in the state.

    Asked for another user and groups, it is that user; the stack keeps no admin kubeconfig, in its outputs or as a
    resource (a 1 h credential there would go stale and have `up` renew it every half hour).
    """
    admin = local_stack.admin_kubeconfig("dev/web")
    review = json.loads(kubectl(admin, tmp_path, "auth", "whoami", "-o", "json"))
    assert review["status"]["userInfo"]["username"] == "admin"
    assert "system:masters" in review["status"]["userInfo"]["groups"]
    alice = local_stack.admin_kubeconfig(
        "dev/web", "--user", "alice", "--group", "team-a", "--expiration-seconds", "600"
    )
    review = json.loads(kubectl(alice, tmp_path, "auth", "whoami", "-o", "json"))
    assert review["status"]["userInfo"]["username"] == "alice"
    assert "team-a" in review["status"]["userInfo"]["groups"]
    outputs = local_stack.outputs()
    assert "adminKubeconfigs" not in outputs
    assert outputs["adminKubeconfigExpirationSeconds"]["dev/web"] == 3600
    types = {r["type"] for r in local_stack.export()["deployment"]["resources"]}
    assert "pulumi-python:dynamic/arbor:AdminKubeconfig" not in types


def test_a_hosted_shoots_leaf_secret_changed_in_the_seed_is_issued_again(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN a leaf's Secret edited and another's deleted WHEN refreshed THEN the shoot's LeafSet writes both again.

    As Gardener's secrets manager regenerates a leaf whose Secret is gone: the preview updates the LeafSet and nothing
    else (each Secret keeps its checksum, what the pods that mount it carry, so nothing restarts); `up` issues the
    two again from their CAs. The state keeps each Secret as a hash, no certificate or key.
    """
    seed, namespace = local_stack.outputs()["kubeconfigs"]["seed/local-1"], "shoot--dev--web"

    def secret(name: str) -> dict[str, Any]:
        return dict(json.loads(kubectl(seed, tmp_path, "-n", namespace, "get", "secret", name, "-o", "json")))

    untouched = secret("etcd-server")["data"]
    edited = json.dumps({"data": {"tls.crt": base64.b64encode(b"edited").decode()}})
    kubectl(seed, tmp_path, "-n", namespace, "patch", "secret", "etcd-peer", "--type=merge", "-p", edited)
    kubectl(seed, tmp_path, "-n", namespace, "delete", "secret", "kube-scheduler")

    preview = local_stack.preview_json("--refresh")
    changed = {s["urn"].rsplit("::", 1)[-1]: s["op"] for s in preview["steps"] if s["op"] not in ("same", "refresh")}
    assert changed == {"arbor-shoot-dev-web-pki-leaves": "update"}

    local_stack.up()
    state = {r["urn"].rsplit("::", 1)[-1]: r for r in local_stack.export()["deployment"]["resources"]}
    leaves = state["arbor-shoot-dev-web-pki-leaves"]["outputs"]
    peer = {k: base64.b64decode(v).decode() for k, v in secret("etcd-peer")["data"].items()}
    # Issued anew by its CA. Only the Secret holds it: the state keeps hashes and checksums, no certificate or key.
    x509.load_pem_x509_certificate(peer["tls.crt"].encode()).verify_directly_issued_by(
        x509.load_pem_x509_certificate(peer["ca.crt"].encode())
    )
    assert "BEGIN" not in json.dumps(leaves)
    assert set(leaves["writtenHashes"]) >= {"etcd-peer", "kube-scheduler", "etcd-server"}
    assert set(secret("kube-scheduler")["data"]) == {"ca.crt", "tls.crt", "tls.key"}
    assert secret("etcd-server")["data"] == untouched
    assert not [n for n in state if n.startswith("arbor-shoot-dev-web-pki-etcd")]
    assert not [s for s in local_stack.preview_json("--refresh")["steps"] if s["op"] not in ("same", "refresh")]


def test_a_hosted_shoots_ca_key_and_token_secrets_changed_in_the_seed_are_written_again(
    local_stack: Stack, tmp_path: Path
) -> None:
    """GIVEN a CA's, the key's, the token's and the encryption Secrets changed WHEN previewed THEN only they update.

    A CA's signer Secret, the bootstrap token's and the encryption configuration's are deleted, the service-account
    key's edited: the preview updates the four writers and nothing they sign or that reads them (the shoot's cluster,
    its kube-apiserver); `up` writes the same CA, key, token and keys again, never new ones. Each is kept once in the
    state, in its own resource's outputs, not in the SecretSet.
    """
    seed, namespace = local_stack.outputs()["kubeconfigs"]["seed/local-1"], "shoot--dev--web"
    names = ("ca-etcd-signer", "service-account-key", "bootstrap-token", "etcd-encryption-secret")

    def data(name: str) -> dict[str, str]:
        return dict(json.loads(kubectl(seed, tmp_path, "-n", namespace, "get", "secret", name, "-o", "json"))["data"])

    before = {name: data(name) for name in names}
    kubectl(seed, tmp_path, "-n", namespace, "delete", "secret", "ca-etcd-signer", "bootstrap-token",
            "etcd-encryption-secret")  # fmt: skip
    edited = json.dumps({"data": {"id_rsa.pub": base64.b64encode(b"edited").decode()}})
    kubectl(seed, tmp_path, "-n", namespace, "patch", "secret", "service-account-key", "--type=merge", "-p", edited)

    preview = local_stack.preview_json("--refresh")
    changed = {s["urn"].rsplit("::", 1)[-1]: s["op"] for s in preview["steps"] if s["op"] not in ("same", "refresh")}
    prefix = "arbor-shoot-dev-web-pki"
    writers = (f"{prefix}-ca-etcd", f"{prefix}-service-account-key", f"{prefix}-bootstrap-token",
               "arbor-shoot-dev-web-encryption-keys")  # fmt: skip
    assert changed == dict.fromkeys(writers, "update")

    local_stack.up()
    assert {name: data(name) for name in names} == before
    secret_set = next(
        r for r in local_stack.export()["deployment"]["resources"] if r["urn"].endswith("-dev-web-secrets")
    )
    assert not set(names) & set(secret_set["outputs"]["hashes"])
    assert not [s for s in local_stack.preview_json("--refresh")["steps"] if s["op"] not in ("same", "refresh")]
