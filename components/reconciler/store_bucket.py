"""StoreBucket: a seed's backup bucket in the local object store, with its settings and an identity limited to it.

What it makes through MinIO's S3 and admin APIs, from the settings components/render/backup.py renders for S3 (the
aws path uses the same): the bucket, versioning, server-side encryption (SSE-S3, the store's KMS key), the lifecycle,
the bucket policy (TLS only), and an identity whose policy reaches this bucket alone: a user, whose keys are
generated at create and kept in the state (secret), or, given an `audience`, a role the seed's `etcd-backup`
ServiceAccounts assume with their tokens (workload identity, store_identity.py): no key at all. `read()` compares
what the store has with what it should have, setting by setting (`observed`): drift the next `up` puts right.

It writes the seed's Secret of its identity (`garden/bucket-<bucket>`, the bucket's `etcd-backup` data) itself, as
a hosted shoot's credentials write theirs (credential_secrets.py): the state keeps a user's keys once, the Secret as
a hash, and a Secret deleted or edited in the seed is drift too. The bucket and its objects are retained on delete
(as a cloud seed's bucket is): the identity, its policy and the seed's Secret go; `make down` removes the objects.

The engine stores the provider pickled by reference to this module: keep its path and class names.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import string
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pulumi
import urllib3
from minio import Minio, S3Error
from minio.commonconfig import ENABLED, Filter
from minio.credentials.providers import StaticProvider
from minio.error import MinioAdminException
from minio.lifecycleconfig import AbortIncompleteMultipartUpload, LifecycleConfig, NoncurrentVersionExpiration, Rule
from minio.minioadmin import MinioAdmin
from minio.sseconfig import Rule as SSERule
from minio.sseconfig import SSEConfig
from minio.versioningconfig import VersioningConfig
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.naming import json_hash
from components.reconciler import credential_secrets, store_identity
from components.reconciler.kube import KubeError, unless_unreachable
from components.reconciler.object_store import root_password
from components.reconciler.provider import Provider
from components.render import backup

# Bump when the provider logic changes: every bucket shows an update and is converged again.
PROVIDER_VERSION = "1"
# Access keys as AWS's: 20 upper-case letters and digits; secret keys 40 characters.
ACCESS_KEY_ALPHABET = string.ascii_uppercase + string.digits
GENERATED = ("accessKey", "secretKey", "clientSecret")
TIMEOUT_S = 30
# The Secret's fields while it is written (`data:<key>`): rendered from the keys for the write, never kept.
DATA_FIELD = "data:"
# The inputs whose change updates it (`rootSecret`: an older state kept the root password itself, which it drops).
UPDATED_BY = ("endpoint", "rootSecret", "bucketPolicy", "identityPolicy", "lifecycle", "audience", "issuer", "version")


class BucketError(Exception):
    """A bucket that cannot be made or read; the message names it and says why."""


def trusting(ca_cert: str, timeout_s: float | None = None) -> urllib3.PoolManager:
    """HTTPS connections to the store that trust only its CA (not the environment's bundle), retried a few times."""
    # urllib3's own default when unbounded: no total limit.
    timeout = urllib3.Timeout(total=timeout_s) if timeout_s else urllib3.Timeout.DEFAULT_TIMEOUT
    # A refused connection is retried for about ten seconds: a bucket's new trust restarts the store.
    retries = urllib3.Retry(total=8, read=3, backoff_factor=0.2, backoff_max=2.0)
    return urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_cert_data=ca_cert, timeout=timeout, retries=retries)


def _root_password(props: dict[str, Any]) -> str:
    """The store's root password, read where the garden holds it (an older state kept it among the inputs)."""
    where = props.get("rootSecret")
    if not where:
        return str(props["rootPassword"])
    try:
        return root_password(where)
    except KubeError as error:
        raise BucketError(f"bucket {props['bucket']}: the object store's root credentials: {error}") from None


@contextmanager
def clients(props: dict[str, Any]) -> Iterator[tuple[Minio, MinioAdmin]]:
    """S3 and admin clients of the store as its root user, trusting only the store's CA."""
    creds = StaticProvider(props["rootUser"], _root_password(props))
    http = trusting(props["caCert"], TIMEOUT_S)
    host = props["endpoint"].removeprefix("https://")
    try:
        yield (
            Minio(host, credentials=creds, secure=True, http_client=http),
            MinioAdmin(endpoint=host, credentials=creds, secure=True, http_client=http),
        )
    except (S3Error, MinioAdminException, urllib3.exceptions.HTTPError, ValueError) as error:
        raise BucketError(f"bucket {props['bucket']} in the object store at {props['endpoint']}: {error}") from None
    finally:
        http.clear()


def _lifecycle(rules: list[dict[str, Any]]) -> LifecycleConfig:
    """The lifecycle rules render/backup.py gives for S3, as the client's configuration.

    The engine hands numbers back as floats: day counts are made whole again.
    """
    made = []
    for rule in rules:
        abort = rule.get("abort_incomplete_multipart_upload")
        noncurrent = rule.get("noncurrent_version_expiration")
        made.append(
            Rule(
                ENABLED, rule_filter=Filter(prefix=""), rule_id=rule["id"],
                abort_incomplete_multipart_upload=AbortIncompleteMultipartUpload(int(abort["days_after_initiation"]))
                if abort else None,
                noncurrent_version_expiration=NoncurrentVersionExpiration(int(noncurrent["noncurrent_days"]))
                if noncurrent else None,
            )
        )  # fmt: skip
    return LifecycleConfig(made)


def statements(policy: str | dict[str, Any]) -> list[dict[str, Any]]:
    """A policy's statements in one form (single values as lists, sorted), however the store writes them back."""
    doc = json.loads(policy) if isinstance(policy, str) else policy

    def listed(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: listed(v) for k, v in sorted(value.items())}
        return sorted(value) if isinstance(value, list) else [value]

    def principal(value: Any) -> Any:
        return listed({"AWS": value} if value == "*" else value)

    def statement(s: dict[str, Any]) -> dict[str, Any]:
        found = {k: s.get(k) for k in ("Sid", "Effect")}
        found |= {k: listed(s[k]) for k in ("Action", "Resource", "Condition") if k in s}
        return found | ({"Principal": principal(s["Principal"])} if "Principal" in s else {})

    found = [statement(s) for s in doc.get("Statement", [])]
    return sorted(found, key=lambda s: json.dumps(s, sort_keys=True))


def _rule_facts(config: LifecycleConfig | None) -> list[list[Any]]:
    """Each lifecycle rule's id, status and day counts."""
    facts = []
    for rule in config.rules if config else []:
        abort = rule.abort_incomplete_multipart_upload
        noncurrent = rule.noncurrent_version_expiration
        facts.append([rule.rule_id, rule.status, abort.days_after_initiation if abort else None,
                      noncurrent.noncurrent_days if noncurrent else None])  # fmt: skip
    return sorted(facts, key=str)


def by_role(props: dict[str, Any]) -> bool:
    """Whether the bucket's identity is a role the seed's tokens assume (an audience is given), not a user."""
    return bool(props.get("audience"))


def desired(props: dict[str, Any]) -> dict[str, Any]:
    """The settings the bucket and its identity should have, in the form `observe` reads them."""
    identity = (
        {"trust": store_identity.desired(props)}
        if by_role(props)
        else {"user": [props["accessKey"], "enabled", props["bucket"]]}
    )
    return {
        "bucket": True,
        "versioning": ENABLED,
        "encryption": "AES256",
        "lifecycle": _rule_facts(_lifecycle(props["lifecycle"])),
        "policy": statements(props["bucketPolicy"]),
        **identity,
        "identityPolicy": statements(props["identityPolicy"]),
    }


def observe(props: dict[str, Any]) -> dict[str, Any]:
    """The settings the store has now; missing ones read as empty."""
    with clients(props) as (s3, admin):
        name = props["bucket"]
        if not s3.bucket_exists(name):
            return {"bucket": False}
        sse = s3.get_bucket_encryption(name)
        rule = sse.rule if sse else None
        policy = _or_empty(lambda: s3.get_bucket_policy(name))
        identity = (
            {"trust": store_identity.facts(admin, props)}
            if by_role(props)
            else {"user": _user(admin, props["accessKey"])}
        )
        return {
            "bucket": True,
            "versioning": s3.get_bucket_versioning(name).status,
            "encryption": rule.sse_algorithm if rule else "",
            "lifecycle": _rule_facts(s3.get_bucket_lifecycle(name)),
            "policy": statements(policy) if policy else [],
            **identity,
            "identityPolicy": _identity_policy(admin, name),
        }


def _or_empty(read: Any) -> Any:
    """What `read()` returns, or None when the store has no such setting."""
    try:
        return read()
    except S3Error as error:
        if (error.code or "").startswith("NoSuch"):
            return None
        raise


def _user(admin: MinioAdmin, access_key: str) -> list[str]:
    """The user's access key, status and policy; empty when there is no such user."""
    try:
        info = json.loads(admin.user_info(access_key))
    except MinioAdminException:
        return []
    return [access_key, info.get("status", ""), info.get("policyName", "")]


def _identity_policy(admin: MinioAdmin, name: str) -> list[dict[str, Any]]:
    """The statements of the user's policy; empty when there is no such policy."""
    try:
        info = json.loads(admin.policy_info(name))
    except MinioAdminException:
        return []
    return statements(info.get("Policy", info))


def converge(props: dict[str, Any]) -> None:
    """Makes the bucket if missing and (re)writes every setting and the user; each call is safe to repeat."""
    with store_identity.converging(props), clients(props) as (s3, admin):
        name = props["bucket"]
        if not s3.bucket_exists(name):
            s3.make_bucket(name)
        s3.set_bucket_versioning(name, VersioningConfig(ENABLED))
        s3.set_bucket_encryption(name, SSEConfig(SSERule.new_sse_s3_rule()))
        s3.set_bucket_lifecycle(name, _lifecycle(props["lifecycle"]))
        s3.set_bucket_policy(name, props["bucketPolicy"])
        admin.policy_add(name, policy=json.loads(props["identityPolicy"]))
        if by_role(props):
            store_identity.trust(admin, props)
            return
        admin.user_add(props["accessKey"], props["secretKey"])
        # Attaching a policy the user has already is refused as a change with no effect.
        if name not in _user(admin, props["accessKey"])[2:]:
            admin.attach_policy([name], user=props["accessKey"])


def fingerprint(settings: dict[str, Any]) -> str:
    """The SHA-256 (first 16 hex digits) of a set of settings."""
    return json_hash(settings)


def _outputs(props: dict[str, Any], observed: dict[str, Any]) -> dict[str, Any]:
    """The inputs and keys, the fingerprint of what it should have and of what it has."""
    return {**props, "wanted": fingerprint(desired(props)), "observed": fingerprint(observed)}


def bucket_data(props: dict[str, Any]) -> dict[str, str]:
    """The bucket's `etcd-backup` data: its role and audience, or its user's keys; where the store is, its CA."""
    reach = (props["endpoint"], props["caCert"])
    if by_role(props):
        audience = str(props["audience"])
        credentials = backup.store_role_credentials(backup.store_role_arn(audience), audience, *reach)
    else:
        credentials = backup.store_credentials(props["accessKey"], props["secretKey"], *reach)
    return backup.store_bucket_data(props["bucket"], credentials)


def secret_layout(name: str, audience: str | None = None) -> dict[str, dict[str, str]]:
    """The seed's Secret of the bucket's identity (`garden/bucket-<bucket>`): each key of its `etcd-backup` data."""
    blank = dict.fromkeys(("bucket", "endpoint", "caCert", "accessKey", "secretKey"), "")
    return {name: {key: DATA_FIELD + key for key in bucket_data({**blank, "audience": audience})}}


def _written(props: dict[str, Any]) -> dict[str, Any]:
    """The outputs, with the seed's Secret written from the identity where it writes one; what it holds by hash."""
    if not credential_secrets.writes(props):
        return props
    data = bucket_data(props)
    return credential_secrets.write_rendered(props, {DATA_FIELD + key: text for key, text in data.items()})


def _generated(props: dict[str, Any]) -> dict[str, Any]:
    """What the identity needs and does not have yet: the role's client secret, or the user's keys."""
    if by_role(props):
        return {} if props.get("clientSecret") else {"clientSecret": secrets.token_urlsafe(40)}
    if props.get("accessKey"):
        return {}
    access = "".join(secrets.choice(ACCESS_KEY_ALPHABET) for _ in range(20))
    return {"accessKey": access, "secretKey": secrets.token_urlsafe(30)}


def _kept(props: dict[str, Any]) -> dict[str, Any]:
    """The outputs of the identity in use; the other's generated values dropped."""
    return {**props, **dict.fromkeys(("accessKey", "secretKey") if by_role(props) else ("clientSecret",))}


class StoreBucketProvider(Provider):
    """CRUD of one bucket and its user; nothing is captured, everything is read from the properties."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Generates the identity's secrets, then makes the bucket, its settings and the identity."""
        props = _kept({**props, **_generated(props)})
        converge(props)
        return CreateResult(id_=props["bucket"], outs=_written(_outputs(props, observe(props))))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """Another bucket name replaces it; other inputs, or drift refresh found (its Secret's too), update it."""
        replaces = ["bucket"] if olds.get("bucket") != news.get("bucket") else []
        drifted = olds.get("observed") != olds.get("wanted")
        rewrite = credential_secrets.write_again(olds, news)
        changed = bool(replaces) or drifted or rewrite or any(olds.get(k) != news.get(k) for k in UPDATED_BY)
        # The identity's secrets stay through an update, so the preview keeps what is made from them known.
        stables = [] if replaces or by_role(olds) != by_role(news) else list(GENERATED)
        return DiffResult(changes=changed, replaces=replaces, stables=stables, delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Keeps the identity's secrets and writes every setting again, and the seed's Secret of the identity.

        A change of identity (a user's keys to the role, or back) writes the Secret of the new one first, then
        removes the old one: the seed's Secret always names an identity that works.
        """
        props = {**news, **{k: olds.get(k) for k in GENERATED}}
        props = _kept({**props, **_generated(props)})
        converge(props)
        credential_secrets.leave_old_place(olds, props)
        outs = _written(_outputs(props, observe(props)))
        if by_role(olds) != by_role(news):
            _remove_identity(olds)
        return UpdateResult(outs=outs)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """What the store has now, as a fingerprint beside the wanted one; a store not answering is drift too.

        Refresh reads the bucket while its store may be stopped (the store's own read says so): the update that
        follows starts the store first, then writes the bucket's settings again.
        """
        try:
            observed = observe(props)
        except BucketError:
            observed = {"reachable": False}
        outs = _outputs(props, observed)
        return ReadResult(id_=id_, outs=credential_secrets.read_back(outs, props))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Removes the user, its policy and the seed's Secret of its keys; the bucket and its objects are kept."""
        # A store already gone (down deletes it after its buckets) leaves nothing to remove; a user or policy
        # already gone neither.
        _remove_identity(props)
        with contextlib.suppress(BucketError), clients(props) as (_, admin), contextlib.suppress(MinioAdminException):
            admin.policy_remove(props["bucket"])
        with unless_unreachable():  # a seed gone took the Secret along
            credential_secrets.remove(props)


def _remove_identity(props: dict[str, Any]) -> None:
    """Removes the user or the role's trust the properties name; one already gone, or a store gone, is fine."""
    with contextlib.suppress(BucketError), clients(props) as (_, admin):
        if by_role(props):
            store_identity.forget(admin, props)
        else:
            with contextlib.suppress(MinioAdminException):
                admin.user_remove(props["accessKey"])


class StoreBucket(Resource, module="arbor", name="StoreBucket"):
    """A bucket of the local object store and an identity limited to it; `secretKey` and `clientSecret` are secret.

    `writes` (the seed, `namespace`, Secret `name`): where it writes the seed's Secret of the identity. `audience`:
    its identity is the role the seed's tokens for it assume (`issuer`: theirs, if not the seed's API), else a user.
    """

    if TYPE_CHECKING:
        accessKey: pulumi.Output[str]  # noqa: N815 - the output's name in the state
        secretKey: pulumi.Output[str]  # noqa: N815 - the output's name in the state

    def __init__(
        self,
        name: str,
        *,
        store: Mapping[str, pulumi.Input[Any]],
        writes: Mapping[str, Any],
        bucket: str,
        bucket_policy: str,
        identity_policy: str,
        lifecycle: list[dict[str, Any]],
        audience: str | None = None,
        issuer: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            **store, "bucket": bucket, "bucketPolicy": bucket_policy, "identityPolicy": identity_policy,
            "lifecycle": lifecycle, "audience": audience, "issuer": issuer, "version": PROVIDER_VERSION,
            **dict.fromkeys((*GENERATED, "wanted", "observed")),
        }  # fmt: skip
        props = credential_secrets.writing(props, {**writes, "secrets": secret_layout(writes["name"], audience)})
        secret = pulumi.ResourceOptions(additional_secret_outputs=["secretKey", "clientSecret"])
        super().__init__(StoreBucketProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret))
