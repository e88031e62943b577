"""A shoot's machine credentials on GCP: a service account with a custom role, bindings and a key.

machine-controller-manager-provider-gcp reads a service account key from `serviceaccount.json` in the
`cloudprovider` Secret (Gardener's key name). The account gets the compute rights its calls need in a custom role
of the project (components/render/cloud_credentials.py), `compute.networkUser` on the nodes subnetwork only and
`iam.serviceAccountUser` on the nodes' service account only. The key's JSON stays a secret output from the
provider into the Secret. Where an organisation policy forbids service account keys, name pasted credentials
(`cloudCredentials: secret`) instead.
"""

from __future__ import annotations

import base64
import operator

import pulumi
import pulumi_gcp as gcp

from components.bundles import MachineCredentials, NetworkAccess
from components.naming import capped
from components.plan.values import ShootValues
from components.render import cloud_credentials

# GCE service account IDs are 6 to 30 characters.
SERVICE_ACCOUNT_ID_MAX = 30


def account_with_key(
    name: str, account_id: str, description: str, parent: pulumi.Resource
) -> tuple[pulumi.Output[str], gcp.serviceaccount.Key]:
    """A service account's `serviceAccount:` member, and its key (the credentials file is its `private_key`)."""
    opts = pulumi.ResourceOptions(parent=parent)
    account = gcp.serviceaccount.Account(
        f"{name}-account", account_id=account_id, display_name=description, description=description, opts=opts
    )
    key = gcp.serviceaccount.Key(f"{name}-key", service_account_id=account.name, opts=opts)
    return account.email.apply(lambda e: f"serviceAccount:{e}"), key


def key_json(key: gcp.serviceaccount.Key) -> pulumi.Output[str]:
    """The key's credentials file (the provider hands it base64-encoded), secret."""
    decoded = key.private_key.apply(lambda k: base64.b64decode(k).decode())
    return pulumi.Output.secret(decoded)


def machine_credentials(shoot: ShootValues, network: NetworkAccess, parent: pulumi.Resource) -> MachineCredentials:
    """The service account `<technical id>-machines` (capped) of a shoot, its role, bindings and key."""
    if network.nodes is None:
        raise ValueError(f"{shoot.technical_id}: the network has no nodes' identity to scope machine rights by")
    name, tid = f"{parent._name}-machines", shoot.technical_id
    opts = pulumi.ResourceOptions(parent=parent)
    project = gcp.organizations.get_client_config_output().project
    member, key = account_with_key(
        name,
        capped(cloud_credentials.machines_name(tid), SERVICE_ACCOUNT_ID_MAX),
        f"Machines of shoot {tid}, created by machine-controller-manager (arbor).",
        parent,
    )
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
    data = key_json(key).apply(lambda text: {"serviceaccount.json": text})
    # The Secret waits for the rights too: MCM calls as soon as it reads the key.
    return MachineCredentials(data=pulumi.Output.secret(data), ready=[key, *bindings])
