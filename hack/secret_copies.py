"""Which resources of a stack hold each private key: issue 19's rule that nothing secret is kept twice, checked.

Reads a state exported with its secrets shown (`pulumi stack export --show-secrets`), opens what arbor packs
(render/packing.py's values, render/packed_keys.py's primes, a Secret's base64 `data`) and finds every private key
and etcd encryption key in each resource's inputs and outputs, and the object store's passwords (its root's, each
bucket user's). A private key is named by a digest of its public half, so the same key in another encoding (PEM,
primes, base64 in a Secret) is the same key; an encryption key by a digest of itself, found in an
EncryptionConfiguration (`secret: <key>`) or in its keys' outputs; a password by a digest of itself, found in the
fields that hold one. Usage (project root):
  pulumi stack export --stack local --show-secrets > state.json
  .venv/bin/python hack/secret_copies.py state.json     every key more than one resource holds, with its holders
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from components.render import packed_keys  # noqa: E402
from components.render.packing import unpacked  # noqa: E402

# How the engine marks a secret value in an export (its plaintext, as JSON, beside the mark once shown).
SECRET_SIG = "4dabf18193072939515e22adb298388d"
PEM_KEY = re.compile(r"-----BEGIN (?:RSA |EC )?PRIVATE KEY-----[A-Za-z0-9+/=\s]+-----END (?:RSA |EC )?PRIVATE KEY-----")
BASE64 = re.compile(r"[A-Za-z0-9+/]{200,}={0,2}")
# An etcd encryption key as an EncryptionConfiguration holds it: 32 bytes, base64 (reconciler/encryption.py).
ENCRYPTION_KEY = re.compile(r"secret: ([A-Za-z0-9+/]{43}=)")
# The fields that hold the object store's passwords: its root's, a bucket user's, the `etcd-backup` data's, and a
# bucket role's OpenID client secret.
PASSWORD_FIELDS = ("rootPassword", "secretKey", "secretAccessKey", "clientSecret")
# Generated ones are 40 characters; what is shorter there names a field (a Secret layout's `secretAccessKey: ...`).
PASSWORD = re.compile(r"^password: (\S{30,})$", re.MULTILINE)


def _texts(value: Any) -> Iterator[str]:
    """Every string in a value, with what it holds opened: secrets shown, packed values unpacked, JSON parsed."""
    if isinstance(value, dict):
        if SECRET_SIG in value:
            shown = value.get("plaintext")  # the value as JSON text, where the export shows secrets
            yield from _texts(json.loads(shown) if isinstance(shown, str) else value.get("value"))
            return
        if {"name", "provider", "secret"} <= set(value):  # one of EncryptionKeys' `keys`
            yield f"secret: {value['secret']}"
        for field in PASSWORD_FIELDS:
            yield from (f"password: {text}" for text in _texts(value.get(field)) if text)
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, str):
        opened = unpacked(value)
        if opened != value:
            yield from _texts(opened)
            return
        if value[:1] in "{[":
            try:
                yield from _texts(json.loads(value))
                return
            except ValueError:
                pass
        yield packed_keys.expanded(value) if packed_keys.MARK in value else value


def _decoded(text: str) -> Iterator[str]:
    """The text, and what its long base64 runs decode to (a Secret's `data`)."""
    yield text
    for run in BASE64.findall(text):
        try:
            yield base64.b64decode(run, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            continue


def key_names(value: Any) -> set[str]:
    """A digest of every private key's public half a value holds, however encoded; of each encryption key, password."""
    names = set()
    for text in _texts(value):
        for plain in _decoded(text.replace("\\n", "\n")):
            names |= {"etcd:" + hashlib.sha256(k.encode()).hexdigest()[:16] for k in ENCRYPTION_KEY.findall(plain)}
            names |= {"password:" + hashlib.sha256(p.encode()).hexdigest()[:16] for p in PASSWORD.findall(plain)}
            for found in PEM_KEY.findall(plain):
                pem = "\n".join(line.strip() for line in found.splitlines() if line.strip())  # as YAML folds it
                try:
                    key = serialization.load_pem_private_key(pem.encode(), password=None)
                except ValueError:
                    continue
                public = key.public_key().public_bytes(
                    serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
                )
                names.add(hashlib.sha256(public).hexdigest()[:16])
    return names


def holders(state: dict[str, Any]) -> dict[str, set[str]]:
    """Each private key's holders: the names of the resources whose inputs or outputs hold it."""
    found: dict[str, set[str]] = defaultdict(set)
    for resource in state["deployment"]["resources"]:
        name = str(resource["urn"]).rsplit("::", 1)[-1]
        for key in key_names([resource.get("inputs") or {}, resource.get("outputs") or {}]):
            found[key].add(name)
    return dict(found)


def copies(state: dict[str, Any]) -> list[list[str]]:
    """The holders of every key more than one resource holds, sorted."""
    return sorted(sorted(names) for names in holders(state).values() if len(names) > 1)


def main(argv: list[str] | None = None) -> int:
    """Prints the holders of each key kept more than once; exit status 1 if there is one."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("state", type=Path, help="a `pulumi stack export --show-secrets` file")
    found = copies(json.loads(parser.parse_args(argv).state.read_text()))
    for names in found:
        print(", ".join(names))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
