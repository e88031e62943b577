"""The backup renderer and records: golden files of what a bucket's policies and records hold, and their bounds."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components import naming
from components.checks import parse_landscape
from components.kinds import ProviderType
from components.plan.planner import plan_landscape
from components.plan.values import BackupValues, ShootValues
from components.render import api, backup, backup_restore, controlplane
from components.spec.fields import SpecError, bucket_name
from components.yaml_text import dump
from tests.unit.spec_cases import base, on_provider
from tests.unit.test_rendering import dump as dump_all

BUCKETS = st.from_regex(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]", fullmatch=True)
PARTITIONS = st.sampled_from(["aws", "aws-cn", "aws-us-gov"])


def test_the_aws_policies_and_lifecycle(golden: Callable[[str, str], None]) -> None:
    """GIVEN a bucket WHEN its aws and local store policies and lifecycles are rendered THEN they are the golden."""
    rendered = {
        "bucketPolicy": backup.aws_bucket_policy("aws", "arbor-seed-1"),
        "identityPolicy": backup.aws_identity_policy("aws", "arbor-seed-1"),
        "lifecycle": backup.aws_lifecycle_rules(),
        "gcpLifecycle": backup.gcp_lifecycle_rules(),
        "storeBucketPolicy": backup.store_bucket_policy("arbor-seed-1"),
        "storeLifecycle": backup.store_lifecycle_rules(),
    }
    golden("backup-policies.json", json.dumps(rendered, indent=2, sort_keys=True) + "\n")


def test_the_records_of_a_bucket_and_an_entry(golden: Callable[[str, str], None]) -> None:
    """GIVEN a seed's bucket and a shoot on it WHEN recorded THEN the records are the golden file (CRDs: api.yaml)."""
    shoot = plan_landscape(parse_landscape(base()), "local").shoots[0]
    values = BackupValues(ProviderType.AWS, "eu-west-1", "arbor-local-1-0123456789", "local-1")
    objects = [
        api.backup_bucket_record(values),
        api.backup_entry_record(shoot, values, "6c1d9d0e-3f0b-4b8e-9a55-0e0f3c1b2a77"),
    ]
    golden("backup-records.yaml", dump(objects, sort_keys=False))


@given(BUCKETS, PARTITIONS)
def test_the_identity_may_touch_its_own_bucket_only(bucket: str, partition: str) -> None:
    """GIVEN any bucket and partition WHEN the identity's policy is rendered THEN each grant is in that bucket.

    No wildcard action, no version deletion, no bucket setting: a stolen key can neither reach another bucket nor
    destroy what versioning keeps.
    """
    policy = backup.aws_identity_policy(partition, bucket)
    arn = f"arn:{partition}:s3:::{bucket}"
    allowed = [s for s in policy["Statement"] if s["Effect"] == "Allow"]
    for statement in allowed:
        assert statement["Resource"] in (arn, f"{arn}/*")
        assert all(a.startswith("s3:") and "*" not in a and "Version" not in a for a in statement["Action"])
        assert not [a for a in statement["Action"] if a.startswith(("s3:PutBucket", "s3:DeleteBucket"))]
    # And a version deletion is denied outright (MinIO would take s3:DeleteObject for it otherwise).
    denied = [s for s in policy["Statement"] if s not in allowed]
    assert denied == [{"Sid": "NoVersionDeletion", "Effect": "Deny", "Resource": f"{arn}/*",
                       "Action": ["s3:DeleteObjectVersion"]}]  # fmt: skip


SEEDS = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", fullmatch=True)


@given(st.text(max_size=20), st.text(max_size=20), SEEDS)
def test_every_default_bucket_name_is_accepted_or_its_seed_refused(domain: str, stack: str, seed: str) -> None:
    """GIVEN any seed name, domain and stack WHEN its default bucket is named THEN the spec's rule accepts it.

    Or the checks refuse the seed's backup at its bucket field (a name Cloud Storage reserves).
    """
    raw = {
        "garden": base()["garden"],
        "seeds": [
            {
                "name": seed,
                "provider": "gcp",
                "region": "europe-west1",
                "zones": ["europe-west1-b"],
                "backup": {"provider": "gcp"},
            }
        ],
    }
    try:
        parse_landscape(raw)
    except SpecError as refused:
        assert refused.lines == [
            f"landscape.seeds[0].backup.bucket: the default name arbor-{seed}-<hash> holds 'google', which bucket "
            "names may not: name the bucket"
        ]
        return
    assert bucket_name(naming.backup_bucket(seed, domain, stack))


def backed_up(provider: str) -> ShootValues:
    """dev/web on seed local-1 moved to `provider`, whose bucket is in the same object store."""
    raw = on_provider(base(), provider)
    raw["seeds"][0]["backup"] = {"provider": provider}
    return plan_landscape(parse_landscape(raw), "s").shoots[0]


@pytest.mark.parametrize("provider", ["gcp", "aws"])
def test_etcd_main_with_backup_restore_golden(provider: str, golden: Callable[[str, str], None]) -> None:
    """GIVEN a shoot on a seed with backups WHEN etcd main is rendered THEN it is the golden StatefulSet."""
    web = backed_up(provider)
    golden(f"etcd-backup-restore-{provider}.yaml", dump_all([controlplane.etcd(web, "main", web.topology).object]))


@pytest.mark.parametrize("provider", ["gcp", "aws"])
def test_only_etcd_main_is_backed_up_from_its_secret(provider: str) -> None:
    """GIVEN a shoot on a seed with backups WHEN its etcds are rendered THEN main has the sidecar, events not.

    The sidecar reads the bucket and the entry's prefix from `etcd-backup`, which the pod mounts (so its checksum
    rolls etcd main when the bucket's key or the entry changes), and shares etcd's data volume.
    """
    web = backed_up(provider)
    main = controlplane.etcd(web, "main", web.topology)
    events = controlplane.etcd(web, "events", web.topology)
    assert [c["name"] for c in events.pod_spec["containers"]] == ["etcd"]
    etcd, sidecar = main.pod_spec["containers"]
    assert sidecar["name"] == "backup-restore" and "etcd-backup" in controlplane.mounted(main)
    flags = dict(f.removeprefix("--").split("=", 1) for f in sidecar["command"][2:])
    assert flags["storage-provider"] == {"gcp": "GCS", "aws": "S3"}[provider]
    assert flags["store-prefix"] == "$(STORE_PREFIX)" and flags["endpoints"].startswith("https://localhost:")
    minute, hour, *rest = flags["schedule"].split()
    assert hour == "22" and 0 <= int(minute) < 60 and rest == ["*", "*", "*"]
    refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in sidecar["env"] if "valueFrom" in e}
    assert refs == {"STORAGE_CONTAINER": {"name": "etcd-backup", "key": "bucketName"},
                    "STORE_PREFIX": {"name": "etcd-backup", "key": "storePrefix"}}  # fmt: skip
    data = next(m for m in etcd["volumeMounts"] if m["mountPath"] == "/var/etcd/data")
    assert data in sidecar["volumeMounts"]


@pytest.mark.parametrize("provider", ["gcp", "aws", "local"])
def test_etcd_main_uses_the_buckets_identity_with_its_own_token_where_the_seed_is_trusted(provider: str) -> None:
    """GIVEN a shoot on a seed arbor made, its bucket in that cloud WHEN etcd main is rendered THEN a token file.

    etcd-backup-restore assumes `roleARN` (S3) or exchanges the external account's token (GCS) with the file `token`
    of its credentials directory: the pod runs as `etcd-backup` (no API token mounted) and projects that
    ServiceAccount's token for the bucket's audience next to the Secret's keys.
    """
    web = backed_up(provider)
    assert web.backup is not None
    seeds = f"arbor-seed:{web.backup.seed}"
    audience = {"aws": "sts.amazonaws.com", "gcp": seeds, "local": seeds}[provider]
    assert web.backup.audience == audience
    pod = controlplane.etcd(web, "main", web.topology).pod_spec
    volume = next(v for v in pod["volumes"] if v["name"] == "etcd-backup")
    token = {"audience": audience, "expirationSeconds": 3600, "path": "token"}
    assert volume["projected"]["sources"] == [{"secret": {"name": "etcd-backup"}}, {"serviceAccountToken": token}]
    assert pod["serviceAccountName"] == "etcd-backup" and pod["automountServiceAccountToken"] is False
    sidecar = pod["containers"][1]
    directory = {"aws": "/var/etcd-backup", "gcp": "/var/.gcp", "local": "/var/etcd-backup"}[provider]
    assert {"name": "etcd-backup", "mountPath": directory, "readOnly": True} in sidecar["volumeMounts"]


@pytest.mark.parametrize("provider", ["gcp", "aws", "local"])
def test_an_existing_seeds_bucket_keeps_a_key(provider: str) -> None:
    """GIVEN a seed given by kubeconfig WHEN planned and etcd rendered THEN no audience: the Secret's key alone."""
    raw = on_provider(base(), provider)
    raw["seeds"][0]["backup"] = {"provider": provider}
    raw["seeds"][0]["cluster"] = {"kubeconfigSecret": "seedKubeconfig"}
    web = plan_landscape(parse_landscape(raw), "s").shoots[0]
    assert web.backup is not None and web.backup.audience is None
    pod = controlplane.etcd(web, "main", web.topology).pod_spec
    assert {"name": "etcd-backup", "secret": {"secretName": "etcd-backup"}} in pod["volumes"]
    assert "serviceAccountName" not in pod


def test_full_snapshots_of_a_seeds_shoots_are_spread_over_the_hour() -> None:
    """GIVEN twenty shoots WHEN their schedules are computed THEN they fall on more than ten different minutes."""
    web = backed_up("aws")
    minutes = {
        backup_restore.full_snapshot_schedule(dataclasses.replace(web, technical_id=f"shoot--p--s{i}")).split()[0]
        for i in range(20)
    }
    assert len(minutes) > 10
