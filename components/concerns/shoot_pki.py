"""A shoot's PKI as Pulumi resources: the credentials components/render/pki.py describes, issued in issuer order.

`issue_shoot_pki` registers one resource per credential (children of the given parent, named
`<name>-pki-<credential>`) and hands back a plain bundle of outputs: per credential its certificate, key and
issuing CA, and the Secrets (`stringData` by Secret name) the shoot's control plane mounts in the seed namespace.
Private keys and token secrets are secret outputs all the way into those Secrets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

from components.plan.values import ShootValues
from components.reconciler.pki import BootstrapToken, Certificate, CertificateAuthority, ServiceAccountKey
from components.render import pki


@dataclass(frozen=True)
class CredentialOutputs:
    """One issued credential; which fields are set depends on its kind."""

    credential: pki.Credential
    # The secret part: a private key PEM, or a bootstrap token's secret.
    key: pulumi.Output[str]
    # The certificate PEM (CA and cert), or the public key PEM (rsa-key), or the token id (token).
    cert: pulumi.Output[str] | None = None
    # The issuing CA's certificate PEM (a CA's own for a CA).
    ca: pulumi.Output[str] | None = None

    def string_data(self) -> dict[str, pulumi.Output[str]]:
        """The credential's Secret data by key (components/render/pki.py's KEY_* names)."""
        kind, cert, ca, key = self.credential.kind, self.cert, self.ca, self.key
        values: dict[str, pulumi.Output[str] | None] = {
            pki.Kind.CA: {pki.KEY_CA_CERT: cert, pki.KEY_CA_KEY: key},
            pki.Kind.CERT: {pki.KEY_CA_CERT: ca, pki.KEY_CERT: cert, pki.KEY_KEY: key},
            pki.Kind.RSA_KEY: {pki.KEY_RSA_PRIVATE: key, pki.KEY_RSA_PUBLIC: cert},
            pki.Kind.TOKEN: {pki.KEY_TOKEN_ID: cert, pki.KEY_TOKEN_SECRET: key},
        }[kind]
        return {k: v for k in pki.secret_keys(self.credential) if (v := values[k]) is not None}


@dataclass(frozen=True)
class ShootPki:
    """Every credential of a shoot, by name (pki.CA, pki.KUBE_APISERVER, ...)."""

    credentials: dict[str, CredentialOutputs]
    resources: dict[str, pulumi.CustomResource] = field(default_factory=dict)

    def __getitem__(self, name: str) -> CredentialOutputs:
        """The credential named `name`."""
        return self.credentials[name]

    def secrets(self) -> dict[str, dict[str, pulumi.Output[str]]]:
        """`stringData` of each Secret to create in the seed namespace, by Secret name."""
        return {name: c.string_data() for name, c in self.credentials.items()}


# The credentials that cannot be issued again without every client and node trusting anew: CAs and keys.
PROTECTED = (pki.Kind.CA, pki.Kind.RSA_KEY)


def _issue(
    name: str,
    credential: pki.Credential,
    issued: dict[str, CredentialOutputs],
    rotation: int,
    opts: pulumi.ResourceOptions,
) -> tuple[CredentialOutputs, pulumi.CustomResource]:
    """Registers one credential; a certificate's issuer is already in `issued`."""
    resource_name = f"{name}-pki-{credential.name}"
    if credential.kind is pki.Kind.CA:
        ca = CertificateAuthority(resource_name, common_name=credential.common_name,
                                  validity_s=credential.validity_seconds, rotation=rotation, opts=opts)  # fmt: skip
        return CredentialOutputs(credential, key=ca.key, cert=ca.cert, ca=ca.cert), ca
    if credential.kind is pki.Kind.CERT:
        issuer = issued[credential.issuer or ""]
        assert issuer.cert is not None  # a CA always has its certificate
        cert = Certificate(
            resource_name, ca_cert=issuer.cert, ca_key=issuer.key, common_name=credential.common_name,
            organizations=list(credential.organizations), dns_names=list(credential.dns_names),
            ip_addresses=list(credential.ip_addresses), usages=[u.value for u in credential.usages],
            validity_s=credential.validity_seconds, rotation=rotation, opts=opts,
        )  # fmt: skip
        return CredentialOutputs(credential, key=cert.key, cert=cert.cert, ca=issuer.cert), cert
    if credential.kind is pki.Kind.RSA_KEY:
        sa = ServiceAccountKey(resource_name, rotation=rotation, opts=opts)
        return CredentialOutputs(credential, key=sa.privateKey, cert=sa.publicKey), sa
    token = BootstrapToken(resource_name, rotation=rotation, opts=opts)
    return CredentialOutputs(credential, key=token.tokenSecret, cert=token.tokenId), token


def issue_shoot_pki(name: str, shoot: ShootValues, parent: pulumi.Resource) -> ShootPki:
    """Registers every credential of the shoot (children of `parent`) and returns their outputs.

    CAs and keys are protected (what they signed is trusted by every node and client); a rotation lifts the
    protection of those it replaces, for that update. Leaf certificates are issued again from their CA on renewal.
    """
    issued: dict[str, CredentialOutputs] = {}
    resources: dict[str, pulumi.CustomResource] = {}
    domains = (shoot.dns.external, shoot.dns.internal) if shoot.dns else ()
    for credential in pki.credentials(
        shoot.seed_namespace,
        shoot.networking.services,
        shoot.control_plane_ips,
        hosted=not shoot.self_hosted,
        domains=domains,
        nodes=(shoot.control_plane_machine.name,) if shoot.control_plane_machine else (),
    ):
        rotation = shoot.credentials.rotation.get(credential.group.value, 0)
        kept = credential.kind in PROTECTED and credential.name not in shoot.credentials.replacing
        opts = pulumi.ResourceOptions(parent=parent, protect=kept)
        issued[credential.name], resources[credential.name] = _issue(name, credential, issued, rotation, opts)
    return ShootPki(credentials=issued, resources=resources)
