"""SecretSet: the Secrets of one namespace, written from their contents, the state keeping each content once.

A pulumi-kubernetes Secret keeps its data three times (inputs, `__inputs`, the live object). Here the contents are
an input (secret) and the outputs keep a hash of each Secret, all that diff and drift need: `read()` hashes the
Secrets as the cluster has them, so one edited or deleted there is drift (its hash ""), and the next `up` writes
it again. A hosted shoot's control plane keeps the Secrets its credentials do not write themselves (the encryption
configuration, the backup credentials) in one; those the credentials write (`others`) it never deletes, so an older
arbor's set, which wrote the CAs' and keys' too, hands them over. The contents are kept packed (render/packing.py).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.naming import json_hash
from components.reconciler.credential_secrets import put_secret
from components.reconciler.kube import Kube, secret_path, unless_unreachable
from components.reconciler.provider import Provider
from components.render.packing import pack, unpacked

PROVIDER_VERSION = "1"
DRIFTED = ""


def data_of(string_data: Mapping[str, str]) -> dict[str, str]:
    """A Secret's `data` as the API returns it: each value base64-encoded."""
    return {k: base64.b64encode(str(v).encode()).decode() for k, v in string_data.items()}


def data_hash(data: Mapping[str, str]) -> str:
    """The SHA-256 (first 16 hex digits) of a Secret's `data`."""
    return json_hash(dict(data))


def hashes(secrets: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """The hash of each Secret's data, by name, from their contents."""
    return {name: data_hash(data_of(content)) for name, content in secrets.items()}


def known_hashes(secrets: object) -> dict[str, str] | None:
    """The hashes of contents a preview may not know yet (a CA being rotated): None while any is unknown."""
    if not isinstance(secrets, Mapping) or not all(isinstance(c, Mapping) for c in secrets.values()):
        return None
    return hashes(secrets)


def contents(props: Mapping[str, Any]) -> Any:
    """The contents of the Secrets, by name: packed as the state keeps them, or whole (an older state's)."""
    return unpacked(props.get("secrets"))


def _outs(props: dict[str, Any], written: dict[str, str]) -> dict[str, Any]:
    """The outputs: where the Secrets are and their hashes, not their contents."""
    return {"kubeconfig": props["kubeconfig"], "namespace": props["namespace"], "hashes": written,
            "version": props.get("version"), "cluster": props.get("cluster")}  # fmt: skip


def _write(props: dict[str, Any], gone: Sequence[str] = ()) -> dict[str, Any]:
    """Writes every Secret, deletes those in `gone`; the outputs."""
    kube = Kube.from_kubeconfig(props["kubeconfig"])
    namespace = props["namespace"]
    secrets = contents(props)
    for name, content in secrets.items():
        put_secret(kube, namespace, name, data_of(content))
    for name in gone:
        kube.delete(secret_path(namespace, name))
    return _outs(props, hashes(secrets))


def _holds(secret: dict[str, Any] | None, written: str) -> bool:
    """Whether a Secret as the cluster has it holds what was written."""
    return secret is not None and data_hash(secret.get("data") or {}) == written


class SecretSetProvider(Provider):
    """Keeps a namespace's Secrets as their contents say."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Writes every Secret."""
        return CreateResult(id_=props["namespace"], outs=_write(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """An update when a content, the namespace or the logic version changed, or a Secret drifted."""
        # Another cluster (the control plane moved to another seed) is an update: the Secrets are written there.
        changed = olds.get("hashes") != known_hashes(contents(news)) or any(
            olds.get(k) != news.get(k) for k in ("namespace", "version", "cluster")
        )
        return DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Writes every Secret; deletes those no longer named, unless others write them now (handed over)."""
        moved = olds.get("namespace") != news["namespace"]
        others = set(news.get("others") or ())
        gone = [n for n in olds.get("hashes") or {} if moved or (n not in contents(news) and n not in others)]
        if moved:
            self.delete(_id, olds)
            gone = []
        return UpdateResult(outs=_write(news, gone))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The Secrets as the cluster has them: one edited or deleted is drift; none left (or unreachable), gone."""
        kube = Kube.from_kubeconfig(props["kubeconfig"])
        found = {n: kube.find(secret_path(props["namespace"], n)) for n in props.get("hashes") or {}}
        if found and not any(found.values()):
            return ReadResult(id_="", outs={})  # an empty set (its Secrets all written by others) is never gone
        seen = {n: h if _holds(found[n], h) else DRIFTED for n, h in props["hashes"].items()}
        return ReadResult(id_=id_, outs={**props, "hashes": seen})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Deletes the Secrets (a cluster that cannot be reached took them with it)."""
        kube = Kube.from_kubeconfig(props["kubeconfig"])
        with unless_unreachable():
            for name in props.get("hashes") or {}:
                kube.delete(secret_path(props["namespace"], name))


class SecretSet(Resource, module="arbor", name="SecretSet"):
    """Secrets of one namespace, written from their contents (`secrets`: data by key, by Secret name)."""

    def __init__(
        self,
        name: str,
        *,
        kubeconfig: pulumi.Input[str],
        namespace: str,
        secrets: pulumi.Input[Mapping[str, pulumi.Input[Mapping[str, pulumi.Input[str]]]]],
        others: Sequence[str] = (),
        cluster: str = "",
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "kubeconfig": kubeconfig,
            "namespace": namespace,
            # The cluster's identity (`<provider>:<name>`): another one is another place, where the Secrets are written.
            "cluster": cluster,
            # Secrets of the namespace that others write: never deleted here.
            "others": list(others),
            # Packed: only this provider reads them (a preview with a content unknown knows none, as before).
            "secrets": pulumi.Output.secret(secrets).apply(pack),
            "version": PROVIDER_VERSION,
            "hashes": None,
        }
        super().__init__(SecretSetProvider(), name, props, opts)
