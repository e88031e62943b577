"""Access on the real engine: InternalSecrets, admin kubeconfigs, rotation previews, no plaintext secrets in state.

The client CA is an InternalSecret no project member can read; admin kubeconfigs are accepted by a real
kube-apiserver; a rotation's preview names what it replaces; the file backend's checkpoint holds no private key
or token secret in plaintext.

The program is tests/integration/fixtures/access (the garden layer and one shoot's PKI and access, without the
seed and shoot clusters); `shootAdminKubeconfig` is checked against a LocalCluster given `extra_client_cas`.
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml
from cryptography import x509

from components.reconciler.signing import CLOCK_SKEW
from components.render import pki
from tests.integration.engine import (
    LOCAL_LANDSCAPE,
    ROOT,
    Stack,
    kubectl,
    make_stack,
    remove_stack,
    require_environment,
)

pytestmark = [pytest.mark.integration, pytest.mark.own_landscape]
FIXTURE = ROOT / "tests" / "integration" / "fixtures" / "access"
PROJECT = "arbor-access"
EXPIRATION_S = 2 * 3600
# Base64 of every PEM private-key header, as it starts a base64-encoded value (Secret data, kubeconfigs).
PEM_HEADERS = ("-----BEGIN PRIVATE KEY", "-----BEGIN RSA PRIVATE KEY", "-----BEGIN EC PRIVATE KEY")


def _landscape() -> dict[str, Any]:
    """The local landscape with web's admin kubeconfigs valid for 2h."""
    landscape: dict[str, Any] = copy.deepcopy(LOCAL_LANDSCAPE)
    landscape["shoots"][0]["adminKubeconfig"] = {"expiration": "2h"}
    return landscape


@pytest.fixture(scope="module")
def access_stack() -> Iterator[Stack]:
    """The access fixture program on a throwaway stack, converged once for the module."""
    require_environment()
    stack = make_stack(FIXTURE, FIXTURE, {f"{PROJECT}:landscape": _landscape()}, env={"PYTHONPATH": str(ROOT)})
    try:
        stack.up()
        yield stack
    finally:
        remove_stack(stack)


def _garden(stack: Stack, tmp_path: Path) -> Path:
    """The garden's kubeconfig (kwokctl's admin) as a file."""
    path = tmp_path / "garden"
    path.write_text(stack.outputs()["gardenKubeconfig"])
    return path


def _checkpoint(stack: Stack) -> str:
    """The raw checkpoint of the stack in the file backend, as stored (secrets as ciphertext)."""
    backend = Path(urlparse(os.environ["PULUMI_BACKEND_URL"]).path)
    stacks = backend / ".pulumi" / "stacks" / PROJECT
    plain, packed = stacks / f"{stack.name}.json", stacks / f"{stack.name}.json.gz"
    return plain.read_text() if plain.exists() else gzip.decompress(packed.read_bytes()).decode()


def _client_cert(kubeconfig: str) -> x509.Certificate:
    """The client certificate of a kubeconfig's first user."""
    data = yaml.safe_load(kubeconfig)["users"][0]["user"]["client-certificate-data"]
    return x509.load_pem_x509_certificate(base64.b64decode(data))


def assert_lifetime(cert: x509.Certificate) -> None:
    """The certificate lives the configured expiration (plus the backdating for clock skew) and is valid now."""
    before, after = cert.not_valid_before_utc.timestamp(), cert.not_valid_after_utc.timestamp()
    assert after - before == EXPIRATION_S + CLOCK_SKEW.total_seconds()
    assert before < time.time() < after


def test_client_ca_is_an_internal_secret_in_the_project_namespace(access_stack: Stack, tmp_path: Path) -> None:
    """GIVEN the stack after `up` WHEN the garden's admin reads `web.ca-client` THEN it holds the shoot's client CA."""
    garden = _garden(access_stack, tmp_path).read_text()
    obj = json.loads(kubectl(garden, tmp_path, "get", "internalsecrets.arbor.dev", "web.ca-client", "-n", "garden-dev",
                             "-o", "json"))  # fmt: skip
    assert sorted(obj["data"]) == ["ca.crt", "ca.key"]
    assert base64.b64decode(obj["data"]["ca.crt"]).decode() == access_stack.outputs()["clientCaCert"]
    ca = x509.load_pem_x509_certificate(base64.b64decode(obj["data"]["ca.crt"]))
    assert ca.subject.rfc4514_string() == "CN=kubernetes-client"


@pytest.mark.parametrize(
    ("user", "verb", "resource", "allowed"),
    [
        ("alice@example.com", "get", "internalsecrets.arbor.dev", False),
        ("alice@example.com", "list", "internalsecrets.arbor.dev", False),
        ("bob@example.com", "get", "internalsecrets.arbor.dev", False),
        ("bob@example.com", "watch", "internalsecrets.arbor.dev", False),
        # The members are bound: the same review allows what their roles grant.
        ("alice@example.com", "delete", "shoots.arbor.dev", True),
        ("bob@example.com", "get", "shoots.arbor.dev", True),
    ],
)
def test_project_members_cannot_read_internal_secrets(
    access_stack: Stack, tmp_path: Path, user: str, verb: str, resource: str, allowed: bool
) -> None:
    """GIVEN project members WHEN the garden answers a real SubjectAccessReview THEN InternalSecrets are denied."""
    name, group = resource.split(".", 1)
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": user,
            "resourceAttributes": {"namespace": "garden-dev", "verb": verb, "group": group, "resource": name},
        },
    }
    garden = _garden(access_stack, tmp_path)
    proc = subprocess.run(
        ["kubectl", "--kubeconfig", str(garden), "create", "-f", "-", "-o", "json"],
        input=json.dumps(review), capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(proc.stdout)["status"]["allowed"] is allowed


def test_admin_kubeconfig_is_accepted_and_expires_as_configured(access_stack: Stack, tmp_path: Path) -> None:
    """GIVEN an admin kubeconfig issued from a CA the API server trusts WHEN used THEN it is system:masters' admin.

    Its certificate expires within the shoot's configured 2h.
    """
    kubeconfig = access_stack.outputs()["gardenAdminKubeconfig"]
    whoami = json.loads(kubectl(kubeconfig, tmp_path, "auth", "whoami", "-o", "json"))["status"]["userInfo"]
    assert whoami["username"] == "admin"
    assert "system:masters" in whoami["groups"]
    assert "node" in kubectl(kubeconfig, tmp_path, "get", "nodes", "-o", "name")
    assert_lifetime(_client_cert(kubeconfig))


def test_shoot_admin_kubeconfig_works_against_a_cluster_trusting_the_client_ca(
    access_stack: Stack, tmp_path: Path
) -> None:
    """GIVEN a cluster trusting the shoot's client CA WHEN the shoot's admin kubeconfig is used THEN it is accepted."""
    kubeconfig = access_stack.outputs()["shootAdminKubeconfig"]
    whoami = json.loads(kubectl(kubeconfig, tmp_path, "auth", "whoami", "-o", "json"))["status"]["userInfo"]
    assert whoami["username"] == "admin" and "system:masters" in whoami["groups"]
    # The target cluster has no nodes (a bare LocalCluster): any read a cluster admin may do shows the access.
    assert "namespace/kube-system" in kubectl(kubeconfig, tmp_path, "get", "namespaces", "-o", "name")
    assert_lifetime(_client_cert(kubeconfig))


def test_no_private_key_or_token_in_plaintext_in_the_state(access_stack: Stack) -> None:
    """GIVEN the stack after `up` WHEN its raw checkpoint is scanned THEN no key or token secret is in plaintext."""
    state = _checkpoint(access_stack)
    # The scanned file is the stack's PKI: its certificates are public, and there in plaintext.
    assert access_stack.outputs()["clientCaCert"].splitlines()[1] in state
    secret_values = access_stack.outputs()["secretValues"]
    # One per credential of a hosted shoot (its PKI table), each found nowhere in the checkpoint.
    assert len(secret_values) == len(pki.credentials("shoot", ()))
    assert "PRIVATE KEY" not in state
    for header in PEM_HEADERS:
        assert base64.b64encode(header.encode()).decode()[:28] not in state, header
    for value in secret_values:
        # A PEM's first body line, the value itself (a token secret), and its base64 form.
        probe = value.splitlines()[1] if value.startswith("-----") else value
        assert probe not in state
        assert base64.b64encode(value.encode()).decode()[:40] not in state


def test_a_kubeconfig_with_a_client_key_is_kept_encrypted_in_inputs_and_outputs(access_stack: Stack) -> None:
    """GIVEN an ObjectSet reaching the garden by an admin kubeconfig WHEN `up` ran THEN the state holds it encrypted.

    The reconcilers mark no output secret themselves: the engine does, where the input of that name was secret.
    """
    resources = json.loads(_checkpoint(access_stack))["checkpoint"]["latest"]["resources"]
    probe = next(r for r in resources if r["urn"].endswith("::garden-probe"))
    for side in ("inputs", "outputs"):
        kept = probe[side]["kubeconfig"]
        assert isinstance(kept, dict) and "ciphertext" in kept, (side, str(kept)[:80])
    assert probe["outputs"]["fingerprints"], "the probe's ConfigMap was applied with that kubeconfig"


def _replacements(preview: dict[str, Any]) -> dict[str, list[str]]:
    """Replaced resources of a preview by name, with the provider's replace reasons."""
    out: dict[str, list[str]] = {}
    for step in preview.get("steps") or []:
        if step["op"] in ("replace", "create-replacement"):
            name = step["urn"].rsplit("::", 1)[-1]
            out[name] = sorted(set(out.get(name, [])) | set(step.get("replaceReasons") or []))
    return out


def test_converged_stack_previews_no_change(access_stack: Stack) -> None:
    """GIVEN the converged stack WHEN previewed again THEN nothing changes (renewal is not due)."""
    preview = access_stack.preview_json()
    changes = [s["urn"].rsplit("::", 1)[-1] for s in preview["steps"] if s["op"] not in ("same", "read")]
    assert changes == []


def test_etcd_ca_rotation_previews_the_replacements(access_stack: Stack) -> None:
    """GIVEN the converged stack WHEN credentials.rotation.etcdCA changes THEN the preview replaces the etcd PKI only.

    The CA for the reason `rotation`; the certificates it signed follow, and nothing of the other groups moves.
    """
    landscape = _landscape()
    landscape["shoots"][0]["credentials"] = {"rotation": {"etcdCA": 1}}
    access_stack.set_config({f"{PROJECT}:landscape": landscape})
    try:
        replaced = _replacements(access_stack.preview_json())
    finally:
        access_stack.set_config({f"{PROJECT}:landscape": _landscape()})
    assert sorted(replaced) == ["web-pki-ca-etcd", "web-pki-etcd-client", "web-pki-etcd-peer", "web-pki-etcd-server"]
    assert "rotation" in replaced["web-pki-ca-etcd"]


def test_ca_rotation_reissues_the_client_ca_and_admin_kubeconfigs(access_stack: Stack, tmp_path: Path) -> None:
    """GIVEN the converged stack WHEN credentials.rotation.ca changes and `up` runs THEN a new client CA is everywhere.

    The InternalSecret holds the new CA, and a new admin kubeconfig of it works against the cluster trusting it.
    Runs last in this module: it changes the stack the other tests read.
    """
    before = access_stack.outputs()
    landscape = _landscape()
    landscape["shoots"][0]["credentials"] = {"rotation": {"ca": 1}}
    access_stack.set_config({f"{PROJECT}:landscape": landscape})
    access_stack.up()
    after = access_stack.outputs()
    assert after["clientCaCert"] != before["clientCaCert"]
    garden = _garden(access_stack, tmp_path).read_text()
    obj = json.loads(kubectl(garden, tmp_path, "get", "internalsecrets.arbor.dev", "web.ca-client", "-n", "garden-dev",
                             "-o", "json"))  # fmt: skip
    assert base64.b64decode(obj["data"]["ca.crt"]).decode() == after["clientCaCert"]
    kubeconfig = after["shootAdminKubeconfig"]
    assert kubeconfig != before["shootAdminKubeconfig"]
    _client_cert(kubeconfig).verify_directly_issued_by(x509.load_pem_x509_certificate(after["clientCaCert"].encode()))
    assert "namespace/kube-system" in kubectl(kubeconfig, tmp_path, "get", "namespaces", "-o", "name")
