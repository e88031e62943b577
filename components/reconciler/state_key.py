"""ShootStateKey: the key a hosted shoot's state is sealed under, generated once and kept in the garden too.

The key is a secret output of its own resource (protected: the only one that opens the state), and the resource
writes it to the garden as the InternalSecret `<shoot>.shoot-state-key` in the project namespace, beside the
ShootState record and where no project member can read it (as the client CA's). What seals and opens the state (the
upload, the machine restore, the migration) is given a reference to that InternalSecret with the key's digest, and
reads the key there: the state keeps it once. A copy edited or deleted in the garden is drift, written again from
the state by an update (the key never changes). Its digest is recorded among the inputs by `read()` and carried by
`check()`, so that update previews the reference known and nothing that reads it as changing.

An older arbor gave the key itself; `resolve` still takes it (until those resources' next update).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import CheckResult, CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.naming import API_GROUP, API_VERSION, short_hash
from components.reconciler import apply
from components.reconciler.kube import Kube, KubeError, unless_unreachable
from components.reconciler.provider import Provider
from components.reconciler.secret_set import data_of

KEY_BYTES = 32
DATA_KEY = "key"
# The key of a reference to the InternalSecret holding the key, in place of the key.
SECRET_REF = "secretRef"
DRIFTED = ""


class StateKeyError(Exception):
    """A state key that cannot be read where its reference says: the message names the InternalSecret, not the key."""


def new_key() -> str:
    """A random 256-bit key, base64."""
    return base64.b64encode(os.urandom(KEY_BYTES)).decode()


def key_digest(value: Any) -> str:
    """The digest of the key a value gives or names: equal for the key and a reference to it."""
    if isinstance(value, Mapping):
        return str(value.get("digest"))
    return short_hash(str(value), length=16)


def internal_secret(where: Mapping[str, Any]) -> dict[str, Any]:
    """The InternalSecret `where` names, without its data."""
    meta = {"name": where["name"], "namespace": where["namespace"]}
    return {"apiVersion": f"{API_GROUP}/{API_VERSION}", "kind": "InternalSecret", "metadata": meta, "type": "Opaque"}


def _path(where: Mapping[str, Any]) -> str:
    """The API path of the InternalSecret `where` names."""
    return f"/apis/{API_GROUP}/{API_VERSION}/namespaces/{where['namespace']}/internalsecrets/{where['name']}"


def by_reference_now(olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    """Whether a resource that an older arbor gave the key itself is given a reference to it now (an update).

    A reference a preview does not know yet counts too: that `up` updates it.
    """
    return "key" in olds and not isinstance(olds["key"], Mapping) and news.get("key") != olds["key"]


def reference(where: Mapping[str, Any], digest: str) -> dict[str, Any]:
    """A reference to the key in the InternalSecret `where` names (kubeconfig, namespace, name), with its digest."""
    return {SECRET_REF: {k: where[k] for k in ("kubeconfig", "namespace", "name")}, "digest": digest}


def resolve(value: Any) -> str:
    """The key: given (an older state), or read from the InternalSecret a reference names, checked by its digest."""
    if not isinstance(value, Mapping):
        return str(value)
    where = value[SECRET_REF]
    named = f"InternalSecret {where['namespace']}/{where['name']}"
    try:
        found = Kube.from_kubeconfig(where["kubeconfig"]).find(_path(where))
    except KubeError as error:
        raise StateKeyError(f"reading {named}: {error}") from None
    encoded = ((found or {}).get("data") or {}).get(DATA_KEY)
    if encoded is None:
        raise StateKeyError(f"{named} holds no key: run `make up` (the shoot's state key writes it again)")
    key = base64.b64decode(encoded).decode()
    if key_digest(key) != value.get("digest"):
        raise StateKeyError(f"{named} holds another key than the shoot's state is sealed under: run `make up`")
    return key


class ShootStateKeyProvider(Provider):
    """A random key, made once and never changed: everything sealed under it opens with it alone."""

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        """The inputs, with the key's digest `read()` recorded carried on: an update writing the copy again knows it."""
        if news.get("copy") and olds.get("digest"):
            return CheckResult(inputs={**news, "digest": olds["digest"]}, failures=[])
        return CheckResult(inputs=news, failures=[])

    def _written(self, props: dict[str, Any], key: str) -> dict[str, Any]:
        """Writes the key's copy where `copy` says (if anywhere); the outputs."""
        outs = {**props, "key": key, "digest": key_digest(key), "fingerprint": None}
        where = props.get("copy")
        if where:
            kube = Kube.from_kubeconfig(where["kubeconfig"])
            live = apply.apply(kube, apply.Paths(kube), {**internal_secret(where), "data": data_of({DATA_KEY: key})})
            outs["fingerprint"] = apply.fingerprint(live)
        return outs

    def create(self, props: dict[str, Any]) -> CreateResult:
        """A new 256-bit key, written where `copy` says."""
        key = new_key()
        return CreateResult(id_=key_digest(key)[:8], outs=self._written(props, key))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """Never a new key: a new one would leave every generation sealed under the old one unreadable.

        An update writes the copy again: it drifted, it is to be somewhere else, or an older arbor's key has none.
        """
        moved = olds.get("copy") != news.get("copy") and bool(news.get("copy"))
        changed = moved or (bool(news.get("copy")) and olds.get("fingerprint") == DRIFTED)
        return DiffResult(changes=changed, replaces=[], stables=["key"], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Writes the same key again; a copy left where it was before is removed once the new one is written."""
        outs = self._written(news, olds["key"])
        before = olds.get("copy")
        if before and _path(before) != _path(news["copy"]):
            kube = Kube.from_kubeconfig(before["kubeconfig"])
            apply.remove(kube, apply.Paths(kube), [internal_secret(before)])
        return UpdateResult(outs=outs)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The copy as the garden has it: edited or deleted there, drift. The digest is recorded among the inputs."""
        where = props.get("copy")
        if not where:
            return ReadResult(id_=id_, outs=props)
        live = Kube.from_kubeconfig(where["kubeconfig"]).find(_path(where))
        unchanged = live is not None and apply.fingerprint(live) == props.get("fingerprint")
        outs = {**props, "fingerprint": props.get("fingerprint") if unchanged else DRIFTED}
        inputs = {"key": None, "copy": where, "digest": props.get("digest") or key_digest(props["key"])}
        return ReadResult(id_=id_, outs=outs, inputs=inputs)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Removes the copy (the resource is protected: only a shoot deleted on purpose gets here)."""
        where = props.get("copy")
        if not where:
            return
        kube = Kube.from_kubeconfig(where["kubeconfig"])
        with unless_unreachable():
            apply.remove(kube, apply.Paths(kube), [internal_secret(where)])


class ShootStateKey(Resource, module="arbor", name="ShootStateKey"):
    """The key a shoot's state is sealed under (secret), written to `copy` too; protected where it is registered."""

    if TYPE_CHECKING:
        key: pulumi.Output[str]
        digest: pulumi.Output[str]

    def __init__(
        self, name: str, copy: pulumi.Input[dict[str, Any]] | None = None, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        """`copy`: the garden's kubeconfig, and the namespace and name of the InternalSecret to write the key to."""
        props = {"key": None, "copy": copy, "digest": None, "fingerprint": None}
        secret = pulumi.ResourceOptions(additional_secret_outputs=["key"])
        super().__init__(ShootStateKeyProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret))
