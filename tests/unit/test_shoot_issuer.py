"""A self-hosted cloud shoot's machines by workload identity: its issuer published (aws) or held by its pool (gcp).

Its machine-controller-manager runs behind the shoot's own API server; arbor computes the discovery documents and
keys that server serves from the service-account key it issued, so the cloud trusts MCM's tokens and no key exists.
The documents' rendering is checked here against what the keys are; tests/integration/test_shoot_issuer.py checks
it against a real kube-apiserver.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest
from arbor_policies import cloud as cloud_policies
from arbor_policies.resource import Resource
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from hypothesis import given
from hypothesis import strategies as st

from components import naming
from components.checks import parse_landscape
from components.plan.planner import plan_landscape
from components.plan.values import STS_AUDIENCE, ShootValues
from components.reconciler.signing import new_key, public_pem
from components.render import controlplane, service_account_issuer
from tests.unit.landscape_mocks import PUBLIC_KEY
from tests.unit.test_cloud_stacks import stack_landscape
from tests.unit.test_example_stacks import EDGE, OBJECT_SET, SECRET, Example
from tests.unit.test_seed_issuer import planned
from tests.unit.test_shoot_exposure import unwrapped

TOKEN_FILE = "/var/run/secrets/gardener.cloud/workload-identity/token"
MCM_SUBJECT = "system:serviceaccount:kube-system:machine-controller-manager"
OWN_ISSUER = "https://127.0.0.1:443"


def b64url(data: bytes) -> str:
    """Unpadded base64url."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> int:
    """The big-endian integer of unpadded base64url."""
    return int.from_bytes(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), "big")


def edge(plan_shoots: tuple[ShootValues, ...]) -> ShootValues:
    """The example's self-hosted shoot."""
    return next(s for s in plan_shoots if s.name == "edge")


def test_the_keys_are_the_service_account_keys_public_half_by_kubernetes_key_id() -> None:
    """GIVEN a service-account key WHEN its key set is rendered THEN a token it signs verifies with the JWK alone.

    The `kid` is what kube-apiserver writes into every token's header: SHA-256 of the key's DER SubjectPublicKeyInfo,
    unpadded base64url; STS and pools pick the key by it.
    """
    key = new_key()
    [jwk] = service_account_issuer.jwks(public_pem(key))["keys"]
    der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert jwk["kid"] == b64url(hashlib.sha256(der).digest())
    assert {k: jwk[k] for k in ("use", "kty", "alg", "e")} == {"use": "sig", "kty": "RSA", "alg": "RS256", "e": "AQAB"}
    signed = b"header.payload"
    signature = key.sign(signed, padding.PKCS1v15(), hashes.SHA256())
    rebuilt = rsa.RSAPublicNumbers(unb64url(jwk["e"]), unb64url(jwk["n"])).public_key()
    rebuilt.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())  # raises if the JWK is another key
    other = rsa.RSAPublicNumbers(65537, unb64url(jwk["n"]) - 2).public_key()
    with pytest.raises(InvalidSignature):
        other.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())


def test_the_discovery_document_names_its_keys_under_the_issuer() -> None:
    """GIVEN an issuer URL WHEN both documents are rendered THEN by path, the keys under that issuer, compact JSON."""
    url = "https://arbor-edge.s3.eu-west-1.amazonaws.com"
    texts = service_account_issuer.documents(url, PUBLIC_KEY)
    assert set(texts) == {".well-known/openid-configuration", "openid/v1/jwks"}
    discovery = json.loads(texts[".well-known/openid-configuration"])
    assert discovery["issuer"] == url and discovery["jwks_uri"] == f"{url}/openid/v1/jwks"
    assert discovery["id_token_signing_alg_values_supported"] == ["RS256"]
    assert json.loads(texts["openid/v1/jwks"]) == service_account_issuer.jwks(PUBLIC_KEY)


def test_a_published_issuer_comes_first_and_the_api_servers_own_stays_accepted() -> None:
    """GIVEN a published issuer WHEN kube-apiserver's flags are rendered THEN it signs with it and still takes the old.

    As Gardener keeps the default issuer after a managed one: tokens of the old issuer (and audience) stay valid.
    """
    url = "https://b.s3.r.amazonaws.com"
    assert service_account_issuer.apiserver_flags(None, OWN_ISSUER) == [f"--service-account-issuer={OWN_ISSUER}"]
    assert service_account_issuer.apiserver_flags(url, OWN_ISSUER) == [
        f"--service-account-issuer={url}",
        f"--service-account-issuer={OWN_ISSUER}",
        f"--service-account-jwks-uri={url}/openid/v1/jwks",
        f"--api-audiences={url},{OWN_ISSUER}",
    ]


def test_the_issuer_bucket_lets_anyone_read_the_two_documents_and_nothing_else() -> None:
    """GIVEN the issuer bucket's policy THEN public reads of the two objects only, plain HTTP and old TLS refused."""
    policy = service_account_issuer.aws_bucket_policy_public_documents("aws", "b")
    allowed = [s for s in policy["Statement"] if s["Effect"] == "Allow"]
    assert allowed == [{
        "Sid": "PublicReadOfIssuerDocuments", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
        "Resource": ["arn:aws:s3:::b/.well-known/openid-configuration", "arn:aws:s3:::b/openid/v1/jwks"],
    }]  # fmt: skip
    assert {s["Sid"] for s in policy["Statement"] if s["Effect"] == "Deny"} == {"DenyInsecureTransport",
                                                                                "DenyOutdatedTLS"}  # fmt: skip


LABEL = st.from_regex(r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?", fullmatch=True)
S3_NAME = r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"


@given(project=LABEL, shoot=LABEL, stack=st.text(min_size=1, max_size=40))
def test_an_issuer_bucket_is_a_valid_s3_name_of_its_own(project: str, shoot: str, stack: str) -> None:
    """GIVEN any shoot WHEN its issuer bucket is named THEN a valid S3 name, not its seed's backup bucket's."""
    tid = naming.shoot_namespace(project, shoot)
    bucket = naming.issuer_bucket(tid, "example.com", stack)
    assert re.fullmatch(S3_NAME, bucket) and ".." not in bucket and not bucket.startswith("xn--"), bucket
    assert bucket != naming.backup_bucket(tid, "example.com", stack)
    assert bucket != naming.issuer_bucket(tid, "example.com", f"{stack}-other")


@pytest.mark.parametrize("provider", ["aws", "gcp"])
def test_the_plan_gives_a_self_hosted_shoots_machines_workload_identity(provider: str) -> None:
    """GIVEN an example WHEN planned THEN edge's MCM tokens are trusted (aws by its bucket), unless it pastes a key."""
    stack = f"{provider}-example"
    landscape = stack_landscape(stack)
    shoot = edge(planned(stack, landscape).shoots)
    if provider == "aws":
        assert shoot.machine_audience == STS_AUDIENCE
        assert shoot.issuer_bucket is not None and shoot.issuer_bucket.startswith("arbor-shoot--platform--edge-")
        region = shoot.networking.region
        assert service_account_issuer.published(shoot) == f"https://{shoot.issuer_bucket}.s3.{region}.amazonaws.com"
    else:
        assert shoot.machine_audience == "arbor-shoot:shoot--platform--edge" and shoot.issuer_bucket is None
    assert all(s.issuer_bucket is None for s in planned(stack, landscape).shoots if not s.self_hosted)
    shoots = [{**s, "cloudCredentialsSecret": "edgeCredentials"} if s["name"] == "edge" else s
              for s in landscape["shoots"]]  # fmt: skip
    pasted = edge(plan_landscape(parse_landscape({**landscape, "shoots": shoots}), stack).shoots)
    assert pasted.machine_audience is None and pasted.issuer_bucket is None


@pytest.fixture(scope="module", params=["aws", "gcp"])
def example(request: pytest.FixtureRequest) -> Example:
    """Each example stack, registered once for this module."""
    return Example(request.param)


def test_the_self_hosted_shoots_machines_have_no_key_and_mcm_projects_its_token(example: Example) -> None:
    """GIVEN edge registered WHEN its machines' identity is read THEN trusted through its own issuer, no key.

    aws: the role trusts the IAM OIDC provider of the issuer bucket's URL for MCM's ServiceAccount in kube-system;
    gcp: the shoot's pool holds the keys (`jwksJson`) of the issuer its API server has, and only that ServiceAccount
    acts as the machines' account. MCM's Deployment projects the token for the audience into the sidecar.
    """
    shoot = edge(example.plan.shoots)
    secret = unwrapped(example.of(SECRET, EDGE)["workers-cloudprovider"]["stringData"])
    if example.provider == "aws":
        assert not example.of("aws:iam/accessKey:AccessKey", EDGE) and not example.of("aws:iam/user:User", EDGE)
        url = service_account_issuer.published(shoot)
        assert url is not None
        oidc = example.of("aws:iam/openIdConnectProvider:OpenIdConnectProvider", EDGE)["oidc"]
        assert oidc["url"] == url and oidc["clientIdLists"] == [STS_AUDIENCE]
        role = example.of("aws:iam/role:Role", EDGE)["workers-machines-role"]
        host = url.removeprefix("https://")
        [statement] = json.loads(role["assumeRolePolicy"])["Statement"]
        assert statement["Condition"] == {"StringEquals": {f"{host}:sub": MCM_SUBJECT, f"{host}:aud": STS_AUDIENCE}}
        assert secret == {"roleARN": role["arn"], "workloadIdentityTokenFile": TOKEN_FILE}
    else:
        assert not example.of("gcp:serviceaccount/key:Key", EDGE)
        provider = example.of("gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider", EDGE)
        oidc = provider["pool-provider"]["oidc"]
        assert oidc["issuerUri"] == OWN_ISSUER and oidc["allowedAudiences"] == [shoot.machine_audience]
        # The very text an aws shoot publishes at its issuer: one rendering of the keys for both clouds.
        assert oidc["jwksJson"] == service_account_issuer.documents(OWN_ISSUER, PUBLIC_KEY)["openid/v1/jwks"]
        assert provider["pool-provider"]["attributeCondition"] == f"assertion.sub == '{MCM_SUBJECT}'"
        acting = example.of("gcp:serviceaccount/iAMMember:IAMMember", EDGE)["workers-machines-acts-as"]
        assert acting["member"].endswith(f"/subject/{MCM_SUBJECT}")
        assert set(secret) == {"credentialsConfig", "projectID", "tokenAudience"}
    manager = unwrapped(example.of(OBJECT_SET, EDGE)["workers-mcm"]["manifests"])
    [deployment] = [o for o in manager if o["kind"] == "Deployment"]
    token = {"audience": shoot.machine_audience, "expirationSeconds": 3600, "path": "token"}
    volume = {"name": "workload-identity", "projected": {"sources": [{"serviceAccountToken": token}]}}
    assert deployment["spec"]["template"]["spec"]["volumes"] == [volume]


def test_the_aws_issuer_bucket_holds_the_documents_before_mcm_reads_its_secret(example: Example) -> None:
    """GIVEN edge on aws WHEN registered THEN its bucket serves both documents of its key; the Secret waits for them."""
    if example.provider != "aws":
        assert not example.of("aws:s3/bucket:Bucket", EDGE)
        return
    shoot = edge(example.plan.shoots)
    url = service_account_issuer.published(shoot)
    assert url is not None
    [bucket] = example.of("aws:s3/bucket:Bucket", EDGE).values()
    assert bucket["bucket"] == shoot.issuer_bucket
    objects = {o["key"]: o for o in example.of("aws:s3/bucketObjectv2:BucketObjectv2", EDGE).values()}
    assert {k: o["content"] for k, o in objects.items()} == service_account_issuer.documents(url, PUBLIC_KEY)
    [block] = example.of("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", EDGE).values()
    assert block["blockPublicAcls"] and block["ignorePublicAcls"] and not block["blockPublicPolicy"]
    # The policy pack's bucket rule passes them: ACLs blocked, public reads of the two documents alone.
    types = ("aws:s3/bucket:Bucket", cloud_policies.S3_PUBLIC_ACCESS_BLOCK, cloud_policies.S3_BUCKET_POLICY)
    issuer = [Resource(t, props, f"{EDGE}-{name}") for t in types for name, props in example.of(t, EDGE).items()]
    assert len(issuer) == 3 and [p for r in issuer for p in cloud_policies.backup_bucket_safety(r, {})] == []
    waits = example.waits_for(SECRET, f"{EDGE}-workers-cloudprovider")
    assert {
        ("aws:s3/bucketObjectv2:BucketObjectv2", f"{EDGE}-issuer-{n}") for n in ("openid-configuration", "jwks")
    } <= waits


def test_the_self_hosted_api_server_signs_with_the_published_issuer(example: Example) -> None:
    """GIVEN edge WHEN its kube-apiserver is rendered THEN aws: the bucket's issuer first; gcp: its own, unchanged."""
    shoot = edge(example.plan.shoots)
    command = controlplane.kube_apiserver(shoot, shoot.topology).object["spec"]["template"]["spec"]["containers"][0]
    issuers = [a.split("=", 1)[1] for a in command["command"] if a.startswith("--service-account-issuer=")]
    url = service_account_issuer.published(shoot)
    assert issuers == ([url, OWN_ISSUER] if example.provider == "aws" else [OWN_ISSUER])
