"""gardener-resource-manager for the KUBERNETES_SERVICE_HOST webhook: upstream's registration, least rights, config."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import machine_crds as copier
import pytest
import yaml

from components.checks import parse_landscape
from components.pins import GARDENER_VERSION, RESOURCE_MANAGER
from components.plan.planner import LOCAL_DOMAIN, plan_landscape
from components.providers import local_resource_manager
from components.render import resource_manager as grm
from components.yaml_text import dump, load
from tests.unit.landscape_mocks import registered
from tests.unit.spec_cases import base

with open("stacks/Pulumi.local.yaml") as f:
    LOCAL = yaml.safe_load(f)["config"]["arbor:landscape"]

NS = "shoot--dev--web"
HOST = f"api.web.dev.internal.{LOCAL_DOMAIN}"


def test_the_objects_a_shoot_gets(golden: Callable[[str, str], None]) -> None:
    """GIVEN shoot dev/web WHEN rendered THEN its registration, rights, configs, Deployment and Service (golden)."""
    objects = [
        grm.webhook_configuration(grm.service_url(NS), "Q0E="),
        grm.service_account(NS), *grm.source_rights(NS), grm.service_account("kube-system"), *grm.target_rights(),
        load(grm.config_text(NS, HOST, "/p/source.kubeconfig", "/p/target.kubeconfig", "/p",
                             grm.Server("127.0.0.1", 20006, 20007, 20006, "127.0.0.2"))),
        grm.config_map(NS, HOST), grm.deployment(NS, RESOURCE_MANAGER.ref, "0" * 64), grm.service(NS),
    ]  # fmt: skip
    golden("resource-manager.yaml", dump(objects, sort_keys=False))


def test_the_webhook_is_registered_as_upstream_registers_it() -> None:
    """GIVEN the registration WHEN read THEN pods CREATE, the opt-out label on both selectors, Ignore, 2 s."""
    config = grm.webhook_configuration("https://127.0.0.1:20006/webhooks/kubernetes-service-host", "Q0E=")
    assert config["metadata"]["name"] == "gardener-resource-manager-shoot"
    (webhook,) = config["webhooks"]
    assert webhook["name"] == "kubernetes-service-host.resources.gardener.cloud"
    assert webhook["rules"] == [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                                 "operations": ["CREATE"]}]  # fmt: skip
    opt_out = [{"key": "apiserver-proxy.networking.gardener.cloud/inject", "operator": "NotIn", "values": ["disable"]}]
    assert webhook["namespaceSelector"]["matchExpressions"] == opt_out
    assert webhook["objectSelector"]["matchExpressions"] == opt_out
    assert (webhook["failurePolicy"], webhook["timeoutSeconds"], webhook["sideEffects"]) == ("Ignore", 2, "None")
    assert grm.service_url(NS) == f"https://gardener-resource-manager.{NS}:443/webhooks/kubernetes-service-host"


def test_its_rights_are_least_privilege() -> None:
    """GIVEN its Roles WHEN read THEN no wildcard, the seed's one namespace, in the shoot only reads of kube-system."""
    source, target = grm.source_rights(NS), grm.target_rights()
    for role in (source[0], target[0]):
        assert role["kind"] == "Role"
        for rule in role["rules"]:
            assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"]
    assert source[0]["metadata"]["namespace"] == NS and target[0]["metadata"]["namespace"] == "kube-system"
    assert {v for rule in target[0]["rules"] for v in rule["verbs"]} == {"get", "list", "watch"}
    config = grm.config(NS, HOST, "s", "t", "/c", grm.Server(""))
    assert config["sourceClientConnection"]["namespaces"] == [NS]
    assert config["targetClientConnection"]["namespaces"] == ["kube-system"]
    assert all(not c["enabled"] for k, c in config["controllers"].items() if isinstance(c, dict))
    assert config["webhooks"] == {"kubernetesServiceHost": {"enabled": True, "host": HOST}}


def test_hosted_shoots_get_their_internal_api_name_and_self_hosted_none() -> None:
    """GIVEN the local landscape WHEN planned THEN a hosted shoot's host is its internal API name, self-hosted none."""
    plan = plan_landscape(parse_landscape(LOCAL), "local")
    hosts = {s.ref: s.service_host for s in plan.shoots}
    assert hosts["dev/web"] == HOST
    assert all(host is None for ref, host in hosts.items() if next(s for s in plan.shoots if s.ref == ref).self_hosted)
    assert any(s.self_hosted for s in plan.shoots)


def test_the_managed_resource_crd_is_the_pinned_modules() -> None:
    """GIVEN gardener's module at the pinned release WHEN its CRD file is compared THEN the checked-in one is equal."""
    try:
        module = copier.module_dir("github.com/gardener/gardener", GARDENER_VERSION)
    except copier.ModuleUnavailableError as err:
        pytest.fail(f"{err}; the checked-in ManagedResource CRD cannot be compared with the module without it")
    upstream = module / "example" / "resource-manager" / grm.CRD_FILE.name
    assert grm.CRD_FILE.read_bytes() == upstream.read_bytes()
    assert grm.managed_resource_crd()["spec"]["scope"] == "Namespaced"


def test_nodeagent_validate_checks_against_the_pinned_release() -> None:
    """GIVEN hack/nodeagent-validate's go.mod THEN it requires gardener and its API module at GARDENER_VERSION."""
    required = dict(
        line.split()[:2]
        for line in Path("hack/nodeagent-validate/go.mod").read_text().splitlines()
        if line.startswith("\tgithub.com/gardener/gardener")
    )
    assert required == {
        "github.com/gardener/gardener": GARDENER_VERSION,
        "github.com/gardener/gardener/pkg/apis": GARDENER_VERSION,
    }


def test_a_local_resource_manager_reads_its_serving_key_from_the_seed_and_the_state_keeps_none() -> None:
    """GIVEN a local landscape WHEN registered THEN the process reads tls.crt and tls.key from their seed Secret.

    Its certificate writes that Secret and keeps no content (not published); the process names it and its
    checksum.
    """
    _, mocks = registered(plan_landscape(parse_landscape(base()), "local"))
    process = mocks.inputs["arbor-shoot-dev-web-grm-process"]
    assert not {"tls.crt", "tls.key"} & set(process["files"])
    held = process["secretFiles"]
    assert sorted(held) == ["tls.crt", "tls.key"]
    assert {f["secret"] for f in held.values()} == {"gardener-resource-manager-server"}
    # The checksum is the certificate's output (the mocks compute none): a new certificate restarts the process.
    assert {f["namespace"] for f in held.values()} == {"shoot--dev--web"} and all(
        "checksum" in f for f in held.values()
    )
    # Its serving certificate is among the shoot's leaves, which only their Secrets hold.
    assert "gardener-resource-manager-server" in mocks.inputs["arbor-shoot-dev-web-pki-leaves"]["leaves"]


@pytest.mark.parametrize("by_file", [True, False])
def test_a_local_resource_managers_kubeconfig_trusts_the_clusters_ca_file_where_it_names_one(by_file: bool) -> None:
    """GIVEN a cluster's kubeconfig WHEN the process's token kubeconfig is made THEN its CA file, or its CA embedded."""
    ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    trust = {"certificate-authority": "/kwok/clusters/c/pki/ca.crt"} if by_file else {
        "certificate-authority-data": base64.b64encode(ca.encode()).decode()}  # fmt: skip
    cluster = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
               "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", **trust}}],
               "contexts": [{"name": "c", "context": {"cluster": "c", "user": "c"}}],
               "users": [{"name": "c", "user": {"token": "t"}}]}  # fmt: skip
    made = load(
        local_resource_manager._token_kubeconfig(
            "https://127.0.0.1:1", dump(cluster, sort_keys=False), "/d/token", "seed"
        )
    )
    entry = made["clusters"][0]["cluster"]
    assert entry == {"server": "https://127.0.0.1:1", **trust}
    assert made["users"][0]["user"] == {"tokenFile": "/d/token"}
