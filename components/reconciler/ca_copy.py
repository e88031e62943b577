"""CaCopy: a CA copied from its signer Secret to an object in another cluster, the state keeping neither.

A shoot's client CA (certificate and key) is written by its CertificateAuthority to `ca-client-signer` in the seed
namespace (a hosted shoot's) or the machine directory (a self-hosted local shoot's); the garden keeps it too, as the
InternalSecret `<shoot>.ca-client` (where Gardener keeps it, and where admin kubeconfigs are issued from). Rather than
the key travelling through the program into a second resource's inputs, this one reads the signer Secret when it writes
the copy: its state keeps where both are, the hash of the CA's certificate (a rotated CA is copied again) and the copy's
fingerprint in the target cluster (`read()` marks a copy edited or deleted there as drift, and the next `up` copies it
again).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.reconciler import apply
from components.reconciler.ca_source import CA_SECRET, ca_hash, with_ca
from components.reconciler.kube import Kube, KubeError, unless_unreachable
from components.reconciler.provider import Provider
from components.reconciler.secret_places import DIRECTORY
from components.reconciler.secret_set import data_of
from components.render import objects, pki

PROVIDER_VERSION = "1"
DRIFTED = ""
# The inputs naming where the signer Secret is, by the place's field (reconciler/secret_places.py).
SOURCE_FIELDS = {"kubeconfig": "sourceKubeconfig", "namespace": "sourceNamespace", DIRECTORY: "sourceDirectory"}
# Inputs that, changed, copy the CA again: another CA, another source Secret or namespace or directory, another target,
# the logic.
COMPARED = ("caHash", CA_SECRET, "sourceNamespace", "sourceDirectory", "object", "cluster", "version")


def copy_of(props: Mapping[str, Any]) -> dict[str, Any]:
    """The target object with the CA read from its signer Secret, checked against the certificate's hash."""
    source = {field: props[key] for field, key in SOURCE_FIELDS.items() if props.get(key)}
    found = with_ca({**source, CA_SECRET: props[CA_SECRET], "caHash": props["caHash"]})
    return {**props["object"], "data": data_of({pki.KEY_CA_CERT: found["caCert"], pki.KEY_CA_KEY: found["caKey"]})}


class CaCopyProvider(Provider):
    """Keeps a CA's copy written where the inputs say, from its signer Secret."""

    def _write(self, props: dict[str, Any]) -> dict[str, Any]:
        """Writes the copy; the outputs are the inputs and the copy's fingerprint."""
        kube = Kube.from_kubeconfig(props["kubeconfig"])
        live = apply.apply(kube, apply.Paths(kube), copy_of(props))
        return {**props, "fingerprint": apply.fingerprint(live)}

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Writes the copy."""
        return CreateResult(id_="ca-copy", outs=self._write(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """An update when the CA, its source or the target changed, or the copy drifted."""
        changed = any(olds.get(k) != news.get(k) for k in COMPARED) or olds.get("fingerprint") == DRIFTED
        return DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Writes the copy again; one left where the target was before is removed once the new one is written."""
        outs = self._write(news)
        before = olds.get("object")
        if isinstance(before, Mapping) and objects.ref(dict(before)) != objects.ref(news["object"]):
            kube = Kube.from_kubeconfig(olds["kubeconfig"])
            apply.remove(kube, apply.Paths(kube), [dict(before)])
        return UpdateResult(outs=outs)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The copy as the target cluster has it: edited or deleted there, drift (its fingerprint "")."""
        if not isinstance(props.get("object"), Mapping):  # an older arbor's resource, updated by the next `up`
            return ReadResult(id_=id_, outs=props)
        kube = Kube.from_kubeconfig(props["kubeconfig"])
        try:
            live = kube.find(apply.Paths(kube).of(props["object"]))
        except KeyError:  # the kind is not served (its CRD gone): the copy is gone with it
            live = None
        except KubeError as err:  # discovery failed: a cluster that cannot be reached (stopped) counts as gone
            if err.status not in (0, 404):
                raise
            live = None
        unchanged = live is not None and apply.fingerprint(live) == props.get("fingerprint")
        return ReadResult(id_=id_, outs={**props, "fingerprint": props.get("fingerprint") if unchanged else DRIFTED})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Removes the copy; a target cluster that cannot be reached took it with it."""
        kube = Kube.from_kubeconfig(props["kubeconfig"])
        with unless_unreachable():
            apply.remove(kube, apply.Paths(kube), [dict(props["object"])])


class CaCopy(Resource, module="arbor", name="CaCopy"):
    """A CA copied from its signer Secret (`secret` where `source` says) to `target` in another cluster."""

    def __init__(
        self,
        name: str,
        *,
        source: Mapping[str, Any],
        secret: str,
        ca_cert: pulumi.Input[str],
        kubeconfig: pulumi.Input[str],
        cluster: str,
        target: dict[str, Any],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`source`: the signer's place (seed `kubeconfig` and `namespace`, or `directory`); `target`: without data."""
        props = {
            **{key: source[field] for field, key in SOURCE_FIELDS.items() if field in source}, CA_SECRET: secret,
            # The certificate only as its hash (what the copy is checked against, and what a rotation changes).
            "caHash": pulumi.Output.from_input(ca_cert).apply(ca_hash),
            "kubeconfig": kubeconfig,
            # The target cluster's identity (`<provider>:<name>`), shown in the preview and read by policies.
            "cluster": cluster,
            "object": target, "version": PROVIDER_VERSION, "fingerprint": None,
        }  # fmt: skip
        super().__init__(CaCopyProvider(), name, props, opts)
