"""Pure rendering of a shoot's state in its backup entry: what persists, the document, its sealed form, where it goes.

What a control plane rebuilt on another seed needs beyond etcd (Gardener's ShootState, uploaded as the seeds'
hackathon proposed): the persisted secrets (the CAs and keys that cannot be issued again without every client and
node trusting anew, and etcd's encryption configuration), and the machine state (MachineDeployments, MachineSets,
Machines with their node names and provider IDs) that lets machine-controller-manager adopt the machines on the
target instead of making new ones. The document is canonical JSON (its checksum changes only with its content),
gzip-compressed and sealed under a key only the stack holds by components/reconciler/shoot_state.py.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from components.render import pki
from components.render.machine_crds import GROUP, VERSION

# The credentials Gardener marks `persist` (a CA or key issued again would break every trust in it): the keys of
# each one's public part (certificate, public key) and of its secret part (private key), as its Secret names them.
PERSISTED_KEYS = {
    pki.Kind.CA: (pki.KEY_CA_CERT, pki.KEY_CA_KEY),
    pki.Kind.RSA_KEY: (pki.KEY_RSA_PUBLIC, pki.KEY_RSA_PRIVATE),
}
STATE_DIR, STATE_OBJECT = "shoot-state", "shootstate.json.gz.sealed"
DOCUMENT_VERSION = 1
# Plural of each machine kind, in the order a restore writes them (restorable: machines before their sets).
MACHINE_KINDS = ("machines", "machinesets", "machinedeployments")
# Annotations machine-controller-manager rewrites as it works; they say nothing a restore needs.
VOLATILE_ANNOTATIONS = ("deployment.kubernetes.io/revision",)


def persisted(credentials: Iterable[pki.Credential]) -> tuple[pki.Credential, ...]:
    """The credentials a shoot state carries: the CAs and keys, in their order."""
    return tuple(c for c in credentials if c.kind in PERSISTED_KEYS)


def seed_sources(
    credentials: Iterable[pki.Credential], encryption_secret: str, encryption_key: str
) -> dict[str, dict[str, Any]]:
    """Where a hosted shoot's seed namespace holds each persisted secret: the Secret, and the keys the state takes.

    A CA's are in its signer Secret (its certificate and key), a key pair's in its own; etcd's encryption
    configuration in its Secret. The state is read from there, as Gardener gathers a ShootState from the seed.
    """
    sources: dict[str, dict[str, Any]] = {}
    for credential in persisted(credentials):
        wanted = PERSISTED_KEYS[credential.kind]
        held = pki.secrets_of(credential).items()
        secret = next(name for name, keys in held if set(wanted) <= set(keys))
        sources[credential.name] = {"secret": secret, "keys": list(wanted)}
    sources[encryption_secret] = {"secret": encryption_secret, "keys": [encryption_key]}
    return sources


def object_key(entry: str) -> str:
    """Where an entry's shoot state is, beside its etcd's prefix: one object, versioning keeps earlier generations."""
    return f"{entry}/{STATE_DIR}/{STATE_OBJECT}"


def machine_object(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What a restore needs of a machine object: its name, labels, annotations, owners, spec and node.

    Not its uid, resource version, timestamps or status (rewritten on every heartbeat): the checksum stays put while
    nothing a restore needs moved.
    """
    meta = obj.get("metadata") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in VOLATILE_ANNOTATIONS}
    owners = [{"kind": o.get("kind"), "name": o.get("name")} for o in meta.get("ownerReferences") or []]
    kept: dict[str, Any] = {
        "name": meta.get("name"), "labels": dict(meta.get("labels") or {}), "annotations": annotations,
        "ownerReferences": owners, "spec": obj.get("spec") or {},
    }  # fmt: skip
    # MCM names a machine's node in its status, and in its `node` label (the only place on some versions).
    node = (obj.get("status") or {}).get("node") or kept["labels"].get("node")
    if node:
        kept["node"] = node
    return kept


def machine_state(objects: Mapping[str, Iterable[Mapping[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The machine state by kind plural (MACHINE_KINDS), each kind's objects sorted by name."""
    return {
        kind: sorted((machine_object(o) for o in objects.get(kind, ())), key=lambda o: str(o["name"]))
        for kind in MACHINE_KINDS
    }


def document(shoot: Mapping[str, str], secrets: Mapping[str, Mapping[str, str]], machines: Mapping[str, Any]) -> bytes:
    """The state as canonical JSON: the same content is the same bytes, so the same checksum."""
    return canonical({"version": DOCUMENT_VERSION, "shoot": dict(shoot), "secrets": secrets, "machines": machines})


def canonical(content: Mapping[str, Any]) -> bytes:
    """Content as canonical JSON (sorted keys, no spaces): what its checksum is of."""
    return json.dumps(content, sort_keys=True, separators=(",", ":")).encode()


def checksum(data: bytes) -> str:
    """The SHA-256 of a document (what the record shows; it reveals nothing of 256-bit keys)."""
    return hashlib.sha256(data).hexdigest()


def _owner(kept: Mapping[str, Any], kind: str) -> str | None:
    """The name of a kept object's owner of a kind."""
    return next((o.get("name") for o in kept.get("ownerReferences") or [] if o.get("kind") == kind), None)


def _restored(kind: str, kept: Mapping[str, Any], namespace: str) -> dict[str, Any]:
    """A kept machine object as written again: no owner (its owner adopts it), no status (MCM reads its machine)."""
    metadata = {"name": kept["name"], "namespace": namespace, "labels": dict(kept.get("labels") or {}),
                "annotations": dict(kept.get("annotations") or {})}  # fmt: skip
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": kind, "metadata": metadata, "spec": kept.get("spec") or {}}


def restorable(
    machines: Mapping[str, Iterable[Mapping[str, Any]]], deployments: Collection[str], namespace: str
) -> list[tuple[str, dict[str, Any]]]:
    """What a restore writes into an empty namespace, by kind plural, in order: Machines, then their MachineSets.

    Only those of MachineDeployments still planned (a removed pool's machines never come back). Machines first: a
    MachineSet that found fewer than its replicas would make new ones; made after them, it adopts them, and the
    MachineDeployment arbor applies next adopts it (the same template, the same hash).
    """
    sets = [s for s in machines.get("machinesets", ()) if _owner(s, "MachineDeployment") in deployments]
    names = {s["name"] for s in sets}
    kept = [m for m in machines.get("machines", ()) if _owner(m, "MachineSet") in names]
    return [("machines", _restored("Machine", m, namespace)) for m in kept] + [
        ("machinesets", _restored("MachineSet", s, namespace)) for s in sets
    ]
