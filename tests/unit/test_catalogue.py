"""The catalogue (Gardener's CloudProfile): what a provider offers, merged from arbor's and a landscape's, checked.

Each refusal names the field the user wrote (a shoot's Kubernetes version, a pool's image name or version, its
runtime) and says what to pick instead; the planner records where each cloud pool's image comes from.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from components.checks import RefusalError, check, parse_landscape
from components.checks.catalogue import admits, catalogue_problems, expired_versions, kept_expired
from components.kinds import ProviderType
from components.plan.catalogue import ImageSource, profiles
from components.plan.planner import plan_landscape
from components.spec.catalogue import CloudProfileSpec, built_in
from components.spec.fields import SpecError
from components.spec.landscape import parse_fields
from tests.unit.spec_cases import base, on_provider

S0 = "landscape.shoots[0]"
NOW = datetime(2026, 6, 1, tzinfo=UTC)
AMI = "ami-0123456789abcdef0"


def on_aws(**profile: Any) -> dict[str, Any]:
    """The base on an aws seed in eu-central-1, its aws profile extended by `profile`."""
    doc = on_provider(base(), "aws")
    doc["cloudProfiles"] = {"aws": copy.deepcopy(profile)} if profile else {}
    return doc


def gardenlinux(*versions: dict[str, Any], regions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An aws profile offering gardenlinux `versions`, each pinned to an AMI in eu-central-1 (or `regions`)."""
    pinned = regions if regions is not None else [{"name": "eu-central-1", "ami": AMI}]
    return {
        "machineImages": [{"name": "gardenlinux", "versions": list(versions)}],
        "providerConfig": {
            "machineImages": [
                {"name": "gardenlinux", "versions": [{"version": v["version"], "regions": pinned} for v in versions]}
            ]
        },
    }


def with_machine(doc: dict[str, Any], shoot: int, **machine: Any) -> dict[str, Any]:
    """`doc` with the first pool of a shoot on another machine (the base's pools share one machine object)."""
    pool = doc["shoots"][shoot]["workers"][0]
    pool["machine"] = copy.deepcopy(pool["machine"]) | machine
    return doc


def problems(doc: dict[str, Any]) -> list[str]:
    """The catalogue's lines for a landscape whose fields are valid, on NOW."""
    return catalogue_problems(parse_fields(doc), now=NOW)


def expired(doc: dict[str, Any], records: dict[str, Any] | None = None) -> list[str]:
    """The expiry lines for a landscape whose fields are valid, on NOW, against the previous shoot records."""
    return expired_versions(parse_fields(doc), records or {}, now=NOW)


def expiring(*, image: str = "1877.0", kubernetes: str = "1.34.4") -> dict[str, Any]:
    """The aws base with web on `kubernetes` and gardenlinux `image`: 1876.0, 1877.0, 1.34.3, 1.34.4 have expired."""
    doc = on_aws(
        **gardenlinux({"version": "1877.0", "expirationDate": "2026-01-31T23:59:59Z"},
                      {"version": "1876.0", "expirationDate": "2026-01-01T00:00:00Z"}, {"version": "1877.1"}),
        kubernetes={"versions": [{"version": "1.34.4", "expirationDate": "2026-05-01T00:00:00Z"},
                                 {"version": "1.34.3", "expirationDate": "2026-04-01T00:00:00Z"},
                                 {"version": "1.34.5"}, {"version": "1.33.6"}]},
    )  # fmt: skip
    doc["shoots"][0]["kubernetes"]["version"] = kubernetes
    with_machine(doc, 0, image={"name": "gardenlinux", "version": image})
    with_machine(doc, 1, image={"name": "gardenlinux", "version": "1877.1"})  # db: on what is still offered
    return doc


def running(kubernetes: str, image: str) -> dict[str, Any]:
    """The previous update's record of web (`previous.shoot_outputs`): its version and pool-a's image."""
    return {"dev/web": {"kubernetesVersion": kubernetes, "workers": {"pool-a": kubernetes},
                        "images": {"pool-a": ["gardenlinux", image]}}}  # fmt: skip


def test_built_in_profiles_offer_ubuntu_by_lookup_on_each_cloud() -> None:
    """GIVEN arbor's profiles WHEN read THEN aws and gcp offer ubuntu 24.04 by lookup, no pinned ID to go stale."""
    shipped = built_in()
    assert sorted(shipped) == [ProviderType.AWS, ProviderType.GCP]
    for profile in shipped.values():
        [version] = profile.provider_config.machine_images[0].versions
        assert (version.version, version.regions, version.image) == ("24.04", [], None)
        assert sorted(lookup.architecture for lookup in version.lookups) == ["amd64", "arm64"]


def test_a_landscape_extends_the_profiles_and_replaces_a_version() -> None:
    """GIVEN a landscape adding gardenlinux and re-listing ubuntu 24.04 WHEN merged THEN both offered, one replaced."""
    given = CloudProfileSpec.model_validate(
        {"machineImages": [{"name": "ubuntu", "versions": [{"version": "24.04", "classification": "deprecated"}]},
                           {"name": "gardenlinux", "versions": [{"version": "1877.0"}]}]}
    )  # fmt: skip
    aws = profiles({ProviderType.AWS: given})[ProviderType.AWS]
    assert [(i.name, [(v.version, v.classification) for v in i.versions]) for i in aws.machine_images] == [
        ("ubuntu", [("24.04", "deprecated")]),
        ("gardenlinux", [("1877.0", None)]),
    ]
    # The lookups of the shipped version stay: the landscape replaced the offer, not where the cloud keeps it.
    assert aws.provider_config.machine_images[0].versions[0].lookups


def test_a_cloud_pool_without_its_image_in_the_profile_is_refused_at_the_image() -> None:
    """GIVEN an aws shoot on gardenlinux and only arbor's profile WHEN checked THEN image.name is named, with ubuntu."""
    with pytest.raises(SpecError) as err:
        parse_landscape(on_aws())
    assert err.value.lines[0] == (
        f"{S0}.workers[0].machine.image.name: 'gardenlinux' is not an image offered on aws: pick one of ubuntu, "
        "or add it to landscape.cloudProfiles.aws.machineImages"
    )


def test_an_unknown_version_and_a_region_without_an_ami_are_named() -> None:
    """GIVEN a version not offered, and one offered without an AMI in the region WHEN checked THEN each is named."""
    doc = on_aws(**gardenlinux({"version": "1877.0"}, regions=[{"name": "us-east-1", "ami": AMI}]))
    with_machine(doc, 1, image={"name": "gardenlinux", "version": "1876.0"})
    assert problems(doc) == [
        f"{S0}.workers[0].machine.image.version: gardenlinux 1877.0 has no AMI in 'eu-central-1' (amd64): "
        "add one to landscape.cloudProfiles.aws.providerConfig.machineImages",
        "landscape.shoots[1].workers[0].machine.image.version: '1876.0' of gardenlinux is not offered on aws: pick "
        "one of 1877.0, or add it to landscape.cloudProfiles.aws.machineImages",
    ]


def test_a_new_shoot_on_expired_versions_is_refused_with_what_is_still_offered() -> None:
    """GIVEN a shoot no update recorded, on an expired image and Kubernetes version WHEN checked THEN both named."""
    doc = expiring()
    kube = f"{S0}.kubernetes.version: 1.34.4 expired on 2026-05-01 on aws: pick one of 1.34.5, 1.33.6"
    image = f"{S0}.workers[0].machine.image.version: gardenlinux 1877.0 expired on 2026-01-31: pick one of 1877.1"
    assert expired(doc) == [kube, image]
    # A record of other shoots only (db) keeps nothing of web; the spec stage leaves expiry to this check.
    assert expired(doc, {"ops/db": running("1.34.4", "1877.0")["dev/web"]}) == [kube, image]
    assert not any("expired" in line for line in problems(doc))


def test_a_running_shoot_keeps_its_now_expired_version_and_image() -> None:
    """GIVEN web recorded running 1.34.4 on gardenlinux 1877.0, both expired since WHEN checked THEN accepted.

    Gardener refuses an expired version only when a shoot is created with it or moved to it.
    """
    assert expired(expiring(), running("1.34.4", "1877.0")) == []
    assert kept_expired(parse_fields(expiring()), running("1.34.4", "1877.0"), now=NOW) == [
        f"{S0}.kubernetes.version: 1.34.4 expired on 2026-05-01 on aws: pick one of 1.34.5, 1.33.6 (kept: the shoot "
        "runs it)",
        f"{S0}.workers[0].machine.image.version: gardenlinux 1877.0 expired on 2026-01-31: pick one of 1877.1 "
        "(kept: the shoot runs it)",
    ]


def test_a_running_shoot_moved_to_another_expired_version_is_refused() -> None:
    """GIVEN web recorded on 1.34.4 WHEN moved to 1.34.3, also expired THEN the version field is refused."""
    doc = expiring(kubernetes="1.34.3")
    assert expired(doc, running("1.34.4", "1877.0")) == [
        f"{S0}.kubernetes.version: 1.34.3 expired on 2026-04-01 on aws: pick one of 1.34.5, 1.33.6"
    ]


def test_a_running_pool_moved_to_another_expired_image_is_refused() -> None:
    """GIVEN web's pool recorded on gardenlinux 1877.0 WHEN moved to 1876.0, also expired THEN the image is refused."""
    doc = expiring(image="1876.0")
    assert expired(doc, running("1.34.4", "1877.0")) == [
        f"{S0}.workers[0].machine.image.version: gardenlinux 1876.0 expired on 2026-01-01: pick one of 1877.1"
    ]


def test_a_pool_version_is_kept_by_its_pools_record() -> None:
    """GIVEN a pool setting its own expired version WHEN its record runs it THEN kept, else its field is refused."""
    doc = expiring(kubernetes="1.34.5")
    doc["shoots"][0]["workers"][0]["kubernetesVersion"] = "1.34.4"
    record = running("1.34.5", "1877.0")
    assert expired(doc, record) == [
        f"{S0}.workers[0].kubernetesVersion: 1.34.4 expired on 2026-05-01 on aws: pick one of 1.34.5, 1.33.6"
    ]
    record["dev/web"]["workers"]["pool-a"] = "1.34.4"
    assert expired(doc, record) == []


def test_the_previous_stage_refuses_an_expired_version_only_for_a_new_shoot() -> None:
    """GIVEN the whole check WHEN web is new THEN refused as a change; WHEN its record runs it THEN a notice."""
    doc = expiring()
    doc["garden"]["dns"] = {"provider": "aws-route53", "zone": "Z0123456789", "domain": "example.com"}
    doc["seeds"][0]["backup"] = {"provider": "aws"}
    with pytest.raises(RefusalError) as err:
        check(doc, "aws", lambda: {})
    assert err.value.heading.startswith("refused change")
    assert (
        f"{S0}.kubernetes.version: 1.34.4 expired on 2026-05-01 on aws: pick one of 1.34.5, 1.33.6" in err.value.lines
    )
    checked = check(doc, "aws", lambda: {"shoots": running("1.34.4", "1877.0")})
    assert checked.plan.shoots[0].kubernetes_version == "1.34.4"
    assert any(n.startswith(f"{S0}.kubernetes.version: 1.34.4 expired") for n in checked.notices)


def test_a_kubernetes_version_not_listed_is_refused_and_none_listed_allows_any() -> None:
    """GIVEN a profile listing Kubernetes versions WHEN a shoot or pool runs another THEN that field is named."""
    doc = on_aws(**gardenlinux({"version": "1877.0"}), kubernetes={"versions": [{"version": "1.34.4"}]})
    doc["shoots"][0]["workers"][0]["kubernetesVersion"] = "1.33.6"
    assert problems(doc) == [
        f"{S0}.workers[0].kubernetesVersion: '1.33.6' is not offered on aws: pick one of 1.34.4, or add it to "
        "landscape.cloudProfiles.aws.kubernetes.versions",
        "landscape.shoots[1].kubernetes.version: '1.33.6' is not offered on aws: pick one of 1.34.4, or add it to "
        "landscape.cloudProfiles.aws.kubernetes.versions",
    ]
    assert problems(on_aws(**gardenlinux({"version": "1877.0"}))) == []


def test_architecture_runtime_and_kubelet_constraint_are_checked() -> None:
    """GIVEN an arm64 machine type, an amd64-only image limited to kubelets < 1.34 WHEN checked THEN both named."""
    doc = on_aws(
        **gardenlinux({"version": "1877.0", "kubeletVersionConstraint": "< 1.34"}),
        machineTypes=[{"name": "m7g.large", "architecture": "arm64"}],
    )
    with_machine(doc, 0, type="m7g.large")
    assert problems(doc) == [
        f"{S0}.workers[0].machine.image.version: gardenlinux 1877.0 is built for amd64, not for arm64 (machine type "
        "'m7g.large')",
        f"{S0}.workers[0].machine.image.version: gardenlinux 1877.0 runs kubelets < 1.34, not 1.34.4",
    ]


@pytest.mark.parametrize(
    ("constraint", "version", "expected"),
    [(">= 1.30, < 1.34", "1.33.6", True), (">= 1.30, < 1.34", "1.34.0", False), ("1.33.6", "1.33.6", True),
     ("!= 1.33.5", "1.33.5", False), ("> 1.33", "1.33.1", True)],
)  # fmt: skip
def test_kubelet_version_constraints_compare_by_version(constraint: str, version: str, expected: bool) -> None:
    """GIVEN a kubeletVersionConstraint WHEN a kubelet version is compared THEN it compares numbers, not strings."""
    assert admits(constraint, version) is expected


def test_a_lookup_of_the_other_cloud_and_a_bad_constraint_are_named_in_the_profile() -> None:
    """GIVEN a gcp lookup under aws and a constraint that is none WHEN checked THEN the profile's fields are named."""
    doc = on_aws(
        machineImages=[{"name": "gardenlinux", "versions": [{"version": "1877.0"}]}],
        providerConfig={"machineImages": [{"name": "gardenlinux", "versions": [
            {"version": "1877.0", "lookups": [{"project": "p", "family": "f"}],
             "image": "projects/p/global/images/i"}]}]},
    )  # fmt: skip
    at = "landscape.cloudProfiles.aws.providerConfig.machineImages[0].versions[0]"
    lines = problems(doc)
    assert lines[:2] == [
        f"{at}.lookups[0]: aws looks an AMI up by owner and name, not project and family",
        f"{at}.image: an image path is gcp's; aws takes AMIs per region or lookups",
    ]
    bad = on_aws(**gardenlinux({"version": "1877.0", "kubeletVersionConstraint": "newest"}))
    with pytest.raises(SpecError) as err:
        parse_fields(bad)
    assert err.value.lines == [
        "landscape.cloudProfiles.aws.machineImages[0].versions[0].kubeletVersionConstraint: 'newest' is not a "
        "version constraint like '>= 1.30, < 1.34'"
    ]


def test_the_plan_records_each_cloud_pools_image_source() -> None:
    """GIVEN a pinned AMI and a lookup WHEN planned THEN each pool's source is recorded; local pools have none."""
    doc = on_aws(**gardenlinux({"version": "1877.0"}))
    with_machine(doc, 1, image={"name": "ubuntu", "version": "24.04"})
    plan = plan_landscape(parse_landscape(doc), "aws")
    assert plan.shoots[0].images == {"pool-a": ImageSource(pinned=AMI)}
    assert plan.shoots[1].images == {
        "pool-a": ImageSource(owner="099720109477", name="ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-*")
    }
    assert plan_landscape(parse_landscape(base()), "local").shoots[0].images == {}


def test_a_local_landscape_is_checked_only_against_a_local_profile_it_gives() -> None:
    """GIVEN the local base WHEN checked THEN it passes; GIVEN a local profile without its version THEN refused."""
    assert problems(base()) == []
    doc = base()
    doc["cloudProfiles"] = {"local": {"kubernetes": {"versions": [{"version": "1.34.4"}]}}}
    with pytest.raises(RefusalError) as err:
        check(doc, "local", dict)
    assert err.value.heading == "invalid landscape"
    assert err.value.lines == [
        "landscape.shoots[1].kubernetes.version: '1.33.6' is not offered on local: pick one of 1.34.4, or add it "
        "to landscape.cloudProfiles.local.kubernetes.versions"
    ]


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("expirationDate", "soon", "'soon' is not a date like 2026-12-31T23:59:59Z"),
        ("expirationDate", [1], "must be a date like 2026-12-31T23:59:59Z"),
        ("architectures", ["s390x"], "must be 'amd64' or 'arm64', not 's390x'"),
    ],
)
def test_profile_fields_are_refused_in_the_users_words(field: str, value: Any, reason: str) -> None:
    """GIVEN a profile field of the wrong kind WHEN parsed THEN the line names it and says what it takes."""
    doc = on_aws(**gardenlinux({"version": "1877.0", field: value}))
    with pytest.raises(SpecError) as err:
        parse_fields(doc)
    suffix = "[0]" if field == "architectures" else ""
    assert err.value.lines == [f"landscape.cloudProfiles.aws.machineImages[0].versions[0].{field}{suffix}: {reason}"]


def test_an_unquoted_yaml_date_expires_as_utc() -> None:
    """GIVEN an expirationDate YAML reads as a date WHEN checked on a later day THEN the version has expired."""
    doc = on_aws(**gardenlinux({"version": "1877.0", "expirationDate": datetime(2026, 1, 1).date()}))
    assert expired(doc)[0].endswith(
        "gardenlinux 1877.0 expired on 2026-01-01: no version is offered: add one to "
        "landscape.cloudProfiles.aws.machineImages"
    )
