"""etcd main and events on persistent volumes on cloud seeds: plan, rendering, refusals and the resource graph."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pulumi
import pytest

from components.checks import parse_landscape, records
from components.checks import previous as previous_update
from components.kinds import ProviderType
from components.plan.planner import plan_landscape
from components.plan.values import EtcdVolume, LandscapePlan
from components.render import controlplane, storage
from tests.unit import test_shoot_exposure as exposure
from tests.unit.spec_cases import base, on_provider
from tests.unit.test_rendering import dump


def cloud_plan(provider: str) -> LandscapePlan:
    """The base landscape with seed local-1 (hosting dev/web and ops/db) on `provider`."""
    return plan_landscape(parse_landscape(on_provider(base(), provider)), "s")


@pytest.mark.parametrize("provider", ["gcp", "aws"])
def test_shoots_on_cloud_seeds_claim_gardeners_volumes(provider: str) -> None:
    """GIVEN a cloud seed WHEN planned THEN its shoots' etcd main and events claim 25Gi and 10Gi of the fast class."""
    web, _, root = cloud_plan(provider).shoots
    assert web.etcd_volumes == {
        "main": EtcdVolume("main-etcd", "gardener.cloud-fast", "25Gi"),
        "events": EtcdVolume("etcd-events", "gardener.cloud-fast", "10Gi"),
    }
    # Self-hosted: etcd keeps its data on the control-plane node.
    assert root.self_hosted and root.etcd_volumes == {}


def test_local_seeds_keep_empty_dir() -> None:
    """GIVEN a local seed WHEN rendered THEN etcd keeps emptyDir: kwok runs no pods and has no provisioner."""
    web = plan_landscape(parse_landscape(base()), "s").shoots[0]
    etcd = controlplane.etcd(web, "main", web.topology).object
    assert "volumeClaimTemplates" not in etcd["spec"]
    assert {"name": "data", "emptyDir": {}} in etcd["spec"]["template"]["spec"]["volumes"]
    assert storage.storage_classes(ProviderType.LOCAL) == []


def test_etcd_on_a_cloud_seed_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN a shoot on a gcp seed WHEN its etcds are rendered THEN they match the golden StatefulSets."""
    web = cloud_plan("gcp").shoots[0]
    golden(
        "etcd-cloud-seed.yaml", dump([controlplane.etcd(web, role, web.topology).object for role in ("main", "events")])
    )


def test_etcd_claims_mount_where_etcd_writes() -> None:
    """GIVEN a cloud seed's etcd WHEN rendered THEN the claim is mounted at /var/etcd/data, etcd's data dir in it."""
    web = cloud_plan("aws").shoots[0]
    for role in ("main", "events"):
        spec = controlplane.etcd(web, role, web.topology).object["spec"]
        (claim,) = spec["volumeClaimTemplates"]
        container = spec["template"]["spec"]["containers"][0]
        assert {"name": claim["metadata"]["name"], "mountPath": "/var/etcd/data"} in container["volumeMounts"]
        assert "--data-dir=/var/etcd/data/new.etcd" in container["command"]
        assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
        assert spec["template"]["spec"]["securityContext"]["fsGroup"] == 65532
        assert "data" not in controlplane.mounted(controlplane.etcd(web, role, web.topology))


def test_storage_classes_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN gcp and aws seeds WHEN their StorageClasses are rendered THEN they match the golden file."""
    golden(
        "storage-classes.yaml",
        dump([*storage.storage_classes(ProviderType.GCP), *storage.storage_classes(ProviderType.AWS)]),
    )


@pytest.mark.parametrize("provider", [ProviderType.GCP, ProviderType.AWS])
def test_storage_classes_retain_and_bind_with_the_pod(provider: ProviderType) -> None:
    """GIVEN a cloud WHEN its class is rendered THEN a deleted claim keeps its disk, bound in the pod's zone."""
    (sc,) = storage.storage_classes(provider)
    assert sc["reclaimPolicy"] == "Retain" and sc["volumeBindingMode"] == "WaitForFirstConsumer"
    assert sc["allowVolumeExpansion"] is True


def _changed(plan: LandscapePlan, role: str, **fields: str) -> LandscapePlan:
    """`plan` with dev/web's etcd `role` volume changed."""
    web = plan.shoots[0]
    volumes = {**web.etcd_volumes, role: dataclasses.replace(web.etcd_volumes[role], **fields)}
    return dataclasses.replace(plan, shoots=(dataclasses.replace(web, etcd_volumes=volumes), *plan.shoots[1:]))


def test_records_hold_each_etcd_volume() -> None:
    """GIVEN a cloud seed's shoot WHEN recorded THEN its volumes are; a local shoot's record is as before."""
    assert records(cloud_plan("gcp"))["shoots"]["dev/web"]["etcdVolumes"] == {
        "main": "25Gi on gardener.cloud-fast",
        "events": "10Gi on gardener.cloud-fast",
    }
    assert "etcdVolumes" not in records(plan_landscape(parse_landscape(base()), "s"))["shoots"]["dev/web"]


@pytest.mark.parametrize(
    ("role", "fields", "change"),
    [
        ("main", {"capacity": "50Gi"}, "25Gi on gardener.cloud-fast to 50Gi on gardener.cloud-fast"),
        ("events", {"storage_class": "standard"}, "10Gi on gardener.cloud-fast to 10Gi on standard"),
    ],
)
def test_a_changed_etcd_volume_is_refused(role: str, fields: dict[str, str], change: str) -> None:
    """GIVEN a deployed shoot's volumes WHEN its claim would change THEN refused: the claim template is immutable."""
    plan = cloud_plan("aws")
    before = records(plan)["shoots"]
    lines = previous_update.shoot_changes(_changed(plan, role, **fields), before)
    assert lines == [
        f"landscape.shoots[0].seed: etcd {role}'s volume would change from {change} (this arbor version's default): "
        "a StatefulSet's volume claims cannot change and a new claim starts etcd empty; keep the arbor version that "
        "made it until etcd backups can move the data"
    ]
    assert previous_update.shoot_changes(plan, before) == []


def test_empty_dir_to_a_volume_is_refused() -> None:
    """GIVEN a hosted shoot recorded on emptyDir WHEN its etcd would move to a volume THEN refused, role by role."""
    plan = cloud_plan("gcp")
    before = json.loads(json.dumps(records(plan)["shoots"]))
    del before["dev/web"]["etcdVolumes"]
    lines = previous_update.shoot_changes(plan, before)
    assert [line.split(" (")[0] for line in lines] == [
        "landscape.shoots[0].seed: etcd events's volume would change from emptyDir to 10Gi on gardener.cloud-fast",
        "landscape.shoots[0].seed: etcd main's volume would change from emptyDir to 25Gi on gardener.cloud-fast",
    ]


SEED = {"aws": "arbor-seed-aws-euc1", "gcp": "arbor-seed-gcp-euw1"}
ETCD = "arbor-shoot-platform-web-etcd"


@pulumi.runtime.test
def test_aws_seed_gets_the_ebs_csi_add_on_with_its_role() -> pulumi.Output[None]:
    """GIVEN an EKS seed WHEN registered THEN the EBS CSI add-on runs as an IRSA role with AWS's EBS CSI policy."""
    built, mocks, settled = exposure.register("aws")
    seed = SEED["aws"]

    def check(_: Any) -> None:
        addon = mocks.resources[f"{seed}-ebs-csi"][1]
        assert addon["addonName"] == "aws-ebs-csi-driver"
        assert addon["serviceAccountRoleArn"] == f"arn:aws:iam::123456789012:role/{seed}-ebs-csi-role"
        oidc = mocks.resources[f"{seed}-oidc"][1]
        assert oidc["clientIdLists"] == ["sts.amazonaws.com"]
        trust = json.loads(mocks.resources[f"{seed}-ebs-csi-role"][1]["assumeRolePolicy"])
        (statement,) = trust["Statement"]
        assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
        host = oidc["url"].removeprefix("https://")
        assert statement["Condition"]["StringEquals"][f"{host}:sub"] == (
            "system:serviceaccount:kube-system:ebs-csi-controller-sa"
        )
        policy = mocks.resources[f"{seed}-ebs-csi-policy"][1]["policyArn"]
        assert policy == "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"
        assert {f"{seed}-nodes", f"{seed}-ebs-csi-policy"} <= built.before(f"{seed}-ebs-csi")
        # A garden has no etcd volumes: no add-on for it.
        assert not any(n.startswith("arbor-garden") and n.endswith("ebs-csi") for n in mocks.resources)
        sc = mocks.resources[f"{seed}-storage-class"][1]
        assert sc["provisioner"] == "ebs.csi.aws.com" and sc["parameters"]["encrypted"] == "true"

    return settled.apply(check)


@pytest.mark.parametrize("provider", ["gcp", "aws"])
@pulumi.runtime.test
def test_etcd_waits_for_the_storage_class(provider: str) -> pulumi.Output[None]:
    """GIVEN a cloud seed's shoot WHEN registered THEN each etcd waits for the StorageClass (aws: and the add-on)."""
    built, mocks, settled = exposure.register(provider)
    seed = SEED[provider]
    first = {f"{seed}-ebs-csi"} if provider == "aws" else set()

    def check(_: Any) -> None:
        assert mocks.resources[f"{seed}-storage-class"][0] == "kubernetes:storage.k8s.io/v1:StorageClass"
        for role in ("main", "events"):
            assert {f"{seed}-storage-class", *first} <= built.before(ETCD)
            (claim,) = mocks.workload(f"{ETCD}-{role}")["spec"]["volumeClaimTemplates"]
            assert claim["spec"]["storageClassName"] == "gardener.cloud-fast"
        # On aws every object on the seed waits for the driver: the seed's cluster is ready with it.
        assert first <= built.before(f"{seed}-storage-class")
        if provider == "gcp":  # GKE's persistent disk CSI driver provisions them, enabled on the seed's cluster
            addons = mocks.resources[f"{seed}-gke"][1]["addonsConfig"]
            assert addons["gcePersistentDiskCsiDriverConfig"] == {"enabled": True}

    return settled.apply(check)
