"""Extension installations: the spec's refusals, the plan's names and the rendered objects (golden file)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.checks import parse_landscape
from components.plan.planner import plan_landscape
from components.plan.values import ExtensionValues
from components.reconciler.kube import KUBECONFIG_FILE
from components.render import extensions
from components.spec.fields import SpecError
from components.yaml_text import dump, load
from tests.unit.landscape_mocks import registered
from tests.unit.spec_cases import base

IMAGE = "europe-docker.pkg.dev/gardener-project/releases/gardener/extensions/provider-local:v1.130.0"
CA = "-----BEGIN CERTIFICATE-----\nMIIBgarden\n-----END CERTIFICATE-----\n"
SERVER = "https://api.garden.example:443"


def installation(**extra: Any) -> dict[str, Any]:
    """provider-local with garden access and two workloads, one of them opting out."""
    workloads = [
        {"name": "gardener-extension-provider-local", "image": IMAGE, "replicas": 2},
        {"name": "local-metrics", "image": "registry.example/metrics@sha256:" + "a" * 64,
         "injectGardenKubeconfig": False},
    ]  # fmt: skip
    return {"name": "provider-local", "type": "provider-local", "gardenAccess": True, "workloads": workloads} | extra


def planned(*exts: dict[str, Any]) -> tuple[ExtensionValues, ...]:
    """The seed's extension values planned from the base landscape with `exts` on its first seed."""
    doc = base()
    doc["seeds"][0]["extensions"] = list(exts)
    return plan_landscape(parse_landscape(doc), "local").seeds[0].extensions


def rendered(ext: ExtensionValues) -> list[dict[str, Any]]:
    """Every object of an installation, garden side first."""
    generic = extensions.generic_kubeconfig_secret(ext, SERVER, CA)
    return [
        extensions.garden_namespace(ext.seed, ext.garden_namespace),
        extensions.service_account(ext),
        extensions.seed_namespace(ext),
        extensions.access_secret(ext),
        generic,
        *(extensions.workload(ext, w, generic["metadata"]["name"]) for w in ext.workloads),
    ]


def test_an_installation_with_garden_access(golden: Callable[[str, str], None]) -> None:
    """GIVEN provider-local with garden access WHEN rendered THEN upstream's names, labels and injection (golden)."""
    (ext,) = planned(installation())
    assert (ext.namespace, ext.service_account, ext.garden_namespace) == (
        "extension-provider-local", "extension-provider-local", "seed-local-1",
    )  # fmt: skip
    golden("extensions-provider-local.yaml", dump(rendered(ext), sort_keys=False))


def test_the_injected_kubeconfig_reads_the_projected_token() -> None:
    """GIVEN the injected workload WHEN its volume is followed THEN GARDEN_KUBECONFIG's user reads the mounted token."""
    (ext,) = planned(installation())
    generic = extensions.generic_kubeconfig_secret(ext, SERVER, CA)
    pod = extensions.workload(ext, ext.workloads[0], generic["metadata"]["name"])["spec"]["template"]["spec"]
    container = pod["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    mount = container["volumeMounts"][0]["mountPath"]
    paths = {s["secret"]["name"]: s["secret"]["items"][0]["path"] for s in pod["volumes"][0]["projected"]["sources"]}

    config = load(base64.b64decode(generic["data"]["kubeconfig"]).decode())
    assert env["GARDEN_KUBECONFIG"] == f"{mount}/{paths[generic['metadata']['name']]}"
    assert config["users"][0]["user"]["tokenFile"] == f"{mount}/{paths[extensions.ACCESS_SECRET]}"
    assert config["clusters"][0]["cluster"]["server"] == SERVER
    assert env["SEED_NAME"] == "local-1"


@pytest.mark.parametrize(("access", "inject"), [(True, False), (False, True), (False, False)])
def test_no_kubeconfig_without_access_or_with_the_opt_out(access: bool, inject: bool) -> None:
    """GIVEN no garden access, or a workload opting out WHEN rendered THEN no volume and no GARDEN_KUBECONFIG."""
    workload = {"name": "w", "image": IMAGE, "injectGardenKubeconfig": inject}
    (ext,) = planned(installation(gardenAccess=access, workloads=[workload]))
    deployment = extensions.workload(ext, ext.workloads[0], "generic-garden-kubeconfig-0123abcd")
    pod = deployment["spec"]["template"]["spec"]
    assert "volumes" not in pod and "GARDEN_KUBECONFIG" not in str(pod)
    opted_out = deployment["metadata"]["labels"].get(extensions.INJECT_LABEL) == "false"
    assert opted_out is (access and not inject)


def test_the_generic_kubeconfig_is_named_by_its_content() -> None:
    """GIVEN another garden address WHEN rendered THEN another immutable Secret name (workloads roll to it)."""
    (ext,) = planned(installation())
    one = extensions.generic_kubeconfig_secret(ext, SERVER, CA)
    other = extensions.generic_kubeconfig_secret(ext, "https://api.garden.example:8443", CA)
    assert one["metadata"]["name"] != other["metadata"]["name"]
    assert one == extensions.generic_kubeconfig_secret(ext, SERVER, CA)
    assert one["immutable"] is True


@pytest.mark.parametrize(
    ("change", "line"),
    [
        ({"name": "x" * 54}, "extensions[0].name: a value of 54 characters is too long: extension-<name> must fit"),
        ({"type": "Provider"}, "extensions[0].type: 'Provider' is not a DNS-1123 label"),
        ({"workloads": [{"name": "w", "image": "nginx"}]}, "workloads[0].image: 'nginx' names no tag or digest"),
        ({"workloads": [{"name": "w", "image": IMAGE, "replicas": 11}]}, "workloads[0].replicas:"),
        ({"workloads": [{"name": "w", "image": IMAGE}] * 2}, "extensions[0]: duplicate 'w'"),
        ({"gardenAcces": True}, "extensions[0].gardenAcces:"),
    ],
)
def test_a_bad_installation_is_refused_with_its_path(change: dict[str, Any], line: str) -> None:
    """GIVEN a wrong field of an installation WHEN parsed THEN one line names the field's path and the reason."""
    doc = base()
    doc["seeds"][0]["extensions"] = [installation() | change]
    with pytest.raises(SpecError) as refused:
        parse_landscape(doc)
    assert any(line in got for got in refused.value.lines), refused.value.lines


def test_installation_names_are_unique_on_a_seed() -> None:
    """GIVEN two installations of one name WHEN parsed THEN refused: each is a namespace and an identity."""
    doc = base()
    doc["seeds"][0]["extensions"] = [installation(), installation()]
    with pytest.raises(SpecError) as refused:
        parse_landscape(doc)
    assert "landscape.seeds[0].extensions: duplicate 'provider-local'" in refused.value.lines


@given(st.text(max_size=80))
def test_any_image_text_is_accepted_or_refused_with_a_line(text: str) -> None:
    """GIVEN any image text WHEN parsed THEN a valid spec or one line naming the image field, never a traceback."""
    doc = base()
    doc["seeds"][0]["extensions"] = [installation(workloads=[{"name": "w", "image": text}])]
    try:
        parse_landscape(doc)
    except SpecError as refused:
        assert all(line.startswith("landscape.seeds[0].extensions[0].workloads[0].image: ") for line in refused.lines)


def test_the_seed_registers_each_installation_in_its_namespace() -> None:
    """GIVEN an installation without garden access WHEN the landscape registers THEN its namespace, then workloads."""
    workloads = [{"name": "gardener-extension-provider-local", "image": IMAGE}, {"name": "metrics", "image": IMAGE}]
    doc = base()
    doc["seeds"][0]["extensions"] = [installation(gardenAccess=False, workloads=workloads)]
    built, mocks = registered(plan_landscape(parse_landscape(doc), "local"))

    prefix = "arbor-seed-local-1-extension-provider-local"
    assert mocks.types[f"{prefix}-namespace"] == "kubernetes:core/v1:Namespace"
    for w in workloads:
        name = f"{prefix}-{w['name']}"
        assert mocks.types[name] == "kubernetes:apps/v1:Deployment"
        assert mocks.inputs[name]["metadata"]["namespace"] == "extension-provider-local"
        assert f"{prefix}-namespace" in built.edges[name]


def test_garden_access_is_an_identity_in_the_garden_and_a_token_in_the_seed() -> None:
    """GIVEN an installation with garden access WHEN registered THEN the garden holds its account, the seed its token.

    The token is requested with the garden's kubeconfig and kept with the seed's; the injected workload waits for
    the token and mounts the generic kubeconfig by its content-derived name.
    """
    doc = base()
    doc["seeds"][0]["extensions"] = [installation()]
    built, mocks = registered(plan_landscape(parse_landscape(doc), "local"))

    prefix = "arbor-seed-local-1-extension-provider-local"
    account = mocks.inputs[f"{prefix}-garden-serviceaccount"]["metadata"]
    assert (account["namespace"], account["name"]) == ("seed-local-1", "extension-provider-local")
    assert "arbor-garden-k8s" in built.edges[f"{prefix}-garden-serviceaccount"]
    token = mocks.inputs[f"{prefix}-garden-access"]
    # Each cluster by its own kubeconfig file, held once (kube.KUBECONFIG_FILE), not a copy of its credentials.
    assert token["kubeconfig"].endswith("/clusters/local-garden/kubeconfig.yaml")
    assert token["secretKubeconfig"].endswith("/clusters/local-seed-local-1/kubeconfig.yaml")
    assert token["kubeconfig"].startswith(KUBECONFIG_FILE)
    assert (token["namespace"], token["secretNamespace"]) == ("seed-local-1", "extension-provider-local")
    assert token["secretMetadata"]["labels"]["resources.gardener.cloud/purpose"] == "token-requestor"
    generic = mocks.inputs[f"{prefix}-generic-garden-kubeconfig"]["metadata"]["name"]
    workload = f"{prefix}-gardener-extension-provider-local"
    volume = mocks.inputs[workload]["spec"]["template"]["spec"]["volumes"][0]
    assert volume["projected"]["sources"][0]["secret"]["name"] == generic
    assert {f"{prefix}-garden-access", f"{prefix}-generic-garden-kubeconfig"} <= built.edges[workload]
