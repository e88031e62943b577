"""The Secrets a credential resource writes itself: in a hosted shoot's seed namespace, or a self-hosted one's machine.

A credential's content lives in its resource's outputs; the Secret that carries it to the control plane is
written from there by the same resource when it is issued, so the state holds the content once and the Secret as a
hash (`writtenHashes`), not three more copies as a Kubernetes provider Secret would.

The inputs name where and what: `kubeconfig` (the seed's) and `namespace`, or a self-hosted machine's `directory`
(secret_places.py), and `secrets`, the layout of each Secret (`{secret: {data key: output field}}`). The hashes written
are kept (`writtenHashes`), and `read()` puts those of the Secrets the place has otherwise beside them (`foundHashes`),
so drift is told from hashes alone, without the contents (the issuing CA's certificate is not in the state). An edited
or deleted Secret is drift: a certificate is issued again (Gardener's secrets manager regenerates a leaf whose Secret is
gone); a CA, key or token, which must never be generated again, writes it again in an update. A dynamic provider cannot
preview an update (the engine previews its outputs as its inputs), so such a writer's refresh records its public outputs
among its inputs (`recorded`) and its `check` carries them on (`carry`): what reads them previews as it is. A Secret is
removed only while it still holds what this resource wrote (a precondition on its resourceVersion): a replacement writes
the same names first, and the old certificate's deletion must not take the new one's Secret with it.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from components.reconciler import unknowns
from components.reconciler.kube import Kube, KubeError
from components.reconciler.secret_places import DIRECTORY, Namespace, Place, place_of
from components.render import objects

# A credential resource's inputs that say where its Secrets go (absent or None where it writes none).
INPUTS = ("kubeconfig", "namespace", DIRECTORY, "secrets", "cluster")
OUTPUT = "writtenHashes"
FOUND = "foundHashes"
# The `checksum/<name>` annotation of each Secret written (components/render/objects.py), for the workloads that
# mount it: what stands for the content where the state keeps none.
CHECKSUMS = "checksums"
# What a credential's outputs keep of its Secrets.
OUTPUTS = (OUTPUT, FOUND, CHECKSUMS)

Layout = Mapping[str, Mapping[str, str]]
# Where a credential writes its Secrets: `kubeconfig` and `namespace` or `directory`, and `secrets` (the INPUTS).
Writes = Mapping[str, Any]


def writing(props: dict[str, Any], where: Writes | None) -> dict[str, Any]:
    """A credential's inputs with where it writes its Secrets, and the outputs that say what it wrote."""
    if where is None:
        return props
    return {**props, **{k: where[k] for k in INPUTS if k in where}, OUTPUT: None, CHECKSUMS: None}


def writes(props: Mapping[str, Any]) -> bool:
    """Whether the resource writes Secrets."""
    return bool((props.get("kubeconfig") or props.get(DIRECTORY)) and props.get("secrets"))


def string_data(fields: Mapping[str, str], outs: Mapping[str, Any]) -> dict[str, str]:
    """A Secret's content: each key's output, as text."""
    return {key: str(outs[field]) for key, field in fields.items()}


def data_of(fields: Mapping[str, str], outs: Mapping[str, Any]) -> dict[str, str]:
    """A Secret's `data`: each key's output, base64-encoded as the API returns it."""
    return {key: base64.b64encode(text.encode()).decode() for key, text in string_data(fields, outs).items()}


def content_hash(data: Mapping[str, str], keys: Any) -> str:
    """The SHA-256 of a Secret's `data` at `keys` (keys it lacks count as empty), so added keys are not drift."""
    picked = {k: data.get(k, "") for k in sorted(keys)}
    return hashlib.sha256(json.dumps(picked, sort_keys=True).encode()).hexdigest()


def expected(props: Mapping[str, Any]) -> dict[str, str] | None:
    """The hash of each Secret as `props` (every field its layout names) say it should be; None when it writes none."""
    if not writes(props):
        return None
    layout: Layout = props["secrets"]
    return {name: content_hash(data_of(fields, props), fields) for name, fields in layout.items()}


def read_secret(props: Mapping[str, Any], name: str) -> dict[str, str] | None:
    """Another Secret's content where the resource writes, decoded (None when it is gone)."""
    return decoded(place_of(props), name)


def decoded(place: Place, name: str) -> dict[str, str] | None:
    """A Secret's content at `place`, decoded (None when it is gone)."""
    data = place.find(name)
    if data is None:
        return None
    return {k: base64.b64decode(v).decode() for k, v in data.items()}


def secret_keys(props: Mapping[str, Any], name: str, keys: Sequence[str] | None = None) -> dict[str, str]:
    """Some keys (None: all) of another Secret where the resource writes; a KubeError naming it or the key missing."""
    try:
        data = read_secret(props, name)
    except KubeError as error:
        raise KubeError(f"reading {_where(props, name)}: {error}", error.status) from None
    if data is None:
        raise KubeError(f"{_where(props, name)} is missing", 404)
    if keys is None:
        return data
    if missing := [key for key in keys if key not in data]:
        raise KubeError(f"{_where(props, name)} has no {', '.join(missing)}")
    return {key: data[key] for key in keys}


def _where(props: Mapping[str, Any], name: str) -> str:
    """A Secret as an error names it (its place made only for the error)."""
    return place_of(props).describe(name)


def found_data(place: Place, names: Iterable[str]) -> dict[str, dict[str, str] | None]:
    """Each named Secret's `data` as its place has it (None when it is gone)."""
    return {name: place.find(name) for name in names}


def hashes_of(found: Mapping[str, Mapping[str, str] | None], layouts: Layout) -> dict[str, str]:
    """Each Secret's hash at its layout's keys as found ("" when it is gone): drift against those written."""
    return {name: content_hash(data, layouts[name]) if data is not None else "" for name, data in found.items()}


def found_hashes(place: Place, layouts: Layout) -> dict[str, str]:
    """Each Secret's hash as its place has it ("" when it is gone)."""
    return hashes_of(found_data(place, layouts), layouts)


def put_secret(kube: Kube, namespace: str, name: str, data: Mapping[str, str]) -> None:
    """Creates or replaces an Opaque Secret with `data` (base64 values)."""
    Namespace(kube, namespace).put(name, data)


def remove_held(place: Place, layouts: Layout, ours: Mapping[str, str]) -> None:
    """Deletes each Secret of `layouts` that still holds what was written (`ours`, its hash); any other stays."""
    for name, fields in layouts.items():
        place.remove_if(name, functools.partial(_holds, fields, ours.get(name)))


def _holds(fields: Mapping[str, str], ours: str | None, data: Mapping[str, str]) -> bool:
    """Whether a Secret's `data` still hashes to what was written."""
    return content_hash(data, fields) == ours


def observed(props: Mapping[str, Any]) -> dict[str, Any]:
    """What `read()` adds: the hashes of the Secrets that differ from those written ("" gone), and the checksums."""
    layout: Layout = props["secrets"]
    found = found_data(place_of(props), layout)
    hashes = hashes_of(found, layout)
    written, sums = props.get(OUTPUT) or {}, dict(props.get(CHECKSUMS) or {})
    for name, data in found.items():
        if data is not None and hashes[name] == written.get(name):
            plain = {k: base64.b64decode(data[k]).decode() for k in layout[name] if k in data}
            sums[name] = objects.checksum(plain)
    return {FOUND: {name: h for name, h in hashes.items() if h != written.get(name)}, CHECKSUMS: sums}


def read_back(outs: dict[str, Any], props: Mapping[str, Any]) -> dict[str, Any]:
    """A refresh's outputs with what `observed` adds, where the resource writes Secrets."""
    return {**outs, **observed(props)} if writes(props) else outs


def write(props: Mapping[str, Any]) -> dict[str, Any]:
    """Writes each Secret from the outputs in `props`; returns them with the hashes written and the checksums."""
    if not writes(props):
        return dict(props)
    place, layout = place_of(props), props["secrets"]
    for name, fields in layout.items():
        place.put(name, data_of(fields, props))
    sums = {name: objects.checksum(string_data(fields, props)) for name, fields in layout.items()}
    return {**props, OUTPUT: expected(props), CHECKSUMS: sums}


def write_rendered(props: Mapping[str, Any], rendered: Mapping[str, str]) -> dict[str, Any]:
    """Writes each Secret from the outputs and `rendered` fields (made from them for the write); keeps those out.

    What a Secret holds in another form than the outputs (an EncryptionConfiguration of the keys, a bucket's
    `etcd-backup` data of its user's keys) is rendered for the write alone: the outputs stay the state's one copy.
    """
    outs = write({**props, **rendered})
    return {k: v for k, v in outs.items() if k not in rendered}


def remove(props: Mapping[str, Any]) -> None:
    """Deletes each Secret the resource wrote that still holds what it wrote; any other is left alone."""
    if not writes(props):
        return
    remove_held(place_of(props), props["secrets"], props.get(OUTPUT) or {})


def moved(olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    """Whether the Secrets go elsewhere now: another namespace, directory or layout, or another seed.

    Where the seed is reached from (the kubeconfig) is not what is written, so it changes nothing; another seed (its
    identity, `cluster`: a control plane moved) is elsewhere.
    """
    if not writes(olds) or not writes(news):
        return False
    elsewhere = any(olds.get(k) != news.get(k) for k in ("namespace", DIRECTORY, "secrets"))
    return elsewhere or bool(unknowns.changed(olds, news, ("cluster",)))


def drifted(olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    """Whether the Secrets must be written again: they go elsewhere now, or the cluster's differ from the outputs.

    A certificate issued before it wrote its own Secrets is left as it is (its Secrets exist: hack/state_moves.py
    handed them over); it writes them, and is checked, from its next issue on. A CA, key or token that starts
    writing them (`starts`) updates once instead. One that no longer writes any keeps its credential.
    """
    # An older state kept every Secret's hash; now only those that differ are kept.
    found, written = olds.get(FOUND) or {}, olds.get(OUTPUT) or {}
    differ = any(h != written.get(name) for name, h in found.items())
    return moved(olds, news) or (writes(olds) and writes(news) and differ)


def leave_old_place(olds: Mapping[str, Any], news: Mapping[str, Any]) -> None:
    """Removes the Secrets where they were when they go elsewhere now, before they are written again.

    First: the new place may be the old one (the seed's identity alone changed), and a Secret written again with the
    same content would still read as this resource's to remove.
    """
    if moved(olds, news):
        remove(olds)


def starts(olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    """Whether the credential writes Secrets it did not write before (a SecretSet wrote them: handed over)."""
    return writes(news) and not writes(olds)


def write_again(olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    """Whether a writer that keeps what it made writes its Secrets again: drifted, moved, or written by it from now."""
    return drifted(olds, news) or starts(olds, news)


def recorded(outs: Mapping[str, Any], made: Iterable[str]) -> dict[str, Any]:
    """The inputs a refresh records from the outputs: what the resource made left out (None), no found hashes.

    A carried output stays (its caller leaves it out of `made`): the next `check` carries it on (`carry`).
    """
    left_out = {*made, OUTPUT}
    return {k: None if k in left_out else v for k, v in outs.items() if k != FOUND}


def carry(olds: Mapping[str, Any], news: dict[str, Any], carried: Iterable[str], same: Iterable[str]) -> dict[str, Any]:
    """New inputs with the `carried` outputs the old inputs recorded, while none of `same` changed.

    A dynamic provider's update previews its outputs as its inputs: so a writer's update (a Secret written again)
    previews what it keeps known. Only where it writes Secrets; their checksums only while their layout stays.
    """
    if not writes(news) or any(olds.get(k) != news.get(k) for k in same):
        return news
    kept = {k: v for k in carried if (v := olds.get(k)) is not None}
    if olds.get("secrets") != news.get("secrets"):
        kept.pop(CHECKSUMS, None)
    return {**news, **kept}
