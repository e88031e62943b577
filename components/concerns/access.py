"""Access to shoots: the client CA kept in the garden as an InternalSecret, and short-lived admin kubeconfigs.

As in Gardener, a shoot's client CA (certificate and key) is stored in its project namespace of the garden as
the InternalSecret `<shoot>.ca-client`. Project members cannot read it: the project roles (garden.py ROLE_RULES)
name their resources one by one and InternalSecrets are not among them, so only the garden's operators (and
arbor) can issue admin kubeconfigs from it. Admin kubeconfigs are client certificates of that CA valid for the
shoot's `adminKubeconfig.expiration` (at most 24h): a shoot's are issued on request and kept nowhere
(hack/admin_kubeconfig.py, as Gardener's `shoots/adminkubeconfig`). `admin_kubeconfig` keeps one as a resource
instead, renewed by `pulumi up` once less than half of its validity remains; the landscape no longer makes one.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import pulumi

from components.bundles import ClusterAccess
from components.concerns.shoot_pki import CredentialOutputs
from components.naming import API_GROUP, API_VERSION
from components.plan.values import ShootValues
from components.reconciler import object_set
from components.reconciler.admin_kubeconfig import DEFAULT_GROUPS, AdminKubeconfig
from components.reconciler.ca_copy import CaCopy
from components.reconciler.object_set import ObjectSet
from components.render import pki

KIND = "InternalSecret"


def internal_secret_name(shoot: str, credential: str = pki.CA_CLIENT) -> str:
    """The InternalSecret of a shoot's credential in its project namespace, e.g. `web.ca-client`."""
    return f"{shoot}.{credential}"


def secret_data(data: dict[str, str]) -> dict[str, str]:
    """Secret data: plain text values base64-encoded, keys in order."""
    return {k: base64.b64encode(v.encode()).decode() for k, v in sorted(data.items())}


def internal_secret(name: str, namespace: str, data: dict[str, str]) -> dict[str, Any]:
    """An InternalSecret object with `data` (plain text values) base64-encoded."""
    return {
        "apiVersion": f"{API_GROUP}/{API_VERSION}",
        "kind": KIND,
        "metadata": {"name": name, "namespace": namespace},
        "type": "Opaque",
        "data": secret_data(data),
    }


def register_client_ca(
    name: str,
    shoot: ShootValues,
    client_ca: CredentialOutputs,
    garden: ClusterAccess,
    opts: pulumi.ResourceOptions,
    signer: Mapping[str, Any] | None = None,
) -> pulumi.CustomResource:
    """The shoot's client CA as the InternalSecret `<shoot>.ca-client` in its project namespace of the garden.

    `signer` (a hosted shoot's seed `kubeconfig` and `namespace`, a self-hosted local shoot's machine `directory`) holds
    the CA's `ca-client-signer`: copied from there (CaCopy), so the state keeps no second copy of the key. Otherwise
    applied as an ObjectSet (its content once in the state, secret). `opts` carries what must exist first (the CRD, the
    namespace).
    """
    assert client_ca.cert is not None  # a CA always has its certificate
    namespace, secret_name = shoot.project_namespace, internal_secret_name(shoot.name)
    if signer is not None:
        target = {k: v for k, v in internal_secret(secret_name, namespace, {}).items() if k != "data"}
        # An older arbor's ObjectSet of the same name becomes this copy by an update: the InternalSecret stays.
        moved = pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=object_set.TYPE)])
        return CaCopy(
            name, source=signer, secret=pki.signer(pki.CA_CLIENT), ca_cert=client_ca.cert,
            kubeconfig=garden.reach, cluster=garden.identifier, target=target,
            opts=pulumi.ResourceOptions.merge(opts, moved),
        )  # fmt: skip
    pems = pulumi.Output.all(client_ca.cert, client_ca.key)
    manifests = pems.apply(
        lambda p: [internal_secret(secret_name, namespace, {pki.KEY_CA_CERT: p[0], pki.KEY_CA_KEY: p[1]})]
    )
    return ObjectSet(
        name, kubeconfig=garden.reach, cluster=garden.identifier, manifests=pulumi.Output.secret(manifests),
        opts=opts,
    )  # fmt: skip


def admin_kubeconfig(
    name: str,
    client_ca: CredentialOutputs,
    server: pulumi.Output[str],
    server_ca: pulumi.Output[str],
    expiration_s: int,
    parent: pulumi.Resource,
    user: str = "admin",
    groups: tuple[str, ...] = DEFAULT_GROUPS,
) -> pulumi.Output[str]:
    """An admin kubeconfig (resource `<name>-admin-kubeconfig`) valid for `expiration_s`; a secret output."""
    assert client_ca.cert is not None  # a CA always has its certificate
    resource = AdminKubeconfig(
        f"{name}-admin-kubeconfig",
        client_ca_cert=client_ca.cert,
        client_ca_key=client_ca.key,
        server=server,
        server_ca=server_ca,
        expiration_s=expiration_s,
        user=user,
        groups=groups,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    return pulumi.Output.secret(resource.kubeconfig)
