"""Each example stack's seeds keep their shoots' backups in a bucket of their own, registered under mocks.

What an operator checks of a backup bucket before trusting it (Gardener's provider extensions make the same):
private, encrypted, versioned, no plain HTTP, a lifecycle, an identity that can use that one bucket and nothing
else, kept when its seed goes; and per shoot the BackupEntry record and the `etcd-backup` Secret etcd reads.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pytest

from components import naming
from components.bundles import Issuer, trusted_issuer
from components.plan.values import BackupValues
from components.providers.snapshot_step import RISKY_ENV
from components.reconciler import entry_store, etcd_snapshot
from components.render import backup
from tests.unit.test_example_stacks import OBJECT_SET, PROVIDERS, SHOOTS, Example
from tests.unit.test_shoot_exposure import unwrapped

BACKUP_BUCKET = "kubernetes:arbor.dev/v1alpha1:BackupBucket"
BACKUP_ENTRY = "kubernetes:arbor.dev/v1alpha1:BackupEntry"
SHOOT_RECORD = "kubernetes:arbor.dev/v1alpha1:Shoot"
SECRET_SET = "pulumi-python:dynamic/arbor:SecretSet"
ENTRY_SECRET = "pulumi-python:dynamic/arbor:EntrySecret"
BUCKET = {"gcp": "gcp:storage/bucket:Bucket", "aws": "aws:s3/bucket:Bucket"}
# The etcd-backup Secret's keys by provider: the identity's credentials, the bucket, aws's region.
SECRET_KEYS = {
    "gcp": {"serviceaccount.json", "projectID", "tokenAudience", "bucketName", "storePrefix"},
    "aws": {"roleARN", "bucketName", "region", "storePrefix"},
}


@pytest.fixture(scope="module")
def examples() -> dict[str, Example]:
    """Both example stacks, registered once for the tests of this module."""
    return {provider: Example(provider) for provider in PROVIDERS}


@pytest.fixture(params=PROVIDERS)
def example(request: pytest.FixtureRequest, examples: dict[str, Example]) -> Example:
    """Each example stack in turn."""
    return examples[request.param]


def _backups(example: Example) -> list[BackupValues]:
    """The planned backup bucket of every seed of the example (each has one)."""
    planned = [s.backup for s in example.plan.seeds]
    assert all(planned), "every example seed keeps backups"
    return [b for b in planned if b is not None]


def binding_name(planned: BackupValues) -> str:
    """The resource name of a gcp backup account's one binding, on its bucket."""
    return f"arbor-seed-{planned.seed}-backup-object-admin"


def _one(example: Example, type_: str, name: str) -> dict[str, Any]:
    """The outputs of the one resource of a type and name."""
    return example.of(type_)[name]


def test_every_seed_gets_a_bucket_named_as_planned_that_outlives_it(example: Example) -> None:
    """GIVEN the example's seeds WHEN registered THEN each bucket is protected and retained, never force-destroyed."""
    for planned in _backups(example):
        name = f"arbor-seed-{planned.seed}-backup"
        bucket = _one(example, BUCKET[example.provider], name)
        assert bucket.get("bucket", bucket.get("name")) == planned.bucket
        assert bucket["forceDestroy"] is False
        options = example.built.options[name]
        assert options.protect is True and options.retain_on_delete is True
    named = {b.seed: b.bucket for b in _backups(example)}
    assert named[f"{example.provider}-euw4" if example.provider == "gcp" else "aws-euw1"].startswith("arbor-example-")


def test_gcp_buckets_are_private_versioned_and_expire_old_versions(examples: dict[str, Example]) -> None:
    """GIVEN a gcp seed's bucket WHEN registered THEN uniform access, no public access, versions, soft delete."""
    example = examples["gcp"]
    for planned in _backups(example):
        bucket = _one(example, BUCKET["gcp"], f"arbor-seed-{planned.seed}-backup")
        assert bucket["uniformBucketLevelAccess"] is True
        assert bucket["publicAccessPrevention"] == "enforced"
        assert bucket["versioning"] == {"enabled": True}
        # What its own key deletes, a noncurrent generation too, stays soft-deleted for a week.
        assert bucket["softDeletePolicy"] == {"retentionDurationSeconds": 7 * 24 * 3600}
        assert bucket["location"] == planned.region
        actions = {r["action"]["type"] for r in bucket["lifecycleRules"]}
        assert actions == {"Delete", "AbortIncompleteMultipartUpload"}
        binding = _one(example, "gcp:storage/bucketIAMMember:BucketIAMMember", binding_name(planned))
        assert binding["bucket"] == planned.bucket and binding["role"] == "roles/storage.objectAdmin"
        account = ("gcp:serviceaccount/account:Account", f"arbor-seed-{planned.seed}-backup-account")
        assert binding["member"] == f"serviceAccount:{_one(example, *account)['email']}"
        # Nothing else is granted to it: one binding names it, on its bucket.
        prefix = f"arbor-seed-{planned.seed}-backup"
        granted = [(t, n) for (t, n), o in example.mocks.typed.items()
                   if n.startswith(prefix) and o.get("member") == binding["member"]]  # fmt: skip
        assert granted == [("gcp:storage/bucketIAMMember:BucketIAMMember", binding_name(planned))]


def test_a_gke_seeds_bucket_is_used_by_workload_identity_and_no_key_exists(examples: dict[str, Example]) -> None:
    """GIVEN the gcp example's GKE seeds WHEN registered THEN the seed's pool acts as the bucket's account, no key.

    As Gardener's provider-gcp with a WorkloadIdentity: each seed's pool has an OIDC provider for its GKE issuer that
    accepts the seed's own audience and only the `etcd-backup` and MCM subjects; the `etcd-backup` accounts may act
    as the bucket's service account (a principal set by the account's name), nothing else; the `etcd-backup` data is
    an external account reading the token file etcd-druid's directory holds, with `projectID` and the audience
    beside it, so no service account key exists.
    """
    example = examples["gcp"]
    assert not example.of("gcp:serviceaccount/key:Key", "arbor-seed")
    for planned in _backups(example):
        prefix = f"arbor-seed-{planned.seed}"
        assert planned.audience == f"arbor-seed:{planned.seed}"
        pool = _one(example, "gcp:iam/workloadIdentityPool:WorkloadIdentityPool", f"{prefix}-pool")
        provider = _one(example, "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider",
                        f"{prefix}-pool-provider")  # fmt: skip
        seed = next(s for s in example.plan.seeds if s.name == planned.seed)
        issuer = f"https://container.googleapis.com/v1/projects/my-project/locations/{seed.region}/clusters/{seed.cluster.name}"
        assert provider["oidc"] == {"issuerUri": issuer, "allowedAudiences": [planned.audience]}
        assert provider["attributeMapping"] == {
            "google.subject": "assertion.sub",
            "attribute.service_account": "assertion['kubernetes.io']['serviceaccount']['name']",
        }
        assert provider["attributeCondition"] == (
            "assertion.sub.matches('^system:serviceaccount:shoot--[^:]+:(etcd-backup|machine-controller-manager)$')"
            " || assertion.sub == 'system:serviceaccount:garden:etcd-backup'"
        )
        account = _one(example, "gcp:serviceaccount/account:Account", f"{prefix}-backup-account")
        acting = _one(example, "gcp:serviceaccount/iAMMember:IAMMember", f"{prefix}-backup-acts-as")
        assert acting["role"] == "roles/iam.workloadIdentityUser" and acting["serviceAccountId"] == account["name"]
        assert pool["name"].endswith(f"/workloadIdentityPools/{pool['workloadIdentityPoolId']}")
        # Unique in the project as the seed's GKE cluster is (its stack's and seed's name), at most 32 characters.
        assert pool["workloadIdentityPoolId"] == naming.capped(f"arbor-{seed.cluster.name}", 32)
        assert (
            acting["member"]
            == f"principalSet://iam.googleapis.com/{pool['name']}/attribute.service_account/etcd-backup"
        )
        held = unwrapped(_one(example, SECRET_SET, f"{prefix}-bucket-secret")["secrets"])
        data = held[f"bucket-{planned.bucket}"]
        assert set(data) == {"bucketName", "projectID", "serviceaccount.json", "tokenAudience"}
        assert data["projectID"] == "my-project" and data["tokenAudience"] == planned.audience
        assert json.loads(data["serviceaccount.json"]) == {
            "universe_domain": "googleapis.com", "type": "external_account",
            "audience": f"//iam.googleapis.com/{provider['name']}",
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_url": "https://sts.googleapis.com/v1/token",
            "service_account_impersonation_url": "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/"
            f"{account['email']}:generateAccessToken",
            "credential_source": {"file": "/var/.gcp/token", "format": {"type": "text"}},
        }  # fmt: skip


def test_aws_buckets_are_private_encrypted_versioned_and_refuse_plain_http(examples: dict[str, Example]) -> None:
    """GIVEN an aws seed's bucket WHEN registered THEN ownership enforced, public access blocked, SSE, TLS only."""
    example = examples["aws"]
    for planned in _backups(example):
        name = f"arbor-seed-{planned.seed}-backup"
        assert _one(example, BUCKET["aws"], name)["region"] == planned.region
        assert _one(example, "aws:s3/bucketOwnershipControls:BucketOwnershipControls", f"{name}-ownership")["rule"] == {
            "objectOwnership": "BucketOwnerEnforced"
        }
        block = _one(example, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", f"{name}-public-access-block")
        assert all(block[k] is True for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls",
                                              "restrictPublicBuckets"))  # fmt: skip
        sse = _one(example, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
                   f"{name}-encryption")  # fmt: skip
        assert sse["rules"][0]["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "AES256"}
        versioning = _one(example, "aws:s3/bucketVersioning:BucketVersioning", f"{name}-versioning")
        assert versioning["versioningConfiguration"] == {"status": "Enabled"}
        lifecycle = _one(example, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
                         f"{name}-lifecycle")  # fmt: skip
        assert {r["id"] for r in lifecycle["rules"]} == {"abort-incomplete-multipart-uploads",
                                                         "expire-noncurrent-versions"}  # fmt: skip
        policy = json.loads(_one(example, "aws:s3/bucketPolicy:BucketPolicy", f"{name}-policy")["policy"])
        denied = {json.dumps(s["Condition"], sort_keys=True) for s in policy["Statement"] if s["Effect"] == "Deny"}
        assert denied == {'{"Bool": {"aws:SecureTransport": "false"}}', '{"NumericLessThan": {"s3:TlsVersion": "1.2"}}'}


def test_aws_backup_identity_may_use_its_bucket_alone_and_never_delete_a_version(examples: dict[str, Example]) -> None:
    """GIVEN an aws seed's backup role WHEN its policy is read THEN each grant is its bucket's, no version deleted."""
    example = examples["aws"]
    for planned in _backups(example):
        policy = json.loads(_one(example, "aws:iam/rolePolicy:RolePolicy", f"arbor-seed-{planned.seed}-backup-policy")
                            ["policy"])  # fmt: skip
        arn = f"arn:aws:s3:::{planned.bucket}"
        for statement in policy["Statement"]:
            assert statement["Resource"] in (arn, f"{arn}/*")
            actions = statement["Action"]
            if statement["Effect"] == "Deny":
                assert actions == ["s3:DeleteObjectVersion"]
                continue
            assert statement["Effect"] == "Allow"
            assert not [a for a in actions if "*" in a or "Version" in a or a.startswith("s3:PutBucket")]


def test_an_eks_seeds_bucket_is_used_by_workload_identity_and_no_key_exists(examples: dict[str, Example]) -> None:
    """GIVEN the aws example's EKS seeds WHEN registered THEN each bucket's role trusts its seed's etcd-backup tokens.

    As Gardener's BackupBucket credentials can be a WorkloadIdentity: the role `<bucket>` is assumed with the
    ServiceAccount `etcd-backup`'s tokens (audience sts.amazonaws.com) through the seed's own IAM OIDC provider, so
    no access key exists anywhere, and the seed's Secret of the bucket names the role.
    """
    example = examples["aws"]
    assert not example.of("aws:iam/accessKey:AccessKey", "arbor-seed")
    for planned in _backups(example):
        assert planned.audience == "sts.amazonaws.com"
        role = _one(example, "aws:iam/role:Role", f"arbor-seed-{planned.seed}-backup-role")
        assert role["name"] == planned.bucket
        trust = json.loads(role["assumeRolePolicy"])["Statement"]
        oidc = _one(example, "aws:iam/openIdConnectProvider:OpenIdConnectProvider", f"arbor-seed-{planned.seed}-oidc")
        host = oidc["url"].removeprefix("https://")
        assert trust == [{
            "Effect": "Allow", "Principal": {"Federated": oidc["arn"]}, "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringEquals": {f"{host}:aud": "sts.amazonaws.com"}, "StringLike": {f"{host}:sub": [
                "system:serviceaccount:shoot--*:etcd-backup", "system:serviceaccount:garden:etcd-backup"]}},
        }]  # fmt: skip
        held = unwrapped(_one(example, SECRET_SET, f"arbor-seed-{planned.seed}-bucket-secret")["secrets"])
        assert held[f"bucket-{planned.bucket}"] == {
            "bucketName": planned.bucket, "region": planned.region, "roleARN": role["arn"]
        }  # fmt: skip
        seed = next(s for s in example.plan.seeds if s.name == planned.seed)
        accounts = example.of("kubernetes:core/v1:ServiceAccount", f"arbor-seed-{planned.seed}")
        assert {a["metadata"]["namespace"] for a in accounts.values() if a["metadata"]["name"] == "etcd-backup"} == {
            "garden", *seed.shoot_namespaces
        }  # fmt: skip
        assert all(a["automountServiceAccountToken"] is False for a in accounts.values())
    # A shoot's reads of its entry ask a token of its namespace's account: its etcd-backup Secret waits for it.
    for shoot, prefix in SHOOTS.items():
        values = next(s for s in example.plan.shoots if s.name == shoot)
        account = ("kubernetes:core/v1:ServiceAccount", f"arbor-seed-{values.seed}-{values.seed_namespace}-etcd-backup")
        assert account in example.waits_for(ENTRY_SECRET, f"{prefix}-etcd-backup")


@pytest.mark.parametrize("shoot", SHOOTS)
def test_each_hosted_shoot_gets_its_entry_and_the_etcd_backup_secret(example: Example, shoot: str) -> None:
    """GIVEN a hosted shoot on a seed with backups WHEN registered THEN its entry and etcd-backup Secret exist.

    The entry is `<technical id>--<uid of its Shoot record>`, owned by that record, and names the seed's bucket;
    the Secret in the shoot's seed namespace has the keys etcd-backup-restore reads and the entry's prefix, its
    content kept secret.
    """
    values = next(s for s in example.plan.shoots if s.name == shoot)
    assert values.backup is not None
    prefix = SHOOTS[shoot]
    uid = f"uid-{prefix}-record"
    entry = _one(example, BACKUP_ENTRY, f"{prefix}-backup-entry")
    assert entry["metadata"]["name"] == f"{values.technical_id}--{uid}"
    assert entry["metadata"]["namespace"] == values.project_namespace
    assert entry["metadata"]["ownerReferences"] == [
        {"apiVersion": "arbor.dev/v1alpha1", "kind": "Shoot", "name": shoot, "uid": uid}
    ]
    assert entry["spec"] == {"bucketName": values.backup.bucket, "seedName": values.seed}
    assert (SHOOT_RECORD, f"{prefix}-record") in example.waits_for(BACKUP_ENTRY, f"{prefix}-backup-entry")
    # The seed holds the bucket's credentials once (`garden/bucket-<bucket>`, its SecretSet's), secret; the shoot's
    # Secret in its seed namespace is written from it with the entry's prefix (EntrySecret), keeping a reference.
    held = _one(example, SECRET_SET, f"arbor-seed-{values.seed}-bucket-secret")
    assert held["namespace"] == "garden"
    data = unwrapped(unwrapped(held["secrets"])[f"bucket-{values.backup.bucket}"])
    assert set(data) == SECRET_KEYS[example.provider] - {"storePrefix"}
    assert data["bucketName"] == values.backup.bucket
    assert isinstance(held["secrets"], dict) and "4dabf18193072939515e22adb298388d" in held["secrets"]
    written = _one(example, ENTRY_SECRET, f"{prefix}-etcd-backup")
    assert written["namespace"] == values.technical_id
    source = unwrapped(written["source"])
    assert source["secretRef"]["name"] == f"bucket-{values.backup.bucket}"
    assert source["storePrefix"] == f"{values.technical_id}--{uid}/etcd-main"
    assert source["digest"] == entry_store.data_digest({**data, "storePrefix": source["storePrefix"]})
    assert backup.ETCD_BACKUP_SECRET not in unwrapped(_one(example, SECRET_SET, f"{prefix}-secrets")["secrets"])
    # etcd main mounts it (backup-restore reads it), so it waits for it.
    assert (ENTRY_SECRET, f"{prefix}-etcd-backup") in example.waits_for(OBJECT_SET, f"{prefix}-etcd")


def test_the_garden_records_every_bucket_once_it_exists(example: Example) -> None:
    """GIVEN the example WHEN registered THEN a BackupBucket record per seed, named as its bucket, after the bucket."""
    records = example.of(BACKUP_BUCKET)
    for planned in _backups(example):
        name = f"arbor-seed-{planned.seed}-backup-record"
        assert records[name]["metadata"]["name"] == planned.bucket
        assert records[name]["spec"] == {
            "provider": {"type": example.provider, "region": planned.region},
            "seedName": planned.seed,
        }
        assert (BUCKET[example.provider], f"arbor-seed-{planned.seed}-backup") in example.waits_for(BACKUP_BUCKET, name)


@pytest.mark.parametrize("shoot", SHOOTS)
def test_a_risky_change_of_a_cloud_shoot_waits_for_a_snapshot_etcd_backup_restore_takes(
    example: Example, shoot: str
) -> None:
    """GIVEN a hosted shoot on a cloud seed WHEN registered THEN a snapshot step asks its etcd-backup-restore.

    Made, the step does nothing; a change of the minor version or the encryption configuration updates it, and it
    asks the sidecar in the shoot's seed namespace for a full snapshot through the seed's API; the encryption
    rewrite waits for it. No daily snapshot of arbor's own: etcd-backup-restore takes those.
    """
    values = next(s for s in example.plan.shoots if s.name == shoot)
    prefix = SHOOTS[shoot]
    step = _one(example, "command:local:Command", f"{prefix}-snapshot-before-change")
    assert (step["create"], step["update"]) == ("true", etcd_snapshot.SNAPSHOT_COMMAND)
    environment = unwrapped(step["environment"])
    request = json.loads(unwrapped(environment[etcd_snapshot.SNAPSHOT_ENV]))
    assert request["seedNamespace"] == values.seed_namespace and request["entryNamespace"] == values.project_namespace
    assert request["entry"] == f"{values.technical_id}--uid-{prefix}-record"
    minor = ".".join(values.kubernetes_version.split(".")[:2])
    assert json.loads(unwrapped(environment[RISKY_ENV]))[0] == minor
    rewrite = ("pulumi-python:dynamic/arbor:EncryptionRewrite", f"{prefix}-encryption-rewrite")
    assert ("command:local:Command", f"{prefix}-snapshot-before-change") in example.waits_for(*rewrite)
    assert not example.of("pulumi-python:dynamic/arbor:EtcdSnapshot")


@pytest.mark.parametrize("shoot", SHOOTS)
def test_a_cloud_shoots_entry_names_what_etcd_backup_restore_put_in_the_bucket(example: Example, shoot: str) -> None:
    """GIVEN a hosted shoot on a cloud seed WHEN registered THEN its EntryStatus reads its entry's etcd prefix.

    With a reference to the seed namespace's `etcd-backup` Secret (secret: the seed's kubeconfig), not the seed's
    key, after the entry record and the SecretSet that writes that Secret.
    """
    values, prefix = next(s for s in example.plan.shoots if s.name == shoot), SHOOTS[shoot]
    status = _one(example, "pulumi-python:dynamic/arbor:EntryStatus", f"{prefix}-entry-status")
    entry = f"{values.technical_id}--uid-{prefix}-record"
    assert (status["entry"], status["prefix"]) == (entry, f"{entry}/etcd-main")
    reference = unwrapped(status["backup"])
    assert set(reference) == {"secretRef", "storePrefix", "digest"}
    assert (reference["secretRef"]["namespace"], reference["secretRef"]["name"]) == (
        values.seed_namespace,
        "etcd-backup",
    )
    # No key of the seed's credentials (the entry's prefix is no secret).
    assert not (SECRET_KEYS[example.provider] - {"storePrefix"}) & set(json.dumps(reference).split('"'))
    waits = example.waits_for("pulumi-python:dynamic/arbor:EntryStatus", f"{prefix}-entry-status")
    assert {
        (BACKUP_ENTRY, f"{prefix}-backup-entry"),
        ("pulumi-python:dynamic/arbor:SecretSet", f"{prefix}-secrets"),
    } <= waits


def test_an_identity_the_plan_trusts_to_an_issuer_the_seed_lacks_is_named() -> None:
    """GIVEN workload identity planned and no issuer (or, for an AWS role, no IAM OIDC provider) THEN its user named."""
    url = pulumi.Output.from_input("https://issuer")
    with pytest.raises(ValueError, match="seed s: its bucket's identity needs the seed's token issuer"):
        trusted_issuer(None, "seed s: its bucket's identity")
    with pytest.raises(ValueError, match="shoot--p--s: its machines' role needs"):
        trusted_issuer(Issuer(url), "shoot--p--s: its machines' role", named=True)
    found = Issuer(url, pulumi.Output.from_input("arn:aws:iam::1:oidc-provider/issuer"))
    assert trusted_issuer(found, "r", named=True) is found
    assert trusted_issuer(Issuer(url), "gcp pool") is not None
