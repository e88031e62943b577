"""Encryption at rest as dynamic resources: the keys (EncryptionKeys) and the rewrite of stored objects.

EncryptionKeys generates each key inside the provider; keys leave it only as the secret output `keys`, newest
first, the first one encrypting. A key rotation's `prepare` adds a key (with the provider the spec names now) in
front of the current one, `complete` drops every key but the first.

A hosted shoot's keys also write the Secret its kube-apiserver mounts (`etcd-encryption-secret` in the seed
namespace: the configuration rendered from them), as a CA writes its own (credential_secrets.py): the state then
holds the keys once. Its outputs say what the Secret holds without a key: `configHash` (the sha256
kube-apiserver reports for the file), `writeKey` (the encrypting key's name) and the Secret's checksum. A refresh
records them among the inputs and `check` carries them on while no input that changes the configuration did, so
what reads them (the rewrite, the local cluster, the workloads' checksums) previews as it is. A garden's or seed's
keys write nothing: the program renders their configuration, and their inputs stay as they were.

EncryptionRewrite waits until kube-apiserver runs the configuration it is given: the metric
`apiserver_encryption_config_controller_last_config_info` carries the sha256 of the file the server loaded.
Then it writes every object of each resource whose encryption changed once, with an empty merge patch: the
server stores an unchanged object again when it read it with a provider that is not the first (it is stale), so
afterwards each object is stored as the first provider writes. The output `rewritten` counts objects per resource.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import secrets
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import CheckResult, CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.reconciler import credential_secrets
from components.reconciler.kube import Kube, KubeError
from components.reconciler.provider import Provider
from components.render.controlplane import ENCRYPTION_KEY as SECRET_KEY
from components.render.controlplane import ENCRYPTION_SECRET as SECRET_NAME
from components.render.encryption import Key, render_config

PROVIDER_VERSION = "1"
# 32 random bytes: AES-256 for aescbc and aesgcm, and the one key size secretbox takes.
KEY_BYTES = 32
PREPARE, COMPLETE = "prepare", "complete"
CONFIG_METRIC = "apiserver_encryption_config_controller_last_config_info"
# kube-apiserver looks at its configuration file about once a minute.
RELOAD_TIMEOUT_S = 180
POLL_S = 2.0
PAGE_SIZE = 500
KEY_INPUTS = ("provider", "keyRotation", "version")
# What a writing key's configuration is rendered from besides the keys: another value changes its Secret.
CONFIG_INPUTS = ("provider", "keyRotation", "resources")
# The field a writing key's Secret layout names for the configuration: rendered for the write, never kept.
CONFIG_FIELD = "config"
# Its outputs that reveal no key, carried in its inputs (module docstring).
CARRIED = ("configHash", "writeKey", credential_secrets.CHECKSUMS)
REWRITE_INPUTS = ("configHash", "resources", "writeKey", "version")


def _random_secret() -> str:
    """A fresh key, base64 as the EncryptionConfiguration takes it."""
    return base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode()


def _new_key(keys: Sequence[Key], provider: str, generate: Callable[[], str]) -> Key:
    """A key named after the next generation (`key1`, `key2`, ...), for `provider`."""
    generation = 1 + max((int(k["name"].removeprefix("key")) for k in keys), default=0)
    return {"name": f"key{generation}", "provider": provider, "secret": generate()}


def first_keys(provider: str, generate: Callable[[], str] = _random_secret) -> list[Key]:
    """The keys of a new API server: one."""
    return [_new_key([], provider, generate)]


def next_keys(
    keys: Sequence[Key], old_phase: str, new_phase: str, provider: str, generate: Callable[[], str] = _random_secret
) -> list[Key]:
    """The keys after a change of rotation phase: prepare adds a key in front, complete keeps only the first."""
    if old_phase == COMPLETE and new_phase == PREPARE:
        return [_new_key(keys, provider, generate), keys[0]]
    if old_phase == PREPARE and new_phase == COMPLETE:
        return [keys[0]]
    if keys[0]["provider"] != provider:
        raise ValueError(
            f"the encryption provider changes from {keys[0]['provider']} to {provider} only with a key rotation "
            "(keyRotation: prepare)"
        )
    return list(keys)


def to_rewrite(olds: Mapping[str, Any] | None, news: Mapping[str, Any]) -> list[str]:
    """Resources whose objects must be written again, in order.

    All encrypted ones (secrets first) when the configuration is new or a new key encrypts; else those added
    (now encrypted) and those removed (now stored in plaintext).
    """
    new = list(news["resources"])
    old = list(olds["resources"]) if olds else []
    removed = [r for r in old if r not in new]
    if olds is None or olds.get("writeKey") != news["writeKey"]:
        return ["secrets", *new, *removed]
    return [r for r in new if r not in old] + removed


def config_hash(text: str) -> str:
    """The hash kube-apiserver reports for a configuration file: sha256 of its bytes."""
    return hashlib.sha256(text.encode()).hexdigest()


def _metrics(kube: Kube) -> str:
    """kube-apiserver's /metrics text (the JSON client does not fit a text answer)."""
    request = urllib.request.Request(kube.server + "/metrics")
    try:
        with kube.open(request, 10) as response:
            return str(response.read().decode())
    except (OSError, ValueError) as err:
        raise KubeError(f"GET /metrics: {err}") from None


def running_config_hash(kube: Kube) -> str | None:
    """The sha256 of the encryption configuration kube-apiserver runs, None when it reports none."""
    for line in _metrics(kube).splitlines():
        if line.startswith(CONFIG_METRIC + "{"):
            found = re.search(r'[{,]hash="sha256:([0-9a-f]{64})"', line)  # not apiserver_id_hash
            if found:
                return found[1]
    return None


def wait_for_config(kube: Kube, wanted: str, timeout_s: float = RELOAD_TIMEOUT_S) -> None:
    """Waits until kube-apiserver runs the configuration whose hash is `wanted`."""
    deadline = time.monotonic() + timeout_s
    running = None
    while True:
        try:
            running = running_config_hash(kube)
        except KubeError:
            running = None  # a restarting server answers again shortly
        if running == wanted:
            return
        if time.monotonic() > deadline:
            raise KubeError(
                f"kube-apiserver at {kube.server} does not run encryption configuration {wanted[:12]} after "
                f"{timeout_s:.0f}s (it runs {(running or 'none')[:12]}): is it started with "
                "--encryption-provider-config-automatic-reload=true?"
            )
        time.sleep(POLL_S)


def _collection(kube: Kube, resource: str) -> tuple[str, bool] | None:
    """The API path of a `<resource>[.<group>]` and whether it is namespaced; None when the server lacks it."""
    name, _, group = resource.partition(".")
    try:
        base = "/api/v1" if not group else "/apis/" + kube.get(f"/apis/{group}")["preferredVersion"]["groupVersion"]
        listing = kube.get(base)
    except KubeError as err:
        if err.status == 404:
            return None
        raise
    found = next((r for r in listing.get("resources") or [] if r["name"] == name), None)
    return (base, bool(found["namespaced"])) if found else None


def rewrite(kube: Kube, resource: str) -> int:
    """Writes every object of `resource` once, unchanged; the number written (0 when the server lacks it)."""
    found = _collection(kube, resource)
    if not found:
        return 0
    base, namespaced = found
    name = resource.partition(".")[0]
    count, token = 0, ""
    while True:
        query = f"?limit={PAGE_SIZE}" + (f"&continue={urllib.parse.quote(token)}" if token else "")
        page = kube.get(f"{base}/{name}{query}")
        for item in page.get("items") or []:
            meta = item["metadata"]
            scope = f"/namespaces/{meta['namespace']}" if namespaced else ""
            try:
                kube.merge_patch(f"{base}{scope}/{name}/{urllib.parse.quote(meta['name'], safe='')}", {})
                count += 1
            except KubeError as err:
                if err.status != 404:  # deleted meanwhile: nothing left to rewrite
                    raise
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return count


def _rewrite_all(olds: Mapping[str, Any] | None, news: dict[str, Any]) -> dict[str, Any]:
    """Waits for the configuration, rewrites what changed; the outputs with the counts."""
    kube = Kube.from_kubeconfig(news["kubeconfig"])
    wait_for_config(kube, news["configHash"])
    counts = {resource: rewrite(kube, resource) for resource in to_rewrite(olds, news)}
    return {**news, "rewritten": counts}


def _written(props: dict[str, Any]) -> dict[str, Any]:
    """A writing key's outputs: its Secret written from the configuration the keys render, what it holds by hash."""
    if not credential_secrets.writes(props):
        return props
    config = render_config(props["resources"], props["keys"])
    outs = credential_secrets.write_rendered(props, {CONFIG_FIELD: config})
    return {**outs, "configHash": config_hash(config), "writeKey": props["keys"][0]["name"]}


def secret_layout() -> dict[str, dict[str, str]]:
    """What a writing key writes: the configuration, as kube-apiserver mounts it."""
    return {SECRET_NAME: {SECRET_KEY: CONFIG_FIELD}}


class EncryptionKeysProvider(Provider):
    """Generates and rotates the keys of one API server; never replaces them (that would lose the data)."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """The first key (and its Secret, where it writes one)."""
        keys = first_keys(props["provider"])
        return CreateResult(id_=f"keys-{os.urandom(4).hex()}", outs=_written({**props, "keys": keys}))

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        """The inputs, with a writing key's carried outputs while its configuration stays."""
        return CheckResult(inputs=credential_secrets.carry(olds, news, CARRIED, CONFIG_INPUTS), failures=[])

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """A new provider, rotation phase or resource list is an in-place update; so is a drifted or moved Secret."""
        changed = any(olds.get(k) != news.get(k) for k in {*KEY_INPUTS, *CONFIG_INPUTS})
        rewrite = credential_secrets.write_again(olds, news)
        return DiffResult(changes=changed or rewrite, replaces=[], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Adds a key (prepare) or drops the old one (complete); writes the Secret again where it writes one."""
        try:
            keys = next_keys(olds["keys"], olds["keyRotation"], news["keyRotation"], news["provider"])
        except ValueError as err:
            raise pulumi.RunError(str(err)) from None
        credential_secrets.leave_old_place(olds, news)
        return UpdateResult(outs=_written({**news, "keys": keys}))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The keys exist only here and in the API servers' files; a written Secret is read back as its hash."""
        if not credential_secrets.writes(props):
            return ReadResult(id_=id_, outs=props)
        outs = {**props, **credential_secrets.observed(props)}
        return ReadResult(id_=id_, outs=outs, inputs=credential_secrets.recorded(outs, ["keys"]))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Removes the Secret it wrote, where it still holds what was written."""
        credential_secrets.remove(props)


class EncryptionKeys(Resource, module="arbor", name="EncryptionKeys"):
    """The encryption keys of one API server, newest first; `keys` is secret."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        keys: pulumi.Output[list[Key]]
        configHash: pulumi.Output[str]  # noqa: N815 - the output's name in the state
        writeKey: pulumi.Output[str]  # noqa: N815 - the output's name in the state
        checksums: pulumi.Output[dict[str, str]]

    def __init__(
        self,
        name: str,
        *,
        provider: str,
        key_rotation: str,
        writes: credential_secrets.Writes | None = None,
        resources: Sequence[str] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`writes` (where, as credential_secrets.INPUTS) makes the keys write their configuration for `resources`."""
        props: dict[str, Any] = {"provider": provider, "keyRotation": key_rotation, "version": PROVIDER_VERSION,
                                 "keys": None}  # fmt: skip
        if writes is not None:
            # Only then: a garden's or seed's keys keep the inputs they had.
            props = credential_secrets.writing(props, {**writes, "secrets": secret_layout()})
            props |= {"resources": list(resources), "configHash": None, "writeKey": None}
        secret = pulumi.ResourceOptions(additional_secret_outputs=["keys"])
        super().__init__(EncryptionKeysProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret))


class EncryptionRewriteProvider(Provider):
    """Rewrites stored objects once the API server runs a new encryption configuration."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """A first configuration: everything it encrypts is written again (the cluster may hold plaintext)."""
        return CreateResult(id_=f"rewrite-{os.urandom(4).hex()}", outs=_rewrite_all(None, props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """A new configuration, resource list or write key is an in-place update; the kubeconfig alone is not."""
        changed = any(olds.get(k) != news.get(k) for k in REWRITE_INPUTS)
        return DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Rewrites the resources added or removed, or all of them under a new write key."""
        return UpdateResult(outs=_rewrite_all(olds, news))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The hash of the configuration the server runs: another one is drift, and `up` waits and rewrites again."""
        try:
            running = running_config_hash(Kube.from_kubeconfig(props["kubeconfig"]))
        except (KubeError, KeyError, ValueError):
            return ReadResult(id_=id_, outs=props)  # an unreachable server is the cluster's drift, not this one's
        return ReadResult(id_=id_, outs={**props, "configHash": running or ""})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Nothing: the objects stay as they are stored."""


class EncryptionRewrite(Resource, module="arbor", name="EncryptionRewrite"):
    """Rewrites the objects whose encryption changed once the API server runs the configuration; counts them."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        rewritten: pulumi.Output[dict[str, int]]

    def __init__(
        self,
        name: str,
        *,
        kubeconfig: pulumi.Input[str],
        config_hash: pulumi.Input[str],
        resources: Sequence[str],
        write_key: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "kubeconfig": kubeconfig,
            "configHash": config_hash,
            "resources": list(resources),
            "writeKey": write_key,
            "version": PROVIDER_VERSION,
            "rewritten": None,
        }
        super().__init__(EncryptionRewriteProvider(), name, props, opts)
