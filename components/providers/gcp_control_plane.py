"""A self-hosted shoot's control-plane machine on GCP, its first-boot bundle, and the load balancer of its API.

The bundle (render/first_boot.py) is a Secret Manager secret that only the machine's own service account may read;
the instance's startup script fetches it with that account's token from the metadata server. The instance keeps
etcd's data on its boot disk, so it is protected (in the state and by GCP's deletion protection) and its disk
outlives it. kube-apiserver is reached through a regional external passthrough load balancer (a target pool and a
forwarding rule on a reserved address, TCP 443), and a firewall rule lets 443 in to the machine only.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from components import naming
from components.bundles import ExposedControlPlane
from components.plan.topology import APISERVER_PORT
from components.plan.values import ControlPlaneMachine, ShootValues
from components.providers.gcp_credentials import SERVICE_ACCOUNT_ID_MAX
from components.render import cloud_credentials, first_boot
from components.render.machine_providers import GCP_VOLUME_TYPE

CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"


def control_plane_machine(
    shoot: ShootValues,
    machine: ControlPlaneMachine,
    subnet: pulumi.Output[str],
    vpc: pulumi.Input[str],
    image: pulumi.Input[str],
    bundle: pulumi.Output[str],
    parent: pulumi.Resource,
) -> ExposedControlPlane:
    """The bundle's secret, the machine's account (reader of that secret only), the instance, the API's balancer."""
    prefix, name = parent._name, cloud_credentials.control_plane_name(shoot.technical_id)
    opts = pulumi.ResourceOptions(parent=parent)
    labels = {"shoot": naming.capped(shoot.technical_id.replace("--", "-"), 63), "role": "control-plane"}
    account = gcp.serviceaccount.Account(
        f"{prefix}-account",
        account_id=naming.capped(name, SERVICE_ACCOUNT_ID_MAX),
        display_name=f"Control plane of shoot {shoot.technical_id} (arbor)",
        opts=opts,
    )
    secret, readable = _bundle_secret(shoot, account, bundle, labels, parent)
    d = machine.deployment
    instance = gcp.compute.Instance(
        f"{prefix}-instance",
        name=machine.name,
        zone=d.zone,
        machine_type=d.machine_type,
        boot_disk=gcp.compute.InstanceBootDiskArgs(
            # etcd's data lives here: the disk outlives the instance.
            auto_delete=False,
            initialize_params=gcp.compute.InstanceBootDiskInitializeParamsArgs(
                image=image, size=d.volume.size_gb, type=d.volume.type or GCP_VOLUME_TYPE
            ),
        ),
        network_interfaces=[
            gcp.compute.InstanceNetworkInterfaceArgs(
                subnetwork=subnet,
                stack_type="IPV4_IPV6" if len(shoot.networking.ip_families) > 1 else None,
            )
        ],
        service_account=gcp.compute.InstanceServiceAccountArgs(email=account.email, scopes=[CLOUD_PLATFORM]),
        metadata_startup_script=secret.name.apply(first_boot.gcp_user_data),
        tags=[name],
        labels={**labels, **{k.replace(".", "_").replace("/", "_"): v for k, v in d.labels.items()}},
        deletion_protection=True,
        allow_stopping_for_update=True,
        # The startup script can read the bundle only once its version and the read right exist.
        # The image and the startup script matter at creation only (a new image found by the lookup, or a new
        # fetch script, would replace the machine and its etcd): the machine keeps what it was made from.
        opts=pulumi.ResourceOptions(
            parent=parent,
            depends_on=readable,
            protect=True,
            ignore_changes=["bootDisk.initializeParams.image", "metadataStartupScript"],
        ),
    )
    address, ready = _balancer(shoot, instance, vpc, parent)
    return ExposedControlPlane(machine=instance.id, address=address, ready=[instance, *ready])


def _bundle_secret(
    shoot: ShootValues,
    account: gcp.serviceaccount.Account,
    bundle: pulumi.Output[str],
    labels: dict[str, str],
    parent: pulumi.Resource,
) -> tuple[gcp.secretmanager.Secret, list[pulumi.Resource]]:
    """The bundle's secret with one version, readable by `account` alone; and what the instance waits for."""
    prefix, name = parent._name, cloud_credentials.control_plane_name(shoot.technical_id)
    opts = pulumi.ResourceOptions(parent=parent)
    secret = gcp.secretmanager.Secret(
        f"{prefix}-bundle",
        secret_id=f"{name}-first-boot",
        replication=gcp.secretmanager.SecretReplicationArgs(auto=gcp.secretmanager.SecretReplicationAutoArgs()),
        labels=labels,
        opts=opts,
    )
    version = gcp.secretmanager.SecretVersion(
        f"{prefix}-bundle-version", secret=secret.id, secret_data=bundle, opts=opts
    )
    reader = gcp.secretmanager.SecretIamMember(
        f"{prefix}-bundle-reader",
        secret_id=secret.id,
        role=cloud_credentials.GCP_SECRET_READER_ROLE,
        member=account.email.apply(lambda e: f"serviceAccount:{e}"),
        opts=opts,
    )
    return secret, [version, reader]


def _balancer(
    shoot: ShootValues, instance: gcp.compute.Instance, vpc: pulumi.Input[str], parent: pulumi.Resource
) -> tuple[pulumi.Output[str], list[pulumi.Resource]]:
    """A reserved address, a target pool of the instance, a forwarding rule of TCP 443, a firewall rule for it."""
    prefix, name = parent._name, cloud_credentials.control_plane_name(shoot.technical_id)
    opts = pulumi.ResourceOptions(parent=parent)
    address = gcp.compute.Address(f"{prefix}-api-address", name=f"{name}-api", region=shoot.networking.region,
                                  opts=opts)  # fmt: skip
    pool = gcp.compute.TargetPool(
        f"{prefix}-api-pool", name=f"{name}-api", region=shoot.networking.region, instances=[instance.self_link],
        opts=opts,
    )  # fmt: skip
    rule = gcp.compute.ForwardingRule(
        f"{prefix}-api",
        name=f"{name}-api",
        region=shoot.networking.region,
        ip_address=address.address,
        ip_protocol="TCP",
        port_range=str(APISERVER_PORT),
        load_balancing_scheme="EXTERNAL",
        target=pool.self_link,
        opts=opts,
    )
    firewall = gcp.compute.Firewall(
        f"{prefix}-api-firewall",
        name=f"{name}-api",
        network=vpc,
        allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(APISERVER_PORT)])],
        source_ranges=["0.0.0.0/0"],
        target_tags=[name],
        opts=opts,
    )
    return address.address, [rule, firewall]
