"""The object store of a seed's bucket, reached as etcd-backup-restore reaches it: with the `etcd-backup` data.

S3 for the local store (MinIO on loopback over TLS: `endpoint` and `trustedCaCert` name it) and aws (S3 in the
bucket's region), Cloud Storage's JSON API for gcp (the service account's key, `serviceaccount.json`, exchanged for
an access token as Google's client libraries do). Each as the seed's identity, which can touch that bucket's objects
and nothing else: its key, or (workload identity) a token of the `etcd-backup` ServiceAccount of the namespace
whose Secret names the identity, exchanged at the cloud's STS for the role (aws) or the service account (gcp).
`EntryStore` is what arbor itself writes and reads there (a shoot's state).

A resource that reaches the entry only while the shoot's seed namespace exists keeps a reference to that
namespace's `etcd-backup` Secret instead of its data (`reference`, resolved by `entry_data`): the state then holds
the seed's key once, in the shoot's SecretSet, which writes that Secret.
"""

from __future__ import annotations

import base64
import io
import json
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Protocol

import urllib3
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from minio import Minio, S3Error
from minio.credentials.credentials import Credentials
from minio.credentials.providers import WebIdentityProvider
from minio.deleteobjects import DeleteObject

from components.naming import json_hash
from components.plan.values import STS_AUDIENCE
from components.reconciler.access_token import request_token
from components.reconciler.credential_secrets import secret_keys
from components.reconciler.kube import Kube, KubeError
from components.reconciler.store_bucket import trusting
from components.render import backup

AWS_S3 = "s3.amazonaws.com"
GCS_API = "https://storage.googleapis.com"
GCS_SCOPE = "https://www.googleapis.com/auth/devstorage.read_write"
GCP_CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
EXTERNAL_ACCOUNT = "external_account"
GCS_TIMEOUT_S = 120
# The session name CloudTrail records for arbor's own use of a bucket's role, and its token's lifetime (the shortest
# a TokenRequest takes).
ROLE_SESSION = "arbor"
TOKEN_SECONDS = 600
# An object's metadata arbor writes and reads, by name (S3 sends it as `x-amz-meta-<name>`).
Metadata = dict[str, str]


class StoreError(Exception):
    """An object that cannot be written or read; the message names it and says why (never a key)."""


class MissingSecretError(StoreError):
    """The `etcd-backup` Secret a reference names is missing from the seed namespace (a seed made again)."""


class EntryStore(Protocol):
    """A bucket's objects, as the seed's identity may use them."""

    def put(self, key: str, data: bytes, metadata: Metadata) -> None:
        """Writes an object (a new version of it) with its metadata."""

    def get(self, key: str) -> tuple[bytes, Metadata]:
        """An object's bytes and metadata."""

    def present(self, key: str) -> bool:
        """Whether the object is there; a store that cannot be asked says it is (nothing is known missing)."""

    def keys(self, prefix: str) -> list[str]:
        """The keys of the objects under a prefix (their current versions)."""


def s3_client(data: dict[str, str], where: dict[str, Any] | None = None) -> Minio:
    """The bucket's S3 store as the seed's identity; a local store is trusted by its own CA only.

    The identity is a key, or a role (`roleARN`) assumed as the `etcd-backup` ServiceAccount of the namespace that
    holds the Secret (`where`), as etcd-backup-restore assumes it there.
    """
    credentials = s3_credentials(data, where)
    if endpoint := data.get(backup.KEY_ENDPOINT):
        # No total timeout: an upload takes as long as its size.
        http = trusting(data[backup.KEY_TRUSTED_CA])
        return Minio(endpoint.removeprefix("https://"), **credentials, secure=True, http_client=http)
    return Minio(AWS_S3, **credentials, region=data.get(backup.KEY_REGION), secure=True)


class RoleCredentials(WebIdentityProvider):
    """A role's temporary credentials for a ServiceAccount's token (AssumeRoleWithWebIdentity); errors named."""

    def retrieve(self) -> Credentials:
        """The credentials, asked of STS again when they expire."""
        try:
            return super().retrieve()
        except (ValueError, KeyError, urllib3.exceptions.HTTPError) as error:
            raise StoreError(f"assuming role {self._role_arn}: {error}") from None


def s3_credentials(data: dict[str, str], where: dict[str, Any] | None) -> dict[str, Any]:
    """Minio's credential arguments: the key, or the role assumed with the namespace's ServiceAccount token."""
    role = data.get(backup.KEY_ROLE_ARN)
    if not role:
        return {"access_key": data["accessKeyID"], "secret_key": data["secretAccessKey"]}
    if not where:
        raise StoreError(f"role {role}: assumed as a namespace's ServiceAccount, and no Secret's namespace is named")
    # The local store is its own STS, trusted by its CA; its roles trust a seed's audience, AWS's its own.
    store = data.get(backup.KEY_ENDPOINT)
    sts = store or f"https://sts.{data[backup.KEY_REGION]}.amazonaws.com"
    audience = data.get(backup.KEY_TOKEN_AUDIENCE, STS_AUDIENCE)
    http = trusting(ca) if (ca := data.get(backup.KEY_TRUSTED_CA)) else None
    return {"credentials": RoleCredentials(jwt_provider_func=lambda: service_account_token(where, audience),
                                           sts_endpoint=sts, role_arn=role, role_session_name=ROLE_SESSION,
                                           http_client=http)}  # fmt: skip


def service_account_token(where: dict[str, Any], audience: str = STS_AUDIENCE) -> dict[str, str]:
    """A short-lived token of the `etcd-backup` ServiceAccount of the namespace `where` names, for `audience`."""
    namespace = where["namespace"]
    try:
        kube = Kube.from_kubeconfig(where["kubeconfig"])
        token, _ = request_token(kube, namespace, backup.SERVICE_ACCOUNT, TOKEN_SECONDS, [audience])
    except KubeError as error:
        raise StoreError(f"a token of ServiceAccount {namespace}/{backup.SERVICE_ACCOUNT}: {error}") from None
    return {"access_token": token, "expires_in": str(TOKEN_SECONDS)}


@dataclass(frozen=True)
class S3Entry:
    """A bucket in S3 or the local store."""

    client: Minio
    bucket: str

    def put(self, key: str, data: bytes, metadata: Metadata) -> None:
        """Writes an object with its user metadata."""
        meta: dict[str, str | list[str] | tuple[str]] = dict(metadata)
        try:
            self.client.put_object(self.bucket, key, io.BytesIO(data), len(data), metadata=meta)
        except (S3Error, urllib3.exceptions.HTTPError) as error:
            raise StoreError(f"writing {key} to bucket {self.bucket}: {error}") from None

    def get(self, key: str) -> tuple[bytes, Metadata]:
        """An object's bytes and user metadata."""
        try:
            got = self.client.get_object(self.bucket, key)
            try:
                body, headers = got.read(), {k.lower(): v for k, v in got.headers.items()}
            finally:
                got.close()
                got.release_conn()
        except (S3Error, urllib3.exceptions.HTTPError) as error:
            raise StoreError(f"reading {key} from bucket {self.bucket}: {error}") from None
        return body, {k.removeprefix("x-amz-meta-"): v for k, v in headers.items() if k.startswith("x-amz-meta-")}

    def present(self, key: str) -> bool:
        """Whether the object is there."""
        try:
            self.client.stat_object(self.bucket, key)
        except S3Error as error:
            return error.code not in ("NoSuchKey", "NoSuchBucket")
        except urllib3.exceptions.HTTPError:
            return True
        return True

    def keys(self, prefix: str) -> list[str]:
        """The keys under a prefix, every level."""
        try:
            return [str(o.object_name) for o in self.client.list_objects(self.bucket, prefix=prefix, recursive=True)]
        except (S3Error, urllib3.exceptions.HTTPError) as error:
            raise StoreError(f"listing {prefix} in bucket {self.bucket}: {error}") from None

    def remove(self, keys: list[str]) -> None:
        """Deletes objects (their current versions: a versioned bucket keeps them as noncurrent ones)."""
        try:
            failed = list(self.client.remove_objects(self.bucket, [DeleteObject(key) for key in keys]))
        except (S3Error, urllib3.exceptions.HTTPError) as error:
            raise StoreError(f"deleting from bucket {self.bucket}: {error}") from None
        if failed:
            raise StoreError(f"deleting {failed[0].name} from bucket {self.bucket}: {failed[0].message}")


def _b64url(raw: bytes) -> str:
    """Base64url without padding, as a JWT's parts are."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def service_account_assertion(account: dict[str, Any], now: int) -> str:
    """The signed JWT a service account's key exchanges for an access token to Cloud Storage (RS256)."""
    header = {"alg": "RS256", "typ": "JWT", "kid": account.get("private_key_id", "")}
    claims = {"iss": account["client_email"], "scope": GCS_SCOPE, "aud": account["token_uri"], "iat": now,
              "exp": now + 3600}  # fmt: skip
    signing = ".".join(_b64url(json.dumps(part).encode()) for part in (header, claims))
    key = serialization.load_pem_private_key(account["private_key"].encode(), password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise StoreError("serviceaccount.json: its private_key is not an RSA key")
    signature = key.sign(signing.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing}.{_b64url(signature)}"


@dataclass
class GcsEntry:
    """A bucket in Cloud Storage, through its JSON API with the service account's access token."""

    account: dict[str, Any]
    bucket: str
    # Where its Secret is (a reference's `secretRef`): an external account's token is asked of that namespace, for
    # the audience the seed's pool accepts (the Secret's `tokenAudience`).
    where: dict[str, Any] | None = None
    audience: str = ""
    api: str = GCS_API
    http: urllib3.PoolManager = field(
        default_factory=lambda: urllib3.PoolManager(timeout=urllib3.Timeout(total=GCS_TIMEOUT_S),
                                                    retries=urllib3.Retry(total=3))
    )  # fmt: skip
    _token: str | None = field(default=None, init=False)

    def _call(self, method: str, url: str, **kw: Any) -> urllib3.BaseHTTPResponse:
        """A call with the access token, made on first use."""
        if self._token is None:
            external = self.account.get("type") == EXTERNAL_ACCOUNT
            self._token = self._impersonated() if external else self._signed()
        headers = {**kw.pop("headers", {}), "Authorization": f"Bearer {self._token}"}
        return self.http.request(method, url, headers=headers, **kw)

    def _signed(self) -> str:
        """The service account's access token for an assertion signed with its key."""
        form = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                "assertion": service_account_assertion(self.account, int(time.time()))}  # fmt: skip
        got = self.http.request("POST", self.account["token_uri"], fields=form, encode_multipart=False)
        if got.status != 200:
            raise StoreError(f"service account {self.account.get('client_email')}: no token ({got.status})")
        return str(json.loads(got.data)["access_token"])

    def _impersonated(self) -> str:
        """The service account's access token for the pool's token of the namespace's `etcd-backup` account.

        As Google's external account credentials do: STS exchanges the ServiceAccount token for a federated one,
        which IAM Credentials exchanges for the service account's (workload identity).
        """
        if not self.where or not self.audience:
            raise StoreError(f"bucket {self.bucket}: an external account needs the Secret's namespace and audience")
        subject = service_account_token(self.where, self.audience)["access_token"]
        form = {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "audience": self.account["audience"],
                "scope": GCP_CLOUD_PLATFORM, "requested_token_type": "urn:ietf:params:oauth:token-type:access_token",
                "subject_token_type": self.account["subject_token_type"], "subject_token": subject}  # fmt: skip
        try:
            got = self.http.request("POST", self.account["token_url"], fields=form, encode_multipart=False)
            if got.status != 200:
                raise StoreError(f"bucket {self.bucket}: STS refused the seed's token ({got.status})")
            federated = str(json.loads(got.data)["access_token"])
            url = self.account["service_account_impersonation_url"]
            got = self.http.request("POST", url, body=json.dumps({"scope": [GCS_SCOPE]}),
                                    headers={"Authorization": f"Bearer {federated}",
                                             "Content-Type": "application/json"})  # fmt: skip
        except urllib3.exceptions.HTTPError as error:
            raise StoreError(f"bucket {self.bucket}: no token for its service account: {error}") from None
        if got.status != 200:
            raise StoreError(f"bucket {self.bucket}: acting as its service account was refused ({got.status})")
        return str(json.loads(got.data)["accessToken"])

    def _object(self, key: str) -> str:
        """An object's URL in the JSON API."""
        return f"{self.api}/storage/v1/b/{self.bucket}/o/{urllib.parse.quote(key, safe='')}"

    def put(self, key: str, data: bytes, metadata: Metadata) -> None:
        """A multipart upload: the object's resource (name, custom metadata), then its bytes."""
        boundary = "arbor-entry-store"
        resource = json.dumps({"name": key, "metadata": metadata, "contentType": "application/octet-stream"})
        body = (f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{resource}\r\n"
                f"--{boundary}\r\nContent-Type: application/octet-stream\r\n\r\n").encode()  # fmt: skip
        body += data + f"\r\n--{boundary}--\r\n".encode()
        url = f"{self.api}/upload/storage/v1/b/{self.bucket}/o?uploadType=multipart"
        try:
            got = self._call("POST", url, body=body,
                             headers={"Content-Type": f"multipart/related; boundary={boundary}"})  # fmt: skip
        except urllib3.exceptions.HTTPError as error:
            raise StoreError(f"writing {key} to bucket {self.bucket}: {error}") from None
        if got.status != 200:
            raise StoreError(f"writing {key} to bucket {self.bucket}: {got.status} {got.data[:200]!r}")

    def get(self, key: str) -> tuple[bytes, Metadata]:
        """The object's custom metadata (its resource), then its bytes (`alt=media`)."""
        try:
            described, media = self._call("GET", self._object(key)), self._call("GET", f"{self._object(key)}?alt=media")
        except urllib3.exceptions.HTTPError as error:
            raise StoreError(f"reading {key} from bucket {self.bucket}: {error}") from None
        for got in (described, media):
            if got.status != 200:
                raise StoreError(f"reading {key} from bucket {self.bucket}: {got.status}")
        return media.data, dict(json.loads(described.data).get("metadata") or {})

    def present(self, key: str) -> bool:
        """Whether the object is there (its resource answers 404 when not)."""
        try:
            return self._call("GET", self._object(key)).status != 404
        except (urllib3.exceptions.HTTPError, StoreError):
            return True

    def keys(self, prefix: str) -> list[str]:
        """The keys under a prefix, page by page."""
        found: list[str] = []
        query: dict[str, str] = {"prefix": prefix, "fields": "items(name),nextPageToken"}
        while True:
            url = f"{self.api}/storage/v1/b/{self.bucket}/o?{urllib.parse.urlencode(query)}"
            try:
                got = self._call("GET", url)
            except urllib3.exceptions.HTTPError as error:
                raise StoreError(f"listing {prefix} in bucket {self.bucket}: {error}") from None
            if got.status != 200:
                raise StoreError(f"listing {prefix} in bucket {self.bucket}: {got.status}")
            page = json.loads(got.data)
            found += [str(item["name"]) for item in page.get("items") or []]
            if not page.get("nextPageToken"):
                return found
            query["pageToken"] = page["nextPageToken"]


def entry_store(value: dict[str, Any]) -> EntryStore:
    """The store of the bucket the `etcd-backup` data (or a reference to it) names: GCS for a service key, else S3."""
    data = entry_data(value)
    bucket = data[backup.KEY_BUCKET]
    if account := data.get(backup.KEY_SERVICE_ACCOUNT):
        return GcsEntry(json.loads(account), bucket, value.get(SECRET_REF), data.get(backup.KEY_TOKEN_AUDIENCE, ""))
    return S3Entry(s3_client(data, value.get(SECRET_REF)), bucket)


# The key of a reference to a seed namespace's `etcd-backup` Secret, in place of its data.
SECRET_REF = "secretRef"


def data_digest(data: dict[str, str]) -> str:
    """The SHA-256 (first 16 hex digits) of `etcd-backup` data: a reference names what it expects by it."""
    return json_hash(data)


def reference(
    kubeconfig: str, namespace: str, data: dict[str, str], name: str = backup.ETCD_BACKUP_SECRET
) -> dict[str, Any]:
    """A reference to the Secret `name` of the namespace holding `data`: where, the entry's prefix, its digest.

    The shoot's `etcd-backup` Secret holds the prefix too; the seed's bucket Secret (`garden/bucket-<bucket>`)
    holds the bucket's credentials alone, and the reference adds the entry's prefix to what it reads.
    """
    where = {"kubeconfig": kubeconfig, "namespace": namespace, "name": name}
    return {SECRET_REF: where, backup.KEY_PREFIX: data[backup.KEY_PREFIX], "digest": data_digest(data)}


def given_whole_before(olds: Any, news: Any) -> bool:
    """Whether `etcd-backup` data an older arbor gave whole is given by reference now (or a preview's unknown)."""
    return isinstance(olds, dict) and SECRET_REF not in olds and news != olds


def expected_digest(value: dict[str, Any]) -> str:
    """The digest of the `etcd-backup` data a value gives or names: equal for the data and a reference to it."""
    return str(value["digest"]) if SECRET_REF in value else data_digest(value)


def entry_data(value: dict[str, Any]) -> dict[str, str]:
    """The `etcd-backup` data: given, or read from the Secret a reference names, which must hold what it expects."""
    where = value.get(SECRET_REF)
    if not where:
        return value
    try:
        data = secret_keys(where, where["name"])
    except KubeError as error:
        raise (MissingSecretError if error.status == 404 else StoreError)(str(error)) from None
    if backup.KEY_PREFIX in value and backup.KEY_PREFIX not in data:  # a seed's bucket Secret: the entry is ours
        data = {**data, backup.KEY_PREFIX: value[backup.KEY_PREFIX]}
    if data_digest(data) != value.get("digest"):
        raise StoreError(
            f"Secret {where['namespace']}/{where['name']} holds other credentials than this update wrote (its "
            "SecretSet writes it first)"
        )
    return data
