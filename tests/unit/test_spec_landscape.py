"""The full landscape spec (garden projects, seeds, shoots): a table of invalid configs with their exact lines."""

from __future__ import annotations

from typing import Any

import pytest

from components.checks import parse_landscape
from components.plan.planner import plan_landscape
from components.plan.values import VolumeValues
from components.spec.fields import SpecError
from tests.unit.spec_cases import DELETE, base, changed, dual_stack_seed

S0 = "landscape.shoots[0]"
# shoots[0]'s networking, dual-stack (the base is IPv4).
DUAL_STACK = {
    "ipFamilies": ["IPv4", "IPv6"],
    "nodes": ["10.250.0.0/16", "fd00:10:250::/56"],
    "pods": ["100.64.0.0/12", "fd00:10:64::/56"],
    "services": ["100.104.0.0/13", "fd00:10:104::/108"],
}
POOL = {"name": "p", "machine": {"type": "t", "image": {"name": "i", "version": "1"}}, "minimum": 0, "maximum": 1}


def with_shoot(**fields: Any) -> dict[str, Any]:
    """The base landscape with fields of shoot 0 replaced."""
    doc = base()
    doc["shoots"][0].update(fields)
    return doc


INVALID: list[tuple[str, object, list[str]]] = [
    # garden and projects
    (
        "project name upper case",
        changed("garden.projects[0].name", "Dev"),
        ["landscape.garden.projects[0].name: 'Dev' is not a DNS-1123 label (lower-case letters, digits and '-')"],
    ),
    (
        "project duplicate",
        changed("garden.projects[1].name", "dev"),
        [
            "landscape.garden.projects[1].name: duplicate project name 'dev'",
            "landscape.shoots[1].project: project 'ops' is not defined in landscape.garden.projects",
            "landscape.shoots[2].project: project 'ops' is not defined in landscape.garden.projects",
        ],
    ),
    (
        "project name longer than Gardener's 10",
        changed("garden.projects[0].name", "p" * 11),
        [
            f"{S0}.project: project 'dev' is not defined in landscape.garden.projects",
            f"landscape.garden.projects[0].name: '{'p' * 11}' has 11 characters, more than 10 (Gardener's limit for "
            "project names, which name namespaces and technical IDs): shorten it",
        ],
    ),
    (
        "member without role",
        changed("garden.projects[0].members[0]", {"name": "a"}),
        ["landscape.garden.projects[0].members[0].role: required field is missing"],
    ),
    (
        "member unknown role",
        changed("garden.projects[0].members[0].role", "owner"),
        ["landscape.garden.projects[0].members[0].role: 'owner' is not one of 'admin' or 'viewer'"],
    ),
    (
        "member unknown kind",
        changed("garden.projects[0].members[0].kind", "Robot"),
        ["landscape.garden.projects[0].members[0].kind: 'Robot' is not one of 'User', 'Group' or 'ServiceAccount'"],
    ),
    (
        "member empty name",
        changed("garden.projects[0].members[0].name", ""),
        ["landscape.garden.projects[0].members[0].name: must not be empty"],
    ),
    # seeds
    (
        "seed zones empty",
        changed("seeds[0].zones", []),
        ["landscape.seeds[0].zones: must have at least 1 entry, not 0"],
    ),
    ("seed zones duplicate", changed("seeds[0].zones", ["a", "a"]), ["landscape.seeds[0].zones: duplicate 'a'"]),
    (
        "seed pods not a CIDR",
        changed("seeds[0].networks", {"pods": "10.0.0.0/33", "services": "10.16.0.0/16"}),
        ["landscape.seeds[0].networks.pods: '10.0.0.0/33' is not a CIDR"],
    ),
    (
        "seed services not canonical",
        changed("seeds[0].networks", {"pods": "10.0.0.0/12", "services": "10.16.0.1/16"}),
        ["landscape.seeds[0].networks.services: '10.16.0.1/16' is not canonical, use 10.16.0.0/16"],
    ),
    (
        "seed extensions duplicate",
        changed("seeds[0].extensions", [{"name": "dns", "type": "dns"}] * 2),
        ["landscape.seeds[0].extensions: duplicate 'dns'"],
    ),
    (
        "seed backup without provider",
        changed("seeds[0].backup", {"region": "x"}),
        [
            "landscape.seeds[0].backup.provider: required field is missing: the object store's provider: gcp (Cloud "
            "Storage) or aws (S3)"
        ],
    ),
    (
        "seed cluster unknown field",
        changed("seeds[0].cluster", {"kubeconfig": "x"}),
        ["landscape.seeds[0].cluster.kubeconfig: unknown field; did you mean 'kubeconfigSecret'?"],
    ),
    (
        "seed region empty",
        changed("seeds[0].region", ""),
        ["landscape.seeds[0].region: must not be empty"],
    ),
    # shoot references and names
    (
        "shoot unknown project",
        changed("shoots[0].project", "qa"),
        [f"{S0}.project: project 'qa' is not defined in landscape.garden.projects"],
    ),
    (
        "shoot unknown seed",
        changed("shoots[0].seed", "local-2"),
        [f"{S0}.seed: seed 'local-2' is not defined in landscape.seeds"],
    ),
    ("shoot without seed", changed("shoots[0].seed", DELETE), [f"{S0}.seed: required unless selfHosted is true"]),
    (
        "self-hosted shoot with seed",
        changed("shoots[2].seed", "local-1"),
        ["landscape.shoots[2].seed: a self-hosted shoot has no seed"],
    ),
    (
        "shoot twice in a project",
        changed("shoots[1].project", "dev") | {},
        [],
    ),  # replaced below: a shoot name is unique per project only
    (
        "shoot and project names longer than Gardener's 21",
        changed("shoots[0].name", "s" * 52),
        [
            f"{S0}.name: project 'dev' and shoot '{'s' * 52}' have 55 characters together, more than 21 (Gardener's "
            "limit, so the technical ID fits every name and label made from it): shorten one"
        ],
    ),
    (
        "shoot name with underscore",
        changed("shoots[0].name", "my_shoot"),
        [f"{S0}.name: 'my_shoot' is not a DNS-1123 label (lower-case letters, digits and '-')"],
    ),
    (
        "shoot unknown field",
        with_shoot(addons={}),
        [
            f"{S0}.addons: unknown field; the fields here are adminKubeconfig, cloudCredentials, "
            "cloudCredentialsSecret, credentials, encryption, kubernetes, labels, name, networking, nodeAgent, "
            "project, seed, selfHosted, workers"
        ],
    ),
    (
        "shoot without workers",
        changed("shoots[0].workers", []),
        [f"{S0}.workers: must have at least 1 entry, not 0"],
    ),
    # Kubernetes versions
    (
        "version unsupported minor",
        changed("shoots[0].kubernetes.version", "1.29.3"),
        [f"{S0}.kubernetes.version: Kubernetes 1.29.3 is not supported (supported minors: 1.32, 1.33, 1.34)"],
    ),
    (
        "version malformed",
        changed("shoots[0].kubernetes.version", "v1.34"),
        [f"{S0}.kubernetes.version: 'v1.34' is not a version <major>.<minor>.<patch>"],
    ),
    (
        "worker newer than control plane",
        changed("shoots[1].workers[0].kubernetesVersion", "1.34.4"),
        ["landscape.shoots[1].workers[0].kubernetesVersion: 1.34.4 is newer than the control plane 1.33.6"],
    ),
    (
        "worker version unsupported",
        changed("shoots[0].workers[0].kubernetesVersion", "1.30.0"),
        [f"{S0}.workers[0].kubernetesVersion: Kubernetes 1.30.0 is not supported (supported minors: 1.32, 1.33, 1.34)"],
    ),
    # workers
    (
        "pool maximum below minimum",
        changed("shoots[0].workers[0].maximum", 0),
        [f"{S0}.workers[0]: maximum 0 is less than minimum 1"],
    ),
    (
        "pool negative minimum",
        changed("shoots[0].workers[0].minimum", -1),
        [f"{S0}.workers[0].minimum: must be at least 0, not -1"],
    ),
    (
        "pool name too long",
        changed("shoots[0].workers[0].name", "p" * 16),
        [f"{S0}.workers[0].name: must have at most 15 characters, not 16"],
    ),
    (
        "pool without machine image",
        changed("shoots[0].workers[0].machine", {"type": "m5.large"}),
        [f"{S0}.workers[0].machine.image: required field is missing"],
    ),
    (
        "pool zone not in seed",
        changed("shoots[0].workers[0].zones", ["local-c"]),
        [f"{S0}.workers[0].zones: zone 'local-c' is not a zone of seed 'local-1' (local-a, local-b)"],
    ),
    (
        "pool zones duplicate",
        changed("shoots[0].workers[0].zones", ["local-a", "local-a"]),
        [f"{S0}.workers[0].zones: duplicate 'local-a'"],
    ),
    (
        "pools with one name",
        changed("shoots[0].workers", [POOL, POOL]),
        [f"{S0}.workers[1].name: duplicate worker pool name 'p'"],
    ),
    (
        "control-plane pool on hosted shoot",
        changed("shoots[0].workers[0].controlPlane", True),
        [f"{S0}.workers[0].controlPlane: only a self-hosted shoot has control-plane pools"],
    ),
    (
        "self-hosted without control-plane pool",
        changed("shoots[2].workers[0].controlPlane", False),
        ["landscape.shoots[2].workers: a self-hosted shoot needs a pool with controlPlane: true"],
    ),
    (
        "self-hosted control plane without nodes",
        changed("shoots[2].workers[0].minimum", 0),
        [
            "landscape.shoots[2].workers: a self-hosted shoot's control-plane pool needs minimum 1 or more (etcd runs "
            "there)"
        ],
    ),
    (
        "control-plane pool rolling two at a time",
        changed("shoots[2].workers[0].maxSurge", 2),
        [
            "landscape.shoots[2].workers[0]: a control-plane pool rolls one node at a time to keep etcd's quorum: "
            "maxSurge 1 and maxUnavailable 0, or maxSurge 0 and maxUnavailable 1"
        ],
    ),
    (
        "a roll that cannot move",
        changed("shoots[0].workers[0].maxSurge", 0),
        [f"{S0}.workers[0]: maxSurge and maxUnavailable are both 0: a roll could never replace a machine"],
    ),
    (
        "volume size without its unit",
        changed("shoots[0].workers[0].volume", {"size": "50"}),
        [f"{S0}.workers[0].volume.size: not a size in GiB from 1Gi to 65536Gi, like 50Gi"],
    ),
    (
        "volume of zero size",
        changed("shoots[0].workers[0].volume", {"size": "0Gi"}),
        [f"{S0}.workers[0].volume.size: not a size in GiB from 1Gi to 65536Gi, like 50Gi"],
    ),
    (
        "empty volume type",
        changed("shoots[0].workers[0].volume", {"type": ""}),
        [f"{S0}.workers[0].volume.type: must not be empty"],
    ),
    (
        "unknown volume field",
        changed("shoots[0].workers[0].volume", {"iops": 3000}),
        [f"{S0}.workers[0].volume.iops: unknown field; the fields here are encrypted, size, type"],
    ),
    (
        "empty cloud credentials key",
        changed("shoots[0].cloudCredentialsSecret", ""),
        [f"{S0}.cloudCredentialsSecret: is empty: name the secret config key, or leave the field out"],
    ),
    (
        "kubelet max pods too low",
        changed("shoots[0].workers[0].kubelet", {"maxPods": 4}),
        [f"{S0}.workers[0].kubelet.maxPods: must be at least 8, not 4"],
    ),
    (
        "unknown cpu manager policy",
        changed("shoots[0].workers[0].kubelet", {"cpuManagerPolicy": "dynamic"}),
        [f"{S0}.workers[0].kubelet.cpuManagerPolicy: must be 'none' or 'static', not 'dynamic'"],
    ),
    (
        "registry mirror over http",
        changed("shoots[0].workers[0].cri", {"registryMirrors": {"docker.io": "http://m"}}),
        [f"{S0}.workers[0].cri: registryMirrors: 'docker.io': 'http://m' must map a registry host to an https URL"],
    ),
    (
        "another container runtime",
        changed("shoots[0].workers[0].cri", {"name": "docker"}),
        [f"{S0}.workers[0].cri.name: must be 'containerd', not 'docker'"],
    ),
    # networking
    (
        "pods not canonical",
        changed("shoots[0].networking.pods", "100.64.0.1/12"),
        [f"{S0}.networking.pods: '100.64.0.1/12' is not canonical, use 100.64.0.0/12"],
    ),
    (
        "services not a CIDR",
        changed("shoots[0].networking.services", "services"),
        [f"{S0}.networking.services: 'services' is not a CIDR"],
    ),
    (
        "nodes missing",
        changed("shoots[0].networking.nodes", DELETE),
        [f"{S0}.networking.nodes: an IPv4 range is required (ipFamilies has IPv4)"],
    ),
    (
        "unknown IP family",
        changed("shoots[0].networking.ipFamilies", ["IPv5"]),
        [f"{S0}.networking.ipFamilies[0]: 'IPv5' is not one of 'IPv4' or 'IPv6'"],
    ),
    (
        "IPv6-only shoot on an IPv4 seed",
        changed(
            "shoots[0].networking",
            {
                "ipFamilies": ["IPv6"],
                "nodes": "fd00:10:250::/56",
                "pods": "fd00:10:64::/56",
                "services": "fd00:10:104::/108",
            },
        ),
        [
            f"{S0}.networking.ipFamilies: [IPv6] needs a seed with IPv6 (its primary family), but seed 'local-1' "
            "has [IPv4]: add IPv6 to the seed's networks.ipFamilies (with its ranges) or host the shoot on a seed "
            "that has it"
        ],
    ),
    (
        "duplicate IP family",
        changed("shoots[0].networking.ipFamilies", ["IPv4", "IPv4"]),
        [f"{S0}.networking.ipFamilies: [IPv4, IPv4] is not one of [IPv4], [IPv6], [IPv4, IPv6]"],
    ),
    (
        "pods overlap services",
        changed("shoots[0].networking.services", "100.64.0.0/13"),
        [f"{S0}.networking.services: 100.64.0.0/13 overlaps the shoot's pods 100.64.0.0/12"],
    ),
    (
        "pods overlap the seed",
        changed("shoots[1].networking.pods", "10.0.0.0/16"),
        ["landscape.shoots[1].networking.pods: 10.0.0.0/16 overlaps seed 'local-1' pods 10.0.0.0/12"],
    ),
    (
        "nodes overlap seed services",
        changed("shoots[0].networking.nodes", "10.16.0.0/20"),
        [f"{S0}.networking.nodes: 10.16.0.0/20 overlaps seed 'local-1' services 10.16.0.0/16"],
    ),
    # encryption, node agent, labels
    (
        "encrypt secrets",
        changed("shoots[0].encryption", {"resources": ["secrets"]}),
        [f"{S0}.encryption: 'secrets': always encrypted, leave it out"],
    ),
    (
        "encrypt events",
        changed("shoots[0].encryption", {"resources": ["events.events.k8s.io"]}),
        [f"{S0}.encryption: 'events.events.k8s.io': events cannot be encrypted"],
    ),
    (
        "encrypt wildcard",
        changed("shoots[0].encryption", {"resources": ["*.apps"]}),
        [f"{S0}.encryption: '*.apps': wildcards are not allowed"],
    ),
    (
        "encrypt upper case",
        changed("shoots[0].encryption", {"resources": ["ConfigMaps"]}),
        [f"{S0}.encryption: 'ConfigMaps' is not a lower-case <resource>[.<group>]"],
    ),
    (
        "encrypt duplicate",
        changed("shoots[0].encryption", {"resources": ["configmaps", "configmaps"]}),
        [f"{S0}.encryption: duplicate 'configmaps'"],
    ),
    (
        "node agent version",
        changed("shoots[0].nodeAgent", {"version": "1.2"}),
        [f"{S0}.nodeAgent.version: string should match pattern '^v[0-9]+\\.[0-9]+\\.[0-9]+$'"],
    ),
    (
        "label key invalid",
        changed("shoots[0].labels", {"-bad": "x"}),
        [f"{S0}.labels: '-bad' is not a valid label key"],
    ),
    (
        "label value too long",
        changed("shoots[0].labels", {"team": "v" * 64}),
        [f"{S0}.labels: a value of 64 characters is not a valid label value (key 'team')"],
    ),
]
# A shoot name is unique per project: `web` in project `dev` twice.
INVALID = [c for c in INVALID if c[0] != "shoot twice in a project"] + [
    (
        "shoot twice in a project",
        changed("shoots[1]", {**base()["shoots"][0]}),
        ["landscape.shoots[1].name: shoot 'web' exists twice in project 'dev'"],
    ),
]


@pytest.mark.parametrize(("case", "raw", "lines"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_landscape(case: str, raw: object, lines: list[str]) -> None:
    """GIVEN a landscape with one mistake WHEN parsed THEN exactly its lines are reported, nothing else."""
    with pytest.raises(SpecError) as err:
        parse_landscape(raw)
    assert err.value.lines == lines


def test_there_are_at_least_forty_invalid_cases() -> None:
    """The table covers the spec broadly (the layers issue asks for forty or more)."""
    assert len(INVALID) >= 40


VALID: list[tuple[str, dict[str, Any]]] = [
    ("base", base()),
    ("same shoot name in two projects", changed("shoots[1].name", "web")),
    ("worker three minors behind", changed("shoots[0].workers[0].kubernetesVersion", "1.32.0")),
    (
        "dual-stack on a dual-stack seed",
        dual_stack_seed(
            changed(
                "shoots[0].networking",
                dict(DUAL_STACK),
            )
        ),
    ),
    # As Gardener: the VPN runs in the seed's families; only the primary family (IPv4) must be the seed's.
    ("dual-stack on an IPv4 seed", changed("shoots[0].networking", dict(DUAL_STACK))),
    ("existing seed cluster", changed("seeds[0].cluster", {"kubeconfigSecret": "seedKubeconfig"})),
    ("encrypted resources", changed("shoots[0].encryption", {"resources": ["configmaps", "deployments.apps"]})),
    ("no shoots", changed("shoots", [])),
]


@pytest.mark.parametrize(("case", "raw"), VALID, ids=[c[0] for c in VALID])
def test_valid_landscape(case: str, raw: dict[str, Any]) -> None:
    """GIVEN a valid landscape WHEN parsed THEN it parses and keeps every shoot."""
    assert len(parse_landscape(raw).shoots) == len(raw["shoots"])


def test_a_pools_volume_and_a_shoots_credentials_key_reach_the_plan() -> None:
    """GIVEN a pool volume and a credentials key WHEN planned THEN the pool's volume and the shoot's key are theirs."""
    raw = changed("shoots[0].workers[0].volume", {"size": "120Gi", "type": "io2", "encrypted": False})
    raw["shoots"][0]["cloudCredentialsSecret"] = "awsCredentials"
    shoot = plan_landscape(parse_landscape(raw), "local").shoots[0]
    assert shoot.workers[0].volume == VolumeValues(size_gb=120, type="io2", encrypted=False)
    assert shoot.cloud_credentials_secret == "awsCredentials"
    # Defaults: 50 GiB of the provider's disk type, encrypted; no key (local machines call no cloud).
    default = plan_landscape(parse_landscape(base()), "local").shoots[0]
    assert (default.workers[0].volume, default.cloud_credentials_secret) == (VolumeValues(), None)
