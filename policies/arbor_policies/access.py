"""Rules about credentials: what an extension's namespace may hold, how long access tokens live.

An extension acts in the garden with its own identity, a token requested for it and read from a file beside the
generic garden kubeconfig (docs/extensions.md). A kubeconfig in its namespace that carries any other credential (a
client certificate, a static token, a password, an exec plugin) is the seed agent's or an admin's borrowed:
exactly what that identity replaces, with no audit trail of its own.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

import yaml

from arbor_policies.resource import Resource, items, mapping

SECRET = "kubernetes:core/v1:Secret"
ACCESS_TOKEN = "pulumi-python:dynamic/arbor:AccessToken"
# A kubeconfig user's fields that carry a credential other than a token file.
CREDENTIALS = (
    "client-certificate-data", "client-certificate", "client-key-data", "client-key", "token", "username",
    "password", "exec", "auth-provider",
)  # fmt: skip


def _text(value: Any, encoded: bool) -> str | None:
    """A Secret value as text (`data` is base64), or None when it is not text."""
    if not isinstance(value, str):
        return None
    if not encoded:
        return value
    try:
        return base64.b64decode(value, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def borrowed_credentials(text: str) -> list[str]:
    """The users of a kubeconfig that authenticate with something other than a token file (none if not one)."""
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError:
        return []
    if not isinstance(config, Mapping) or config.get("kind") != "Config":
        return []
    users = [mapping(u) for u in items(config.get("users"))]
    return [
        f"{u.get('name')} ({', '.join(k for k in CREDENTIALS if k in mapping(u.get('user')))})"
        for u in users
        if any(k in mapping(u.get("user")) for k in CREDENTIALS)
    ]


def extension_kubeconfigs(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """A Secret in an extension's namespace holds no kubeconfig with borrowed credentials (only token files)."""
    namespace = str(r.metadata.get("namespace") or "")
    patterns = [str(p) for p in items(config.get("namespaces"))]
    if r.type != SECRET or not any(fnmatchcase(namespace, p) for p in patterns):
        return []
    values = [(k, v, True) for k, v in mapping(r.props.get("data")).items()]
    values += [(k, v, False) for k, v in mapping(r.props.get("stringData")).items()]
    found = [(key, borrowed_credentials(text)) for key, value, encoded in values if (text := _text(value, encoded))]
    return [
        f"{r.label()} key {key} is a kubeconfig whose user {', '.join(users)} carries credentials of its own, "
        "the seed agent's or an admin's: give the extension gardenAccess and read the generic garden kubeconfig "
        "(docs/extensions.md)"
        for key, users in found
        if users
    ]


def access_token_lifetime(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """Every access token has a lifetime, and it is at most `maxHours`."""
    if r.type != ACCESS_TOKEN:
        return []
    seconds, limit = r.props.get("expirationSeconds"), float(config.get("maxHours") or 0)
    if isinstance(seconds, int | float) and seconds > 0 and (not limit or seconds <= limit * 3600):
        return []
    account = f"{r.props.get('namespace')}/{r.props.get('serviceAccount')}"
    lifetime = f"{seconds / 3600:g}h" if isinstance(seconds, int | float) else "no lifetime"
    return [
        f"access token {r.name} of {account} has {lifetime}, not a lifetime within {limit:g}h: request it with an "
        "expiration of at most that (Gardener's default is 12h)"
    ]
