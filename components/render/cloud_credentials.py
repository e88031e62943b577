"""What a shoot's machine credentials may do, pure: the aws IAM policy and the gcp custom role's permissions.

arbor creates one identity per cloud shoot for machine-controller-manager's provider sidecar (the `cloudprovider`
Secret holds its key, under the keys the sidecar reads). Its rights follow exactly the calls the sidecars make:

- machine-controller-manager-provider-aws: `RunInstances` (with tags on the instance, its volumes and network
  interfaces), `DescribeInstances`, `DescribeImages`, `TerminateInstances`, `ModifyNetworkInterfaceAttribute`
  (the source/destination check), `AssignIpv6Addresses` (a dual-stack node's pod prefix), and passing the nodes'
  role through their instance profile;
- machine-controller-manager-provider-gcp: `instances.insert/delete/list/get` and `zoneOperations.get`, an
  instance's disks, labels, metadata, tags and service account, the nodes subnetwork and the nodes' account.

aws scopes by ARN and tag: instances start only in the shoot's nodes subnets with its nodes security group and
carry the shoot's cluster tag, and only instances and interfaces with that tag may be terminated or changed.
gcp grants project-wide compute rights in a custom role (instance IAM has no name prefix to scope by), the
nodes subnetwork on that subnetwork only and `actAs` on the nodes' account only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The suffix of the names of a shoot's machine identity (IAM user, service account, custom role).
MACHINES_SUFFIX = "machines"
# The tag every machine of a shoot carries (components/render/machine_providers.py), by which it is scoped.
AWS_OWNED_VALUE = "1"


def aws_cluster_tag(technical_id: str) -> str:
    """The ownership tag of a shoot's machines (Gardener's, which the cloud controller manager reads)."""
    return f"kubernetes.io/cluster/{technical_id}"


@dataclass(frozen=True)
class AwsScope:
    """Where a shoot's machines live: the ARNs' partition, account and region, its nodes subnets, group and role."""

    technical_id: str
    partition: str
    account: str
    region: str
    subnet_ids: tuple[str, ...]
    security_group_id: str
    nodes_role: str
    ipv6: bool = False

    def ec2(self, resource: str, account: str | None = None) -> str:
        """The ARN of an EC2 resource (`subnet/<id>`, `instance/*`) in the shoot's region."""
        owner = self.account if account is None else account
        return f"arn:{self.partition}:ec2:{self.region}:{owner}:{resource}"


def aws_machine_policy(scope: AwsScope) -> dict[str, Any]:
    """The IAM policy of a shoot's machine user: what MCM's aws sidecar calls, scoped to the shoot."""
    tag = aws_cluster_tag(scope.technical_id)
    launched = [scope.ec2("instance/*"), scope.ec2("volume/*"), scope.ec2("network-interface/*")]
    network = [scope.ec2(f"subnet/{s}") for s in scope.subnet_ids]
    network.append(scope.ec2(f"security-group/{scope.security_group_id}"))
    owned = {"StringEquals": {f"aws:ResourceTag/{tag}": AWS_OWNED_VALUE}}
    interface_actions = ["ec2:ModifyNetworkInterfaceAttribute"] + (["ec2:AssignIpv6Addresses"] if scope.ipv6 else [])
    statements = [
        # Describe calls take no resource-level scope in EC2.
        {"Sid": "Describe", "Effect": "Allow", "Action": ["ec2:DescribeImages", "ec2:DescribeInstances"],
         "Resource": "*"},
        # Images come from their owners' accounts (any account: the profile pins or looks them up).
        {"Sid": "RunInShootNetwork", "Effect": "Allow", "Action": "ec2:RunInstances",
         "Resource": [*network, scope.ec2("image/*", account=""), *launched[1:]]},
        {"Sid": "RunTaggedInstances", "Effect": "Allow", "Action": "ec2:RunInstances", "Resource": launched[0],
         "Condition": {"StringEquals": {f"aws:RequestTag/{tag}": AWS_OWNED_VALUE}}},
        {"Sid": "TagOnLaunch", "Effect": "Allow", "Action": "ec2:CreateTags", "Resource": launched,
         "Condition": {"StringEquals": {"ec2:CreateAction": "RunInstances"}}},
        {"Sid": "TerminateShootInstances", "Effect": "Allow", "Action": "ec2:TerminateInstances",
         "Resource": launched[0], "Condition": owned},
        {"Sid": "ShootInterfaces", "Effect": "Allow", "Action": interface_actions, "Resource": launched[2],
         "Condition": owned},
        {"Sid": "PassNodesRole", "Effect": "Allow", "Action": "iam:PassRole",
         "Resource": f"arn:{scope.partition}:iam::{scope.account}:role/{scope.nodes_role}",
         "Condition": {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}}},
    ]  # fmt: skip
    return {"Version": "2012-10-17", "Statement": statements}


# What MCM's gcp sidecar calls, project-wide (instances are created and deleted by name in any of the zones).
GCP_MACHINE_PERMISSIONS = (
    "compute.disks.create",
    "compute.disks.delete",
    "compute.disks.setLabels",
    "compute.images.useReadOnly",
    "compute.instances.create",
    "compute.instances.delete",
    "compute.instances.get",
    "compute.instances.list",
    "compute.instances.setLabels",
    "compute.instances.setMetadata",
    "compute.instances.setServiceAccount",
    "compute.instances.setTags",
    "compute.zoneOperations.get",
)
# Granted on the nodes subnetwork only: a machine's interface uses it.
GCP_SUBNETWORK_ROLE = "roles/compute.networkUser"
# Granted on the nodes' service account only: a machine runs as it.
GCP_ACT_AS_ROLE = "roles/iam.serviceAccountUser"


def gcp_role_id(technical_id: str) -> str:
    """A custom role ID of the shoot (letters, digits, `_` and `.`: `shoot__dev__web_machines`)."""
    return f"{technical_id.replace('-', '_')}_{MACHINES_SUFFIX}"


def machines_name(technical_id: str) -> str:
    """The name of the IAM user or service account of a shoot's machines: `<technical id>-machines`."""
    return f"{technical_id}-{MACHINES_SUFFIX}"


# A control-plane machine's identity may read its own first-boot bundle and nothing else (render/first_boot.py).
GCP_SECRET_READER_ROLE = "roles/secretmanager.secretAccessor"


def aws_first_boot_policy(secret_arn: str) -> dict[str, Any]:
    """The inline policy of a control-plane machine's role: read its first-boot bundle's secret, nothing more."""
    statement = {"Effect": "Allow", "Action": ["secretsmanager:GetSecretValue"], "Resource": secret_arn}
    return {"Version": "2012-10-17", "Statement": [statement]}


def control_plane_name(technical_id: str) -> str:
    """`<technical id>-control-plane`: the identity, secret and load balancer of a self-hosted cloud shoot's API."""
    return f"{technical_id}-control-plane"


def aws_web_identity_trust(provider_arn: str, issuer: str, subjects: list[str], audience: str) -> dict[str, Any]:
    """A role's trust policy: tokens of `issuer` for `audience`, whose subject is one of `subjects` (`*` a wildcard).

    IAM names an OIDC provider's claims by its issuer's host and path; a pattern needs StringLike.
    """
    host = issuer.removeprefix("https://")
    subject = {f"{host}:sub": subjects[0] if len(subjects) == 1 else subjects}
    if any("*" in s for s in subjects):
        condition = {"StringLike": subject, "StringEquals": {f"{host}:aud": audience}}
    else:
        condition = {"StringEquals": {**subject, f"{host}:aud": audience}}
    statement = {"Effect": "Allow", "Principal": {"Federated": provider_arn},
                 "Action": "sts:AssumeRoleWithWebIdentity", "Condition": condition}  # fmt: skip
    return {"Version": "2012-10-17", "Statement": [statement]}


# gcp: a seed's workload identity pool maps each token's ServiceAccount name to this attribute, for principal sets.
GCP_ACCOUNT_ATTRIBUTE = "attribute.service_account"


def gcp_pool_attributes() -> dict[str, str]:
    """A seed's pool provider's attribute mapping: the token's subject, and its ServiceAccount's name."""
    return {
        "google.subject": "assertion.sub",
        GCP_ACCOUNT_ATTRIBUTE: "assertion['kubernetes.io']['serviceaccount']['name']",
    }


def gcp_pool_condition(shoot_accounts: list[str], garden_accounts: list[str]) -> str:
    """A seed's pool provider's condition: tokens of these ServiceAccounts of shoot namespaces or `garden`, no other."""
    shoots = f"assertion.sub.matches('^system:serviceaccount:shoot--[^:]+:({'|'.join(shoot_accounts)})$')"
    garden = [f"assertion.sub == 'system:serviceaccount:garden:{a}'" for a in garden_accounts]
    return " || ".join([shoots, *garden])
