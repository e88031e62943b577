"""LeafSet: a shoot's leaf certificates as one resource, written where its control plane reads them, kept there only.

Gardener's secrets manager keeps a leaf in its Secret and regenerates it when due; so does this resource, for the
leaves the program does not read (a shoot's control-plane certificates), in a hosted shoot's seed namespace or a
self-hosted local shoot's machine directory (secret_places.py). The state keeps, per leaf, what it
is issued from (its spec and its CA's), when it was issued (`issued`), a checksum per Secret, and the hash of each
Secret written: no certificate or key. One resource instead of one per leaf: about 25 KiB less per hosted shoot.

`check()` decides when a leaf is issued, from its old inputs and the clock: a leaf is issued again when its spec,
its CA's spec (a rotation) or where it is written changes, or when it is due (Gardener's rule: 80% of its validity
passed, or fewer than 10 days left). Each Secret's checksum (`checksum/<secret>` on the pods that mount it) is a
hash of exactly that, so the preview knows it: an update shows exactly the workloads that will restart, which a
content checksum (only known once issued) could not. A Secret edited or deleted in the seed is drift: `up` issues
that leaf again and writes it, with the same checksum (its mounts pick the Secret up; nothing restarts). A CA
replaced without a change of its spec (its hash changed) has its leaves issued again too.

The engine stores this provider pickled by reference to this module: moving or renaming it needs a shim.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import CheckResult, CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.reconciler import unknowns
from components.reconciler.ca_source import issue_from, with_ca
from components.reconciler.credential_secrets import content_hash, data_of, found_hashes, remove_held
from components.reconciler.kube import KubeError
from components.reconciler.provider import Provider
from components.reconciler.secret_places import DIRECTORY, place_of
from components.render import pki

PROVIDER_VERSION = "1"
# Derived by check() (kept in the inputs, so a preview has them), and what the outputs add.
ISSUED, CHECKSUMS, WRITTEN, FOUND = "issued", "checksums", "writtenHashes", "foundHashes"
# The outputs keep each Secret's layout and leaf, not the leaves' specs (their inputs hold those once).
SECRETS = "secrets"
# Where the leaves are written: a change of the namespace, directory or seed (a control plane moved) issues them all
# again.
PLACE = ("namespace", DIRECTORY, "cluster")


def _stable(olds: Mapping[str, Any], news: Mapping[str, Any], name: str) -> bool:
    """Whether a leaf is issued from the same spec, CA and place as before (an unknown CA hash is no change)."""
    leaf, before = news["leaves"][name], (olds.get("leaves") or {}).get(name)
    ca, old_ca = news["cas"][leaf["ca"]], (olds.get("cas") or {}).get(leaf["ca"]) or {}
    same_ca = ca.get("spec") == old_ca.get("spec") and not unknowns.changed(old_ca, ca, ("hash",))
    return before == leaf and same_ca and all(olds.get(k) == news.get(k) for k in PLACE)


def issued_at(olds: Mapping[str, Any], news: Mapping[str, Any], now: float) -> dict[str, int]:
    """When each leaf is issued: as before while it is stable and not due, else now."""
    before, when = olds.get(ISSUED) or {}, {}
    for name, leaf in news["leaves"].items():
        at = before.get(name)
        if at is None or pki.leaf_renewal_due(at, at + int(leaf["validitySeconds"]), now):
            when[name] = int(now)
        else:
            when[name] = int(at) if _stable(olds, news, name) else int(now)
    return when


def checksums(news: Mapping[str, Any], issued: Mapping[str, int]) -> dict[str, str]:
    """Each Secret's checksum: of its leaf's spec, its CA's spec and when it was issued (all known in a preview)."""
    sums = {}
    for name, leaf in news["leaves"].items():
        basis = {"leaf": leaf, "ca": news["cas"][leaf["ca"]].get("spec"), "issued": issued[name]}
        for secret in leaf["secrets"]:
            text = json.dumps({**basis, "secret": secret}, sort_keys=True)
            sums[secret] = hashlib.sha256(text.encode()).hexdigest()
    return sums


def _issue(props: Mapping[str, Any], name: str, cas: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Issues one leaf from its CA's signer Secret (read once per CA): the fields its Secrets' layout names."""
    leaf = props["leaves"][name]
    if leaf["ca"] not in cas:
        ca = props["cas"][leaf["ca"]]
        # Read where the set writes (its own inputs name the place).
        found = with_ca({**props, "caSecret": ca["secret"], "caHash": ca["hash"]})
        cas[leaf["ca"]] = {k: found[k] for k in ("caCert", "caKey")}
    ca = cas[leaf["ca"]]
    cert = issue_from({**leaf, "caCert": ca["caCert"], "caKey": ca["caKey"]})
    return {"caCert": ca["caCert"], "cert": cert.cert, "key": cert.key}


def _write(props: Mapping[str, Any], names: list[str]) -> dict[str, str]:
    """Issues and writes the named leaves' Secrets; the hash of each Secret written."""
    place = place_of(props)
    cas: dict[str, dict[str, Any]] = {}
    written = {}
    for name in names:
        fields = _issue(props, name, cas)
        for secret, layout in props["leaves"][name]["secrets"].items():
            data = data_of(layout, fields)
            place.put(secret, data)
            written[secret] = content_hash(data, layout)
    return written


def _secrets(props: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each Secret's leaf and layout (data key -> field), by name: from the inputs, or as the outputs keep them."""
    if "leaves" not in props:
        return dict(props.get(SECRETS) or {})
    leaves = props["leaves"].items()
    return {s: {"leaf": name, "layout": layout} for name, leaf in leaves for s, layout in leaf["secrets"].items()}


def _layouts(props: Mapping[str, Any]) -> dict[str, Mapping[str, str]]:
    """Each Secret's layout (data key -> field), by Secret name."""
    return {s: held["layout"] for s, held in _secrets(props).items()}


def _outs(props: Mapping[str, Any], written: Mapping[str, str]) -> dict[str, Any]:
    """The outputs: the inputs without the leaves' specs, with each Secret's leaf, layout and hash written."""
    return {**{k: v for k, v in props.items() if k != "leaves"}, SECRETS: _secrets(props), WRITTEN: dict(written)}


def _remove(props: Mapping[str, Any], secrets: list[str]) -> None:
    """Deletes the named Secrets that still hold what this resource wrote; any other is left alone."""
    if secrets:
        layouts = {name: layout for name, layout in _layouts(props).items() if name in secrets}
        remove_held(place_of(props), layouts, props.get(WRITTEN) or {})


def _drifted(olds: Mapping[str, Any]) -> set[str]:
    """The Secrets the last read found other than written (edited, deleted).

    A read keeps the hashes of those only; an older state's read kept every Secret's, the same as written or not.
    """
    found, written = olds.get(FOUND) or {}, olds.get(WRITTEN) or {}
    return {s for s, h in found.items() if s in written and written[s] != h}


def _owner(props: Mapping[str, Any]) -> dict[str, str]:
    """The leaf that writes each Secret."""
    return {s: held["leaf"] for s, held in _secrets(props).items()}


def reissued(olds: Mapping[str, Any], news: Mapping[str, Any]) -> list[str]:
    """The leaves an update issues: new, issued again (check()), whose CA's hash changed, or whose Secret drifted."""
    old_issued, owner = olds.get(ISSUED) or {}, _owner(olds)
    drifted = {owner[s] for s in _drifted(olds) if s in owner}
    names = []
    for name in news["leaves"]:
        ca = news["cas"][news["leaves"][name]["ca"]]
        old_ca = (olds.get("cas") or {}).get(news["leaves"][name]["ca"]) or {}
        if old_issued.get(name) != news[ISSUED][name] or ca.get("hash") != old_ca.get("hash") or name in drifted:
            names.append(name)
    return names


class LeafSetProvider(Provider):
    """Issues a control plane's leaves where it reads them (seed namespace, machine directory), keeps them current."""

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        """The inputs with when each leaf is issued and each Secret's checksum, derived from the old inputs."""
        when = issued_at(olds, news, time.time())
        return CheckResult(inputs={**news, ISSUED: when, CHECKSUMS: checksums(news, when)}, failures=[])

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Issues and writes every leaf."""
        written = _write(props, list(props["leaves"]))
        return CreateResult(id_=props.get("namespace") or "machine", outs=_outs(props, written))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """An update when a leaf is issued again, added or dropped, a Secret drifted, or the logic version changed."""
        changed = (
            olds.get(ISSUED) != news.get(ISSUED)
            or set(olds.get(ISSUED) or {}) != set(news.get("leaves") or {})
            or bool(unknowns.changed(olds, news, ("cas",)))
            or bool(_drifted(olds))
            or olds.get("version") != news.get("version")
        )
        return DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Issues what changed or drifted; removes the Secrets of leaves no longer named (or all, where it moved)."""
        moved = any(olds.get(k) != news.get(k) for k in PLACE)
        names = list(news["leaves"]) if moved else reissued(olds, news)
        dropped = [s for s in _layouts(olds) if moved or s not in _layouts(news)]
        written = {} if moved else {s: h for s, h in (olds.get(WRITTEN) or {}).items() if s not in dropped}
        written |= _write(news, names)
        try:
            _remove(olds, dropped)
        except KubeError as err:
            if not moved or err.status != 0:  # the old seed may be gone with the control plane that left it
                raise
        return UpdateResult(outs=_outs(news, written))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The hash of each Secret the seed has other than written ("" gone): drift the next `up` repairs."""
        written = props.get(WRITTEN) or {}
        layouts = {s: layout for s, layout in _layouts(props).items() if s in written}
        hashes = found_hashes(place_of(props), layouts)
        return ReadResult(id_=id_, outs={**props, FOUND: {s: h for s, h in hashes.items() if h != written.get(s)}})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Removes the Secrets it wrote (a seed that cannot be reached took them with it)."""
        try:
            _remove(props, list(props.get(WRITTEN) or {}))
        except KubeError as err:
            if err.status != 0:
                raise


class LeafSet(Resource, module="arbor", name="LeafSet"):
    """A shoot's control-plane leaves; `checksums` (by Secret name) stand for their content."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        checksums: pulumi.Output[dict[str, str]]

    def __init__(
        self,
        name: str,
        *,
        place: Mapping[str, Any],
        cas: Mapping[str, Mapping[str, pulumi.Input[str]]],
        leaves: Mapping[str, Mapping[str, Any]],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`place`: a seed's `kubeconfig` and `namespace`, or a machine's `directory`, and the `cluster` identity."""
        props = {**place, "cas": dict(cas), "leaves": dict(leaves), "version": PROVIDER_VERSION,
                 CHECKSUMS: None}  # fmt: skip
        super().__init__(LeafSetProvider(), name, props, opts)
