"""Machine credentials arbor makes per cloud shoot (aws IAM user, gcp service account), under Pulumi mocks.

A hosted shoot's Workers are registered as in test_workers.py, without pasted credentials: the provider makes the
identity, the policy or role is compared with its golden JSON, and the `cloudprovider` Secret must carry the key
as a secret and wait for it. The checks refuse a `cloudCredentials` mode that contradicts the fields beside it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from components.checks.workers import worker_problems
from components.kinds import CloudCredentials, ProviderType
from components.render import cloud_credentials, machine_pools
from components.render.cloud_credentials import AwsScope
from tests.unit.test_capacity import _pools, _refused
from tests.unit.test_cloud_stacks import MOCK_ACCESS_SECRET, MOCK_KEY_FILE, CloudMocks
from tests.unit.test_workers import SECRET, _landscape, of_type, register, shoot_on

# The marker the SDK wraps a secret value in when it serialises it (what the mocks see of a secret input).
SECRET_SIG = "4dabf18193072939515e22adb298388d"
NODES_ACCOUNT = "gcp:serviceaccount/account:Account"
# Types the managed identities are made of, per cloud.
CLOUD_TYPES = {
    ProviderType.AWS: ("aws:iam/user:User", "aws:iam/userPolicy:UserPolicy", "aws:iam/accessKey:AccessKey"),
    ProviderType.GCP: (
        NODES_ACCOUNT,
        "gcp:serviceaccount/key:Key",
        "gcp:projects/iAMCustomRole:IAMCustomRole",
        "gcp:projects/iAMMember:IAMMember",
        "gcp:serviceaccount/iAMMember:IAMMember",
        "gcp:compute/subnetworkIAMMember:SubnetworkIAMMember",
    ),
}
WORKERS = "dev-web-workers"


def cloudprovider(mocks: CloudMocks) -> dict[str, Any]:
    """The registered `cloudprovider` Secret."""
    return next(s for s in of_type(mocks, SECRET).values() if s["metadata"]["name"] == machine_pools.CREDENTIALS_SECRET)


def only(mocks: CloudMocks, typ: str) -> tuple[str, dict[str, Any]]:
    """The one resource of a type: its name and inputs."""
    [(name, inputs)] = [(n, i) for n, (t, i) in mocks.resources.items() if t == typ]
    return name, inputs


def test_aws_shoot_gets_an_iam_user_scoped_to_its_network(golden: Callable[[str, str], None]) -> None:
    """GIVEN an aws shoot without pasted credentials WHEN registered THEN a user, its policy (golden) and key."""
    mocks = register(ProviderType.AWS, pasted=False)
    _, user = only(mocks, "aws:iam/user:User")
    assert user["name"] == "shoot--dev--web-machines"
    assert user["tags"] == {"kubernetes.io/cluster/shoot--dev--web": "1"}
    _, policy_of = only(mocks, "aws:iam/userPolicy:UserPolicy")
    _, key = only(mocks, "aws:iam/accessKey:AccessKey")
    assert policy_of["user"] == key["user"] == "shoot--dev--web-machines"
    policy = json.loads(policy_of["policy"])
    golden("cloud-credentials-aws-policy.json", json.dumps(policy, indent=2, sort_keys=True) + "\n")
    by_sid = {s["Sid"]: s for s in policy["Statement"]}
    # Machines start only in the shoot's nodes subnets (the mocks' IDs), with its nodes group, as its role.
    arn = "arn:aws:ec2:eu-central-1:123456789012"
    assert [r for r in by_sid["RunInShootNetwork"]["Resource"] if ":subnet/" in r or ":security-group/" in r] == [
        f"{arn}:subnet/dev-web-network-nodes-z0-id", f"{arn}:subnet/dev-web-network-nodes-z1-id",
        f"{arn}:security-group/dev-web-network-nodes-sg-id",
    ]  # fmt: skip
    assert by_sid["PassNodesRole"]["Resource"] == "arn:aws:iam::123456789012:role/shoot--dev--web-nodes"
    owned = {"StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/shoot--dev--web": "1"}}
    assert by_sid["TerminateShootInstances"]["Condition"] == by_sid["ShootInterfaces"]["Condition"] == owned
    actions = sorted({a for s in policy["Statement"] for a in ([s["Action"]] if isinstance(s["Action"], str)
                                                               else s["Action"])})  # fmt: skip
    assert actions == [
        "ec2:CreateTags", "ec2:DescribeImages", "ec2:DescribeInstances", "ec2:ModifyNetworkInterfaceAttribute",
        "ec2:RunInstances", "ec2:TerminateInstances", "iam:PassRole",
    ]  # fmt: skip
    assert not any("*" in a for a in actions)


def test_gcp_shoot_gets_a_service_account_with_scoped_bindings(golden: Callable[[str, str], None]) -> None:
    """GIVEN a gcp shoot without pasted credentials WHEN registered THEN an account, its role (golden), bindings."""
    mocks = register(ProviderType.GCP, pasted=False)
    accounts = {i["accountId"]: i for t, i in mocks.resources.values() if t == "gcp:serviceaccount/account:Account"}
    assert sorted(accounts) == ["shoot--dev--web", "shoot--dev--web-machines"]
    _, key = only(mocks, "gcp:serviceaccount/key:Key")
    assert key["serviceAccountId"] == (
        "projects/my-project/serviceAccounts/shoot--dev--web-machines@my-project.iam.gserviceaccount.com"
    )
    _, role = only(mocks, "gcp:projects/iAMCustomRole:IAMCustomRole")
    # As arbor registers it (the mocks add the role's `name`, which the project binding uses).
    registered = {k: v for k, v in role.items() if k != "name"}
    golden("cloud-credentials-gcp-role.json", json.dumps(registered, indent=2, sort_keys=True) + "\n")
    assert role["roleId"] == "shoot__dev__web_machines"
    assert role["permissions"] == list(cloud_credentials.GCP_MACHINE_PERMISSIONS)
    member = "serviceAccount:shoot--dev--web-machines@my-project.iam.gserviceaccount.com"
    _, project = only(mocks, "gcp:projects/iAMMember:IAMMember")
    assert project == {"project": "my-project", "role": "projects/my-project/roles/shoot__dev__web_machines",
                       "member": member}  # fmt: skip
    # actAs on the nodes' account only, the network on the nodes subnetwork only.
    _, act_as = only(mocks, "gcp:serviceaccount/iAMMember:IAMMember")
    assert act_as == {
        "serviceAccountId": "projects/my-project/serviceAccounts/shoot--dev--web@my-project.iam.gserviceaccount.com",
        "role": "roles/iam.serviceAccountUser", "member": member,
    }  # fmt: skip
    _, subnet = only(mocks, "gcp:compute/subnetworkIAMMember:SubnetworkIAMMember")
    assert subnet == {"subnetwork": "dev-web-network-nodes-id", "role": "roles/compute.networkUser", "member": member}


@pytest.mark.parametrize(
    ("provider", "data"),
    [
        (ProviderType.AWS, {"accessKeyID": f"{WORKERS}-machines-key-id", "secretAccessKey": MOCK_ACCESS_SECRET}),
        (ProviderType.GCP, {"serviceaccount.json": MOCK_KEY_FILE}),
    ],
)
def test_the_cloudprovider_secret_holds_the_made_key_as_a_secret(provider: ProviderType, data: dict[str, str]) -> None:
    """GIVEN managed credentials WHEN registered THEN the Secret's data is the key, secret, applied after the key."""
    mocks = register(provider, pasted=False)
    secret = cloudprovider(mocks)
    # The value reaches the Secret wrapped as a secret: the state never holds it in plain text.
    assert secret["stringData"] == {SECRET_SIG: "1b47061264138c4ac30d75fd1eb44270", "value": data}
    assert f"{WORKERS}-machines-key" in mocks.edges[f"{WORKERS}-cloudprovider"]
    # Classes reference the Secret, so each zone's set (user data, class, MachineDeployment) waits for it and the key.
    zones = [n for n in mocks.edges if re.fullmatch(rf"{WORKERS}-pool-a-z\d+", n)]
    assert zones and all(f"{WORKERS}-cloudprovider" in mocks.edges[n] for n in zones)
    if provider is ProviderType.GCP:
        # The rights are bound before MCM can read the key.
        bindings = {n for n, (t, _) in mocks.resources.items() if t.endswith("IAMMember")}
        assert len(bindings) == 3 and bindings <= mocks.edges[f"{WORKERS}-cloudprovider"]


@pytest.mark.parametrize("provider", [ProviderType.AWS, ProviderType.GCP, ProviderType.LOCAL])
def test_pasted_credentials_and_local_make_no_cloud_identity(provider: ProviderType) -> None:
    """GIVEN pasted credentials (or a local shoot) WHEN registered THEN arbor makes no user, account or key."""
    mocks = register(provider)
    made = {t for t, _ in mocks.resources.values()}
    # A gcp network makes the nodes' account: any other type of a managed identity would be one arbor made.
    assert not made & ({*CLOUD_TYPES[ProviderType.AWS], *CLOUD_TYPES[ProviderType.GCP]} - {NODES_ACCOUNT})
    assert not any(n.startswith(f"{WORKERS}-machines") for n in mocks.resources)


def test_dual_stack_adds_only_the_ipv6_assignment() -> None:
    """GIVEN the aws scope of a dual-stack shoot WHEN its policy is made THEN interfaces may also take IPv6."""
    scope = AwsScope("shoot--dev--web", "aws", "123456789012", "eu-central-1", ("subnet-1",), "sg-1", "r")
    ipv4 = cloud_credentials.aws_machine_policy(scope)
    dual = cloud_credentials.aws_machine_policy(dataclasses.replace(scope, ipv6=True))
    [interfaces] = [s for s in dual["Statement"] if s["Sid"] == "ShootInterfaces"]
    assert interfaces["Action"] == ["ec2:ModifyNetworkInterfaceAttribute", "ec2:AssignIpv6Addresses"]
    assert [s for s in dual["Statement"] if s["Sid"] != "ShootInterfaces"] == [
        s for s in ipv4["Statement"] if s["Sid"] != "ShootInterfaces"
    ]


@pytest.mark.parametrize(
    ("provider", "mode", "pasted", "line"),
    [
        (ProviderType.AWS, CloudCredentials.MANAGED, True,
         "landscape.shoots[0].cloudCredentialsSecret: arbor creates this shoot's credentials (cloudCredentials: "
         "managed); remove cloudCredentialsSecret, or set cloudCredentials: secret to use it"),
        (ProviderType.GCP, CloudCredentials.SECRET, False,
         "landscape.shoots[0].cloudCredentials: 'secret' needs cloudCredentialsSecret, the secret config key holding "
         "the credentials; or set 'managed' and arbor creates them"),
        (ProviderType.LOCAL, CloudCredentials.MANAGED, False,
         "landscape.shoots[0].cloudCredentials: local machines need no cloud credentials; remove the field"),
    ],
)  # fmt: skip
def test_contradicting_credentials_are_refused_at_the_field(
    provider: ProviderType, mode: CloudCredentials, pasted: bool, line: str
) -> None:
    """GIVEN a credentials mode the fields beside it contradict WHEN checked THEN one line names the field."""
    shoot = dataclasses.replace(shoot_on(provider, pasted=pasted), cloud_credentials=mode)
    assert worker_problems(_landscape(shoot)) == [line]


@pytest.mark.parametrize(("mode", "pasted"), [(CloudCredentials.MANAGED, False), (CloudCredentials.SECRET, True)])
def test_consistent_modes_pass(mode: CloudCredentials, pasted: bool) -> None:
    """GIVEN an explicit mode with the fields it needs WHEN checked THEN nothing is refused."""
    shoot = dataclasses.replace(shoot_on(ProviderType.AWS, pasted=pasted), cloud_credentials=mode)
    assert worker_problems(_landscape(shoot)) == []


def test_the_spec_field_reaches_the_checks() -> None:
    """GIVEN `cloudCredentials` in the spec WHEN the landscape is checked THEN its contradiction is refused there."""
    doc = _pools((1, 1))
    doc["seeds"][0].update(provider="gcp", region="europe-west1", zones=["europe-west1-b"], backup={"provider": "gcp"})
    doc["shoots"][0]["workers"][0]["zones"] = ["europe-west1-b"]
    doc["shoots"] = doc["shoots"][:1]
    doc["shoots"][0] |= {"cloudCredentials": "managed", "cloudCredentialsSecret": "gcpCredentials"}
    assert _refused(doc) == [
        "landscape.shoots[0].seed: a shoot on a gcp seed is reached at api.<shoot>.<project>.<domain>: set "
        "landscape.garden.dns (the zone arbor writes its records in)",
        "landscape.shoots[0].cloudCredentialsSecret: arbor creates this shoot's credentials (cloudCredentials: "
        "managed); remove cloudCredentialsSecret, or set cloudCredentials: secret to use it",
    ]
    doc["shoots"][0]["cloudCredentials"] = "pasted"
    assert _refused(doc) == ["landscape.shoots[0].cloudCredentials: 'pasted' is not one of 'managed' or 'secret'"]
