"""A self-hosted shoot's control-plane machine on AWS, its first-boot bundle, and the load balancer of its API.

The bundle (render/first_boot.py) is a Secrets Manager secret that only the machine's own role may read (an
inline policy naming that secret); the instance requires IMDSv2 session tokens, and its user data fetches the
bundle with the instance profile's credentials. The instance keeps etcd's data on its root volume, so it is
protected (in the state and by termination protection) and the volume outlives it, encrypted. kube-apiserver is
reached through an internet-facing network load balancer in the shoot's public subnets (TCP 443 to the
instance); a security group of its own lets 443 in to the machine, besides the nodes' group.
"""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from components.bundles import ExposedControlPlane
from components.plan.topology import APISERVER_PORT
from components.plan.values import ControlPlaneMachine, ShootValues
from components.providers.aws_network import trust_policy
from components.render import cloud_credentials, first_boot
from components.render.machine_providers import AWS_VOLUME_TYPE

# Load balancer and target group names are at most 32 characters.
LB_NAME_MAX = 32


def _identity(
    shoot: ShootValues, secret: aws.secretsmanager.Secret, parent: pulumi.Resource
) -> aws.iam.InstanceProfile:
    """The machine's role and instance profile: it may read its bundle's secret and nothing else."""
    prefix, name = parent._name, cloud_credentials.control_plane_name(shoot.technical_id)
    opts = pulumi.ResourceOptions(parent=parent)
    tags = {cloud_credentials.aws_cluster_tag(shoot.technical_id): cloud_credentials.AWS_OWNED_VALUE}
    role = aws.iam.Role(f"{prefix}-role", name=name, assume_role_policy=trust_policy("ec2.amazonaws.com"), tags=tags,
                        opts=opts)  # fmt: skip
    policy = secret.arn.apply(lambda arn: json.dumps(cloud_credentials.aws_first_boot_policy(arn), sort_keys=True))
    rights = aws.iam.RolePolicy(f"{prefix}-bundle-reader", role=role.name, policy=policy, opts=opts)
    return aws.iam.InstanceProfile(
        f"{prefix}-profile", name=name, role=role.name, opts=pulumi.ResourceOptions(parent=parent, depends_on=[rights])
    )


def _security_group(shoot: ShootValues, vpc: pulumi.Input[str], parent: pulumi.Resource) -> aws.ec2.SecurityGroup:
    """443 in from anywhere (a network load balancer keeps the clients' addresses), in each of the shoot's families."""
    name = cloud_credentials.control_plane_name(shoot.technical_id)
    ipv4 = ["0.0.0.0/0"] if "IPv4" in shoot.networking.ip_families else []
    ipv6 = ["::/0"] if "IPv6" in shoot.networking.ip_families else []
    return aws.ec2.SecurityGroup(
        f"{parent._name}-api-sg",
        name=f"{name}-api",
        description=f"kube-apiserver of shoot {shoot.technical_id}",
        vpc_id=vpc,
        region=shoot.networking.region,
        ingress=[
            aws.ec2.SecurityGroupIngressArgs(
                protocol="tcp",
                from_port=APISERVER_PORT,
                to_port=APISERVER_PORT,
                cidr_blocks=ipv4,
                ipv6_cidr_blocks=ipv6,
            )
        ],
        tags={"Name": f"{name}-api", cloud_credentials.aws_cluster_tag(shoot.technical_id): "1"},
        opts=pulumi.ResourceOptions(parent=parent),
    )


def control_plane_machine(
    shoot: ShootValues,
    machine: ControlPlaneMachine,
    subnet: pulumi.Output[str],
    public_subnets: pulumi.Output[list[str]],
    vpc: pulumi.Input[str],
    nodes: pulumi.Output[dict[str, str]],
    image: pulumi.Input[str],
    bundle: pulumi.Output[str],
    parent: pulumi.Resource,
) -> ExposedControlPlane:
    """The bundle's secret, the machine's identity, the instance, and the network load balancer of its API."""
    prefix, name, region = (
        parent._name,
        cloud_credentials.control_plane_name(shoot.technical_id),
        shoot.networking.region,
    )
    opts = pulumi.ResourceOptions(parent=parent)
    tags = {"Name": machine.name, cloud_credentials.aws_cluster_tag(shoot.technical_id): "1"}
    secret = aws.secretsmanager.Secret(f"{prefix}-bundle", name=f"{name}-first-boot", region=region, tags=tags,
                                       opts=opts)  # fmt: skip
    version = aws.secretsmanager.SecretVersion(
        f"{prefix}-bundle-version", secret_id=secret.id, secret_string=bundle, region=region,
        opts=opts,
    )  # fmt: skip
    profile = _identity(shoot, secret, parent)
    group = _security_group(shoot, vpc, parent)
    d = machine.deployment
    instance = aws.ec2.Instance(
        f"{prefix}-instance",
        ami=image,
        instance_type=d.machine_type,
        subnet_id=subnet,
        region=region,
        availability_zone=d.zone,
        iam_instance_profile=profile.name,
        vpc_security_group_ids=[nodes.apply(lambda n: n["securityGroupID"]), group.id],
        user_data=secret.arn.apply(lambda arn: first_boot.aws_user_data(arn, region)),
        # Session tokens only; the fetch runs on the host's network, one hop away.
        metadata_options=aws.ec2.InstanceMetadataOptionsArgs(http_tokens="required", http_put_response_hop_limit=1),
        root_block_device=aws.ec2.InstanceRootBlockDeviceArgs(
            volume_size=d.volume.size_gb,
            volume_type=d.volume.type or AWS_VOLUME_TYPE,
            encrypted=True,
            # etcd's data lives here: the volume outlives the instance.
            delete_on_termination=False,
        ),
        ipv6_address_count=1 if "IPv6" in shoot.networking.ip_families else None,
        disable_api_termination=True,
        tags={**tags, **d.labels},
        # The user data can read the bundle only once its version and the instance's rights exist.
        # The AMI and the user data matter at creation only (a newer AMI found by the lookup, or a new fetch script,
        # would replace or restart the machine and its etcd): the machine keeps what it was made from.
        opts=pulumi.ResourceOptions(
            parent=parent, depends_on=[version, profile], protect=True, ignore_changes=["ami", "userData"]
        ),
    )
    ready = _balancer(shoot, instance, public_subnets, vpc, parent)
    return ExposedControlPlane(machine=instance.id, address=ready[0].dns_name, ready=[instance, *ready])


def _balancer(
    shoot: ShootValues,
    instance: aws.ec2.Instance,
    public_subnets: pulumi.Output[list[str]],
    vpc: pulumi.Input[str],
    parent: pulumi.Resource,
) -> tuple[aws.lb.LoadBalancer, aws.lb.TargetGroupAttachment, aws.lb.Listener]:
    """The internet-facing network load balancer in the public subnets, forwarding TCP 443 to the instance."""
    prefix, name, region = (
        parent._name,
        cloud_credentials.control_plane_name(shoot.technical_id),
        shoot.networking.region,
    )
    opts = pulumi.ResourceOptions(parent=parent)
    tags = {cloud_credentials.aws_cluster_tag(shoot.technical_id): "1"}
    balancer = aws.lb.LoadBalancer(
        f"{prefix}-api-lb",
        name=name[:LB_NAME_MAX].rstrip("-"),
        load_balancer_type="network",
        internal=False,
        subnets=public_subnets,
        ip_address_type="dualstack" if len(shoot.networking.ip_families) > 1 else "ipv4",
        region=region,
        tags=tags,
        opts=opts,
    )
    targets = aws.lb.TargetGroup(
        f"{prefix}-api-targets",
        name=name[:LB_NAME_MAX].rstrip("-"),
        port=APISERVER_PORT,
        protocol="TCP",
        target_type="instance",
        vpc_id=vpc,
        region=region,
        health_check=aws.lb.TargetGroupHealthCheckArgs(protocol="TCP"),
        opts=opts,
    )
    attached = aws.lb.TargetGroupAttachment(
        f"{prefix}-api-target", target_group_arn=targets.arn, target_id=instance.id, port=APISERVER_PORT,
        region=region, opts=opts,
    )  # fmt: skip
    listener = aws.lb.Listener(
        f"{prefix}-api-listener",
        load_balancer_arn=balancer.arn,
        port=APISERVER_PORT,
        protocol="TCP",
        default_actions=[aws.lb.ListenerDefaultActionArgs(type="forward", target_group_arn=targets.arn)],
        region=region,
        opts=opts,
    )
    return balancer, attached, listener
