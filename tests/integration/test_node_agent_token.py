"""node-agent's access token on the real engine: every shoot's Secret holds a token of its ServiceAccount.

Each shoot's `kube-system/gardener-node-agent` Secret holds a token kube-apiserver authenticates as node-agent's
ServiceAccount, and a deleted Secret is back after the next `up`.
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest

from tests.integration.engine import LOCAL_LANDSCAPE, Stack, kubectl, steps_by_type

pytestmark = pytest.mark.integration
ACCOUNT = "system:serviceaccount:kube-system:gardener-node-agent"
RENEW_TIMESTAMP = "serviceaccount.resources.gardener.cloud/token-renew-timestamp"
SHOOTS = [f"shoot/{s['project']}/{s['name']}" for s in LOCAL_LANDSCAPE["shoots"]]


def stored_token(kubeconfig: str, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """The token in the shoot's node-agent Secret and the Secret's annotations."""
    secret = json.loads(kubectl(kubeconfig, tmp_path, "-n", "kube-system", "get", "secret", "gardener-node-agent",
                                "-o", "json"))  # fmt: skip
    return base64.b64decode(secret["data"]["token"]).decode(), secret["metadata"].get("annotations") or {}


def reviewed_user(kubeconfig: str, tmp_path: Path, token: str) -> str:
    """Whom a TokenReview in the shoot authenticates `token` as ("" when it does not)."""
    review = tmp_path / "review.json"
    review.write_text(json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                                  "spec": {"token": token}}))  # fmt: skip
    status = json.loads(kubectl(kubeconfig, tmp_path, "create", "-f", str(review), "-o", "json"))["status"]
    return str(status["user"]["username"]) if status.get("authenticated") else ""


@pytest.mark.parametrize("shoot", SHOOTS)
def test_every_shoot_holds_a_node_agent_token(local_stack: Stack, tmp_path: Path, shoot: str) -> None:
    """GIVEN the local landscape WHEN `up` ran THEN the Secret's token is node-agent's ServiceAccount, renewal noted."""
    kubeconfig = local_stack.outputs()["kubeconfigs"][shoot]
    token, annotations = stored_token(kubeconfig, tmp_path)
    assert reviewed_user(kubeconfig, tmp_path, token) == ACCOUNT
    assert annotations[RENEW_TIMESTAMP].endswith("Z")


def test_a_deleted_secret_is_back_with_a_valid_token_after_up(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN one shoot's node-agent Secret deleted WHEN `up` runs again THEN it is back with a new valid token.

    The other shoots' tokens stay as they were: only the shoot whose Secret read() found missing gets a new one.
    """
    kubeconfigs = local_stack.outputs()["kubeconfigs"]
    before = {shoot: stored_token(kubeconfigs[shoot], tmp_path)[0] for shoot in SHOOTS}
    kubectl(kubeconfigs[SHOOTS[0]], tmp_path, "-n", "kube-system", "delete", "secret", "gardener-node-agent")
    local_stack.up()
    after = {shoot: stored_token(kubeconfigs[shoot], tmp_path)[0] for shoot in SHOOTS}
    assert after[SHOOTS[0]] != before[SHOOTS[0]]
    assert reviewed_user(kubeconfigs[SHOOTS[0]], tmp_path, after[SHOOTS[0]]) == ACCOUNT
    assert {s: after[s] for s in SHOOTS[1:]} == {s: before[s] for s in SHOOTS[1:]}
    # Converged: the next preview leaves every token as it is (renewal is 9h36m away).
    assert "pulumi-python:dynamic/arbor:AccessToken" not in steps_by_type(local_stack.preview_json())
    state = json.dumps(local_stack.export())
    assert not any(token in state for token in {*before.values(), *after.values()})


def test_a_deleted_service_account_is_made_again_by_its_token_after_up(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN one shoot's node-agent ServiceAccount deleted WHEN `up` runs again THEN it is back, with a valid token.

    The token's resource makes the account (as Gardener's token-requestor does), so no Kubernetes provider resource
    of the shoot holds it: the old token no longer authenticates (its account is gone), the review fails at refresh,
    and `up` makes the account and a token of it again.
    """
    kubeconfig = local_stack.outputs()["kubeconfigs"][SHOOTS[0]]
    before = stored_token(kubeconfig, tmp_path)[0]
    kubectl(kubeconfig, tmp_path, "-n", "kube-system", "delete", "serviceaccount", "gardener-node-agent")
    # The API server's authenticator reads accounts from its informer's cache: the token fails once that has seen it.
    deadline = time.monotonic() + 30
    while reviewed_user(kubeconfig, tmp_path, before) and time.monotonic() < deadline:
        time.sleep(1)
    assert reviewed_user(kubeconfig, tmp_path, before) == ""
    local_stack.up()
    account = json.loads(kubectl(kubeconfig, tmp_path, "-n", "kube-system", "get", "serviceaccount",
                                 "gardener-node-agent", "-o", "json"))  # fmt: skip
    assert account["automountServiceAccountToken"] is False
    after = stored_token(kubeconfig, tmp_path)[0]
    assert after != before and reviewed_user(kubeconfig, tmp_path, after) == ACCOUNT
    assert "pulumi-python:dynamic/arbor:AccessToken" not in steps_by_type(local_stack.preview_json())
