"""The reconciler's client with what GKE and EKS kubeconfigs hold: tokens, token files and exec credential plugins."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from components.reconciler import credentials
from components.reconciler.credentials import CredentialError
from components.reconciler.kube import Kube, KubeError, certificate_authority, kubeconfig_file, server_of
from tests.unit.kube_server import CLIENT_NAME, OBJECT_PATH, ApiServer, api_server, exec_credential, exec_plugin, runs

V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"


@pytest.fixture(scope="module")
def server() -> Iterator[ApiServer]:
    """One HTTPS server for the module; each test trusts its own tokens."""
    with api_server() as served:
        yield served


@pytest.fixture(autouse=True)
def fresh_tokens(server: ApiServer) -> None:
    """No token is trusted from an earlier test."""
    server.tokens.clear()
    server.seen.clear()


def exec_user(script: Path, api_version: str = V1BETA1, **extra: Any) -> dict[str, Any]:
    """A kubeconfig user running `script`, as GKE's and EKS's kubeconfigs do."""
    return {"exec": {"apiVersion": api_version, "command": str(script), "interactiveMode": "Never", **extra}}


def read_user(server: ApiServer, user: dict[str, Any]) -> Any:
    """What the server answers the object GET with, as `user`."""
    return Kube.from_kubeconfig(server.kubeconfig(user)).get(OBJECT_PATH)["data"]["user"]


def in_minutes(minutes: int) -> str:
    """An RFC 3339 timestamp `minutes` from now."""
    return (datetime.now(UTC) + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_token_is_sent_as_bearer(server: ApiServer) -> None:
    """GIVEN a kubeconfig with `token` WHEN an object is read THEN the server authenticated the token."""
    server.tokens.add("static-token")
    assert read_user(server, {"token": "static-token"}) == "token-user"
    assert server.seen == ["Bearer static-token"]


def test_a_refused_token_is_a_401(server: ApiServer) -> None:
    """GIVEN a token the server does not know WHEN read THEN a KubeError with status 401 (not 'gone')."""
    with pytest.raises(KubeError) as raised:
        read_user(server, {"token": "unknown"})
    assert raised.value.status == 401


def test_a_token_file_is_read_on_every_request(server: ApiServer, tmp_path: Path) -> None:
    """GIVEN a tokenFile that is rotated between two requests WHEN read THEN each request carries the file's token."""
    token_file = tmp_path / "token"
    token_file.write_text("first\n")
    server.tokens.update({"first", "second"})
    kube = Kube.from_kubeconfig(server.kubeconfig({"tokenFile": str(token_file)}))
    kube.get(OBJECT_PATH)
    token_file.write_text("second\n")
    kube.get(OBJECT_PATH)
    assert server.seen == ["Bearer first", "Bearer second"]


def test_an_exec_plugin_runs_with_its_args_env_and_cluster_info(server: ApiServer, tmp_path: Path) -> None:
    """GIVEN an exec user with args, env and provideClusterInfo WHEN read THEN the plugin got all three."""
    script = exec_plugin(tmp_path, [exec_credential(token="exec-token")])
    server.tokens.add("exec-token")
    user = exec_user(
        script, args=["eks", "get-token", "--cluster-name", "seed"], env=[{"name": "FAKE_PLUGIN_ENV", "value": "v"}],
        provideClusterInfo=True,
    )  # fmt: skip
    assert read_user(server, user) == "token-user"
    (run,) = runs(script)
    info = json.loads(run["info"])
    assert run["args"] == ["eks", "get-token", "--cluster-name", "seed"] and run["env"] == "v"
    assert info["apiVersion"] == V1BETA1 and info["spec"]["interactive"] is False
    assert info["spec"]["cluster"]["server"] == server.url


def test_an_unexpired_exec_token_is_reused_until_expiry(server: ApiServer, tmp_path: Path) -> None:
    """GIVEN a v1 token that expires in an hour WHEN three clients read THEN the plugin ran once."""
    script = exec_plugin(tmp_path, [exec_credential(V1, token="hour", expirationTimestamp=in_minutes(60))])
    server.tokens.add("hour")
    for _ in range(3):
        assert read_user(server, exec_user(script, V1)) == "token-user"
    assert len(runs(script)) == 1


def test_clients_made_at_once_run_the_plugin_once(server: ApiServer, tmp_path: Path) -> None:
    """GIVEN four clients of one cluster made in parallel WHEN they read THEN the plugin ran once for all."""
    script = exec_plugin(tmp_path, [exec_credential(V1, token="shared", expirationTimestamp=in_minutes(60))])
    server.tokens.add("shared")
    with ThreadPoolExecutor(max_workers=4) as pool:
        users = list(pool.map(lambda _: read_user(server, exec_user(script, V1)), range(4)))
    assert users == ["token-user"] * 4 and len(runs(script)) == 1


def test_an_expired_exec_token_is_asked_for_again(
    server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a token for 10 minutes WHEN read now, in 9 and in 11 minutes THEN the plugin ran again only at 11."""
    answers = [exec_credential(token=t, expirationTimestamp=in_minutes(m)) for t, m in (("one", 10), ("two", 70))]
    script = exec_plugin(tmp_path, answers)
    server.tokens.update({"one", "two"})
    start = datetime.now(UTC)
    for minutes in (0, 9, 11):
        monkeypatch.setattr(credentials, "now", lambda m=minutes: start + timedelta(minutes=m))
        read_user(server, exec_user(script))
    assert server.seen == ["Bearer one", "Bearer one", "Bearer two"] and len(runs(script)) == 2


def test_a_401_asks_the_plugin_once_more(server: ApiServer, tmp_path: Path) -> None:
    """GIVEN a cached token the server no longer takes WHEN read THEN the plugin is asked again and the read works."""
    script = exec_plugin(tmp_path, [exec_credential(token="revoked"), exec_credential(token="renewed")])
    server.tokens.add("renewed")
    assert read_user(server, exec_user(script)) == "token-user"
    assert server.seen == ["Bearer revoked", "Bearer renewed"] and len(runs(script)) == 2


def test_an_exec_client_certificate_is_used_for_tls(server: ApiServer, tmp_path: Path) -> None:
    """GIVEN a plugin answering clientCertificateData and clientKeyData WHEN read THEN the server saw the cert."""
    issued = server.client_certificate()
    script = exec_plugin(tmp_path, [exec_credential(V1, clientCertificateData=issued.cert, clientKeyData=issued.key)])
    assert read_user(server, exec_user(script, V1)) == CLIENT_NAME
    assert server.seen == [""]


def test_a_missing_plugin_is_named_with_its_install_hint(server: ApiServer, tmp_path: Path) -> None:
    """GIVEN an exec command that does not exist WHEN a client is made THEN the error names it and the hint."""
    user = exec_user(tmp_path / "gke-gcloud-auth-plugin", installHint="install it with gcloud components install")
    with pytest.raises(CredentialError, match=r"gke-gcloud-auth-plugin' is not installed.*gcloud components install"):
        Kube.from_kubeconfig(server.kubeconfig(user))


def test_a_failing_plugin_is_named_without_its_output(server: ApiServer, tmp_path: Path) -> None:
    """GIVEN a plugin that prints a token and exits 1 WHEN a client is made THEN its name and error, not the token."""
    script = exec_plugin(tmp_path, [exec_credential(token="s3cret-token")], exit_code=1, stderr="no credentials\n")
    with pytest.raises(CredentialError) as raised:
        Kube.from_kubeconfig(server.kubeconfig(exec_user(script)))
    message = str(raised.value)
    assert str(script) in message and "exit status 1: no credentials" in message
    assert "s3cret-token" not in message


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (exec_credential(V1, token="s3cret-token"), "answered apiVersion 'client.authentication.k8s.io/v1'"),
        ({"kind": "Secret", "token": "s3cret-token"}, "kind is not ExecCredential"),
        (exec_credential(), "neither status.token nor a client certificate"),
        (exec_credential(clientCertificateData="c"), "not both"),
        (exec_credential(token="s3cret-token", expirationTimestamp="soon"), "invalid expirationTimestamp"),
    ],
    ids=["other-version", "not-exec-credential", "empty", "half-a-certificate", "bad-expiry"],
)
def test_a_wrong_answer_is_refused_without_quoting_it(
    server: ApiServer, tmp_path: Path, answer: dict[str, Any], reason: str
) -> None:
    """GIVEN a plugin printing a wrong answer WHEN a client is made THEN the reason, never the printed token."""
    script = exec_plugin(tmp_path, [answer])
    with pytest.raises(CredentialError, match=reason) as raised:
        Kube.from_kubeconfig(server.kubeconfig(exec_user(script)))
    assert "s3cret-token" not in str(raised.value)


@pytest.mark.parametrize(
    ("user", "reason"),
    [
        ({"exec": {"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "x"}}, "use .*v1 or .*v1beta1"),
        ({"exec": {"apiVersion": V1, "command": "x", "interactiveMode": "Always"}}, "wants a terminal"),
        ({"auth-provider": {"name": "gcp"}}, "auth-provider 'gcp'"),
        ({}, "no credentials"),
    ],
    ids=["v1alpha1", "interactive", "auth-provider", "nothing"],
)
def test_a_user_arbor_cannot_use_is_refused(server: ApiServer, user: dict[str, Any], reason: str) -> None:
    """GIVEN a kubeconfig user that cannot work without a person WHEN a client is made THEN why, before any request."""
    with pytest.raises(CredentialError, match=reason):
        Kube.from_kubeconfig(server.kubeconfig(user))
    assert server.seen == []


@pytest.mark.parametrize(
    "user",
    [
        {"client-certificate": "MISSING", "client-key-data": "a2V5"},
        {"client-certificate-data": "Y2VydA==", "client-key": "MISSING"},
        {"tokenFile": "MISSING"},
    ],
    ids=["client-certificate", "client-key", "tokenFile"],
)
def test_an_unreadable_file_is_named_by_its_field_and_path(tmp_path: Path, user: dict[str, str]) -> None:
    """GIVEN a user naming a file that is not there WHEN its credentials are read THEN the field, the path and why."""
    missing = str(tmp_path / "missing")
    field = next(k for k, v in user.items() if v == "MISSING")
    with pytest.raises(CredentialError) as raised:
        _, source = credentials.user_auth({**user, field: missing}, {})
        assert source is not None  # a tokenFile is read on each request, not before
        source.token()
    assert str(raised.value) == f"kubeconfig user's {field} {missing} cannot be read: No such file or directory"


def file_kubeconfig(server: ApiServer, tmp_path: Path) -> str:
    """A kubeconfig that references its CA and client certificate files, as a local cluster's does."""
    issued = server.client_certificate()
    files = {"ca.crt": server.ca.cert, "admin.crt": issued.cert, "admin.key": issued.key}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    config = json.loads(server.kubeconfig({"client-certificate": str(tmp_path / "admin.crt"),
                                           "client-key": str(tmp_path / "admin.key")}))  # fmt: skip
    config["clusters"][0]["cluster"] = {"server": server.url, "certificate-authority": str(tmp_path / "ca.crt")}
    return json.dumps(config)


def test_a_kubeconfig_of_files_reads_with_them(server: ApiServer, tmp_path: Path) -> None:
    """GIVEN a kubeconfig naming CA, certificate and key files WHEN read THEN over TLS as that client, CA from file."""
    kubeconfig = file_kubeconfig(server, tmp_path)
    assert Kube.from_kubeconfig(kubeconfig).get(OBJECT_PATH)["data"]["user"] == CLIENT_NAME
    assert certificate_authority(kubeconfig) == server.ca.cert


def test_credential_files_gone_make_the_cluster_unreachable(server: ApiServer, tmp_path: Path) -> None:
    """GIVEN a kubeconfig whose key file is gone (its local cluster deleted) WHEN read THEN unreachable, path named."""
    kubeconfig = file_kubeconfig(server, tmp_path)
    (tmp_path / "admin.key").unlink()
    kube = Kube.from_kubeconfig(kubeconfig)

    assert kube.find(OBJECT_PATH) is None
    assert not kube.ready()
    with pytest.raises(KubeError) as raised:
        kube.get(OBJECT_PATH)
    assert raised.value.status == 0
    assert f"client-key {tmp_path / 'admin.key'} cannot be read: No such file or directory" in str(raised.value)
    (tmp_path / "ca.crt").unlink()
    with pytest.raises(CredentialError, match=r"certificate-authority .*ca\.crt cannot be read"):
        certificate_authority(kubeconfig)


def test_a_kubeconfig_file_reference_reads_the_file_and_its_relative_paths(server: ApiServer, tmp_path: Path) -> None:
    """GIVEN a reference to a kubeconfig file naming its files relatively WHEN read THEN as that client, over TLS.

    A local cluster is reached this way by every reconciler: the state keeps the path, the cluster the credentials.
    """
    config = json.loads(file_kubeconfig(server, tmp_path))
    config["clusters"][0]["cluster"]["certificate-authority"] = "ca.crt"
    config["users"][0]["user"] = {"client-certificate": "admin.crt", "client-key": "admin.key"}
    (tmp_path / "kubeconfig.yaml").write_text(json.dumps(config))
    reference = kubeconfig_file(str(tmp_path / "kubeconfig.yaml"))

    assert Kube.from_kubeconfig(reference).get(OBJECT_PATH)["data"]["user"] == CLIENT_NAME
    assert certificate_authority(reference) == server.ca.cert and server_of(reference) == server.url


def test_a_kubeconfig_file_gone_makes_the_cluster_unreachable(tmp_path: Path) -> None:
    """GIVEN a reference to a kubeconfig file that is gone (its cluster deleted) WHEN read THEN unreachable, named."""
    gone = tmp_path / "kubeconfig.yaml"
    kube = Kube.from_kubeconfig(kubeconfig_file(str(gone)))
    assert kube.find(OBJECT_PATH) is None and not kube.ready()
    with pytest.raises(KubeError, match=rf"kubeconfig {gone} cannot be read") as raised:
        kube.get(OBJECT_PATH)
    assert raised.value.status == 0 and server_of(kubeconfig_file(str(gone))) == ""
