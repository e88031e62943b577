"""The reconciler's client on a real kube-apiserver through an exec plugin, as with a GKE or EKS kubeconfig.

A kwokctl cluster of its own issues a ServiceAccount token by TokenRequest; a fake exec plugin prints it as an
ExecCredential, and the client reads what the ServiceAccount may read, as that ServiceAccount.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from components import yaml_text
from components.reconciler import kwokctl
from components.reconciler.kube import Kube, KubeError
from tests.integration.engine import require_environment
from tests.unit.kube_server import exec_credential, exec_plugin, runs

NS = "/api/v1/namespaces/default"
ACCOUNT = "arbor-reconciler"
RBAC = "/apis/rbac.authorization.k8s.io/v1/namespaces/default"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[kwokctl.Cluster]:
    """A kwokctl cluster for this module only, deleted afterwards with its processes."""
    require_environment()
    made = kwokctl.Cluster(name="arbor-exec-credentials", workdir=str(tmp_path_factory.mktemp("kwok")))
    try:
        kwokctl.create(made)
        yield made
    finally:
        kwokctl.delete(made)


def service_account_token(admin: Kube) -> dict[str, Any]:
    """A ServiceAccount that may get one ConfigMap, and a TokenRequest's status for it (token, expiration)."""
    admin.create(f"{NS}/serviceaccounts", {"metadata": {"name": ACCOUNT}})
    admin.create(f"{NS}/configmaps", {"metadata": {"name": "probe"}, "data": {"read": "by-exec"}})
    rule = {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["probe"], "verbs": ["get"]}
    admin.create(f"{RBAC}/roles", {"metadata": {"name": ACCOUNT}, "rules": [rule]})
    binding = {
        "metadata": {"name": ACCOUNT},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ACCOUNT},
        "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": "default"}],
    }
    admin.create(f"{RBAC}/rolebindings", binding)
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}}
    return dict(admin.create(f"{NS}/serviceaccounts/{ACCOUNT}/token", request)["status"])


def exec_kubeconfig(admin_kubeconfig: str, plugin: Path) -> str:
    """The admin kubeconfig with its user replaced by an exec plugin, the shape GKE's and EKS's kubeconfigs have."""
    config = yaml_text.load(admin_kubeconfig)
    config["users"][0]["user"] = {
        "exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin), "interactiveMode": "Never"}
    }
    return json.dumps(config)


def test_the_client_reads_as_the_service_account_an_exec_plugin_names(cluster: kwokctl.Cluster, tmp_path: Path) -> None:
    """GIVEN an exec plugin printing a TokenRequest token WHEN the client reads THEN as that account, cached."""
    admin_kubeconfig = kwokctl.kubeconfig(cluster)
    status = service_account_token(Kube.from_kubeconfig(admin_kubeconfig))
    answer = exec_credential(
        "client.authentication.k8s.io/v1", token=status["token"], expirationTimestamp=status["expirationTimestamp"]
    )
    plugin = exec_plugin(tmp_path, [answer])
    kubeconfig = exec_kubeconfig(admin_kubeconfig, plugin)

    assert Kube.from_kubeconfig(kubeconfig).get(f"{NS}/configmaps/probe")["data"] == {"read": "by-exec"}
    review = Kube.from_kubeconfig(kubeconfig).create(
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    assert review["status"]["userInfo"]["username"] == f"system:serviceaccount:default:{ACCOUNT}"
    with pytest.raises(KubeError) as forbidden:
        Kube.from_kubeconfig(kubeconfig).get(f"{NS}/secrets")
    assert forbidden.value.status == 403
    # Three clients, one run: the token is kept until its expirationTimestamp.
    assert len(runs(plugin)) == 1
