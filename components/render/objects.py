"""How a resource that applies rendered objects names and compares them: a key per object and a hash of each.

The program computes the hashes and the resource keeps them (components/reconciler/applied.py), so its state
holds 16 hex digits per object rather than the object, and the preview names the objects a change touches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

Object = dict[str, Any]
# Hex digits of an object's hash kept: 64 bits tell a changed object from the same one, at a quarter of the state.
HASH_LENGTH = 16


def type_token(api_version: str, kind: str) -> str:
    """The kubernetes provider's type of a kind: `kubernetes:core/v1:Secret`, `kubernetes:apps/v1:Deployment`."""
    group_version = api_version if "/" in api_version else f"core/{api_version}"
    return f"kubernetes:{group_version}:{kind}"


def key(obj: Object) -> str:
    """A name for an object, unique in a namespace: `<kind>-<name>` in lower case, `:` as `-`."""
    return f"{obj['kind'].lower()}-{obj['metadata']['name'].replace(':', '-')}"


def hashes(objs: list[Object]) -> dict[str, str]:
    """Each object's SHA-256 (canonical JSON, its first HASH_LENGTH hex digits) by key, in rendering order."""
    return {key(o): hashlib.sha256(json.dumps(o, sort_keys=True).encode()).hexdigest()[:HASH_LENGTH] for o in objs}


# The one key of a Secret's content that a resource reduced to its checksum, as it keeps no copy of the content
# (a hosted shoot's certificate, components/reconciler/credential_secrets.py); `checksum` passes it through.
CHECKSUM_ONLY = "checksum/sha256"


def checksum(data: Mapping[str, str]) -> str:
    """The `checksum/<name>` annotation of a mounted Secret's or ConfigMap's string data (SHA-256 of `key=value` lines).

    Content reduced to its checksum (`{CHECKSUM_ONLY: ...}`) is that checksum.
    """
    if set(data) == {CHECKSUM_ONLY}:
        return data[CHECKSUM_ONLY]
    return hashlib.sha256("".join(f"{k}={v}\n" for k, v in sorted(data.items())).encode()).hexdigest()


def ref(obj: Object) -> Object:
    """What finds an object again: its API version, kind, name and namespace."""
    meta = {k: v for k, v in obj["metadata"].items() if k in ("name", "namespace")}
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": meta}


def ref_text(obj: Object) -> str:
    """An object's ref as one line, `<apiVersion> <kind> [<namespace>/]<name>`: under half the bytes in a state."""
    meta = obj["metadata"]
    where = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]
    return f"{obj['apiVersion']} {obj['kind']} {where}"


def ref_of(kept: str | Object) -> Object:
    """The ref a `ref_text` line names; a ref kept whole (an older state's) as it is."""
    if not isinstance(kept, str):
        return ref(kept)
    api_version, kind, where = kept.split(" ")
    namespace, _, name = where.rpartition("/")
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}
