"""hack/secret_copies.py: every private key in a state, by the resources that hold it, however it is encoded."""

from __future__ import annotations

import base64
import json
from typing import Any

import secret_copies

from components.reconciler import signing
from components.reconciler.encryption import first_keys
from components.render import packed_keys
from components.render.encryption import render_config
from components.render.packing import pack

SECRET_SIG = secret_copies.SECRET_SIG


def shown(value: Any) -> dict[str, Any]:
    """A secret value as `pulumi stack export --show-secrets` writes it."""
    return {SECRET_SIG: "1b47061264138c4ac30d75fd1eb44270", "plaintext": json.dumps(value)}


def resource(name: str, inputs: Any = None, outputs: Any = None) -> dict[str, Any]:
    """A resource of an export."""
    return {"urn": f"urn:pulumi:local::arbor::t::{name}", "inputs": inputs or {}, "outputs": outputs or {}}


def test_a_key_is_found_in_every_encoding_and_named_by_its_public_half() -> None:
    """GIVEN a key in three encodings and another once WHEN scanned THEN the first has three holders.

    As primes in a secret output, in a Secret's base64 data inside a packed value, and as an indented PEM in packed
    YAML (an OSC's files).
    """
    ca, other = signing.self_signed_ca("ca", 3600), signing.self_signed_ca("other", 3600)
    secret = {"data": {"ca.key": base64.b64encode(ca.key.encode()).decode()}}
    indented = "files:\n- data: |\n" + "".join(f"    {line}\n" for line in ca.key.splitlines())
    state = {"deployment": {"resources": [
        resource("the-ca", outputs={"key": shown(packed_keys.compacted(ca.key)), "cert": ca.cert}),
        resource("a-set", inputs={"secrets": shown(pack({"ca-signer": secret}))}),
        resource("an-osc", inputs={"content": shown(pack(indented))}),
        resource("another", outputs={"key": shown(other.key)}),
    ]}}  # fmt: skip
    assert secret_copies.copies(state) == [["a-set", "an-osc", "the-ca"]]
    assert len(secret_copies.holders(state)) == 2


def test_an_encryption_key_is_found_in_its_keys_a_configuration_and_the_secret_written_from_it() -> None:
    """GIVEN an etcd encryption key in its keys' output, a packed configuration and a Secret WHEN scanned THEN three."""
    keys = first_keys("aescbc")
    config = render_config(["configmaps"], keys)
    secret = {"data": {"encryption-configuration.yaml": base64.b64encode(config.encode()).decode()}}
    state = {"deployment": {"resources": [
        resource("the-keys", outputs={"keys": shown(keys)}),
        resource("a-set", inputs={"secrets": shown(pack({"etcd-encryption-secret": secret}))}),
        resource("a-cluster", inputs={"encryptionConfig": shown(config)}),
        resource("other-keys", outputs={"keys": shown(first_keys("aescbc"))}),
    ]}}  # fmt: skip
    assert secret_copies.copies(state) == [["a-cluster", "a-set", "the-keys"]]
    assert len(secret_copies.holders(state)) == 2


def test_the_stores_passwords_are_found_in_the_fields_that_hold_them() -> None:
    """GIVEN the store's root password and a bucket user's key in the fields that hold them WHEN scanned THEN found.

    The root password in the store and a bucket's inputs (an older arbor's), a user's key in its bucket and in
    `etcd-backup` data given whole: each held twice; the other store's, once; a layout's field name, never.
    """
    root, user = "root-password-0123456789-0123456789", "user-key-0123456789-0123456789-0123"
    state = {"deployment": {"resources": [
        resource("the-store", outputs={"rootPassword": shown(root)}),
        resource("a-bucket", inputs={"rootPassword": shown(root)}, outputs={"secretKey": shown(user)}),
        resource("a-set", inputs={"secrets": shown(pack({"bucket-b": {"secretAccessKey": user}}))}),
        resource("other-store", outputs={"rootPassword": shown("another-password-0123-0123456789-01")}),
        # A Secret's layout names the field that holds one: no password.
        resource("a-writer", inputs={"secrets": {"bucket-b": {"secretAccessKey": "data:secretAccessKey"}}}),
        resource("another-writer", inputs={"secrets": {"bucket-c": {"secretAccessKey": "data:secretAccessKey"}}}),
    ]}}  # fmt: skip
    assert secret_copies.copies(state) == [["a-bucket", "a-set"], ["a-bucket", "the-store"]]
    assert len(secret_copies.holders(state)) == 3


def test_a_bucket_roles_client_secret_is_a_password_held_once() -> None:
    """GIVEN a bucket role's OpenID client secret WHEN scanned THEN found; held by the bucket alone, no copy."""
    secret = "client-secret-0123456789-0123456789-0123456789"
    state = {"deployment": {"resources": [resource("a-bucket", outputs={"clientSecret": shown(secret)})]}}
    assert secret_copies.copies(state) == []
    assert list(secret_copies.holders(state).values()) == [{"a-bucket"}]
    state["deployment"]["resources"].append(resource("a-copy", inputs={"clientSecret": shown(secret)}))
    assert secret_copies.copies(state) == [["a-bucket", "a-copy"]]
