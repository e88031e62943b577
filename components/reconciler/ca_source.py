"""Where a certificate's issuing CA comes from: given whole, read from its signer Secret, or named by its subject.

A written leaf is issued from the CA where it is written (a hosted shoot's seed namespace, a self-hosted shoot's machine
directory), so the state keeps no copy of the CA's key; a certificate that writes no Secret keeps its CA's subject and a
hash of its certificate, not the certificate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.naming import short_hash
from components.reconciler import credential_secrets
from components.reconciler.kube import KubeError
from components.reconciler.secret_places import place_of
from components.reconciler.signing import Issued, issue, named
from components.render import packed_keys, pki


def ca_hash(pem: object) -> str:
    """The SHA-256 (first 16 hex digits) of an issuing CA's certificate; an unknown one (preview) hashes apart."""
    return short_hash(str(pem), length=16)


# The input naming the Secret in the seed namespace a certificate's CA is read from (`<ca>-signer`), where it has one.
CA_SECRET = "caSecret"
# The input that stands for the CA's certificate where a certificate writes no Secret: its subject, all issuing needs.
CA_SUBJECT = "caSubject"


def with_ca(props: dict[str, Any]) -> dict[str, Any]:
    """The properties with the issuing CA's certificate and key, read from its signer Secret where they name one.

    A hosted shoot's leaf is issued from the CA its seed namespace holds, so the state keeps no copy of the CA's key.
    """
    if not props.get(CA_SECRET):
        return props
    place = place_of(props)
    data = credential_secrets.decoded(place, props[CA_SECRET])
    where = place.describe(props[CA_SECRET])
    if data is None or pki.KEY_CA_KEY not in data or pki.KEY_CA_CERT not in data:
        raise KubeError(f"the CA's {where} is missing")
    found = {"caCert": data[pki.KEY_CA_CERT], "caKey": data[pki.KEY_CA_KEY]}
    if ca_hash(found["caCert"]) != props.get("caHash"):
        raise KubeError(
            f"the CA's {where} holds another CA than the one this certificate is issued from (the CA writes it first)"
        )
    return {**props, **found}


def issue_from(props: Mapping[str, Any]) -> Issued:
    """Issues the certificate the properties describe (a certificate's inputs, or a LeafSet's leaf with its CA)."""
    ca = props["caCert"] if props.get("caCert") else named(props[CA_SUBJECT])
    return issue(
        ca, packed_keys.expanded(props["caKey"]), props["commonName"],
        list(props.get("organizations") or []), list(props.get("dnsNames") or []),
        list(props.get("ipAddresses") or []), list(props["usages"]), int(props["validitySeconds"]),
    )  # fmt: skip
