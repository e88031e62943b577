"""ShootStateBackup: a hosted shoot's state sealed in its backup entry, uploaded again whenever it changed.

The state (components/render/shoot_state.py: the persisted secrets and the machine state) is what a control plane
rebuilt on another seed needs beyond etcd. It is gzip-compressed and sealed with AES-256-GCM under the shoot's own
key (ShootStateKey, reconciler/state_key.py: generated once, a resource of its own so a restore can read it before
anything else of the shoot is made; what seals and opens the state reads it from the garden's InternalSecret its
reference names), so only the stack and the garden's operators can open it, then uploaded with the seed's key to
`<entry>/shoot-state/`. A new generation is uploaded when the persisted secrets change (the diff compares their
digest) or when refresh finds the machine state moved or the object gone; each writes the ShootState record's
status (generation, checksum, size, upload time). Neither is kept here: the secrets are read from the Secrets the
control plane's SecretSet wrote in the seed namespace (`sources`) and must match the digest the program gives, and
the machine objects are read from the seed too, when needed.

The engine stores the provider pickled by reference to this module: keep its path and class names.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pulumi
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.naming import API_GROUP, API_VERSION
from components.reconciler.credential_secrets import secret_keys
from components.reconciler.entry_store import MissingSecretError, StoreError, entry_store, expected_digest
from components.reconciler.etcd_snapshot import rfc3339
from components.reconciler.kube import Kube, KubeError
from components.reconciler.provider import Provider

# The key's resource was defined here: a state's pickled provider names this module, so it is found here still.
from components.reconciler.state_key import ShootStateKey as ShootStateKey
from components.reconciler.state_key import ShootStateKeyProvider as ShootStateKeyProvider
from components.reconciler.state_key import StateKeyError, by_reference_now, resolve
from components.reconciler.state_key import new_key as new_key
from components.reconciler.unknowns import known
from components.render import machine_crds, objects, shoot_state

PROVIDER_VERSION = "1"
# The first bytes of a sealed state and the associated data its tag covers: another format is refused, not misread.
MAGIC = b"arbor.dev/shoot-state/v1\n"
NONCE_BYTES = 12
STATE_OUTPUTS = ("generation", "checksum", "size", "lastUpload", "secretsDigest", "machinesDigest")
# The object's metadata a restore checks the document against (S3 user metadata, `x-amz-meta-*`).
META_GENERATION, META_CHECKSUM = "arbor-generation", "arbor-checksum"
# What an unknown value (pulumi.output.Unknown, nested in a preview's inputs) stands as in a digest.
UNKNOWN = "\x00unknown"


class StateError(Exception):
    """A shoot state that cannot be made, stored or read back: the message says which and why, never the content."""


def seal(data: bytes, key: str) -> bytes:
    """A document compressed (no timestamp) and sealed with AES-256-GCM: MAGIC, a fresh nonce, the ciphertext."""
    nonce = os.urandom(NONCE_BYTES)
    return MAGIC + nonce + AESGCM(base64.b64decode(key)).encrypt(nonce, gzip.compress(data, mtime=0), MAGIC)


def unseal(blob: bytes, key: str) -> bytes:
    """The document of a sealed state; StateError when it is not one, or not sealed with this key."""
    if not blob.startswith(MAGIC) or len(blob) < len(MAGIC) + NONCE_BYTES:
        raise StateError("not an arbor shoot state (its first bytes differ)")
    nonce, sealed = blob[len(MAGIC) : len(MAGIC) + NONCE_BYTES], blob[len(MAGIC) + NONCE_BYTES :]
    try:
        return gzip.decompress(AESGCM(base64.b64decode(key)).decrypt(nonce, sealed, MAGIC))
    except (InvalidTag, ValueError):
        raise StateError("it does not open with this stack's key, or it was altered") from None


def _key(props: dict[str, Any]) -> str:
    """The key the state is sealed under: read where its reference says (or given, by an older state)."""
    try:
        return resolve(props["key"])
    except StateKeyError as error:
        raise StateError(str(error)) from None


def digest(value: Any) -> str:
    """The SHA-256 of a value's canonical JSON: the same content, the same digest.

    A value a preview does not know yet (a CA about to be issued again) digests as no known value does.
    """
    text = json.dumps({"value": value}, sort_keys=True, separators=(",", ":"), default=lambda _: UNKNOWN)
    return hashlib.sha256(text.encode()).hexdigest()


def secrets_digest(checksums: Any) -> str:
    """The persisted secrets' digest: of each one's checksum (objects.checksum), what the Secrets' writers report."""
    return digest(checksums)


def checksums_of(secrets: dict[str, dict[str, str]]) -> dict[str, str]:
    """Each persisted secret's checksum, from its content as the seed holds it."""
    return {name: objects.checksum(data) for name, data in secrets.items()}


def live_machines(props: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The machine state of the shoot's seed namespace, as a restore needs it; none where MCM's kinds are not served."""
    seed, namespace = Kube.from_kubeconfig(props["seedKubeconfig"]), props["seedNamespace"]
    found: dict[str, list[dict[str, Any]]] = {}
    for kind in shoot_state.MACHINE_KINDS:
        path = f"/apis/{machine_crds.GROUP}/{machine_crds.VERSION}/namespaces/{namespace}/{kind}"
        try:
            found[kind] = seed.get(path).get("items") or []
        except KubeError as error:
            if error.status != 404:
                raise StateError(f"reading {kind} of {namespace}: {error}") from None
            found[kind] = []
    return shoot_state.machine_state(found)


def _header(props: dict[str, Any]) -> dict[str, str]:
    """Which shoot the state is of."""
    return {"name": props["shoot"], "namespace": props["namespace"], "seedNamespace": props["seedNamespace"]}


def seed_secrets(props: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The persisted secrets as the seed namespace holds them (`sources`: each one's Secret and keys), by name."""
    seed = {"kubeconfig": props["seedKubeconfig"], "namespace": props["seedNamespace"]}
    try:
        return {name: secret_keys(seed, s["secret"], s["keys"]) for name, s in sorted(props["sources"].items())}
    except KubeError as error:
        raise StateError(str(error)) from None


def wanted_secrets(props: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The persisted secrets from the seed, once they are what this update wrote there (their digest)."""
    secrets = seed_secrets(props)
    if secrets_digest(checksums_of(secrets)) != props["secretsDigest"]:
        names = ", ".join(s["secret"] for s in props["sources"].values())
        raise StateError(f"the Secrets {names} in {props['seedNamespace']} are not what arbor wrote: run `make up`")
    return secrets


def upload(props: dict[str, Any], secrets: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Seals and uploads the state when it differs from the last generation's; the outputs that describe it."""
    machines = live_machines(props)
    data = shoot_state.document(_header(props), secrets, machines)
    checksum = shoot_state.checksum(data)
    generation = int(props.get("generation") or 0)
    kept = {"secretsDigest": secrets_digest(checksums_of(secrets)), "machinesDigest": digest(machines)}
    if checksum == props.get("checksum") and _present(props):
        return {**kept, "checksum": checksum}
    generation += 1
    sealed = seal(data, _key(props))
    try:
        entry_store(props["backup"]).put(
            props["object"], sealed, {META_GENERATION: str(generation), META_CHECKSUM: checksum}
        )
    except StoreError as error:
        raise StateError(str(error)) from None
    now = rfc3339(datetime.now(UTC))
    return {**kept, "generation": generation, "checksum": checksum, "size": len(sealed), "lastUpload": now}


def fetch(props: dict[str, Any]) -> dict[str, Any]:
    """The latest state of the entry, opened with the stack's key and checked against its checksum (a restore)."""
    try:
        blob, metadata = entry_store(props["backup"]).get(props["object"])
    except MissingSecretError:
        raise
    except StoreError as error:
        raise StateError(str(error)) from None
    data = unseal(blob, _key(props))
    if shoot_state.checksum(data) != metadata.get(META_CHECKSUM):
        raise StateError(f"{props['object']}: its checksum differs from the one it was stored with")
    document: dict[str, Any] = json.loads(data)
    return document


def _present(props: dict[str, Any]) -> bool:
    """Whether the state is still in the bucket; a store that cannot be asked says nothing is missing."""
    try:
        return entry_store(props["backup"]).present(props["object"])
    except StoreError:
        return True


def write_status(props: dict[str, Any]) -> None:
    """The ShootState record's status: the generation, checksum, size and upload time of the latest state."""
    path = f"/apis/{API_GROUP}/{API_VERSION}/namespaces/{props['namespace']}/shootstates/{props['shoot']}/status"
    status = {k: props[k] for k in ("generation", "checksum", "size", "lastUpload")}
    try:
        Kube.from_kubeconfig(props["gardenKubeconfig"]).merge_patch(path, {"status": status})
    except KubeError as error:
        raise StateError(f"ShootState {props['namespace']}/{props['shoot']}: {error}") from None


def _converge(props: dict[str, Any]) -> dict[str, Any]:
    """Uploads the state where it changed, writes the record's status; the outputs."""
    outs = {**props, **upload(props, wanted_secrets(props)), "due": False}
    write_status(outs)
    return outs


class ShootStateProvider(Provider):
    """A shoot's state in its entry; nothing is captured, everything is read from the properties."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """The first generation."""
        return CreateResult(id_=f"{props['namespace']}/{props['shoot']}", outs=_converge(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """Changed secrets, a new place or key, or state found moved by refresh upload again."""
        keys = ("object", "seedNamespace", "key", "version")
        wanted = bool(olds.get("due")) or news.get("secretsDigest") != olds.get("secretsDigest")
        wanted = wanted or any(olds.get(k) != news.get(k) for k in keys)
        inputs = [k for k in ("seedKubeconfig", "gardenKubeconfig", "backup", "sources") if olds.get(k) != news.get(k)]
        stables = [] if wanted else list(STATE_OUTPUTS)
        return DiffResult(changes=wanted or bool(inputs), replaces=[], stables=stables, delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """The last generation's description, then a new generation if the state changed."""
        # The digest of the secrets is an input now: the new one is what the seed's Secrets must match.
        kept = {k: olds.get(k) for k in STATE_OUTPUTS if k != "secretsDigest"}
        return UpdateResult(outs=_converge({**news, **kept}))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """Whether a new generation is due: the machine state moved, or the object is gone from the bucket."""
        try:
            moved = digest(live_machines(props)) != props.get("machinesDigest")
        except (StateError, KubeError):
            moved = False  # a seed that does not answer says nothing; the next `up` will tell
        return ReadResult(id_=id_, outs={**props, "due": moved or not _present(props)})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Nothing: the state stays in the bucket with the snapshots (only this stack can open it)."""


class ShootStateBackup(Resource, module="arbor", name="ShootStateBackup"):
    """A hosted shoot's sealed state in its backup entry; `backup` and `key` are secret."""

    if TYPE_CHECKING:
        generation: pulumi.Output[int]
        checksum: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        shoot: str,
        namespace: str,
        seed_namespace: str,
        secrets_digest: pulumi.Input[str],
        sources: dict[str, dict[str, Any]],
        backup_data: pulumi.Input[dict[str, str]],
        object_key: pulumi.Input[str],
        key: pulumi.Input[dict[str, Any]],
        seed_kubeconfig: pulumi.Input[str],
        garden_kubeconfig: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "shoot": shoot, "namespace": namespace, "seedNamespace": seed_namespace,
            "secretsDigest": secrets_digest, "sources": sources, "backup": pulumi.Output.secret(backup_data),
            "object": object_key, "seedKubeconfig": seed_kubeconfig, "gardenKubeconfig": garden_kubeconfig,
            "key": pulumi.Output.secret(key), "version": PROVIDER_VERSION, "due": None,
            **dict.fromkeys(o for o in STATE_OUTPUTS if o != "secretsDigest"),
        }  # fmt: skip
        secret = pulumi.ResourceOptions(additional_secret_outputs=["backup", "key"])
        super().__init__(ShootStateProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret))


def _machine_count(props: dict[str, Any]) -> int:
    """How many machine objects of any kind the seed namespace holds."""
    return sum(len(objects) for objects in live_machines(props).values())


def restorable(props: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """What the latest state would write into the seed namespace: nothing while it holds any machine object.

    A namespace that lost every machine object (a seed rebuilt, a control plane restored elsewhere) gets the
    machines of the state back; one with any left is machine-controller-manager's, as usual.
    """
    if _machine_count(props) or not _present(props):
        return []
    machines = fetch(props)["machines"]
    return shoot_state.restorable(machines, props["deployments"], props["seedNamespace"])


def restore_machines(props: dict[str, Any]) -> int:
    """Writes the restorable machine objects into the seed namespace; how many."""
    seed, written = Kube.from_kubeconfig(props["seedKubeconfig"]), 0
    base = f"/apis/{machine_crds.GROUP}/{machine_crds.VERSION}/namespaces/{props['seedNamespace']}"
    for kind, body in restorable(props):
        try:
            seed.create(f"{base}/{kind}", body)
        except KubeError as error:
            if error.status != 409:  # written by a restore that was interrupted
                raise StateError(f"restoring {kind} {body['metadata']['name']}: {error}") from None
        written += 1
    return written


class MachineRestoreProvider(Provider):
    """A seed namespace's machine objects restored from the shoot's state, before its MachineDeployments."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Restores into a namespace without machine objects (a new shoot's entry has no state: nothing)."""
        return CreateResult(id_=props["seedNamespace"], outs={**props, "restored": restore_machines(props)})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """An update when refresh found machines to restore, or the shoot's place changed (a migration: its seed).

        A state recorded before seeds were is taken as on its seed.
        """
        moved = any(olds.get(k, news.get(k)) != news.get(k) for k in ("seedNamespace", "object", "seed", "version"))
        moved = moved or by_reference_now(olds, news)  # the key's copy in the state goes
        # Other bucket credentials: the outputs then name them (a read with the old ones could not tell `due`). One a
        # preview does not know yet (a seed or record made again) is no change; the `up` diffs it known.
        backup = news.get("backup") or {}
        rotated = "backup" in olds and known(backup) and expected_digest(olds["backup"]) != expected_digest(backup)
        wanted = bool(olds.get("due")) or moved or rotated
        return DiffResult(changes=wanted, replaces=[], stables=[] if wanted else ["restored"],
                          delete_before_replace=False)  # fmt: skip

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Restores what is to restore."""
        return UpdateResult(outs={**news, "restored": restore_machines(news), "due": False})

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """Whether the namespace lost its machine objects while the state holds some of planned pools."""
        try:
            due = bool(restorable(props))
        except MissingSecretError:
            # No machine object, and no `etcd-backup` Secret either: a seed namespace made again. The update, after
            # the SecretSet writes the Secret, restores what the state holds.
            due = True
        except (StateError, KubeError):
            due = False  # a seed or bucket that does not answer says nothing; the next `up` will tell
        return ReadResult(id_=id_, outs={**props, "due": due})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Nothing: the machines are machine-controller-manager's."""


class MachineRestore(Resource, module="arbor", name="MachineRestore"):
    """The machine objects of a hosted shoot's seed namespace restored from its state; `backup`, `key` secret.

    `backup` is a reference to the seed namespace's `etcd-backup` Secret (concerns/shoot_state.py:
    `backup_reference`), which the shoot's SecretSet writes before it; the data itself is read by an older state.
    """

    def __init__(
        self,
        name: str,
        *,
        seed_namespace: str,
        deployments: list[str],
        backup_data: pulumi.Input[dict[str, str]],
        object_key: pulumi.Input[str],
        key: pulumi.Input[dict[str, Any]],
        seed_kubeconfig: pulumi.Input[str],
        seed: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "seedNamespace": seed_namespace, "deployments": deployments, "backup": pulumi.Output.secret(backup_data),
            "object": object_key, "key": pulumi.Output.secret(key), "seedKubeconfig": seed_kubeconfig, "seed": seed,
            "version": PROVIDER_VERSION, "restored": None, "due": None,
        }  # fmt: skip
        secret = pulumi.ResourceOptions(additional_secret_outputs=["backup", "key"])
        super().__init__(MachineRestoreProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret))
