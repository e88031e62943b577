"""A shoot's PKI as Pulumi resources: the credentials components/render/pki.py describes, issued in issuer order.

`issue_shoot_pki` registers one resource per credential (children of the given parent, named
`<name>-pki-<credential>`) and hands back a plain bundle of outputs: per credential its certificate, key and
issuing CA, and the Secrets (`stringData` by Secret name) the shoot's control plane mounts. Private keys and token
secrets are secret outputs all the way. Given a seed (`SecretTarget`), the leaves the program does not read are one
LeafSet (`<name>-pki-leaves`, reconciler/leaf_set.py) that writes their Secrets in the shoot's namespace there and
keeps no content; every other credential writes its own Secrets (reconciler/credential_secrets.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi

from components import naming
from components.plan.values import ClusterValues, ShootValues
from components.providers.contract import InfrastructureProvider
from components.reconciler.ca_source import ca_hash
from components.reconciler.gather import gathered
from components.reconciler.leaf_set import LeafSet
from components.reconciler.pki import BootstrapToken, Certificate, CertificateAuthority, ServiceAccountKey
from components.render import objects, pki


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
    # A credential that writes its own Secrets: the checksum of each, by name, in their stead.
    checksums: pulumi.Output[dict[str, str]] | None = None

    def string_data(self) -> dict[str, pulumi.Output[str]]:
        """The data of the credential's own Secret by key (components/render/pki.py's KEY_* names)."""
        return self.secret_data()[self.credential.name]

    def secret_data(self) -> dict[str, dict[str, pulumi.Output[str]]]:
        """The data of each of the credential's Secrets (pki.secrets_of), by Secret name.

        Of a credential that writes its own Secrets, each one's checksum (`objects.CHECKSUM_ONLY`): enough for the
        workloads that mount it, and nothing to write (the credential wrote it).
        """
        if (sums := self.checksums) is not None:
            return {s: {objects.CHECKSUM_ONLY: sums.apply(functools.partial(_checksum, s))}
                    for s in pki.secrets_of(self.credential)}  # fmt: skip
        kind, cert, ca, key = self.credential.kind, self.cert, self.ca, self.key
        values: dict[str, pulumi.Output[str] | None] = {
            pki.Kind.CA: {pki.KEY_CA_CERT: cert, pki.KEY_CA_KEY: key},
            pki.Kind.CERT: {pki.KEY_CA_CERT: ca, pki.KEY_CERT: cert, pki.KEY_KEY: key},
            pki.Kind.RSA_KEY: {pki.KEY_RSA_PRIVATE: key, pki.KEY_RSA_PUBLIC: cert},
            pki.Kind.TOKEN: {pki.KEY_TOKEN_ID: cert, pki.KEY_TOKEN_SECRET: key},
        }[kind]
        return {
            secret: {k: v for k in keys if (v := values[k]) is not None}
            for secret, keys in pki.secrets_of(self.credential).items()
        }


def _checksum(secret: str, checksums: dict[str, str] | None) -> str:
    """A Secret's checksum among a certificate's (the provider always has them; a test's mock echoes None)."""
    return (checksums or {}).get(secret, "")


# The field of a certificate's resource each key of its Secret holds (reconciler/pki.py; caCert is an input only).
CERT_FIELDS = {pki.KEY_CA_CERT: "caCert", pki.KEY_CERT: "cert", pki.KEY_KEY: "key"}


# The field of a CA's, key's or token's resource each key of its Secrets holds (reconciler/pki.py).
GENERATED_FIELDS = {
    pki.KEY_CA_KEY: "key", pki.KEY_RSA_PRIVATE: "privateKey", pki.KEY_RSA_PUBLIC: "publicKey",
    pki.KEY_TOKEN_ID: "tokenId", pki.KEY_TOKEN_SECRET: "tokenSecret",
}  # fmt: skip


@dataclass(frozen=True)
class SecretTarget:
    """Where a shoot's credentials write their Secrets: a hosted shoot's seed namespace, or a self-hosted one's machine.

    A seed namespace is named by the seed's kubeconfig and the namespace there; a machine by its directory
    (reconciler/secret_places.py). A certificate whose Secret drifted is issued again; a CA, key or token writes it
    again from the state, as it must never be generated again (its public outputs stay known in that update's preview:
    reconciler/pki.py).
    """

    kubeconfig: pulumi.Output[str] | None
    namespace: str
    # What must exist before a Secret is written (the namespace).
    after: Sequence[pulumi.Resource] = ()
    # The seed's identity (`<provider>:<name>`): another one is another place, where the certificates are issued again.
    cluster: str = ""
    # The certificates the program reads (arbor's own client): the state keeps their content. Of the rest, only
    # their Secrets do (the resource manager's process reads its serving certificate there).
    published: frozenset[str] = frozenset({pki.ARBOR_CLIENT})
    # A machine's directory (a self-hosted shoot's, the local garden's), in place of a seed namespace.
    directory: str | None = None

    @staticmethod
    def on_machine(infra: InfrastructureProvider, cluster: ClusterValues) -> SecretTarget | None:
        """A cluster's machine directory, where the provider has one arbor writes to (local); None elsewhere."""
        directory = infra.machine_directory(cluster)
        if directory is None:
            return None
        identifier = naming.cluster_identifier(cluster.provider.value, cluster.name)
        return SecretTarget(None, "", cluster=identifier, directory=directory)

    def place(self) -> dict[str, Any]:
        """The inputs that name the place (reconciler/credential_secrets.py INPUTS), without the layout."""
        if self.directory is not None:
            return {"directory": self.directory, "cluster": self.cluster}
        return {"kubeconfig": self.kubeconfig, "namespace": self.namespace, "cluster": self.cluster}

    def writes(self, credential: pki.Credential) -> dict[str, Any]:
        """The inputs that make a credential write its Secrets: the layout of each, by output."""
        fields = CERT_FIELDS if credential.kind is pki.Kind.CERT else {pki.KEY_CA_CERT: "cert", **GENERATED_FIELDS}
        layout = {s: {k: fields[k] for k in keys} for s, keys in pki.secrets_of(credential).items()}
        return {**self.place(), "secrets": layout}


@dataclass(frozen=True)
class ShootPki:
    """Every credential of a shoot, by name (pki.CA, pki.KUBE_APISERVER, ...)."""

    credentials: dict[str, CredentialOutputs]
    resources: dict[str, pulumi.CustomResource] = field(default_factory=dict)
    # The certificate that writes each Secret itself, by Secret name (issued with a SecretTarget).
    writers: dict[str, pulumi.CustomResource] = field(default_factory=dict)

    def __getitem__(self, name: str) -> CredentialOutputs:
        """The credential named `name`."""
        return self.credentials[name]

    def secrets(self) -> dict[str, dict[str, pulumi.Output[str]]]:
        """`stringData` of each Secret the control plane mounts, by Secret name."""
        return {name: data for c in self.credentials.values() for name, data in c.secret_data().items()}

    def layouts(self) -> dict[str, tuple[str, ...]]:
        """The keys of each Secret the credentials write, by Secret name."""
        return {s: keys for c in self.credentials.values() for s, keys in pki.secrets_of(c.credential).items()}

    def api_identity(self) -> pulumi.Output[dict[str, str]]:
        """What an API server's own PKI is made of (secret): the shoot's CA, its key and the service-account key."""
        ca, service_account = self.credentials[pki.CA], self.credentials[pki.SERVICE_ACCOUNT_KEY]
        assert ca.cert is not None  # a CA always has its certificate
        return gathered({"ca": ca.cert, "caKey": ca.key, "serviceAccountKey": service_account.key}, secret=True)


# The credentials that cannot be issued again without every client and node trusting anew: CAs and keys.
PROTECTED = (pki.Kind.CA, pki.Kind.RSA_KEY)


def _written(resource: CertificateAuthority | ServiceAccountKey | BootstrapToken, writes: Any) -> Any:
    """The checksums of the Secrets a CA, key or token writes, which stand for them in the specs (None: none)."""
    return resource.checksums if writes else None


def _issue(
    name: str,
    credential: pki.Credential,
    issued: dict[str, CredentialOutputs],
    rotation: int,
    writes: dict[str, Any] | None,
    opts: pulumi.ResourceOptions,
    published: bool = True,
) -> tuple[CredentialOutputs, pulumi.CustomResource]:
    """Registers one credential, its issuer in `issued` (a certificate writes its Secrets where `writes` says).

    A certificate's content stays in the state only when `published` (the program reads it). One that writes its
    Secrets is issued from its CA's signer Secret beside them, named by the CA's hash, not given the CA's key.
    """
    resource_name = f"{name}-pki-{credential.name}"
    if credential.kind is pki.Kind.CA:
        ca = CertificateAuthority(resource_name, common_name=credential.common_name,
                                  validity_s=credential.validity_seconds, rotation=rotation, writes=writes,
                                  opts=opts)  # fmt: skip
        return CredentialOutputs(credential, key=ca.key, cert=ca.cert, ca=ca.cert, checksums=_written(ca, writes)), ca
    if credential.kind is pki.Kind.CERT:
        issuer = issued[credential.issuer or ""]
        assert issuer.cert is not None  # a CA always has its certificate
        signer = pki.signer(issuer.credential.name) if writes and issuer.credential.key_in_secret else None
        given = (None, None) if signer else (issuer.cert, issuer.key)
        cert = Certificate(
            resource_name, ca_cert=given[0], ca_key=given[1], ca_secret=signer,
            ca_digest=pulumi.Output.unsecret(issuer.cert.apply(ca_hash)) if signer else None,
            common_name=credential.common_name,
            organizations=list(credential.organizations), dns_names=list(credential.dns_names),
            ip_addresses=list(credential.ip_addresses), usages=[u.value for u in credential.usages],
            validity_s=credential.validity_seconds, rotation=rotation, writes=writes, published=published, opts=opts,
        )  # fmt: skip
        checksums = None if published else cert.checksums
        return CredentialOutputs(credential, key=cert.key, cert=cert.cert, ca=issuer.cert, checksums=checksums), cert
    if credential.kind is pki.Kind.RSA_KEY:
        sa = ServiceAccountKey(resource_name, rotation=rotation, writes=writes, opts=opts)
        sums = _written(sa, writes)
        return CredentialOutputs(credential, key=sa.privateKey, cert=sa.publicKey, checksums=sums), sa
    token = BootstrapToken(resource_name, rotation=rotation, writes=writes, opts=opts)
    sums = _written(token, writes)
    return CredentialOutputs(credential, key=token.tokenSecret, cert=token.tokenId, checksums=sums), token


def _leaf_spec(credential: pki.Credential, rotation: int, writes: dict[str, Any]) -> dict[str, Any]:
    """What a leaf of a LeafSet is issued from, and the layout of its Secrets."""
    return {
        "ca": credential.issuer, "commonName": credential.common_name,
        "organizations": list(credential.organizations), "dnsNames": list(credential.dns_names),
        "ipAddresses": list(credential.ip_addresses), "usages": [u.value for u in credential.usages],
        "validitySeconds": credential.validity_seconds, "rotation": rotation, "secrets": writes["secrets"],
    }  # fmt: skip


def _in_set(credential: pki.Credential, issued: dict[str, CredentialOutputs], published: bool) -> bool:
    """Whether a written leaf is one of the shoot's LeafSet: issued from a CA the seed holds, never read."""
    issuer = issued.get(credential.issuer or "")
    return not published and issuer is not None and issuer.credential.key_in_secret


def _leaf_set(
    name: str,
    target: SecretTarget,
    leaves: dict[str, dict[str, Any]],
    issued: dict[str, CredentialOutputs],
    rotations: dict[str, int],
    opts: pulumi.ResourceOptions,
) -> LeafSet:
    """The hosted shoot's leaves as one resource (`<name>-pki-leaves`), issued from their CAs' signer Secrets."""
    cas: dict[str, dict[str, Any]] = {}
    for ca_name in sorted({leaf["ca"] for leaf in leaves.values()}):
        ca = issued[ca_name]
        assert ca.cert is not None  # a CA always has its certificate
        spec = f"{ca.credential.common_name}/{ca.credential.validity_seconds}/{rotations[ca_name]}"
        cas[ca_name] = {"secret": pki.signer(ca_name), "hash": pulumi.Output.unsecret(ca.cert.apply(ca_hash)),
                        "spec": spec}  # fmt: skip
    return LeafSet(f"{name}-pki-leaves", place=target.place(), cas=cas, leaves=leaves, opts=opts)


def issue_shoot_pki(
    name: str,
    shoot: ShootValues,
    parent: pulumi.Resource,
    target: SecretTarget | None = None,
    signers: Callable[[ShootPki], Sequence[pulumi.Resource]] | None = None,
) -> ShootPki:
    """Registers every credential of the shoot (children of `parent`) and returns their outputs.

    CAs and keys are protected (what they signed is trusted by every node and client); a rotation lifts the
    protection of those it replaces, for that update. Leaf certificates are issued again from their CA on renewal.
    With a `target`, each writes its Secrets there, once what the target needs first exists. CAs, keys and tokens
    come first; `signers` then writes their Secrets (the CAs' keys among them), which the leaves are issued from.
    """
    issued: dict[str, CredentialOutputs] = {}
    resources: dict[str, pulumi.CustomResource] = {}
    writers: dict[str, pulumi.CustomResource] = {}
    domains = (shoot.dns.external, shoot.dns.internal) if shoot.dns else ()
    every = pki.credentials(
        shoot.seed_namespace,
        shoot.networking.services,
        shoot.control_plane_ips,
        hosted=not shoot.self_hosted,
        domains=domains,
        nodes=(shoot.control_plane_machine.name,) if shoot.control_plane_machine else (),
        signers=target is not None,
    )
    signed: list[pulumi.Resource] | None = None
    leaves: dict[str, dict[str, Any]] = {}
    rotations: dict[str, int] = {}
    for credential in sorted(every, key=lambda c: c.kind is pki.Kind.CERT):
        if credential.kind is pki.Kind.CERT and signers is not None and signed is None:
            signed = list(signers(ShootPki(credentials=dict(issued), writers=dict(writers))))
        rotation = rotations[credential.name] = shoot.credentials.rotation.get(credential.group.value, 0)
        kept = credential.kind in PROTECTED and credential.name not in shoot.credentials.replacing
        writes = target.writes(credential) if target else None
        after = [*target.after, *(signed or [])] if target and writes else []
        opts = pulumi.ResourceOptions(parent=parent, protect=kept, depends_on=after)
        published = target is None or credential.name in target.published
        if writes and _in_set(credential, issued, published):
            leaves[credential.name] = _leaf_spec(credential, rotation, writes)
            continue
        issued[credential.name], resources[credential.name] = _issue(
            name, credential, issued, rotation, writes, opts, published
        )
        writers |= dict.fromkeys(writes["secrets"] if writes else (), resources[credential.name])
    if target is not None and leaves:
        opts = pulumi.ResourceOptions(parent=parent, depends_on=[*target.after, *(signed or [])])
        leaf_set = _leaf_set(name, target, leaves, issued, rotations, opts)
        for credential in (c for c in every if c.name in leaves):
            # Only its Secrets hold it: the checksums stand for the content, as for a certificate not published.
            issuer = issued[credential.issuer or ""].cert
            key = pulumi.Output.from_input("")
            issued[credential.name] = CredentialOutputs(credential, key, ca=issuer, checksums=leaf_set.checksums)
            resources[credential.name] = leaf_set
            writers |= dict.fromkeys(leaves[credential.name]["secrets"], leaf_set)
    return ShootPki(credentials=issued, resources=resources, writers=writers)
