"""hack/admin_kubeconfig.py: a shoot's admin kubeconfig issued on request from the garden's client CA, kept nowhere."""

from __future__ import annotations

import base64
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import NameOID
from hypothesis import given
from hypothesis import strategies as st

from components.reconciler.signing import CLOCK_SKEW, Issued, self_signed_ca

sys.path.insert(0, str(Path(__file__).parents[2] / "hack"))
import admin_kubeconfig as request_hack

REF = "dev/web"
PATH = "/apis/arbor.dev/v1alpha1/namespaces/garden-dev/internalsecrets/web.ca-client"


def _b64(text: str) -> str:
    """Text as a Secret keeps it."""
    return base64.b64encode(text.encode()).decode()


@pytest.fixture(scope="module")
def cas() -> tuple[Issued, Issued]:
    """The shoot's client CA and the CA its API server serves with."""
    return self_signed_ca("kubernetes-client", 86400), self_signed_ca("kubernetes", 86400)


def _outputs(server_ca: Issued, expiration_s: int = 3600) -> dict[str, Any]:
    """A stack's outputs as `pulumi stack output --json --show-secrets` gives them (the parts a request reads)."""
    shoot_kubeconfig = yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "s", "cluster": {"server": "https://127.0.0.1:1234",
                                               "certificate-authority-data": _b64(server_ca.cert)}}],
        "contexts": [{"name": "c", "context": {"cluster": "s", "user": "u"}}], "users": [{"name": "u", "user": {}}],
    })  # fmt: skip
    return {
        "adminKubeconfigExpirationSeconds": {REF: expiration_s, "ops/db": 600},
        "endpoints": {f"shoot/{REF}": "https://127.0.0.1:1234"},
        "kubeconfigs": {"garden": "garden-kubeconfig", f"shoot/{REF}": shoot_kubeconfig},
    }


def _garden(client_ca: Issued) -> Any:
    """A garden holding the shoot's InternalSecret `web.ca-client`; records what was read."""
    reads: list[tuple[str, str]] = []

    def read(kubeconfig: str, path: str) -> Mapping[str, str] | None:
        reads.append((kubeconfig, path))
        return {"ca.crt": _b64(client_ca.cert), "ca.key": _b64(client_ca.key)} if path == PATH else None

    read.reads = reads  # type: ignore[attr-defined]
    return read


def _client_cert(kubeconfig: str) -> x509.Certificate:
    """The client certificate of the kubeconfig's user."""
    user = yaml.safe_load(kubeconfig)["users"][0]["user"]
    return x509.load_pem_x509_certificate(base64.b64decode(user["client-certificate-data"]))


def test_a_request_issues_an_admin_of_the_client_ca_for_the_shoots_validity(cas: tuple[Issued, Issued]) -> None:
    """GIVEN a shoot's outputs and its InternalSecret WHEN requested THEN admin in system:masters, signed, 1 h."""
    client_ca, server_ca = cas
    read = _garden(client_ca)
    got = request_hack.request(_outputs(server_ca), REF, read=read)
    assert read.reads == [("garden-kubeconfig", PATH)]
    cert = _client_cert(got)
    cert.verify_directly_issued_by(x509.load_pem_x509_certificate(client_ca.cert.encode()))
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)] == ["admin"]
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["system:masters"]
    lifetime = cert.not_valid_after_utc.timestamp() - cert.not_valid_before_utc.timestamp()
    assert lifetime == 3600 + CLOCK_SKEW.total_seconds()
    cluster = yaml.safe_load(got)["clusters"][0]["cluster"]
    assert cluster["server"] == "https://127.0.0.1:1234"
    assert base64.b64decode(cluster["certificate-authority-data"]).decode() == server_ca.cert


def test_user_groups_and_expiration_can_be_asked_for(cas: tuple[Issued, Issued]) -> None:
    """GIVEN another user, groups and 10 minutes WHEN requested THEN the certificate says so."""
    client_ca, server_ca = cas
    got = request_hack.request(_outputs(server_ca), REF, 600, "alice", ("team-a",), read=_garden(client_ca))
    cert = _client_cert(got)
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)] == ["alice"]
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["team-a"]
    lifetime = cert.not_valid_after_utc.timestamp() - cert.not_valid_before_utc.timestamp()
    assert lifetime == 600 + CLOCK_SKEW.total_seconds()


@pytest.mark.parametrize(
    ("ref", "expiration", "said"),
    [
        ("dev/nope", None, "shoot: no shoot 'dev/nope' in this stack (it has: dev/web, ops/db)"),
        ("web", None, "shoot: no shoot 'web'"),
        (REF, 0, "--expiration-seconds: 0 is not a whole number of seconds from 1 to 86400"),
        (REF, 86401, "--expiration-seconds: 86401 is not"),
        ("ops/db", None, "shoot: 'ops/db' has no endpoint in the stack's outputs yet"),
    ],
)
def test_a_request_that_cannot_be_served_says_which_argument_and_why(
    cas: tuple[Issued, Issued], ref: str, expiration: int | None, said: str
) -> None:
    """GIVEN an unknown shoot, a validity out of range or a shoot not made yet WHEN requested THEN a clear error."""
    with pytest.raises(request_hack.RequestError, match="^" + said.replace("(", r"\(").replace(")", r"\)")):
        request_hack.request(_outputs(cas[1]), ref, expiration, read=_garden(cas[0]))


def test_a_garden_without_the_client_ca_is_named(cas: tuple[Issued, Issued]) -> None:
    """GIVEN a garden without the InternalSecret WHEN requested THEN the error names where it was looked for."""
    with pytest.raises(request_hack.RequestError, match=f"the garden holds no client CA for 'dev/web' \\({PATH}\\)"):
        request_hack.request(_outputs(cas[1]), REF, read=lambda _k, _p: None)
    with pytest.raises(request_hack.RequestError, match="the stack's outputs name no garden"):
        outputs = _outputs(cas[1])
        del outputs["kubeconfigs"]["garden"]
        request_hack.request(outputs, REF, read=_garden(cas[0]))


def test_a_seed_stack_reaches_the_garden_its_landscape_stack_made(cas: tuple[Issued, Issued]) -> None:
    """GIVEN a seed stack's outputs (no garden of its own) WHEN requested THEN its landscape stack's garden is read."""
    outputs = _outputs(cas[1])
    del outputs["kubeconfigs"]["garden"]
    outputs["shard"] = {"landscape": "local", "seed": "local-1", "garden": "0a1b"}
    read, asked = _garden(cas[0]), []

    def others(stack: str) -> dict[str, Any]:
        asked.append(stack)
        return {"kubeconfigs": {"garden": "the-landscape-stacks-garden"}}

    assert request_hack.request(outputs, REF, read=read, others=others).startswith("apiVersion: v1")
    assert asked == ["local"] and read.reads == [("the-landscape-stacks-garden", PATH)]


@given(ref=st.text(max_size=30), expiration=st.one_of(st.none(), st.integers()), user=st.text(max_size=20))
def test_any_request_gets_a_kubeconfig_or_a_clear_error(ref: str, expiration: int | None, user: str) -> None:
    """GIVEN any shoot, validity and user WHEN requested THEN a kubeconfig or a RequestError, never another error."""
    client_ca, server_ca = _CAS
    try:
        got = request_hack.request(_outputs(server_ca), ref, expiration, user or "admin", read=_garden(client_ca))
    except request_hack.RequestError as error:
        assert str(error).split(":", 1)[0] in {"shoot", "--expiration-seconds", "--user"}
    else:
        assert ref == REF and yaml.safe_load(got)["kind"] == "Config"


_CAS = (self_signed_ca("kubernetes-client", 86400), self_signed_ca("kubernetes", 86400))


def test_main_prints_why_and_exits_1_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """GIVEN a shoot the stack does not have WHEN the script runs THEN one line on stderr and exit code 1."""
    monkeypatch.setattr(request_hack, "stack_outputs", lambda _stack: {"adminKubeconfigExpirationSeconds": {}})
    assert request_hack.main(["dev/web", "--stack", "local"]) == 1
    err = capsys.readouterr().err
    assert err == "kubeconfig: shoot: no shoot 'dev/web' in this stack (it has: none); a sharded one is in its seed's\n"
