"""An entry's store (Cloud Storage's JSON API against a fake of it, as a gcp seed's account uses it), and its status.

No Cloud Storage here: a loopback server answers the token exchange and the object calls as Google documents them,
and checks what arbor sends (a JWT signed by the account's key, a multipart upload with the object's metadata). The
S3 side runs against the real MinIO in tests/integration/test_shoot_state.py.
"""

from __future__ import annotations

import base64
import json
import threading
import urllib.parse
from collections.abc import Iterator
from datetime import UTC, datetime
from email import message_from_bytes
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from hypothesis import given
from hypothesis import strategies as st
from pulumi.runtime import rpc

from components.reconciler import credential_secrets, entry_status, entry_store, etcd_snapshot, kube, shoot_migration
from components.reconciler.kube import KubeError
from components.render import backup

TOKEN = "ya29.fake"


class FakeGcs(BaseHTTPRequestHandler):
    """The token endpoint and the JSON API's object calls, objects kept in `objects`."""

    objects: ClassVar[dict[str, tuple[bytes, dict[str, str]]]] = {}
    public_key: Any = None
    PAGE = 2
    assertions: ClassVar[list[dict[str, Any]]] = []
    exchanges: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *_: Any) -> None:
        """Quiet."""

    def _answer(self, status: int, body: bytes = b"{}") -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        """The token exchange (a verified JWT) and the multipart upload."""
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/token":
            assertion = urllib.parse.parse_qs(body.decode())["assertion"][0]
            signed, signature = assertion.rsplit(".", 1)
            raw = base64.urlsafe_b64decode(signature + "==")
            self.public_key.verify(raw, signed.encode(), padding.PKCS1v15(), hashes.SHA256())
            self.assertions.append(json.loads(base64.urlsafe_b64decode(signed.split(".")[1] + "==")))
            return self._answer(200, json.dumps({"access_token": TOKEN, "expires_in": 3599}).encode())
        if self.path == "/sts":  # workload identity: the seed's token for a federated one
            form = dict(urllib.parse.parse_qsl(body.decode()))
            self.exchanges.append(form)
            known = form["subject_token"] == "sa-token" and form["audience"] == "//iam.googleapis.com/pool-provider"
            return self._answer(200 if known else 403, json.dumps({"access_token": "federated"}).encode())
        if self.path == "/impersonate":  # and the federated token for the service account's
            if self.headers["Authorization"] != "Bearer federated":
                return self._answer(403)
            self.exchanges.append(json.loads(body))
            return self._answer(200, json.dumps({"accessToken": TOKEN}).encode())
        if self.headers["Authorization"] != f"Bearer {TOKEN}":
            return self._answer(401)
        message = message_from_bytes(f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + body)
        resource, media = (bytes(part.get_payload(decode=True)) for part in message.get_payload())  # type: ignore[union-attr]
        described = json.loads(resource)
        self.objects[described["name"]] = (media, described["metadata"])
        return self._answer(200, json.dumps({"name": described["name"]}).encode())

    def do_GET(self) -> None:
        """An object's resource, or its bytes with `alt=media`; 404 when there is none."""
        if self.headers["Authorization"] != f"Bearer {TOKEN}":
            return self._answer(401)
        url = urllib.parse.urlparse(self.path)
        if url.path.endswith("/o"):
            return self._list(urllib.parse.parse_qs(url.query))
        name = urllib.parse.unquote(url.path.rsplit("/o/", 1)[1])
        if name not in self.objects:
            return self._answer(404)
        data, metadata = self.objects[name]
        if "alt=media" in url.query:
            return self._answer(200, data)
        return self._answer(200, json.dumps({"name": name, "metadata": metadata}).encode())

    def _list(self, query: dict[str, list[str]]) -> None:
        """A page of the names under `prefix`, from `pageToken` (an index here)."""
        names = sorted(n for n in self.objects if n.startswith(query["prefix"][0]))
        start = int(query.get("pageToken", ["0"])[0])
        page: dict[str, Any] = {"items": [{"name": n} for n in names[start : start + self.PAGE]]}
        if start + self.PAGE < len(names):
            page["nextPageToken"] = str(start + self.PAGE)
        return self._answer(200, json.dumps(page).encode())


@pytest.fixture
def gcs() -> Iterator[tuple[str, dict[str, str]]]:
    """The fake's URL, and `etcd-backup` data with a service account key it trusts."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    FakeGcs.public_key, FakeGcs.objects, FakeGcs.assertions = key.public_key(), {}, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeGcs)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    account = {"type": "service_account", "client_email": "seed-backup@p.iam.gserviceaccount.com",
               "private_key_id": "k1", "private_key": pem.decode(), "token_uri": f"{url}/token"}  # fmt: skip
    try:
        yield url, {backup.KEY_SERVICE_ACCOUNT: json.dumps(account), backup.KEY_BUCKET: "arbor-seed-gcp-1"}
    finally:
        server.shutdown()


def test_a_gcp_entry_writes_and_reads_objects_with_the_accounts_token(gcs: tuple[str, dict[str, str]]) -> None:
    """GIVEN a gcp seed's `etcd-backup` data WHEN its entry's store writes, finds and reads an object THEN it is kept.

    The account's key is exchanged once for a token (a JWT it signed, for Cloud Storage's read-write scope); the
    object keeps its metadata; a missing one is not present.
    """
    url, data = gcs
    store = entry_store.entry_store(data)
    assert isinstance(store, entry_store.GcsEntry)
    store.api = url
    key = "shoot--dev--web--uid/shoot-state/shootstate.json.gz.sealed"
    assert not store.present(key)
    store.put(key, b"\x00sealed\xff", {"arbor-generation": "1"})
    assert store.present(key)
    assert store.get(key) == (b"\x00sealed\xff", {"arbor-generation": "1"})
    (claims,) = FakeGcs.assertions
    assert claims["scope"] == entry_store.GCS_SCOPE and claims["iss"].startswith("seed-backup@")
    assert claims["aud"] == f"{url}/token" and claims["exp"] - claims["iat"] == 3600


def test_a_gcp_entry_acts_as_its_service_account_with_the_namespaces_token(
    gcs: tuple[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN an external account's `etcd-backup` data WHEN its entry reads THEN as the seed's etcd-backup account.

    As Google's external account credentials: a token of the namespace's `etcd-backup` ServiceAccount for the
    bucket's pool audience, exchanged at STS, then for the service account's access token (Cloud Storage's scope).
    A refused exchange, or no namespace to ask a token in, is a StoreError naming the bucket.
    """
    url, _ = gcs
    FakeGcs.exchanges = []
    requested: list[dict[str, Any]] = []

    class Seed:
        def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
            assert path == "/api/v1/namespaces/shoot--dev--web/serviceaccounts/etcd-backup/token"
            requested.append(body["spec"])
            return {"status": {"token": "sa-token", "expirationTimestamp": "2099-01-01T00:00:00Z"}}

    monkeypatch.setattr(kube.Kube, "from_kubeconfig", staticmethod(lambda kubeconfig: Seed()))
    account = {**backup.gcp_external_account("pool-provider", "bk@p.iam.gserviceaccount.com", "/var/.gcp/token"),
               "token_url": f"{url}/sts", "service_account_impersonation_url": f"{url}/impersonate"}  # fmt: skip
    where = {"kubeconfig": "k", "namespace": "shoot--dev--web", "name": "etcd-backup"}
    store = entry_store.GcsEntry(account, "arbor-seed-gcp-1", where, "arbor-seed:gcp-1", api=url)
    store.put("e/x", b"snapshot", {})
    assert store.get("e/x") == (b"snapshot", {})
    assert requested == [{"audiences": ["arbor-seed:gcp-1"], "expirationSeconds": 600}]
    exchange, impersonation = FakeGcs.exchanges
    assert exchange["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
    assert exchange["subject_token_type"] == "urn:ietf:params:oauth:token-type:jwt"
    assert impersonation == {"scope": [entry_store.GCS_SCOPE]}
    refused = entry_store.GcsEntry({**account, "audience": "//iam.googleapis.com/other"}, "b", where, "a", api=url)
    with pytest.raises(entry_store.StoreError, match="bucket b: STS refused the seed's token"):
        refused.get("e/x")
    with pytest.raises(entry_store.StoreError, match="bucket b: an external account needs the Secret's namespace and"):
        entry_store.GcsEntry(account, "b", api=url).get("e/x")


def test_a_gcp_entry_that_is_refused_says_which_object_in_one_line(gcs: tuple[str, dict[str, str]]) -> None:
    """GIVEN a token the API refuses WHEN an object is written or read THEN a StoreError naming it and the status."""
    url, data = gcs
    store = entry_store.entry_store(data)
    assert isinstance(store, entry_store.GcsEntry)
    store.api, store._token = url, "stale"
    with pytest.raises(entry_store.StoreError, match=r"writing e/x to bucket arbor-seed-gcp-1: 401"):
        store.put("e/x", b"x", {})
    with pytest.raises(entry_store.StoreError, match=r"reading e/x from bucket arbor-seed-gcp-1: 401"):
        store.get("e/x")


def test_an_s3_entry_is_chosen_for_aws_and_the_local_store() -> None:
    """GIVEN aws's and the local store's `etcd-backup` data WHEN their store is made THEN S3, at the right host."""
    aws = {"accessKeyID": "a", "secretAccessKey": "s", backup.KEY_REGION: "eu-west-1", backup.KEY_BUCKET: "b"}
    store = entry_store.entry_store(aws)
    assert isinstance(store, entry_store.S3Entry) and store.client._base_url.host == entry_store.AWS_S3


STS_ANSWER = """<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIATEMP</AccessKeyId>
<SecretAccessKey>temporary</SecretAccessKey><SessionToken>session</SessionToken>
<Expiration>2099-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult>
</AssumeRoleWithWebIdentityResponse>"""


class StsHandler(BaseHTTPRequestHandler):
    """AWS STS's AssumeRoleWithWebIdentity for one role and one token; every query it was sent."""

    queries: ClassVar[list[dict[str, str]]] = []

    def do_POST(self) -> None:
        """Temporary credentials for the known token, else AccessDenied."""
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
        self.queries.append(query)
        known = query.get("WebIdentityToken") == "sa-token" and query.get("RoleArn") == "arn:aws:iam::1:role/b"
        denied = b"<ErrorResponse><Error><Code>AccessDenied</Code></Error></ErrorResponse>"
        body = STS_ANSWER.encode() if known else denied
        self.send_response(200 if known else 403)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        """Quiet."""


def test_a_role_is_assumed_as_the_namespaces_etcd_backup_account(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN `etcd-backup` data naming a role WHEN its S3 store signs THEN it holds the role's temporary credentials.

    As etcd-backup-restore does with its projected token: a token of the ServiceAccount `etcd-backup` of the
    namespace that holds the Secret, for sts.amazonaws.com, exchanged at STS for the role (AssumeRoleWithWebIdentity).
    A role STS refuses, or data by value (no namespace to ask a token of), is a StoreError naming the role.
    """
    server = ThreadingHTTPServer(("127.0.0.1", 0), StsHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    requested: list[tuple[str, dict[str, Any]]] = []

    class Seed:
        def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
            requested.append((path, body))
            return {"status": {"token": "sa-token", "expirationTimestamp": "2099-01-01T00:00:00Z"}}

    monkeypatch.setattr(kube.Kube, "from_kubeconfig", staticmethod(lambda kubeconfig: Seed()))
    sts = f"http://127.0.0.1:{server.server_port}"
    data = {"bucketName": "b", "region": "eu-west-1", "roleARN": "arn:aws:iam::1:role/b", "endpoint": sts}
    where = {"kubeconfig": "k", "namespace": "shoot--dev--web", "name": "etcd-backup"}
    try:
        got = entry_store.s3_credentials(data, where)["credentials"].retrieve()
        assert (got.access_key, got.secret_key, got.session_token) == ("ASIATEMP", "temporary", "session")
        assert requested == [("/api/v1/namespaces/shoot--dev--web/serviceaccounts/etcd-backup/token", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"audiences": ["sts.amazonaws.com"], "expirationSeconds": 600}})]  # fmt: skip
        assert StsHandler.queries[-1]["Action"] == "AssumeRoleWithWebIdentity"
        assert StsHandler.queries[-1]["RoleSessionName"] == "arbor"
        refused = entry_store.s3_credentials({**data, "roleARN": "arn:aws:iam::1:role/other"}, where)
        with pytest.raises(entry_store.StoreError, match="assuming role arn:aws:iam::1:role/other: "):
            refused["credentials"].retrieve()
    finally:
        server.shutdown()
    with pytest.raises(entry_store.StoreError, match="role arn:aws:iam::1:role/b: assumed as a namespace's"):
        entry_store.s3_client(data)
    aws = entry_store.s3_client({k: v for k, v in data.items() if k != "endpoint"}, where)
    assert aws._base_url.host == entry_store.AWS_S3
    assert aws._provider._sts_endpoint == "https://sts.eu-west-1.amazonaws.com"  # type: ignore[union-attr]


@given(st.lists(st.tuples(st.integers(0, 99_999_999), st.integers(1_600_000_000, 2_000_000_000)), max_size=8))
def test_the_entry_names_the_newest_full_snapshot_not_a_delta_or_a_chunk(snapshots: list[tuple[int, int]]) -> None:
    """GIVEN etcd-backup-restore's keys in an entry WHEN the newest full snapshot is chosen THEN by its time.

    Delta snapshots and the chunks of an upload in progress are not full snapshots.
    """
    prefix = "shoot--dev--web--uid/etcd-main/v2"
    fulls = [f"{prefix}/Full-00000000-{rev:08d}-{unix}.gz" for rev, unix in snapshots]
    noise = [f"{prefix}/Incr-00000001-00000002-{2_100_000_000}.gz", f"{prefix}/Full-00000000-00000001-2100000000.gz/3"]
    found = entry_status.latest_full([*noise, *fulls])
    if not fulls:
        assert found is None
        return
    assert found is not None
    newest = max(unix for _, unix in snapshots)
    assert found[0].endswith(f"-{newest}.gz")
    assert found[1] == etcd_snapshot.rfc3339(datetime.fromtimestamp(newest, UTC))


class Listed:
    """An entry's store that lists given keys."""

    def __init__(self, keys: list[str]) -> None:
        self.listed = keys

    def keys(self, prefix: str) -> list[str]:
        """The keys under the prefix."""
        return [k for k in self.listed if k.startswith(prefix)]


def test_refresh_finds_a_newer_snapshot_and_up_names_it_in_the_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN an entry naming a snapshot WHEN the bucket holds a newer one THEN refresh marks it due and up names it.

    With none newer, no change; a bucket that does not answer is not drift.
    """
    prefix = "e/etcd-main"
    store = Listed([f"{prefix}/v2/Full-00000000-00000010-1700000000.gz"])
    written: list[dict[str, Any]] = []
    monkeypatch.setattr(entry_status, "entry_store", lambda data: store)
    monkeypatch.setattr(entry_status, "write_status", written.append)
    provider = entry_status.EntryStatusProvider()
    props = {"backup": {}, "prefix": prefix, "entry": "e", "entryNamespace": "garden-dev", "gardenKubeconfig": "g",
             "version": entry_status.PROVIDER_VERSION}  # fmt: skip
    made = dict(provider.create(props).outs or {})
    assert made["latest"].endswith("-1700000000.gz") and len(written) == 1
    read = dict(provider.read("e", made).outs or {})
    assert read["due"] is False and not provider.diff("e", read, props).changes
    store.listed.append(f"{prefix}/v2/Full-00000000-00000020-1700086400.gz")
    read = dict(provider.read("e", made).outs or {})
    assert read["due"] is True and provider.diff("e", read, props).changes
    updated = dict(provider.update("e", read, props).outs or {})
    assert updated["latest"].endswith("-1700086400.gz") and updated["time"] == "2023-11-15T22:13:20Z"

    def refused(data: dict[str, str]) -> Listed:
        raise entry_store.StoreError("listing e/etcd-main/v2/ in bucket b: 503")

    monkeypatch.setattr(entry_status, "entry_store", refused)
    assert dict(provider.read("e", updated).outs or {})["due"] is False


def test_a_gcp_entry_lists_every_page(gcs: tuple[str, dict[str, str]]) -> None:
    """GIVEN more objects than one page holds WHEN a gcp entry lists a prefix THEN every key under it, no other."""
    url, data = gcs
    store = entry_store.entry_store(data)
    assert isinstance(store, entry_store.GcsEntry)
    store.api = url
    names = [f"e/etcd-main/v2/Full-00000000-{i:08d}-17000000{i:02d}.gz" for i in range(FakeGcs.PAGE * 2 + 1)]
    for name in [*names, "other/x"]:
        store.put(name, b"x", {})
    assert sorted(store.keys("e/etcd-main/v2/")) == sorted(names)


# --- a reference to the seed namespace's `etcd-backup` Secret in place of its data


def test_a_reference_is_resolved_to_the_secret_it_names_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN a reference to etcd-backup WHEN resolved THEN the Secret's data, if it is what the reference expects.

    The reference keeps the entry's prefix and a digest, never a key; a Secret edited, gone or unreachable is a
    StoreError naming it; data given as such passes through.
    """
    data = {"bucketName": "b", "accessKeyID": "id", "secretAccessKey": "s3cret", "storePrefix": "shoot--dev--web--u"}
    ref = entry_store.reference("kubeconfig-file:/k", "shoot--dev--web", data)
    assert "s3cret" not in json.dumps(ref) and ref["storePrefix"] == data["storePrefix"]
    found: dict[str, Any] = {"shoot--dev--web/etcd-backup": dict(data)}

    def read(props: dict[str, Any], name: str) -> dict[str, str] | None:
        assert props["kubeconfig"] == "kubeconfig-file:/k"
        if name == "boom":
            raise KubeError("connection refused")
        return found.get(f"{props['namespace']}/{name}")

    monkeypatch.setattr(credential_secrets, "read_secret", read)
    assert entry_store.entry_data(ref) == data
    assert entry_store.entry_data(data) == data
    found["shoot--dev--web/etcd-backup"]["secretAccessKey"] = "rotated"
    with pytest.raises(entry_store.StoreError, match="shoot--dev--web/etcd-backup holds other credentials"):
        entry_store.entry_data(ref)
    del found["shoot--dev--web/etcd-backup"]
    with pytest.raises(entry_store.StoreError, match="shoot--dev--web/etcd-backup is missing"):
        entry_store.entry_data(ref)
    with pytest.raises(entry_store.StoreError, match="reading Secret shoot--dev--web/boom: connection refused"):
        entry_store.entry_data({**ref, "secretRef": {**ref["secretRef"], "name": "boom"}})


def test_a_seeds_bucket_secret_is_read_with_the_entrys_prefix_the_reference_adds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GIVEN a reference to the seed's `garden/bucket-<bucket>` WHEN resolved THEN its credentials with the entry.

    The seed's Secret holds the bucket's credentials alone; the reference adds the shoot's prefix and checks the
    whole against the digest of the shoot's own `etcd-backup` data. A migration given that data whole before is
    updated once to keep the reference instead.
    """
    data = {"bucketName": "b", "accessKeyID": "id", "secretAccessKey": "s3cret", "storePrefix": "shoot--dev--web--u"}
    held = {k: v for k, v in data.items() if k != "storePrefix"}
    ref = entry_store.reference("kubeconfig-file:/k", "garden", data, "bucket-b")
    monkeypatch.setattr(credential_secrets, "read_secret", lambda props, name: held if name == "bucket-b" else None)
    assert entry_store.entry_data(ref) == data
    assert entry_store.expected_digest(ref) == entry_store.expected_digest(data)
    with pytest.raises(entry_store.StoreError, match="garden/bucket-b holds other credentials"):
        entry_store.entry_data({**ref, "storePrefix": "shoot--dev--db--v"})
    assert entry_store.given_whole_before(data, ref) and entry_store.given_whole_before(data, rpc.UNKNOWN)
    assert not entry_store.given_whole_before(ref, ref) and not entry_store.given_whole_before(data, data)
    migration = shoot_migration.ShootMigrationProvider()
    olds = {"seed": "local-1", "version": shoot_migration.PROVIDER_VERSION, "backup": data}
    assert migration.diff("m", olds, {**olds, "backup": ref}).changes
    assert not migration.diff("m", {**olds, "backup": ref}, {**olds, "backup": ref}).changes
