"""AccessToken: TokenRequest into a Secret, renewal at 80% of the lifetime, drift in read(), no token in the state."""

from __future__ import annotations

import base64
import datetime
import json
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from components.reconciler import access_token
from components.reconciler.access_token import AccessTokenProvider
from components.reconciler.kube import Kube, KubeError
from components.reconciler.seed_operation import OPERATION, RENEW_GARDEN_ACCESS_SECRETS, seed_path

NS, SA, SECRET = "kube-system", "gardener-node-agent", "gardener-node-agent"
SECRETS = f"/api/v1/namespaces/{NS}/secrets"
START = 1_800_000_000.0
HOUR = 3600.0


@dataclass
class FakeApi:
    """kube-apiserver as far as AccessToken asks it: TokenRequests, TokenReviews, Secrets; the clock it issues by."""

    now: float = START
    secrets: dict[str, dict[str, Any]] = field(default_factory=dict)
    valid: set[str] = field(default_factory=set)
    issued: list[str] = field(default_factory=list)

    def create(self, path: str, body: Any) -> Any:
        if path == f"/api/v1/namespaces/{NS}/serviceaccounts/{SA}/token":
            token = f"jwt-{len(self.issued)}"
            self.issued.append(token)
            self.valid.add(token)
            expires = datetime.datetime.fromtimestamp(self.now + body["spec"]["expirationSeconds"], datetime.UTC)
            return {"status": {"token": token, "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ")}}
        if path == "/apis/authentication.k8s.io/v1/tokenreviews":
            ok = body["spec"]["token"] in self.valid
            return {"status": {"authenticated": ok, "user": {"username": f"system:serviceaccount:{NS}:{SA}"}}}
        name = body["metadata"]["name"]
        if f"{path}/{name}" in self.secrets:
            raise KubeError("exists", 409)
        self.secrets[f"{path}/{name}"] = body
        return body

    def replace(self, path: str, body: Any) -> Any:
        self.secrets[path] = body
        return body

    # The real client's: create, and on 409 replace, through this fake's create and replace.
    create_or_replace = Kube.create_or_replace

    def find(self, path: str) -> Any | None:
        return self.secrets.get(path)

    def delete(self, path: str) -> None:
        self.secrets.pop(path, None)

    def stored_token(self) -> str:
        """The token the Secret holds."""
        return base64.b64decode(self.secrets[f"{SECRETS}/{SECRET}"]["data"]["token"]).decode()


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> FakeApi:
    """A fake API and clock in place of the real ones."""
    fake = FakeApi()
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: fake))
    monkeypatch.setattr(access_token, "clock", lambda: fake.now)
    return fake


def props(expiration_s: int = 12 * 3600) -> dict[str, Any]:
    """The inputs as the engine hands them over."""
    return {"kubeconfig": "k", "namespace": NS, "serviceAccount": SA, "secretName": SECRET,
            "expirationSeconds": float(expiration_s), "version": access_token.PROVIDER_VERSION}  # fmt: skip


def outputs(result: Any) -> dict[str, Any]:
    """A create, update or read result's outputs (always set by this provider)."""
    assert result.outs is not None
    return dict(result.outs)


def created(api: FakeApi) -> dict[str, Any]:
    """The outputs of a first token."""
    return outputs(AccessTokenProvider().create(props()))


def read(state: dict[str, Any]) -> dict[str, Any]:
    """The state as the provider reads it back."""
    return outputs(AccessTokenProvider().read("id", state))


def updated(state: dict[str, Any]) -> dict[str, Any]:
    """The outputs of an update from `state` with the same inputs."""
    return outputs(AccessTokenProvider().update("id", state, props()))


def test_create_writes_the_token_with_gardeners_renew_timestamp(api: FakeApi) -> None:
    """GIVEN a 12h lifetime WHEN created THEN the Secret holds the token and the renew time at 80% (9h36m)."""
    outs = created(api)
    secret = api.secrets[f"{SECRETS}/{SECRET}"]
    assert api.stored_token() == "jwt-0"
    renew = secret["metadata"]["annotations"]["serviceaccount.resources.gardener.cloud/token-renew-timestamp"]
    assert renew == datetime.datetime.fromtimestamp(START + 0.8 * 12 * HOUR, datetime.UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    assert outs["renewAt"] == START + 0.8 * 12 * HOUR and outs["tokenState"] == "valid"


def test_renewal_is_an_update_due_at_80_percent_not_before(api: FakeApi) -> None:
    """GIVEN a token of 12h WHEN diffed just before 9h36m THEN nothing; at 9h36m THEN an update, not a replacement."""
    outs = created(api)
    api.now = START + 0.8 * 12 * HOUR - 1
    assert not AccessTokenProvider().diff("id", outs, props()).changes
    api.now = START + 0.8 * 12 * HOUR
    diff = AccessTokenProvider().diff("id", outs, props())
    assert diff.changes and diff.replaces == []
    assert updated(outs)["issuedAt"] == api.now and api.stored_token() == "jwt-1"


def test_renewal_counts_at_most_24h_of_a_longer_lifetime() -> None:
    """GIVEN a 48h token WHEN is renewal due THEN after 80% of 24h, as Gardener caps it."""
    assert not access_token.token_renewal_due(0, 48 * HOUR, 0.8 * 24 * HOUR - 1)
    assert access_token.token_renewal_due(0, 48 * HOUR, 0.8 * 24 * HOUR)


def test_read_of_a_missing_secret_makes_up_write_a_new_token(api: FakeApi) -> None:
    """GIVEN the Secret deleted WHEN read THEN `missing`, and the diff asks for an update that writes it again."""
    outs = created(api)
    api.delete(f"{SECRETS}/{SECRET}")
    assert AccessTokenProvider().read("id", outs).id == "id"
    found = read(outs)
    assert found["tokenState"] == "missing"
    diff = AccessTokenProvider().diff("id", found, props())
    assert diff.changes and diff.replaces == []
    updated(found)
    assert api.stored_token() == "jwt-1"


def test_read_of_a_token_the_review_rejects_makes_up_write_a_new_one(api: FakeApi) -> None:
    """GIVEN the token no longer authenticates (its signing key changed) WHEN read THEN `rejected` and an update."""
    outs = created(api)
    assert read(outs)["tokenState"] == "valid"
    api.valid.clear()
    found = read(outs)
    assert found["tokenState"] == "rejected"
    assert AccessTokenProvider().diff("id", found, props()).changes


def test_read_of_another_token_in_the_secret_is_drift(api: FakeApi) -> None:
    """GIVEN the Secret's token edited WHEN read THEN `changed`, so `up` writes its own again."""
    outs = created(api)
    api.secrets[f"{SECRETS}/{SECRET}"]["data"]["token"] = base64.b64encode(b"edited").decode()
    assert read(outs)["tokenState"] == "changed"


def test_the_token_is_never_in_outputs_or_state(api: FakeApi) -> None:
    """GIVEN a token created, renewed and read WHEN the outputs are serialized THEN no token appears in them."""
    outs = created(api)
    api.now += 12 * HOUR
    renewed = updated(outs)
    found = read(renewed)
    for state in (outs, renewed, found):
        text = json.dumps(state)
        assert api.issued and not any(token in text for token in api.issued)
    assert found["tokenHash"] == access_token.token_hash("jwt-1")


def test_delete_removes_the_secret(api: FakeApi) -> None:
    """GIVEN a token WHEN deleted THEN its Secret is gone."""
    outs = created(api)
    AccessTokenProvider().delete("id", outs)
    assert not api.secrets


def test_a_token_that_makes_its_service_account_makes_it_where_missing_and_removes_it(api: FakeApi) -> None:
    """GIVEN `makesServiceAccount` WHEN created, updated, deleted THEN the account is made once, kept, and removed.

    As Gardener's token-requestor makes the ServiceAccount its Secret names: no token mounted (nothing runs as it);
    one already there is left as it is; a token without the flag makes none.
    """
    account = f"/api/v1/namespaces/{NS}/serviceaccounts/{SA}"
    making = {**props(), "makesServiceAccount": True}
    outs = outputs(AccessTokenProvider().create(making))
    assert api.secrets[account] == {"apiVersion": "v1", "kind": "ServiceAccount", "automountServiceAccountToken": False,
                                    "metadata": {"name": SA, "namespace": NS}}  # fmt: skip
    api.secrets[account] = {**api.secrets[account], "secrets": ["kept"]}
    outs = outputs(AccessTokenProvider().update("id", outs, making))
    assert api.secrets[account]["secrets"] == ["kept"]
    AccessTokenProvider().delete("id", outs)
    assert not api.secrets
    created(api)
    assert account not in api.secrets


def test_a_lifetime_below_10_minutes_or_over_24_hours_is_refused_naming_the_input() -> None:
    """GIVEN 599s or 24h and a second WHEN checked THEN a failure on expirationSeconds; 600s and 24h pass."""
    for seconds in (599, 24 * 3600 + 1):
        failures = AccessTokenProvider().check({}, props(seconds)).failures
        assert [f.property for f in failures] == ["expirationSeconds"]
        assert "from 600 (10m) to 86400 (24h)" in failures[0].reason
    for seconds in (600, 24 * 3600):
        assert not AccessTokenProvider().check({}, props(seconds)).failures


def test_an_unreachable_cluster_reads_as_missing_and_deletes_as_gone(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN a stopped cluster WHEN refreshed THEN `missing` (`up` writes the token again); WHEN deleted THEN gone."""
    stopped = Kube(server="https://127.0.0.1:1", context=ssl.create_default_context())
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: stopped))
    assert read({**props(), "tokenHash": "x"})["tokenState"] == "missing"
    AccessTokenProvider().delete("id", props())


def test_a_refused_delete_is_an_error(api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN the API refuses the deletion (403) WHEN deleted THEN the error reaches the engine (the Secret stays)."""
    outs = created(api)

    def refuse(_path: str) -> None:
        raise KubeError("forbidden", 403)

    monkeypatch.setattr(api, "delete", refuse)
    with pytest.raises(KubeError):
        AccessTokenProvider().delete("id", outs)


def test_a_token_of_one_cluster_is_kept_in_another(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN the account in the garden and the Secret in a seed WHEN issued, read, deleted THEN each in its cluster.

    This is an extension's garden access: the token requested in the garden, kept in its seed namespace with the
    token requestor's labels and annotations, reviewed by the garden.
    """
    garden, seed = FakeApi(), FakeApi()
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda k: {"garden": garden, "seed": seed}[k]))
    monkeypatch.setattr(access_token, "clock", lambda: garden.now)
    metadata = {"labels": {"resources.gardener.cloud/class": "garden"},
                "annotations": {"serviceaccount.resources.gardener.cloud/name": SA}}  # fmt: skip
    inputs = props() | {"kubeconfig": "garden", "secretKubeconfig": "seed", "secretNamespace": "extension-x",
                        "secretMetadata": metadata}  # fmt: skip
    provider = AccessTokenProvider()

    outs = provider.create(inputs).outs or {}
    path = "/api/v1/namespaces/extension-x/secrets/" + SECRET
    assert garden.issued == ["jwt-0"] and garden.secrets == {}
    stored = seed.secrets[path]
    assert base64.b64decode(stored["data"]["token"]).decode() == "jwt-0"
    assert stored["metadata"]["labels"] == metadata["labels"]
    assert stored["metadata"]["annotations"].keys() == {*metadata["annotations"], access_token.RENEW_TIMESTAMP}

    assert (provider.read("id", outs).outs or {})["tokenState"] == access_token.VALID
    garden.valid.clear()  # revoked in the garden
    assert (provider.read("id", outs).outs or {})["tokenState"] == access_token.REJECTED
    provider.delete("id", outs)
    assert path not in seed.secrets


def checked(olds: dict[str, Any], news: dict[str, Any]) -> dict[str, Any]:
    """The inputs check() makes of `news` after `olds`, failing on any check failure."""
    result = AccessTokenProvider().check(olds, news)
    assert not result.failures
    return dict(result.inputs)


def stamp(seconds: float) -> str:
    """A time as the inputs hold it."""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_check_schedules_the_renewal_and_the_preview_says_when_it_is_due(api: FakeApi) -> None:
    """GIVEN a token checked at START WHEN checked before 80% THEN the same; at 80% THEN an update saying why.

    `renewal` says why and `renewAfter` moves on: the preview shows both, and the diff is an update in place.
    """
    first = checked({}, props())
    assert first["renewAfter"] == stamp(START + 0.8 * 12 * HOUR) and first["renewal"] == ""
    outs = AccessTokenProvider().create(first).outs or {}
    api.now = START + 0.8 * 12 * HOUR - 1
    assert checked(first, props()) == first
    assert not AccessTokenProvider().diff("id", outs, checked(first, props())).changes
    api.now = START + 0.8 * 12 * HOUR
    due = checked(first, props())
    assert due["renewal"].startswith("due: 80%") and due["renewAfter"] == stamp(api.now + 0.8 * 12 * HOUR)
    diff = AccessTokenProvider().diff("id", outs, due)
    assert diff.changes and diff.replaces == []


def test_a_seed_annotated_for_renewal_renews_its_tokens_only(api: FakeApi) -> None:
    """GIVEN local-1 annotated renew-garden-access-secrets WHEN tokens are checked THEN only local-1's are renewed.

    The renewal says why; another seed's token and an operation arbor does not know renew nothing.
    """
    seed_inputs = props() | {"seed": "local-1"}
    first = checked({}, seed_inputs)
    other = checked({}, props() | {"seed": "local-2"})
    api.now += HOUR
    annotations = {OPERATION: RENEW_GARDEN_ACCESS_SECRETS}
    api.secrets[seed_path("local-1")] = {"metadata": {"name": "local-1", "annotations": annotations}}
    requested = checked(first, seed_inputs)
    assert requested["renewal"] == (
        "requested: the Seed record local-1 is annotated gardener.cloud/operation=renew-garden-access-secrets"
    )
    assert requested["renewAfter"] == stamp(api.now + 0.8 * 12 * HOUR)
    assert checked(other, props() | {"seed": "local-2"}) == other
    annotations[OPERATION] = "reconcile"
    assert checked(first, seed_inputs) == first


def test_a_changed_lifetime_schedules_anew(api: FakeApi) -> None:
    """GIVEN a 12h token WHEN its lifetime becomes 1h THEN the renewal is 48 minutes from now, without a reason."""
    first = checked({}, props())
    api.now += 60
    shorter = checked(first, props(3600))
    assert shorter["renewAfter"] == stamp(api.now + 0.8 * HOUR) and shorter["renewal"] == ""


def test_a_token_kept_in_a_file_is_owner_only_renewed_and_drift_checked(api: FakeApi, tmp_path: Path) -> None:
    """GIVEN a local program's token WHEN created, edited, moved, deleted THEN the file follows, 0600, no Secret."""
    path = tmp_path / "grm" / "target-token"
    inputs = {k: v for k, v in props().items() if k != "secretName"} | {"tokenFile": str(path)}
    provider = AccessTokenProvider()
    created_ = provider.create(inputs)
    outs = dict(created_.outs or {})
    assert created_.id == str(path) and path.read_text() == "jwt-0" and path.stat().st_mode & 0o777 == 0o600
    assert not api.secrets
    assert read(outs)["tokenState"] == "valid"
    path.write_text("edited")
    assert read(outs)["tokenState"] == "changed"
    path.unlink()
    assert read(outs)["tokenState"] == "missing"
    moved = inputs | {"tokenFile": str(tmp_path / "elsewhere")}
    renewed = dict(provider.update("id", outs | {"tokenFile": str(path)}, moved).outs or {})
    assert (tmp_path / "elsewhere").read_text() == "jwt-1" and not path.exists()
    provider.delete("id", renewed)
    assert not (tmp_path / "elsewhere").exists()


def test_a_reviewer_that_cannot_be_reached_reads_as_missing(api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN a token kept where it is read but a stopped cluster to review it WHEN read THEN `missing`, no error."""
    outs = created(api)

    def unreachable(_path: str, _body: Any) -> Any:
        raise KubeError("connection refused")

    monkeypatch.setattr(api, "create", unreachable)
    assert read(outs)["tokenState"] == "missing"

    def refused(_path: str, _body: Any) -> Any:
        raise KubeError("forbidden", 403)

    monkeypatch.setattr(api, "create", refused)
    with pytest.raises(KubeError):
        read(outs)
