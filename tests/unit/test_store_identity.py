"""The local store's trust in a seed's tokens: MinIO's OpenID provider per bucket, the role's policy and ARN."""

from __future__ import annotations

import base64
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from minio.credentials.providers import StaticProvider
from minio.error import MinioAdminException
from minio.minioadmin import MinioAdmin

from components.checks import parse_landscape
from components.plan.planner import plan_landscape
from components.reconciler import store_bucket, store_identity
from components.render import backup
from tests.unit.spec_cases import base

CA = "-----BEGIN CERTIFICATE-----\nseed\n-----END CERTIFICATE-----\n"


def seed_kubeconfig(ca: str = CA) -> str:
    """A seed's kubeconfig with its CA embedded."""
    data = base64.b64encode(ca.encode()).decode()
    return (
        "apiVersion: v1\nkind: Config\ncurrent-context: s\ncontexts: [{name: s, context: {cluster: s, user: u}}]\n"
        f"clusters: [{{name: s, cluster: {{server: 'https://127.0.0.1:31000', certificate-authority-data: {data}}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
    )


class Admin:
    """MinIO's admin API as the trust uses it: its configuration as `config get` prints it, restarts counted."""

    def __init__(self) -> None:
        self.config: dict[str, dict[str, str]] = {}
        self.restarts = 0

    def config_get(self, key: str) -> str:
        if key not in self.config:
            raise MinioAdminException("404", "no such target")
        shown = " ".join(f'{k}="{v}"' if " " in v else f"{k}={v}" for k, v in self.config[key].items())
        return f"{key} enable=on display_name= {shown} claim_prefix= scopes=\n"

    def config_set(self, key: str, settings: dict[str, str]) -> str:
        self.config[key] = dict(settings)
        return ""

    def config_reset(self, key: str) -> str:
        self.config.pop(key, None)
        return ""

    def service_restart(self) -> str:
        self.restarts += 1
        return ""


@pytest.fixture
def props(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A bucket on a seed, in a store whose restarts are over at once."""
    monkeypatch.setattr(store_identity, "ready", lambda url, ca: True)
    monkeypatch.setattr(store_identity, "STOP_WAIT_S", 0.0)
    return {"bucket": "arbor-local-1.x", "audience": "arbor-seed:local-1", "clientSecret": "s" * 50,
            "kubeconfig": seed_kubeconfig(), "dir": str(tmp_path), "endpoint": "https://127.0.0.1:9000",
            "caCert": "C"}  # fmt: skip


def test_the_store_trusts_the_seeds_ca_then_its_issuer_and_restarts_only_on_a_change(props: dict[str, Any]) -> None:
    """GIVEN a bucket by workload identity WHEN trusted twice, then on a seed with a new CA THEN restarts as needed.

    The CA first (MinIO fetches the discovery document when it takes the provider), then the provider: its
    discovery document at the seed's API, the audience as client ID, the bucket's policy as the role's.
    """
    admin = Admin()
    store_identity.trust(admin, props)  # type: ignore[arg-type]
    key = "identity_openid:arbor_local_1_x"
    assert admin.config == {key: {
        "config_url": "https://127.0.0.1:31000/.well-known/openid-configuration", "client_id": "arbor-seed:local-1",
        "role_policy": "arbor-local-1.x", "client_secret": "s" * 50,
    }}  # fmt: skip
    assert (Path(props["dir"]) / "CAs" / "bucket-arbor-local-1.x.crt").read_text() == CA
    assert admin.restarts == 2
    assert store_identity.facts(admin, props) == store_identity.desired(props)  # type: ignore[arg-type]
    store_identity.trust(admin, props)  # type: ignore[arg-type]
    assert admin.restarts == 2, "nothing changed, nothing restarted"
    renewed = {**props, "kubeconfig": seed_kubeconfig(CA.replace("seed", "renewed"))}
    assert store_identity.facts(admin, renewed) != store_identity.desired(renewed)  # type: ignore[arg-type]
    store_identity.trust(admin, renewed)  # type: ignore[arg-type]
    assert admin.restarts == 3, "the new CA only"
    store_identity.forget(admin, renewed)  # type: ignore[arg-type]
    assert admin.config == {} and not list((Path(props["dir"]) / "CAs").iterdir())


def test_a_store_of_an_older_garden_stack_is_named_not_written_to_the_working_directory(props: dict[str, Any]) -> None:
    """GIVEN a seed stack whose garden stack's export has no store directory WHEN trusted THEN a clear error."""
    with pytest.raises(ValueError, match="store's directory is unknown"):
        store_identity.trust(Admin(), {**props, "dir": ""})  # type: ignore[arg-type]


def test_the_roles_policy_grants_only_to_etcd_backup_and_keeps_the_denial() -> None:
    """GIVEN a local bucket's role WHEN its policy is rendered THEN each grant pins the subject; the denial stays.

    MinIO does not check a token's issuer: the subject is what keeps other ServiceAccounts out.
    """
    policy = backup.store_role_policy("b")
    allows = [s for s in policy["Statement"] if s["Effect"] == "Allow"]
    subjects = ["system:serviceaccount:shoot--*:etcd-backup", "system:serviceaccount:garden:etcd-backup"]
    assert allows and all(s["Condition"] == {"StringLike": {"jwt:sub": subjects}} for s in allows)
    (deny,) = [s for s in policy["Statement"] if s["Effect"] == "Deny"]
    assert deny == next(s for s in backup.aws_identity_policy("aws", "b")["Statement"] if s["Effect"] == "Deny")


def test_the_role_arn_is_minios_for_the_audience() -> None:
    """GIVEN an audience WHEN its role is named THEN as MinIO names it: base64url of the client ID's SHA-1.

    The value is the one the real store answered AssumeRoleWithWebIdentity for (tests/integration/test_backups.py).
    """
    assert backup.store_role_arn("arbor-seed:local-1") == "arn:minio:iam:::role/80ydqzT4lLP2kKH4Q5IsUBogVOA"
    assert backup.store_role_arn("arbor-seed:local-2") != backup.store_role_arn("arbor-seed:local-1")


def test_a_local_seed_arbor_makes_trusts_its_tokens_and_its_machines_need_none() -> None:
    """GIVEN local seeds made and given WHEN planned THEN a made one's bucket has its audience, a given one none."""
    raw = base()
    raw["seeds"][0]["backup"] = {"provider": "local"}
    plan = plan_landscape(parse_landscape(raw), "s")
    assert plan.seeds[0].backup is not None and plan.seeds[0].backup.audience == f"arbor-seed:{plan.seeds[0].name}"
    assert all(s.machine_audience is None for s in plan.shoots), "kwok's machines have no cloud to reach"
    raw["seeds"][0]["cluster"] = {"kubeconfigSecret": "seedKubeconfig"}
    given = plan_landscape(parse_landscape(raw), "s").seeds[0].backup
    assert given is not None and given.audience is None
    raw["seeds"][0]["cluster"]["issuer"] = {"url": "https://127.0.0.1:32000"}
    named = plan_landscape(parse_landscape(raw), "s").seeds[0]
    assert named.backup is not None and named.backup.audience == f"arbor-seed:{named.name}"
    assert named.cluster.issuer == "https://127.0.0.1:32000"


def test_a_given_seeds_issuer_is_fetched_where_its_spec_says(props: dict[str, Any]) -> None:
    """GIVEN a given seed whose issuer is published elsewhere than its API WHEN trusted THEN there, and drift seen."""
    admin = Admin()
    store_identity.trust(admin, {**props, "issuer": "https://issuer.example.com/"})  # type: ignore[arg-type]
    config_url = admin.config["identity_openid:arbor_local_1_x"]["config_url"]
    assert config_url == "https://issuer.example.com/.well-known/openid-configuration"
    # The same bucket named at its API server reads as changed: the store would fetch the keys elsewhere.
    assert store_identity.facts(admin, props) != store_identity.desired(props)  # type: ignore[arg-type]


def test_a_target_the_store_has_not_reads_as_none_though_the_client_loses_the_refusal() -> None:
    """GIVEN a store without the bucket's provider WHEN read THEN no settings, whichever way the client reports it."""

    class Refusing(Admin):
        def config_get(self, key: str) -> str:
            try:
                raise MinioAdminException("400", "there is no target")
            finally:
                raise UnboundLocalError("cannot access local variable 'response'")

    assert store_identity.configured(Refusing(), "b") == {}  # type: ignore[arg-type]
    assert store_identity.configured(Admin(), "b") == {}  # type: ignore[arg-type]


def test_a_restart_whose_answer_the_store_drops_as_it_goes_down_is_waited_for(props: dict[str, Any]) -> None:
    """GIVEN a store that closes the connection instead of answering the restart WHEN restarted THEN no error.

    MinIO replaces its process as it answers a restart; on a busy machine the answer is lost (CI, 2026-12-06). The
    client is minio-py's over the pool arbor gives it, against a socket that reads the request and hangs up.
    """
    with socket.create_server(("127.0.0.1", 0)) as server:

        def hang_up() -> None:
            connection, _ = server.accept()
            connection.recv(65536)
            connection.close()

        threading.Thread(target=hang_up, daemon=True).start()
        host = f"127.0.0.1:{server.getsockname()[1]}"
        creds, http = StaticProvider("u", "p"), store_bucket.trusting(props["caCert"], 5)
        store_identity.restart(MinioAdmin(endpoint=host, credentials=creds, secure=False, http_client=http), props)
