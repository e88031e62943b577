"""A shoot's PKI: the credential table, real certificate chains, rotation plans, the provider's diff, the spec."""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID

from components.checks import parse_landscape
from components.concerns.shoot_pki import issue_shoot_pki
from components.layers.garden import ROLE_RULES
from components.plan.planner import plan_landscape
from components.reconciler import pki as issuing
from components.reconciler import signing
from components.render import api, controlplane, packed_keys, pki
from components.spec.fields import SpecError
from components.spec.shoot import RotationSpec
from tests.unit.spec_cases import base

NAMESPACE = "shoot--dev--web"
SERVICES = ("100.104.0.0/13",)
CREDS = pki.credentials(NAMESPACE, SERVICES)
DAY = 86400.0


def _table(creds: tuple[pki.Credential, ...]) -> str:
    """The credential table as text, one block per credential."""
    blocks = []
    for c in creds:
        lines = [f"{c.name}: {c.kind.value}, group {c.group.value}, issuer {c.issuer or '-'}"]
        lines.append(f"  subject: CN={c.common_name or '-'} O={','.join(c.organizations) or '-'}")
        lines.append(f"  usages: {','.join(u.value for u in c.usages) or '-'}; validity {c.validity_seconds}s")
        lines.append(f"  secret keys: {', '.join(pki.secret_keys(c))}")
        lines.append(f"  consumers: {', '.join(c.consumers) or '-'}")
        lines += [f"  dns: {n}" for n in c.dns_names] + [f"  ip: {ip}" for ip in c.ip_addresses]
        blocks.append("\n".join(lines))
    return "\n".join(blocks) + "\n"


def test_credential_table_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN shoot web WHEN its credentials are listed THEN names, subjects, usages and consumers match the golden."""
    golden("pki-credentials.txt", _table(CREDS))


def test_only_a_hosted_shoot_has_a_machine_controller_manager_certificate() -> None:
    """GIVEN a self-hosted shoot WHEN its credentials are listed THEN MCM's client certificate (seed only) is not."""
    assert pki.MACHINE_CONTROLLER_MANAGER in pki.by_name(CREDS)
    hosted = pki.by_name(CREDS)[pki.MACHINE_CONTROLLER_MANAGER]
    assert (hosted.common_name, hosted.issuer) == (pki.MCM_USER, pki.CA_CLIENT)
    assert pki.MACHINE_CONTROLLER_MANAGER not in pki.by_name(pki.credentials(NAMESPACE, SERVICES, hosted=False))


def test_names_are_the_module_constants_in_issuer_order() -> None:
    """GIVEN the table WHEN walked in order THEN every issuer comes before what it signs, names are the constants."""
    names = [c.name for c in CREDS]
    assert names == [
        pki.CA, pki.CA_CLIENT, pki.CA_ETCD, pki.CA_FRONT_PROXY, pki.ETCD_SERVER, pki.ETCD_PEER, pki.ETCD_CLIENT,
        pki.KUBE_APISERVER, pki.KUBE_APISERVER_KUBELET, pki.FRONT_PROXY_CLIENT, pki.KUBE_CONTROLLER_MANAGER,
        pki.KUBE_SCHEDULER, pki.MACHINE_CONTROLLER_MANAGER, pki.RESOURCE_MANAGER_SERVER, pki.SERVICE_ACCOUNT_KEY,
        pki.BOOTSTRAP_TOKEN,
    ]  # fmt: skip
    for i, c in enumerate(CREDS):
        assert c.issuer is None or c.issuer in names[:i], c.name


@pytest.mark.parametrize(
    ("services", "ip"),
    [
        (("100.104.0.0/13",), "100.104.0.1"),
        (("fd00:104::/108", "100.104.0.0/13"), "fd00:104::1"),
        ((), None),
    ],
)
def test_kube_apiserver_service_ip_is_the_first_address_of_the_first_range(
    services: tuple[str, ...], ip: str | None
) -> None:
    """GIVEN service ranges WHEN kube-apiserver's SANs are made THEN the IP is the `kubernetes` Service's."""
    dns, ips = pki.apiserver_sans(NAMESPACE, services)
    assert ips == ((ip,) if ip else ())
    assert {"kube-apiserver.shoot--dev--web.svc", "kubernetes.default.svc", "kubernetes"} <= set(dns)


def test_etcd_sans_cover_both_clusters_clients_and_peers() -> None:
    """GIVEN the etcd certificates WHEN their SANs are read THEN main and events are served, peers by pod name."""
    by_name = pki.by_name(CREDS)
    server, peer = by_name[pki.ETCD_SERVER].dns_names, by_name[pki.ETCD_PEER].dns_names
    assert {"etcd-main-client.shoot--dev--web.svc", "etcd-events-client.shoot--dev--web.svc", "localhost"} <= set(
        server
    )
    assert {"etcd-main-peer.shoot--dev--web.svc", "*.etcd-events-peer.shoot--dev--web.svc"} <= set(peer)


@pytest.fixture(scope="module")
def issued() -> dict[str, signing.Issued]:
    """Every certificate of the table issued for real, CAs first."""
    out: dict[str, signing.Issued] = {}
    for c in CREDS:
        if c.kind is pki.Kind.CA:
            out[c.name] = signing.self_signed_ca(c.common_name, c.validity_seconds)
        elif c.kind is pki.Kind.CERT:
            ca = out[c.issuer or ""]
            usages = [u.value for u in c.usages]
            out[c.name] = signing.issue(
                ca.cert, ca.key, c.common_name, list(c.organizations), list(c.dns_names), list(c.ip_addresses), usages,
                c.validity_seconds,
            )  # fmt: skip
    return out


def _cert(pem: str) -> x509.Certificate:
    """A PEM certificate, parsed."""
    return x509.load_pem_x509_certificate(pem.encode())


@pytest.mark.parametrize("credential", [c for c in CREDS if c.kind is pki.Kind.CERT], ids=lambda c: c.name)
def test_each_certificate_verifies_against_its_ca_with_its_usages_and_sans(
    issued: dict[str, signing.Issued], credential: pki.Credential
) -> None:
    """GIVEN an issued certificate WHEN checked THEN its CA signed it, with the table's subject, usages and SANs."""
    cert, ca = _cert(issued[credential.name].cert), _cert(issued[credential.issuer or ""].cert)
    cert.verify_directly_issued_by(ca)
    assert cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value == credential.common_name
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    wanted = {pki.Usage.SERVER: ExtendedKeyUsageOID.SERVER_AUTH, pki.Usage.CLIENT: ExtendedKeyUsageOID.CLIENT_AUTH}
    assert set(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == {
        wanted[u] for u in credential.usages
    }
    if credential.dns_names or credential.ip_addresses:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert sans.get_values_for_type(x509.DNSName) == list(credential.dns_names)
        assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address(i) for i in credential.ip_addresses]
    lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
    assert lifetime == pki.LEAF_VALIDITY + signing.CLOCK_SKEW


@pytest.mark.parametrize("credential", [c for c in CREDS if c.kind is pki.Kind.CA], ids=lambda c: c.name)
def test_each_ca_is_self_signed_and_signs_certificates(
    issued: dict[str, signing.Issued], credential: pki.Credential
) -> None:
    """GIVEN an issued CA WHEN checked THEN it is self-signed, a CA, may sign certificates, and lasts 10 years."""
    cert = _cert(issued[credential.name].cert)
    cert.verify_directly_issued_by(cert)
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert cert.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == pki.CA_VALIDITY + signing.CLOCK_SKEW
    key = serialization.load_pem_private_key(issued[credential.name].key.encode(), password=None)
    assert key.public_key().public_numbers() == cert.public_key().public_numbers()  # type: ignore[union-attr]


def test_a_certificate_does_not_verify_against_another_ca(issued: dict[str, signing.Issued]) -> None:
    """GIVEN the etcd client certificate WHEN verified against the cluster CA THEN it fails."""
    with pytest.raises(ValueError):
        _cert(issued[pki.ETCD_CLIENT].cert).verify_directly_issued_by(_cert(issued[pki.CA].cert))


ALL_CA = [pki.CA, pki.CA_CLIENT, pki.KUBE_APISERVER, pki.KUBE_APISERVER_KUBELET, pki.KUBE_CONTROLLER_MANAGER,
          pki.KUBE_SCHEDULER, pki.MACHINE_CONTROLLER_MANAGER, pki.RESOURCE_MANAGER_SERVER]  # fmt: skip
ALL_ETCD = [pki.CA_ETCD, pki.ETCD_SERVER, pki.ETCD_PEER, pki.ETCD_CLIENT]


@pytest.mark.parametrize(
    ("old", "new", "replaced", "restarted"),
    [
        ({}, {}, [], []),
        ({"ca": 1}, {"ca": 1}, [], []),
        ({}, {"ca": 1}, ALL_CA, ["gardener-resource-manager", "kube-apiserver", "kube-controller-manager",
                                 "kube-scheduler", "kubelet", "machine-controller-manager"]),
        ({}, {"etcdCA": 1}, ALL_ETCD, ["etcd-events", "etcd-main", "kube-apiserver"]),
        ({}, {"frontProxyCA": 2}, [pki.CA_FRONT_PROXY, pki.FRONT_PROXY_CLIENT], ["kube-apiserver"]),
        ({}, {"serviceAccountKey": 1}, [pki.SERVICE_ACCOUNT_KEY], ["kube-apiserver", "kube-controller-manager"]),
        ({}, {"bootstrapToken": 1}, [pki.BOOTSTRAP_TOKEN], []),
        ({"etcdCA": 3}, {"etcdCA": 2}, ALL_ETCD, ["etcd-events", "etcd-main", "kube-apiserver"]),
        ({}, {"etcdCA": 1, "bootstrapToken": 1}, [*ALL_ETCD, pki.BOOTSTRAP_TOKEN],
         ["etcd-events", "etcd-main", "kube-apiserver"]),
    ],
)  # fmt: skip
def test_rotation_plan(old: dict[str, int], new: dict[str, int], replaced: list[str], restarted: list[str]) -> None:
    """GIVEN old and new counters WHEN planned THEN the group, what it signed, and their consumers are listed."""
    plan = pki.rotation_plan(old, new)
    assert sorted(plan) == sorted(replaced)
    assert pki.restarts(plan) == restarted


def test_rotation_plan_lists_each_credentials_restarts() -> None:
    """GIVEN a cluster CA rotation WHEN planned THEN each credential names its own consumers."""
    plan = pki.rotation_plan({"ca": 0}, {"ca": 1})
    assert plan[pki.KUBE_SCHEDULER] == ["kube-scheduler"]
    assert plan[pki.CA_CLIENT] == ["kube-apiserver", "kube-controller-manager", "kubelet"]


@pytest.mark.parametrize(
    ("elapsed_days", "validity_days", "due"),
    [(0, 90, False), (71, 90, False), (72, 90, True), (89, 90, True), (100, 90, True), (5, 12, True), (1, 12, False)],
)
def test_renewal_follows_gardeners_rule(elapsed_days: float, validity_days: float, due: bool) -> None:
    """GIVEN a leaf's age WHEN checked THEN it is due from 80% of its validity or with fewer than 10 days left."""
    assert pki.leaf_renewal_due(0, validity_days * DAY, elapsed_days * DAY) is due


def _olds(**extra: Any) -> dict[str, Any]:
    """A Certificate's state, issued just now for 90 days."""
    now = time.time()
    return {"caCert": "A", "commonName": "x", "rotation": 0, "version": issuing.PROVIDER_VERSION,
            "notBefore": now - 60, "notAfter": now + 90 * DAY, **extra}  # fmt: skip


@pytest.mark.parametrize(
    ("olds", "news", "changes", "replaces"),
    [
        (_olds(), {"caCert": "A", "commonName": "x", "rotation": 0, "version": issuing.PROVIDER_VERSION}, False, []),
        (_olds(), {"caCert": "A", "commonName": "x", "rotation": 1, "version": issuing.PROVIDER_VERSION}, True,
         ["rotation"]),
        (_olds(), {"caCert": "B", "commonName": "x", "rotation": 0, "version": issuing.PROVIDER_VERSION}, True,
         ["caCert"]),
        (_olds(), {"caCert": "A", "commonName": "x", "rotation": 0, "version": "next"}, True, []),
        (_olds(notBefore=time.time() - 80 * DAY, notAfter=time.time() + 10 * DAY),
         {"caCert": "A", "commonName": "x", "rotation": 0, "version": issuing.PROVIDER_VERSION}, True, ["renewal"]),
    ],
)  # fmt: skip
def test_certificate_diff(olds: dict[str, Any], news: dict[str, Any], changes: bool, replaces: list[str]) -> None:
    """GIVEN a certificate's state and new inputs WHEN diffed THEN it is kept, updated, or replaced with a reason."""
    result = issuing.CertificateProvider().diff("id", olds, news)
    assert bool(result.changes) is changes
    assert (result.replaces or []) == replaces


def test_update_keeps_the_credential() -> None:
    """GIVEN a new logic version WHEN a CA is updated THEN its certificate and key stay."""
    olds = {"commonName": "x", "cert": "C", "key": "K", "notBefore": 1.0, "notAfter": 2.0, "version": "0"}
    outs = issuing.CertificateAuthorityProvider().update("id", olds, {"commonName": "x", "version": "1"}).outs
    assert outs is not None
    assert (outs["cert"], outs["key"], outs["version"]) == ("C", "K", "1")


def test_certificate_outputs_leave_out_the_ca_key(issued: dict[str, signing.Issued]) -> None:
    """GIVEN a certificate created by the provider WHEN its outputs are read THEN the CA key is not among them."""
    ca = issued[pki.CA_CLIENT]
    props = {"caCert": ca.cert, "caKey": ca.key, "commonName": "system:kube-scheduler", "usages": ["client"],
             "validitySeconds": 3600, "rotation": 0, "version": issuing.PROVIDER_VERSION}  # fmt: skip
    outs = issuing.CertificateProvider().create(props).outs
    assert outs is not None
    assert "caKey" not in outs and "PRIVATE KEY" in packed_keys.expanded(outs["key"])
    _cert(outs["cert"]).verify_directly_issued_by(_cert(ca.cert))


@pytest.mark.parametrize("given", ["pem", "primes"])
def test_a_certificate_is_issued_from_its_cas_key_given_whole_or_as_primes(
    issued: dict[str, signing.Issued], given: str
) -> None:
    """GIVEN a CA's key as PEM (an older state's input) or as its primes WHEN a certificate is created THEN it verifies.

    A self-hosted shoot's certificates are given their CA's key; their inputs keep it as its primes (a fifth of it).
    """
    ca = issued[pki.CA_CLIENT]
    key = packed_keys.compacted(ca.key) if given == "primes" else ca.key
    assert (given == "primes") == (len(key) * 3 < len(ca.key))
    props = {"caCert": ca.cert, "caKey": key, "commonName": "system:kube-scheduler", "usages": ["client"],
             "validitySeconds": 3600, "rotation": 0, "version": issuing.PROVIDER_VERSION}  # fmt: skip
    outs = issuing.CertificateProvider().create(props).outs
    assert outs is not None
    _cert(outs["cert"]).verify_directly_issued_by(_cert(ca.cert))


def test_bootstrap_token_has_the_kubernetes_format() -> None:
    """GIVEN a new bootstrap token WHEN created THEN its id and secret are `[a-z0-9]{6}` and `[a-z0-9]{16}`."""
    outs = issuing.BootstrapTokenProvider().create({"rotation": 0, "version": "1"}).outs
    assert outs is not None
    assert len(outs["tokenId"]) == 6 and len(outs["tokenSecret"]) == 16
    assert set(outs["tokenId"] + outs["tokenSecret"]) <= set(issuing.TOKEN_ALPHABET)


@pytest.mark.parametrize(
    ("name", "keys"),
    [
        (pki.CA, ("ca.crt", "ca.key")),
        (pki.CA_CLIENT, ("ca.crt", "ca.key")),
        (pki.KUBE_APISERVER, ("ca.crt", "tls.crt", "tls.key")),
        (pki.SERVICE_ACCOUNT_KEY, ("id_rsa", "id_rsa.pub")),
        (pki.BOOTSTRAP_TOKEN, ("token-id", "token-secret")),
    ],
)
def test_secret_keys(name: str, keys: tuple[str, ...]) -> None:
    """GIVEN a hosted shoot's credential WHEN its Secret is built THEN it has these keys (a CA's key its signer's)."""
    assert pki.secret_keys(pki.by_name(CREDS)[name]) == keys


def test_a_hosted_shoots_ca_keys_are_in_signer_secrets_no_component_mounts() -> None:
    """GIVEN a CA WHEN its Secrets are laid out THEN hosted: `<ca>` (certificate) and `<ca>-signer`; else `<ca>`."""
    hosted = pki.by_name(CREDS)[pki.CA_ETCD]
    assert pki.secrets_of(hosted) == {"ca-etcd": ("ca.crt",), "ca-etcd-signer": ("ca.crt", "ca.key")}
    self_hosted = pki.by_name(pki.credentials("shoot--dev--web", ("10.0.0.0/16",), hosted=False))[pki.CA_ETCD]
    assert pki.secrets_of(self_hosted) == {"ca-etcd": ("ca.crt",)}
    web = plan_landscape(parse_landscape(base()), "local").shoots[0]
    mounted = {n for w in controlplane.control_plane(web) for n in controlplane.mounted(w)}
    assert pki.CA in mounted  # the certificate alone, as before
    assert not {pki.signer(c) for c in (pki.CA, pki.CA_ETCD, pki.CA_FRONT_PROXY)} & mounted


def test_rotation_groups_of_the_spec_are_pkis() -> None:
    """GIVEN the spec's rotation fields WHEN compared with pki's groups THEN they are the same names."""
    assert {f.alias or n for n, f in RotationSpec.model_fields.items()} == {g.value for g in pki.Group}


def test_no_project_role_grants_internal_secrets() -> None:
    """GIVEN the project roles WHEN their rules are read THEN resources are explicit and never internalsecrets."""
    for rules in ROLE_RULES.values():
        for rule in rules:
            assert "*" not in rule["resources"]
            assert not any(r.startswith("internalsecrets") for r in rule["resources"])


def test_internal_secret_crd_is_namespaced_and_secret_shaped() -> None:
    """GIVEN arbor's CRDs WHEN InternalSecret's is read THEN it is namespaced with top-level data."""
    crd = next(c for c in api.crds() if c["spec"]["names"]["kind"] == "InternalSecret")
    assert crd["metadata"]["name"] == "internalsecrets.arbor.dev"
    assert crd["spec"]["scope"] == "Namespaced"
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert sorted(schema["properties"]) == ["data", "immutable", "type"]


def _landscape(**shoot: Any) -> dict[str, Any]:
    """A minimal valid landscape whose one shoot has `shoot` added."""
    pool = {"name": "a", "machine": {"type": "t", "image": {"name": "i", "version": "1"}}, "minimum": 1, "maximum": 1}
    return {
        "garden": {"projects": [{"name": "dev"}]},
        "seeds": [{"name": "s", "provider": "local"}],
        "shoots": [{"name": "web", "project": "dev", "seed": "s", "kubernetes": {"version": "1.34.4"},
                    "networking": {"nodes": "10.250.0.0/16", "pods": "100.64.0.0/12", "services": "100.104.0.0/13"},
                    "workers": [pool], **shoot}],
    }  # fmt: skip


AT = "landscape.shoots[0]"


@pytest.mark.parametrize(
    ("shoot", "lines"),
    [
        ({"credentials": {"rotation": {"ca": -1}}},
         [f"{AT}.credentials.rotation.ca: must be at least 0, not -1"]),
        ({"credentials": {"rotation": {"kubelet": 1}}},
         [f"{AT}.credentials.rotation.kubelet: unknown field; the fields here are bootstrapToken, ca, etcdCA, "
          "frontProxyCA, serviceAccountKey"]),
        ({"credentials": {"rotation": {"etcdCA": "x"}}},
         [f"{AT}.credentials.rotation.etcdCA: must be a whole number, not 'x'"]),
        ({"adminKubeconfig": {"expiration": "25h"}},
         [f"{AT}.adminKubeconfig.expiration: '25h' is longer than the maximum 24h"]),
        ({"adminKubeconfig": {"expiration": "5m"}},
         [f"{AT}.adminKubeconfig.expiration: '5m' is shorter than the minimum 10m"]),
        ({"adminKubeconfig": {"expiration": "1 hour"}},
         [f"{AT}.adminKubeconfig.expiration: '1 hour' is not a duration like 1h, 30m or 1h30m"]),
        ({"adminKubeconfig": {"expiration": ""}},
         [f"{AT}.adminKubeconfig.expiration: '' is not a duration like 1h, 30m or 1h30m"]),
        ({"credentials": {"rotation": {"ca": -1}}, "adminKubeconfig": {"expiration": "2d"}},
         [f"{AT}.credentials.rotation.ca: must be at least 0, not -1",
          f"{AT}.adminKubeconfig.expiration: '2d' is not a duration like 1h, 30m or 1h30m"]),
    ],
)  # fmt: skip
def test_spec_validation(shoot: dict[str, Any], lines: list[str]) -> None:
    """GIVEN bad credential settings WHEN parsed THEN one line per problem names the field and the reason."""
    with pytest.raises(SpecError) as err:
        parse_landscape(_landscape(**shoot))
    assert err.value.lines == lines


@pytest.mark.parametrize(
    ("shoot", "rotation", "expiration_s"),
    [
        ({}, {"ca": 0, "etcdCA": 0, "frontProxyCA": 0, "serviceAccountKey": 0, "bootstrapToken": 0}, 3600),
        ({"credentials": {"rotation": {"ca": 2}}, "adminKubeconfig": {"expiration": "24h"}},
         {"ca": 2, "etcdCA": 0, "frontProxyCA": 0, "serviceAccountKey": 0, "bootstrapToken": 0}, 86400),
        ({"adminKubeconfig": {"expiration": "1h30m"}},
         {"ca": 0, "etcdCA": 0, "frontProxyCA": 0, "serviceAccountKey": 0, "bootstrapToken": 0}, 5400),
    ],
)  # fmt: skip
def test_plan_carries_counters_and_expiration(
    shoot: dict[str, Any], rotation: dict[str, int], expiration_s: int
) -> None:
    """GIVEN credential settings WHEN planned THEN every group's counter and the expiration in seconds are there."""
    values = plan_landscape(parse_landscape(_landscape(**shoot)), "local").shoots[0].credentials
    assert values.rotation == rotation
    assert values.admin_kubeconfig_expiration_s == expiration_s


class _PkiMocks(pulumi.runtime.Mocks):
    """Outputs echo the inputs, with a stand-in for what each provider generates."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.names[args.name] = args.typ.rsplit(":", 1)[-1]
        generated = {"cert": f"cert of {args.name}", "key": f"key of {args.name}", "privateKey": "sa private",
                     "publicKey": "sa public", "tokenId": "abcdef", "tokenSecret": "0123456789abcdef"}  # fmt: skip
        return f"{args.name}-id", dict(args.inputs) | generated

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, []


@pytest.fixture
def pki_mocks() -> _PkiMocks:
    """Mocks installed for a test stack."""
    mocks = _PkiMocks()
    pulumi.runtime.set_mocks(mocks, project="arbor", stack="test", preview=False)
    return mocks


@pulumi.runtime.test
def test_shoot_pki_registers_every_credential_and_its_secret(pki_mocks: _PkiMocks) -> pulumi.Output[None]:
    """GIVEN shoot web WHEN its PKI is issued THEN one resource per credential, and each Secret's data is wired."""
    shoot = plan_landscape(parse_landscape(_landscape(credentials={"rotation": {"etcdCA": 4}})), "t").shoots[0]
    parent = pulumi.ComponentResource("arbor:test:Parent", "web")
    issued = issue_shoot_pki("web", shoot, parent)
    secrets = issued.secrets()
    etcd_client = issued.resources[pki.ETCD_CLIENT]

    def check(values: list[Any]) -> None:
        server, apiserver_secret, token_secret, rotation = values
        assert pki_mocks.names[f"web-pki-{pki.CA}"] == "CertificateAuthority"
        assert {n.removeprefix("web-pki-") for n in pki_mocks.names if n != "web"} == {c.name for c in CREDS}
        assert server == "cert of web-pki-etcd-server"
        assert apiserver_secret == {"ca.crt": "cert of web-pki-ca", "tls.crt": "cert of web-pki-kube-apiserver",
                                    "tls.key": "key of web-pki-kube-apiserver"}  # fmt: skip
        assert token_secret == {"token-id": "abcdef", "token-secret": "0123456789abcdef"}
        assert rotation == 4

    # Every resource's id too: the check runs once all of them are registered.
    registered = pulumi.Output.all(*(r.id for r in issued.resources.values()))
    return pulumi.Output.all(
        issued[pki.ETCD_SERVER].cert,
        pulumi.Output.all(**secrets[pki.KUBE_APISERVER]),
        pulumi.Output.all(**secrets[pki.BOOTSTRAP_TOKEN]),
        etcd_client.rotation,  # type: ignore[attr-defined]
        registered,
    ).apply(lambda values: check(values[:4]))
