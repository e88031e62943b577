"""gardener-resource-manager's KUBERNETES_SERVICE_HOST webhook on the local landscape, the real binary per hosted shoot.

A Pod created in shoot dev/web gets the env in every container; a Pod or namespace with the opt-out label gets none;
with the server stopped Pods are still admitted, and `up` starts it again. Its kubeconfigs carry no credential but
a token file: its own identities, not an admin's.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from components.plan.planner import LOCAL_DOMAIN
from components.reconciler import local_process
from components.reconciler.kube import Kube, KubeError
from components.render import resource_manager as grm
from tests.integration.engine import Stack, token_kubeconfig

pytestmark = pytest.mark.integration
HOST = f"api.web.dev.internal.{LOCAL_DOMAIN}"
OPT_OUT = {grm.OPT_OUT_LABEL: "disable"}


def server_dirs(stack: Stack) -> dict[str, Path]:
    """The resource manager's process directory of each hosted shoot cluster of the stack, by cluster."""
    root = Path(os.environ["KWOK_WORKDIR"]) / "processes"
    suffix = f"-{grm.NAME}"
    return {d.name.removesuffix(suffix): d for d in root.glob(f"{stack.name}-*{suffix}")}


def web_server(stack: Stack) -> Path:
    """The process directory of shoot dev/web's resource manager."""
    [found] = [d for cluster, d in server_dirs(stack).items() if cluster.endswith("shoot-dev-web")]
    return found


def pod(name: str, namespace: str = "default", labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A Pod with an init and an app container, one of which sets nothing."""
    image = "registry.k8s.io/pause:3.10"
    metadata = {"name": name, "namespace": namespace, "labels": labels or {}}
    spec = {"initContainers": [{"name": "init", "image": image}], "containers": [{"name": "app", "image": image}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def created_env(shoot: Kube, body: dict[str, Any]) -> dict[str, str | None]:
    """Creates the Pod and returns each container's KUBERNETES_SERVICE_HOST as admitted (None: not set)."""
    namespace = body["metadata"]["namespace"]
    made = shoot.create(f"/api/v1/namespaces/{namespace}/pods", body)
    spec = made["spec"]
    return {
        c["name"]: next((e["value"] for e in c.get("env") or [] if e["name"] == "KUBERNETES_SERVICE_HOST"), None)
        for c in spec.get("initContainers", []) + spec["containers"]
    }


@pytest.fixture(scope="module")
def shoot(local_stack: Stack) -> Kube:
    """A client of shoot dev/web, after the webhook answers (a Pod got the env, or 60 s passed)."""
    return Kube.from_kubeconfig(local_stack.outputs()["kubeconfigs"]["shoot/dev/web"])


def test_a_pod_gets_the_shoots_internal_api_name_in_every_container(shoot: Kube) -> None:
    """GIVEN the webhook WHEN a Pod is created THEN its init and app containers get KUBERNETES_SERVICE_HOST."""
    assert created_env(shoot, pod("grm-injected")) == {"init": HOST, "app": HOST}


def test_the_opt_out_label_on_a_pod_or_its_namespace_leaves_it_alone(shoot: Kube) -> None:
    """GIVEN the opt-out label on a Pod, or on its namespace WHEN created THEN no container gets the env."""
    assert created_env(shoot, pod("grm-opted-out", labels=OPT_OUT)) == {"init": None, "app": None}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "grm-opt-out", "labels": OPT_OUT}}
    try:
        shoot.create("/api/v1/namespaces", namespace)
    except KubeError as err:
        if err.status != 409:
            raise
    assert created_env(shoot, pod("grm-in-opted-out", "grm-opt-out")) == {"init": None, "app": None}


def test_it_runs_with_its_own_identities_not_an_admins(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN its kubeconfigs WHEN read THEN a token file each, and the shoot refuses it what it does not need."""
    directory = web_server(local_stack)
    for name in ("source.kubeconfig", "target.kubeconfig"):
        text = (directory / name).read_text()
        assert "tokenFile" in text and "client-key" not in text and "token:" not in text, name
    token = (directory / "target-token").read_text()
    assert (directory / "target-token").stat().st_mode & 0o777 == 0o600
    shoot_kubeconfig = local_stack.outputs()["kubeconfigs"]["shoot/dev/web"]
    server = local_stack.outputs()["endpoints"]["shoot/dev/web"]
    as_grm = Kube.from_kubeconfig(token_kubeconfig(shoot_kubeconfig, server, token))

    def allowed(verb: str, resource: str) -> bool:
        attributes = {"verb": verb, "resource": resource, "namespace": "kube-system"}
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                  "spec": {"resourceAttributes": attributes}}  # fmt: skip
        return bool(
            as_grm.create("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review)["status"]["allowed"]
        )

    assert allowed("watch", "pods") and not allowed("list", "secrets") and not allowed("create", "pods")


def test_with_the_server_stopped_pods_are_admitted_and_up_starts_it_again(local_stack: Stack, shoot: Kube) -> None:
    """GIVEN the process killed WHEN a Pod is created THEN it is admitted without the env; `up` restarts the server."""
    directory = web_server(local_stack)
    pid = local_process.running_pid({"dir": str(directory)})
    assert pid
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while local_process.running_pid({"dir": str(directory)}) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert created_env(shoot, pod("grm-server-down")) == {"init": None, "app": None}
    # What admits it without waiting on retries: the live registration ignores a failing call, after 2 s at most.
    path = f"/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/{grm.WEBHOOK_CONFIGURATION}"
    (webhook,) = shoot.get(path)["webhooks"]
    assert (webhook["failurePolicy"], webhook["timeoutSeconds"]) == ("Ignore", grm.TIMEOUT_S)
    local_stack.up()
    assert local_process.running_pid({"dir": str(directory)}) not in (None, pid)
    deadline = time.monotonic() + 60
    while (env := created_env(shoot, pod(f"grm-again-{int(time.monotonic())}"))) != {"init": HOST, "app": HOST}:
        assert time.monotonic() < deadline, env
        time.sleep(2)
