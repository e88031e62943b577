"""Hosted shoots on GKE and EKS seeds under Pulumi mocks: the API exposed and recorded, machines that can join.

kube-apiserver's Service is a LoadBalancer of the seed's cloud; Route 53 or Cloud DNS records the external and
internal domains once the balancer has an address; the serving certificate names both; arbor reaches the shoot
with its own client certificate; user data keeps MCM's placeholders raw and carries the CAs; the shoot holds the
RBAC that lets machines join. The whole example stacks are registered in test_example_stacks.py.
"""

from __future__ import annotations

import base64
import copy
import re
from typing import Any

import pulumi
import pytest
import yaml

from components.checks import parse_landscape
from components.concerns.control_plane import GROUPS
from components.pins import GARDENER_VERSION
from components.plan.nodeagent_release import release
from components.plan.planner import plan_landscape
from components.providers.registry import provider_for
from components.reconciler import osc_secret
from components.render import exposure, packing, pki
from tests.unit.landscape_mocks import OUTPUTS, Built, build
from tests.unit.spec_cases import CLOUD_PROFILES
from tests.unit.test_cloud_stacks import GARDEN_KUBECONFIG, CloudMocks, stack_landscape

LB_ADDRESS = {"aws": {"hostname": "k8s-abc.elb.eu-central-1.amazonaws.com"}, "gcp": {"ip": "34.1.2.3"}}
DNS = {
    "aws": {"provider": "aws-route53", "zone": "Z0123456789", "domain": "example.com"},
    "gcp": {"provider": "google-clouddns", "zone": "example-zone", "domain": "example.com"},
}
CREDENTIALS = {
    "aws": '{"accessKeyID": "AKIA", "secretAccessKey": "s"}',
    "gcp": '{"serviceaccount.json": "{}"}',
}


class ExposureMocks(CloudMocks):
    """The cloud mocks; a LoadBalancer Service gets the address its cloud would write into its status."""

    def __init__(self, provider: str) -> None:
        super().__init__()
        self.provider = provider
        # Names repeat across types (kube-apiserver's Service and Deployment): every resource by (type, name).
        self.typed: dict[tuple[str, str], dict[str, Any]] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        rid, outputs = super().new_resource(args)
        outputs |= OUTPUTS.get(args.typ, {})
        if args.typ.endswith(":CertificateAuthority"):
            outputs["cert"] = f"<{args.name}>"  # each CA its own, to tell the cluster CA from the client CA
        if args.typ == "kubernetes:core/v1:Service" and args.inputs.get("spec", {}).get("type") == "LoadBalancer":
            outputs["status"] = {"loadBalancer": {"ingress": [LB_ADDRESS[self.provider]]}}
        self.typed[(args.typ, args.name)] = outputs
        return rid, outputs

    def of(self, type_: str) -> dict[str, dict[str, Any]]:
        """Every resource of one type, by name."""
        return {n: o for (t, n), o in self.typed.items() if t == type_}

    def workload(self, name: str) -> dict[str, Any]:
        """A hosted control-plane component's workload (`<shoot>-<component>`), in its group's ObjectSet."""
        component = next(c for c in (*GROUPS, "kube-apiserver") if name.endswith(f"-{c}"))
        applied = f"{name.removesuffix(component)}{GROUPS.get(component, component)}"
        objs = packing.unpacked(self.typed[(OBJECT_SET, applied)]["manifests"])
        return dict(next(o for o in objs if o["kind"] in WORKLOADS and o["metadata"]["name"] == component))


def self_hosted(raw: dict[str, Any]) -> dict[str, Any]:
    """The landscape with its shoot self-hosted on a control-plane pool of the cloud's machines."""
    shoot = raw["shoots"][0]
    del shoot["seed"]
    shoot["selfHosted"] = True
    shoot["workers"][0].update(name="cp", controlPlane=True, minimum=1, maximum=1)
    return raw


def landscape(provider: str, dns: bool = True) -> dict[str, Any]:
    """The provider's example stack with a hosted IPv4 shoot on its seed, and the landscape's DNS zone."""
    raw = copy.deepcopy(stack_landscape(f"{provider}-example"))
    raw["cloudProfiles"] = copy.deepcopy(CLOUD_PROFILES)  # the pools' gardenlinux image
    seed = raw["seeds"][0]
    if dns:
        raw["garden"]["dns"] = DNS[provider]
    else:
        del raw["garden"]["dns"]
    raw["shoots"] = [
        {
            "name": "web",
            "project": "platform",
            "seed": seed["name"],
            "kubernetes": {"version": "1.34.4"},
            "networking": {"nodes": "10.250.0.0/16", "pods": "100.64.0.0/12", "services": "100.104.0.0/13"},
            "cloudCredentialsSecret": "webCredentials",
            "workers": [
                {
                    "name": "pool-a",
                    "minimum": 1,
                    "maximum": 2,
                    "machine": {"type": "m5.large", "image": {"name": "gardenlinux", "version": "1877.0"}},
                }
            ],
        }
    ]
    return raw


def register(provider: str, hosted: bool = True) -> tuple[Built, ExposureMocks, pulumi.Output[list[str]]]:
    """The landscape (its shoot hosted or self-hosted) registered under mocks, with its resource graph recorded."""
    mocks = ExposureMocks(provider)
    pulumi.runtime.set_mocks(mocks, project="arbor", stack=f"{provider}-example", preview=False)
    config = {"arbor:gardenKubeconfig": GARDEN_KUBECONFIG, "arbor:webCredentials": CREDENTIALS[provider]}
    pulumi.runtime.set_all_config(config, list(config))
    raw = landscape(provider) if hosted else self_hosted(landscape(provider))
    plan = plan_landscape(parse_landscape(raw), f"{provider}-example")
    built = build({}, plan, provider_for)
    return built, mocks, built.settled()


PREFIX = "arbor-shoot-platform-web"
CLUSTER_CA = f"<{PREFIX}-pki-{pki.CA}>"
CLIENT_CA = f"<{PREFIX}-pki-{pki.CA_CLIENT}>"


@pytest.mark.parametrize("provider", ["aws", "gcp"])
def test_plan_names_the_shoots_domains_only_with_a_zone(provider: str) -> None:
    """GIVEN a cloud shoot WHEN planned with and without garden.dns THEN its domains follow Gardener's names."""
    shoot = plan_landscape(parse_landscape(landscape(provider)), "x").shoots[0]
    assert shoot.dns is not None
    assert (shoot.dns.external, shoot.dns.internal) == (
        "api.web.platform.example.com",
        "api.web.platform.internal.example.com",
    )
    assert shoot.node_settings["pool-a"].api_server == "https://api.web.platform.internal.example.com"
    assert plan_landscape(parse_landscape(landscape(provider, dns=False)), "x").shoots[0].dns is None


def test_local_shoots_have_no_domains_even_with_a_zone() -> None:
    """GIVEN a local landscape naming a zone WHEN planned THEN no local shoot gets domains (kwokctl serves them)."""
    from tests.unit.spec_cases import base

    raw = {**base()}
    raw["garden"] = {**raw["garden"], "dns": DNS["aws"]}
    assert all(s.dns is None for s in plan_landscape(parse_landscape(raw), "local").shoots)


def test_a_domain_that_is_not_one_is_refused_with_its_path() -> None:
    """GIVEN garden.dns.domain without a dot WHEN parsed THEN the refusal names the field."""
    from components.spec.fields import SpecError

    raw = landscape("aws")
    raw["garden"]["dns"] = {**DNS["aws"], "domain": "Example"}
    with pytest.raises(SpecError) as err:
        parse_landscape(raw)
    assert "landscape.garden.dns.domain: 'Example' is not a domain" in str(err.value)


SERVICE = "kubernetes:core/v1:Service"
WORKLOADS = ("StatefulSet", "Deployment")
OBJECT_SET = "pulumi-python:dynamic/arbor:ObjectSet"
LEAF_SET = "pulumi-python:dynamic/arbor:LeafSet"
SECRET = "kubernetes:core/v1:Secret"
RECORD_TYPES = {"aws": "aws:route53/record:Record", "gcp": "gcp:dns/recordSet:RecordSet"}


def written_files(script: str) -> dict[str, str]:
    """The files a user-data script writes from base64, by path."""
    found = re.findall(r"^echo '([A-Za-z0-9+/=]*)' \| base64 -d > '([^']+)'$", script, re.MULTILINE)
    return {path: base64.b64decode(data).decode() for data, path in found}


def node_agent_trust(files: dict[str, str]) -> tuple[str, str]:
    """The API server node-agent's config names and the CA it trusts there, from a node's files by path.

    The default node-agent, the pinned release, takes the CA from the file `apiServer.caFile` names.
    """
    config = yaml.safe_load(files[release(GARDENER_VERSION).config_path])
    return config["apiServer"]["server"], files[config["apiServer"]["caFile"]]


@pytest.mark.parametrize("provider", ["aws", "gcp"])
@pulumi.runtime.test
def test_apiserver_is_a_load_balancer_recorded_under_both_domains(provider: str) -> pulumi.Output[None]:
    """GIVEN a hosted shoot on a cloud seed WHEN registered THEN its API is a LoadBalancer the zone points at."""
    built, mocks, settled = register(provider)

    def check(_: list[str]) -> None:
        service = mocks.of(SERVICE)[f"{PREFIX}-kube-apiserver"]
        assert service["spec"]["type"] == "LoadBalancer"
        assert exposure.LOAD_BALANCER_ANNOTATIONS[provider].items() <= service["metadata"]["annotations"].items()
        records = mocks.of(RECORD_TYPES[provider])
        assert sorted(records) == [f"{PREFIX}-dns-external", f"{PREFIX}-dns-internal"]
        external, internal = records[f"{PREFIX}-dns-external"], records[f"{PREFIX}-dns-internal"]
        if provider == "aws":
            assert (external["zoneId"], external["name"]) == ("Z0123456789", "api.web.platform.example.com")
            assert external["type"] == "CNAME" and external["records"] == [LB_ADDRESS["aws"]["hostname"]]
            assert internal["name"] == "api.web.platform.internal.example.com"
        else:
            assert (internal["managedZone"], internal["name"]) == (
                "example-zone",
                "api.web.platform.internal.example.com.",
            )
            assert internal["type"] == "A" and internal["rrdatas"] == ["34.1.2.3"]
            assert external["name"] == "api.web.platform.example.com."
        # Resource graph: each record after the Service; the shoot's Kubernetes provider after both records.
        for record in records:
            assert (SERVICE, f"{PREFIX}-kube-apiserver") in built.typed_edges[(RECORD_TYPES[provider], record)]
        assert set(records) <= built.edges[f"{PREFIX}-k8s"]

    return settled.apply(check)


@pulumi.runtime.test
def test_serving_certificate_names_the_domains_before_the_api_server_rolls() -> pulumi.Output[None]:
    """GIVEN a hosted shoot with domains WHEN registered THEN SANs and --external-hostname name them, in order."""
    built, mocks, settled = register("gcp")

    def check(_: list[str]) -> None:
        leaves = mocks.of(LEAF_SET)[f"{PREFIX}-pki-leaves"]
        cert = leaves["leaves"][pki.KUBE_APISERVER]
        assert {"api.web.platform.example.com", "api.web.platform.internal.example.com"} <= set(cert["dnsNames"])
        deployment = mocks.workload(f"{PREFIX}-kube-apiserver")
        assert (
            "--external-hostname=api.web.platform.example.com"
            in (deployment["spec"]["template"]["spec"]["containers"][0]["command"])
        )
        # The Deployment waits for the shoot's leaves, which write the Secret it mounts: the issued certificate.
        assert (LEAF_SET, f"{PREFIX}-pki-leaves") in built.typed_edges[(OBJECT_SET, f"{PREFIX}-kube-apiserver")]
        layout = {pki.KUBE_APISERVER: {"ca.crt": "caCert", "tls.crt": "cert", "tls.key": "key"}}
        assert (leaves["namespace"], cert["secrets"]) == ("shoot--platform--web", layout)
        assert f"{PREFIX}-secret-{pki.KUBE_APISERVER}" not in mocks.of(SECRET)

    return settled.apply(check)


def unwrapped(value: Any) -> Any:
    """A value as the mocks see it: a secret one is wrapped with its signature under `value`; packed, unpacked."""
    if isinstance(value, dict) and "4dabf18193072939515e22adb298388d" in value:
        return packing.unpacked(value["value"])
    return packing.unpacked(value)


@pytest.mark.parametrize("provider", ["aws", "gcp"])
@pulumi.runtime.test
def test_user_data_keeps_the_placeholders_raw_and_carries_the_ca(provider: str) -> pulumi.Output[None]:
    """GIVEN a hosted cloud shoot WHEN registered THEN each class's user data has MCM's placeholders and the CA."""
    _, mocks, settled = register(provider)

    def check(_: list[str]) -> None:
        sets = {
            n: unwrapped(o["manifests"]) for n, o in mocks.of(OBJECT_SET).items() if n.startswith(f"{PREFIX}-workers-")
        }
        # Each zone's user data is the first object of its ObjectSet.
        secrets = {n: objs[0] for n, objs in sets.items() if objs and objs[0]["kind"] == "Secret"}
        assert sorted(secrets) == [f"{PREFIX}-workers-pool-a-z{z}" for z in (1, 2, 3)]
        for secret in secrets.values():
            script = base64.b64decode(unwrapped(secret["data"])["userData"]).decode()
            assert (
                "printf '%s' '<<BOOTSTRAP_TOKEN>>' > '/var/lib/gardener-node-agent/credentials/bootstrap-token'"
                in script
            )
            assert "printf '%s' '<<MACHINE_NAME>>' > '/var/lib/gardener-node-agent/machine-name'" in script
            trust = node_agent_trust(written_files(script))
            assert trust == ("https://api.web.platform.internal.example.com", CLUSTER_CA)

    return settled.apply(check)


@pulumi.runtime.test
def test_reconcile_osc_trusts_the_cas_and_points_at_the_internal_domain() -> pulumi.Output[None]:
    """GIVEN a hosted cloud shoot WHEN registered THEN node-agent's OSC has the CA bundle and kubelet's client CA."""
    _, mocks, settled = register("aws")

    def check(_: list[str]) -> None:
        osc = mocks.of("pulumi-python:dynamic/arbor:OperatingSystemConfig")[f"{PREFIX}-osc-pool-a"]
        files = {
            f["path"]: base64.b64decode(inline["data"]).decode() if inline["encoding"] == "b64" else inline["data"]
            for f in yaml.safe_load(packing.unpacked(osc["secret"])["stringData"]["osc.yaml"])["spec"]["files"]
            if (inline := f["content"].get("inline")) is not None
        }
        assert files["/var/lib/kubelet/ca.crt"] == CLIENT_CA
        assert node_agent_trust(files) == ("https://api.web.platform.internal.example.com", CLUSTER_CA)

    return settled.apply(check)


@pulumi.runtime.test
def test_the_shoot_holds_gardeners_join_rbac() -> pulumi.Output[None]:
    """GIVEN a hosted cloud shoot WHEN registered THEN bootstrappers post CSRs, approved; node-agent reads its OSC."""
    _, mocks, settled = register("gcp")

    def check(_: list[str]) -> None:
        bindings = {
            o["metadata"]["name"]: o
            for o in mocks.of("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding").values()
        }
        groups = {name: [s["name"] for s in b["subjects"]] for name, b in bindings.items()}
        assert groups["system:node-bootstrapper"] == ["system:bootstrappers"]
        assert groups["system:certificates.k8s.io:certificatesigningrequests:nodeclient"] == ["system:bootstrappers"]
        assert groups["system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"] == ["system:nodes"]
        assert groups["gardener-node-agent"] == ["gardener-node-agent"]
        role = next(
            o
            for o in mocks.of("kubernetes:rbac.authorization.k8s.io/v1:Role").values()
            if o["metadata"]["name"] == "gardener-node-agent"
        )
        osc = mocks.of("pulumi-python:dynamic/arbor:OperatingSystemConfig")[f"{PREFIX}-osc-pool-a"]
        # Its name as the provider's check() derives it from the Secret's content.
        assert osc_secret.derived(osc["secret"])["secretName"] in role["rules"][0]["resourceNames"]

    return settled.apply(check)


@pulumi.runtime.test
def test_arbor_reaches_the_shoot_by_name_with_a_long_lived_client_certificate() -> pulumi.Output[None]:
    """GIVEN a hosted cloud shoot WHEN registered THEN arbor's provider uses its own 90-day leaf at the domain."""
    _, mocks, settled = register("aws")

    def check(_: list[str]) -> None:
        cert = mocks.of("pulumi-python:dynamic/arbor:Certificate")[f"{PREFIX}-pki-{pki.ARBOR_CLIENT}"]
        assert (cert["commonName"], cert["organizations"], cert["usages"]) == ("arbor", ["system:masters"], ["client"])
        # A leaf as the others: 90 days, renewed by the same rule; not the admin kubeconfig's hour.
        assert cert["validitySeconds"] == int(pki.LEAF_VALIDITY.total_seconds())
        provider = mocks.of("pulumi:providers:kubernetes")[f"{PREFIX}-k8s"]
        kubeconfig = yaml.safe_load(unwrapped(provider["kubeconfig"]))
        assert kubeconfig["clusters"][0]["cluster"]["server"] == "https://api.web.platform.example.com"
        user = kubeconfig["users"][0]["user"]
        assert base64.b64decode(user["client-certificate-data"]).decode() == "<cert>"
        assert (
            base64.b64decode(kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"]).decode() == CLUSTER_CA
        )

    return settled.apply(check)


@pulumi.runtime.test
def test_self_hosted_machine_joins_its_own_api_on_loopback_and_the_records_name_its_balancer() -> pulumi.Output[None]:
    """GIVEN a self-hosted shoot on AWS WHEN registered THEN its machine joins on loopback, the records name the NLB.

    Its certificate names both domains and loopback (a balancer does not carry a target's own connections back).
    """
    _, mocks, settled = register("aws", hosted=False)

    def check(_: list[str]) -> None:
        # The user data is an ObjectSet's one Secret, secret in the state (wrapped) and packed.
        manifests = mocks.of(OBJECT_SET)[f"{PREFIX}-user-data-cp"]["manifests"]
        assert "4dabf18193072939515e22adb298388d" in manifests  # the bootstrap token in it stays secret
        [secret] = unwrapped(manifests)
        assert (secret["kind"], secret["metadata"]["namespace"]) == ("Secret", "kube-system")
        script = base64.b64decode(secret["data"]["userData"]).decode()
        assert "printf '%s' '<<BOOTSTRAP_TOKEN>>'" in script and "printf '%s' '<<MACHINE_NAME>>'" in script
        assert node_agent_trust(written_files(script)) == ("https://127.0.0.1", CLUSTER_CA)
        cert = mocks.of("pulumi-python:dynamic/arbor:Certificate")[f"{PREFIX}-pki-{pki.KUBE_APISERVER}"]
        assert {"api.web.platform.example.com", "api.web.platform.internal.example.com"} <= set(cert["dnsNames"])
        assert "127.0.0.1" in cert["ipAddresses"]
        records = mocks.of(RECORD_TYPES["aws"])
        assert {r["records"][0] for r in records.values()} == {OUTPUTS["aws:lb/loadBalancer:LoadBalancer"]["dnsName"]}

    return settled.apply(check)
