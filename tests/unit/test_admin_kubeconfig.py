"""Admin kubeconfigs: the issued client certificate, the expiration cap, and when `pulumi up` renews one."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import NameOID

from components.reconciler import admin_kubeconfig as admin
from components.reconciler.ca_source import ca_hash
from components.reconciler.kube import Kube, KubeError
from components.reconciler.signing import CLOCK_SKEW, Issued, self_signed_ca
from tests.unit.test_shoot_state import SeedSecrets

HOUR = 3600.0


@pytest.fixture(scope="module")
def client_ca() -> Issued:
    """A client CA, as a shoot's `ca-client`."""
    return self_signed_ca("kubernetes-client", 86400)


def _props(ca: Issued, **extra: Any) -> dict[str, Any]:
    """An AdminKubeconfig's inputs."""
    return {"clientCaCert": ca.cert, "clientCaKey": ca.key, "server": "https://127.0.0.1:6443", "serverCa": ca.cert,
            "user": "admin", "groups": ["system:masters"], "expirationSeconds": 7200, "version": admin.PROVIDER_VERSION,
            **extra}  # fmt: skip


def _cert(kubeconfig: str) -> x509.Certificate:
    """The client certificate of the kubeconfig's user."""
    data = yaml.safe_load(kubeconfig)["users"][0]["user"]["client-certificate-data"]
    return x509.load_pem_x509_certificate(base64.b64decode(data))


@pytest.mark.parametrize(
    ("user", "groups"),
    [("admin", ["system:masters"]), ("alice@example.com", ["team-a", "team-b"]), ("robot", [])],
)
def test_issued_certificate_names_user_and_groups_and_expires_on_time(
    client_ca: Issued, user: str, groups: list[str]
) -> None:
    """GIVEN a user, groups and 2h WHEN a kubeconfig is issued THEN its certificate says so and the CA signed it."""
    outs = admin.AdminKubeconfigProvider().create(_props(client_ca, user=user, groups=groups)).outs
    assert outs is not None
    cert = _cert(outs["kubeconfig"])
    cert.verify_directly_issued_by(x509.load_pem_x509_certificate(client_ca.cert.encode()))
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)] == [user]
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == groups
    # The lifetime is the expiration asked for (plus the backdating for clock skew), and it is valid now: no
    # assertion on how long the test took.
    before, after = cert.not_valid_before_utc.timestamp(), cert.not_valid_after_utc.timestamp()
    assert after - before == 2 * HOUR + CLOCK_SKEW.total_seconds()
    assert before < time.time() < after
    assert "clientCaKey" not in outs
    assert outs["notAfter"] == cert.not_valid_after_utc.timestamp()


def test_kubeconfig_points_at_the_server_with_its_ca(client_ca: Issued) -> None:
    """GIVEN a server and its CA WHEN a kubeconfig is issued THEN its cluster entry carries both."""
    outs = admin.AdminKubeconfigProvider().create(_props(client_ca, server="https://10.0.0.1")).outs
    assert outs is not None
    cluster = yaml.safe_load(outs["kubeconfig"])["clusters"][0]["cluster"]
    assert cluster["server"] == "https://10.0.0.1"
    assert base64.b64decode(cluster["certificate-authority-data"]).decode() == client_ca.cert


@pytest.mark.parametrize(
    ("seconds", "ok"),
    [(3600, True), (3600.0, True), (86400, True), (1, True), (0, False), (86401, False), (-5, False), (1.5, False),
     ("1h", False), (True, False), (None, False)],
)  # fmt: skip
def test_expiration_is_capped_at_a_day(seconds: object, ok: bool) -> None:
    """GIVEN an expiration WHEN checked THEN 1s..24h in whole seconds passes and the failure names the input."""
    result = admin.AdminKubeconfigProvider().check({}, {"expirationSeconds": seconds})
    assert (result.failures == []) is ok
    if not ok:
        assert result.failures[0].property == "expirationSeconds"
        assert "from 1 to 86400 (24h)" in result.failures[0].reason


@pytest.mark.parametrize(
    ("elapsed_h", "validity_h", "due"),
    [(0, 2, False), (0.9, 2, False), (1.01, 2, True), (3, 2, True), (11, 24, False), (12.5, 24, True)],
)
def test_renewal_when_less_than_half_remains(elapsed_h: float, validity_h: float, due: bool) -> None:
    """GIVEN a kubeconfig's age WHEN checked THEN it is due once less than half of its validity remains."""
    assert admin.admin_kubeconfig_renewal_due(0, validity_h * HOUR, elapsed_h * HOUR) is due


def _issued_ago(hours: float, validity_h: float = 2) -> dict[str, Any]:
    """State of a kubeconfig issued `hours` ago."""
    now = time.time()
    return {"notBefore": now - hours * HOUR, "notAfter": now - hours * HOUR + validity_h * HOUR}


@pytest.mark.parametrize(
    ("olds", "news", "replaces"),
    [
        (_issued_ago(0.1), {}, []),
        (_issued_ago(1.5), {}, ["renewal"]),
        (_issued_ago(0.1), {"expirationSeconds": 3600}, ["expirationSeconds"]),
        (_issued_ago(0.1), {"clientCaCert": "rotated"}, ["clientCaCert"]),
        (_issued_ago(1.5), {"groups": ["viewers"]}, ["groups", "renewal"]),
    ],
)
def test_diff_reissues_on_new_inputs_or_when_due(
    client_ca: Issued, olds: dict[str, Any], news: dict[str, Any], replaces: list[str]
) -> None:
    """GIVEN a kubeconfig's state WHEN diffed THEN it is kept, or issued again with the reason."""
    base = {k: v for k, v in _props(client_ca).items() if k != "clientCaKey"}
    result = admin.AdminKubeconfigProvider().diff("id", base | olds, _props(client_ca) | news)
    assert (result.replaces or []) == replaces
    assert bool(result.changes) is bool(replaces)


def test_the_state_names_the_cas_by_hashes_and_leans_an_older_one(client_ca: Issued) -> None:
    """GIVEN an issued kubeconfig WHEN its outputs are kept THEN no CA certificate in them; an older state is leaned."""
    provider = admin.AdminKubeconfigProvider()
    props = _props(client_ca)
    outs = provider.create(props).outs or {}
    assert "clientCaCert" not in outs and "serverCa" not in outs
    assert client_ca.cert.splitlines()[1] not in json.dumps({k: v for k, v in outs.items() if k != "kubeconfig"})
    assert not provider.diff("id", outs, props).changes
    older = {**{k: v for k, v in outs.items() if not k.endswith("Hash")}, "clientCaCert": client_ca.cert,
             "serverCa": client_ca.cert}  # fmt: skip
    assert not provider.diff("id", older, props).changes
    assert provider.read("id", older).outs == outs


@pytest.mark.parametrize("same_ca", [True, False])
def test_a_hosted_shoots_admin_kubeconfig_is_signed_with_the_client_ca_its_seed_holds(
    client_ca: Issued, same_ca: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN the client CA in the seed's `ca-client-signer` WHEN issued THEN signed by it, and no copy is kept.

    The inputs name the Secret and the CA's hash; a Secret holding another CA (the SecretSet not written yet) is
    refused in one line rather than signing with the wrong CA.
    """
    held = client_ca if same_ca else self_signed_ca("another", 86400)
    secrets = {"ca-client-signer": {"ca.crt": held.cert, "ca.key": held.key}}
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: SeedSecrets(secrets)))
    props = {k: v for k, v in _props(client_ca).items() if k not in ("clientCaCert", "clientCaKey")}
    props |= {"clientCaCertHash": ca_hash(client_ca.cert), "seedKubeconfig": "kubeconfig-file:/seed",
              "seedNamespace": "shoot--dev--web", "caSecret": "ca-client-signer"}  # fmt: skip
    if not same_ca:
        with pytest.raises(KubeError, match="holds another CA than the one"):
            admin.AdminKubeconfigProvider().create(props)
        return
    outs = admin.AdminKubeconfigProvider().create(props).outs
    assert outs is not None
    _cert(outs["kubeconfig"]).verify_directly_issued_by(x509.load_pem_x509_certificate(client_ca.cert.encode()))
    assert not {"clientCaCert", "clientCaKey"} & set(outs) and outs["clientCaCertHash"] == ca_hash(client_ca.cert)
    assert not admin.AdminKubeconfigProvider().diff("a", outs, props).changes
