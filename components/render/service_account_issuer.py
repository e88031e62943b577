"""A self-hosted shoot's service-account issuer as a cloud trusts it, pure: discovery documents, keys, flags.

A self-hosted shoot's machine-controller-manager runs behind the shoot's own API server, whose issuer no cloud can
reach. So that its machines' identity needs no key (workload identity, as on a seed), arbor publishes what the API
server would serve at `/.well-known/openid-configuration` and `/openid/v1/jwks`, computed from the service-account
key it issued (Gardener's managed service account issuer copies the same two documents to its discovery server):

- aws: in an S3 bucket of the shoot's, readable by anyone (IAM's OIDC provider and STS fetch them), whose URL becomes
  the API server's first `--service-account-issuer`; the former issuer stays accepted after it, as Gardener keeps
  its default one, and both stay API audiences so the pods' tokens of either keep working.
- gcp: nowhere public; the shoot's workload identity pool provider holds the keys itself (`jwksJson`) and trusts the
  issuer the API server already has.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from components.plan.values import ShootValues
from components.render.backup import aws_bucket_arn, aws_bucket_policy

DISCOVERY_PATH = ".well-known/openid-configuration"
JWKS_PATH = "openid/v1/jwks"
# What kube-apiserver's discovery document says of its tokens (k8s.io/kubernetes pkg/serviceaccount).
SIGNING_ALGORITHM = "RS256"


def _b64url(data: bytes) -> str:
    """Unpadded base64url, as JWKs and key IDs are written."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _public_key(public_pem: str) -> rsa.RSAPublicKey:
    """The RSA public key of a PEM, which a service-account key always is."""
    key = serialization.load_pem_public_key(public_pem.encode())
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError("a service-account key must be RSA")
    return key


def key_id(public_pem: str) -> str:
    """The `kid` kube-apiserver gives the key: base64url of the SHA-256 of its DER SubjectPublicKeyInfo."""
    der = _public_key(public_pem).public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return _b64url(hashlib.sha256(der).digest())


def jwks(public_pem: str) -> dict[str, Any]:
    """The key set kube-apiserver serves at `/openid/v1/jwks` for this key."""
    numbers = _public_key(public_pem).public_numbers()

    def unsigned(value: int) -> str:
        return _b64url(value.to_bytes((value.bit_length() + 7) // 8, "big"))

    key = {"use": "sig", "kty": "RSA", "kid": key_id(public_pem), "alg": SIGNING_ALGORITHM,
           "n": unsigned(numbers.n), "e": unsigned(numbers.e)}  # fmt: skip
    return {"keys": [key]}


def discovery(issuer: str) -> dict[str, Any]:
    """The discovery document kube-apiserver serves for `issuer`, its keys under that URL."""
    return {
        "issuer": issuer,
        "jwks_uri": f"{issuer}/{JWKS_PATH}",
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": [SIGNING_ALGORITHM],
    }


def _text(document: dict[str, Any]) -> str:
    """A document as the compact JSON text published."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


def jwks_text(public_pem: str) -> str:
    """The key set as published, wherever it goes (an object at the issuer, or a pool provider's inline keys)."""
    return _text(jwks(public_pem))


def documents(issuer: str, public_pem: str) -> dict[str, str]:
    """Both documents as the JSON text to publish, by their path under the issuer."""
    return {DISCOVERY_PATH: _text(discovery(issuer)), JWKS_PATH: jwks_text(public_pem)}


def s3_issuer(bucket: str, region: str) -> str:
    """The issuer URL of documents in an S3 bucket (virtual-hosted style: the bucket's own TLS name)."""
    return f"https://{bucket}.s3.{region}.amazonaws.com"


def apiserver_flags(published: str | None, own: str) -> list[str]:
    """kube-apiserver's issuer flags: `own`, or the published issuer first with `own` still accepted."""
    if published is None:
        return [f"--service-account-issuer={own}"]
    return [
        f"--service-account-issuer={published}",
        f"--service-account-issuer={own}",
        f"--service-account-jwks-uri={published}/{JWKS_PATH}",
        f"--api-audiences={published},{own}",
    ]


def aws_bucket_policy_public_documents(partition: str, bucket: str) -> dict[str, Any]:
    """The issuer bucket's policy: the backup buckets' TLS denials, and anyone may read the two documents alone."""
    policy = aws_bucket_policy(partition, bucket)
    arn = aws_bucket_arn(partition, bucket)
    read = {"Sid": "PublicReadOfIssuerDocuments", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
            "Resource": [f"{arn}/{path}" for path in (DISCOVERY_PATH, JWKS_PATH)]}  # fmt: skip
    return {**policy, "Statement": [*policy["Statement"], read]}


def published(shoot: ShootValues) -> str | None:
    """The issuer a shoot publishes (aws, self-hosted), or None: its API server's own."""
    return s3_issuer(shoot.issuer_bucket, shoot.networking.region) if shoot.issuer_bucket else None
