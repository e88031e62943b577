"""A shoot's machine credentials on GCP: a service account with a custom role, bindings, and a pool or a key.

machine-controller-manager-provider-gcp reads a service account key from `serviceaccount.json` in the
`cloudprovider` Secret (Gardener's key name). The account gets the compute rights its calls need in a custom role
of the project (components/render/cloud_credentials.py), `compute.networkUser` on the nodes subnetwork only and
`iam.serviceAccountUser` on the nodes' service account only. The key's JSON stays a secret output from the
provider into the Secret. Where MCM's tokens can be trusted (a GKE seed's pool, or a self-hosted shoot's own pool,
`shoot_pool`) no key exists: MCM's ServiceAccount acts as the account through the pool.
"""

from __future__ import annotations

import base64
import json
import operator
from typing import Any

import pulumi
import pulumi_gcp as gcp

from components.bundles import Issuer, MachineCredentials, NetworkAccess, trusted_issuer
from components.kinds import ProviderType
from components.naming import capped
from components.plan.values import ShootValues
from components.render import backup, cloud_credentials, machines, service_account_issuer

# GCE service account IDs are 6 to 30 characters; workload identity pool and provider IDs 4 to 32.
SERVICE_ACCOUNT_ID_MAX = 30
POOL_ID_MAX = 32
POOL_PROVIDER = "kubernetes"
# Who may use a seed's pool: the bucket's and the machines' ServiceAccounts of its shoots, the bucket's in `garden`.
POOL_SHOOT_ACCOUNTS = [backup.SERVICE_ACCOUNT, machines.MCM_NAME]
POOL_GARDEN_ACCOUNTS = [backup.SERVICE_ACCOUNT]


def seed_pool(
    cluster: str,
    url: pulumi.Output[str],
    audience: str,
    parent: pulumi.Resource,
    *,
    condition: str | None = None,
    jwks: pulumi.Input[str] | None = None,
) -> Issuer:
    """A GKE seed's issuer, trusted by a workload identity pool of its own for `audience` and its accounts alone.

    As Gardener's provider-gcp documents for a WorkloadIdentity: the pool's OIDC provider accepts the seed's tokens
    whose subject is one of the accounts above (or `condition`'s), and maps each to its ServiceAccount's name, so a
    binding can grant a service account to every shoot's `etcd-backup` (the bucket's) or to one shoot's MCM (its
    machines'). With `jwks` the provider holds the issuer's keys and fetches nothing (an issuer nobody can reach).
    """
    opts = pulumi.ResourceOptions(parent=parent)
    # Unique in the project as the GKE cluster's name (its stack's and seed's); a pool ID may not start with `gcp-`.
    pool = gcp.iam.WorkloadIdentityPool(
        f"{parent._name}-pool", workload_identity_pool_id=capped(f"arbor-{cluster}", POOL_ID_MAX),
        display_name=capped(f"arbor {cluster}", POOL_ID_MAX), opts=opts,
    )  # fmt: skip
    oidc = gcp.iam.WorkloadIdentityPoolProviderOidcArgs(issuer_uri=url, allowed_audiences=[audience], jwks_json=jwks)
    provider = gcp.iam.WorkloadIdentityPoolProvider(
        f"{parent._name}-pool-provider",
        workload_identity_pool_id=pool.workload_identity_pool_id,
        workload_identity_pool_provider_id=POOL_PROVIDER,
        attribute_mapping=cloud_credentials.gcp_pool_attributes(),
        attribute_condition=condition
        or cloud_credentials.gcp_pool_condition(POOL_SHOOT_ACCOUNTS, POOL_GARDEN_ACCOUNTS),
        oidc=oidc,
        opts=opts,
    )
    return Issuer(url, provider.name, ProviderType.GCP)


def shoot_pool(shoot: ShootValues, public_key: pulumi.Output[str], parent: pulumi.Resource) -> Issuer:
    """A self-hosted shoot's issuer, its keys held by a pool of its own that trusts its MCM's tokens alone."""
    assert shoot.machine_audience is not None  # the plan gives a self-hosted gcp shoot's machines workload identity
    keys = public_key.apply(service_account_issuer.jwks_text)
    subject = f"system:serviceaccount:{shoot.machine_namespace}:{machines.MCM_NAME}"
    url = pulumi.Output.from_input(shoot.topology.apiserver)
    return seed_pool(shoot.technical_id, url, shoot.machine_audience, parent,
                     condition=f"assertion.sub == '{subject}'", jwks=keys)  # fmt: skip


def pool_of(provider: str) -> str:
    """The pool's resource name of a pool provider's."""
    return provider.rsplit("/providers/", 1)[0]


def acting_as(
    name: str, account: gcp.serviceaccount.Account, issuer: Issuer, principal: str, parent: pulumi.Resource
) -> gcp.serviceaccount.IAMMember:
    """Lets the pool's `principal` (`subject/<sub>` or `attribute.service_account/<name>`) act as `account`."""
    assert issuer.provider is not None  # a GKE seed's issuer has its pool
    member = issuer.provider.apply(lambda p: f"principal{'Set' if principal.startswith('attribute') else ''}://"
                                             f"iam.googleapis.com/{pool_of(p)}/{principal}")  # fmt: skip
    return gcp.serviceaccount.IAMMember(
        f"{name}-acts-as", service_account_id=account.name, role=backup.GCP_WORKLOAD_IDENTITY_ROLE, member=member,
        opts=pulumi.ResourceOptions(parent=parent),
    )  # fmt: skip


def external_account(
    issuer: Issuer, account: gcp.serviceaccount.Account, token_file: str, config_key: str, audience: str
) -> pulumi.Output[dict[str, str]]:
    """Credentials without a key: `config_key` an external account acting as `account`, `projectID`, the audience."""
    assert issuer.provider is not None
    project = gcp.organizations.get_client_config_output().project

    def data(got: list[Any]) -> dict[str, str]:
        config = backup.gcp_external_account(str(got[0]), str(got[1]), token_file)
        return {config_key: json.dumps(config, sort_keys=True), backup.KEY_PROJECT: str(got[2]),
                backup.KEY_TOKEN_AUDIENCE: audience}  # fmt: skip

    return pulumi.Output.all(issuer.provider, account.email, project).apply(data)


def service_account(
    name: str, account_id: str, description: str, parent: pulumi.Resource
) -> gcp.serviceaccount.Account:
    """A service account (`<name>-account`)."""
    return gcp.serviceaccount.Account(
        f"{name}-account", account_id=account_id, display_name=description, description=description,
        opts=pulumi.ResourceOptions(parent=parent),
    )  # fmt: skip


def account_with_key(
    name: str, account_id: str, description: str, parent: pulumi.Resource
) -> tuple[pulumi.Output[str], gcp.serviceaccount.Key]:
    """A service account's `serviceAccount:` member, and its key (the credentials file is its `private_key`)."""
    account = service_account(name, account_id, description, parent)
    key = gcp.serviceaccount.Key(
        f"{name}-key", service_account_id=account.name, opts=pulumi.ResourceOptions(parent=parent)
    )
    return account.email.apply(lambda e: f"serviceAccount:{e}"), key


def key_json(key: gcp.serviceaccount.Key) -> pulumi.Output[str]:
    """The key's credentials file (the provider hands it base64-encoded), secret."""
    decoded = key.private_key.apply(lambda k: base64.b64decode(k).decode())
    return pulumi.Output.secret(decoded)


def _machine_rights(
    name: str, shoot: ShootValues, network: NetworkAccess, member: pulumi.Output[str], parent: pulumi.Resource
) -> list[pulumi.Resource]:
    """The machines' custom role on the project, `actAs` on the nodes' account, and the nodes subnetworks' use."""
    assert network.nodes is not None
    tid, opts = shoot.technical_id, pulumi.ResourceOptions(parent=parent)
    project = gcp.organizations.get_client_config_output().project
    role = gcp.projects.IAMCustomRole(
        f"{name}-role",
        role_id=cloud_credentials.gcp_role_id(tid),
        title=f"Machines of shoot {tid}",
        permissions=list(cloud_credentials.GCP_MACHINE_PERMISSIONS),
        opts=opts,
    )
    bindings: list[pulumi.Resource] = [
        gcp.projects.IAMMember(f"{name}-compute", project=project, role=role.name, member=member, opts=opts),
        gcp.serviceaccount.IAMMember(
            f"{name}-act-as-nodes",
            service_account_id=pulumi.Output.all(project, network.nodes).apply(
                lambda got: f"projects/{got[0]}/serviceAccounts/{got[1]['serviceAccount']}"
            ),
            role=cloud_credentials.GCP_ACT_AS_ROLE,
            member=member,
            opts=opts,
        ),
    ]
    for subnet in sorted({s.name for s in shoot.network_plan.subnets if s.role == "nodes"}):
        bindings.append(
            gcp.compute.SubnetworkIAMMember(
                f"{name}-{subnet}",
                subnetwork=network.subnets.apply(operator.itemgetter(subnet)),
                role=cloud_credentials.GCP_SUBNETWORK_ROLE,
                member=member,
                opts=opts,
            )
        )
    return bindings


def machine_credentials(
    shoot: ShootValues, network: NetworkAccess, issuer: Issuer | None, parent: pulumi.Resource
) -> MachineCredentials:
    """The service account `<technical id>-machines` (capped) of a shoot, its role, bindings, and its key or pool.

    On a GKE seed arbor made, MCM's ServiceAccount of the shoot's seed namespace acts as it through the seed's pool
    (workload identity: `credentialsConfig` an external account reading the token MCM's Deployment projects), so no
    key exists; elsewhere its key is `serviceaccount.json`.
    """
    if network.nodes is None:
        raise ValueError(f"{shoot.technical_id}: the network has no nodes' identity to scope machine rights by")
    name, tid = f"{parent._name}-machines", shoot.technical_id
    account_id = capped(cloud_credentials.machines_name(tid), SERVICE_ACCOUNT_ID_MAX)
    description = f"Machines of shoot {tid}, created by machine-controller-manager (arbor)."
    key: gcp.serviceaccount.Key | None = None
    if shoot.machine_audience is None:
        member, key = account_with_key(name, account_id, description, parent)
    else:
        issuer = trusted_issuer(issuer, f"{tid}: its machines' identity")
        account = service_account(name, account_id, description, parent)
        member = account.email.apply(lambda e: f"serviceAccount:{e}")
    bindings = _machine_rights(name, shoot, network, member, parent)
    # The Secret waits for the rights too: MCM calls as soon as it reads the key.
    if key is not None:
        data = key_json(key).apply(lambda text: {"serviceaccount.json": text})
        return MachineCredentials(data=pulumi.Output.secret(data), ready=[key, *bindings])
    assert issuer is not None and shoot.machine_audience is not None
    subject = f"subject/system:serviceaccount:{shoot.machine_namespace}:{machines.MCM_NAME}"
    acting = acting_as(name, account, issuer, subject, parent)
    data = external_account(issuer, account, machines.IDENTITY_TOKEN_FILE, "credentialsConfig", shoot.machine_audience)
    return MachineCredentials(data=data, ready=[acting, *bindings])
