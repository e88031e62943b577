"""A local seed given by kubeconfig on the real engine, its token issuer named: no key, as on an EKS or GKE seed.

The test plays the seed's operator: it runs a kwokctl cluster whose API server publishes its ServiceAccount
issuer's keys to anyone, gives arbor its kubeconfig as secret config and names the issuer in the seed's spec
(`cluster.issuer.url`). arbor connects to the cluster, hosts dev/web's control plane there and makes the seed's
bucket in the landscape's object store with a role the seed's `etcd-backup` tokens assume through the store's STS:
the store fetches the issuer's keys from where the spec says, no user or key exists, and a second run changes
nothing.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from minio.minioadmin import MinioAdmin

from components.reconciler import store_identity
from tests.integration.engine import (
    LOCAL_LANDSCAPE,
    ROOT,
    SECOND_SEED,
    Stack,
    given_seed,
    items,
    make_stack,
    remove_stack,
    require_environment,
    steps_by_type,
)
from tests.integration.test_backups import admin_args, from_seed, held, secret_data, seed_client

pytestmark = [pytest.mark.integration, pytest.mark.own_landscape]

SEED = f"seed/{SECOND_SEED['name']}"
NAMESPACE = "shoot--dev--web"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Garden and store made by arbor, the given seed, dev/web hosted on it; converged once."""
    require_environment()
    stack = make_stack(ROOT, ROOT / "stacks", {})
    try:
        seed = given_seed(stack, SECOND_SEED, tmp_path_factory.mktemp("given"))
        garden = {**LOCAL_LANDSCAPE["garden"]}
        garden.pop("encryption", None)
        web = {**LOCAL_LANDSCAPE["shoots"][0], "seed": seed["name"]}
        stack.set_config({"arbor:landscape": {"garden": garden, "seeds": [seed], "shoots": [web]}})
        stack.make_up()
        yield stack
    finally:
        remove_stack(stack, destroy=False)


@pytest.fixture(scope="module")
def backup(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """dev/web's `etcd-backup` Secret in the given seed."""
    return secret_data(stack, tmp_path_factory.mktemp("backup"), NAMESPACE, seed=SEED)


def test_the_given_seeds_bucket_is_its_tokens_role_and_no_key_exists(stack: Stack, backup: dict[str, Any]) -> None:
    """GIVEN the given seed naming its issuer WHEN converged THEN its bucket's identity is a role, no user or key."""
    assert {"roleARN", "tokenAudience"} <= set(held(backup))
    assert not {"accessKeyID", "secretAccessKey"} & set(held(backup))
    assert backup["tokenAudience"] == f"arbor-seed:{SECOND_SEED['name']}"
    # The store trusts the issuer where the spec says it is published, and has no user for the bucket.
    admin = MinioAdmin(**admin_args(stack))
    config = yaml.safe_load((stack.config_dir / f"Pulumi.{stack.name}.yaml").read_text())["config"]
    issuer = config["arbor:landscape"]["seeds"][0]["cluster"]["issuer"]["url"]
    assert store_identity.configured(admin, backup["bucketName"])["config_url"] == issuer + store_identity.DISCOVERY
    users = json.loads(admin.user_list() or "{}")
    assert not [u for u in users.values() if backup["bucketName"] in str(u.get("policyName", ""))], users
    (bucket,) = stack.resource_outputs("pulumi-python:dynamic/arbor:StoreBucket").values()
    assert bucket.get("accessKey") is None and bucket.get("secretKey") is None


def test_the_hosted_shoots_and_the_seeds_tokens_reach_the_bucket(stack: Stack, backup: dict[str, Any]) -> None:
    """GIVEN dev/web on the given seed WHEN its namespace's and the seed's `etcd-backup` tokens are used THEN both work.

    Each assumes the role with a token the given seed's API server signed: the store checked it against the keys
    it fetched from the issuer the spec names. The entry's prefix takes an object and lists it back.
    """
    prefix = backup["storePrefix"]
    client = seed_client(backup)
    client.put_object(backup["bucketName"], f"{prefix}/given-seed-probe", io.BytesIO(b"x"), 1)
    names = [o.object_name for o in client.list_objects(backup["bucketName"], prefix=f"{prefix}/")]
    assert f"{prefix}/given-seed-probe" in names
    seeds_own = seed_client(from_seed(stack, backup, seed=SEED))
    assert any(seeds_own.list_objects(backup["bucketName"], prefix=f"{prefix}/"))


def test_arbor_makes_no_discovery_binding_and_the_shoot_runs_on_the_given_seed(stack: Stack, tmp_path: Path) -> None:
    """GIVEN the given seed WHEN converged THEN its issuer is the operator's to publish; dev/web's pods run there."""
    bindings = [b["metadata"]["name"] for b in items(stack, SEED, tmp_path, "clusterrolebindings")]
    assert "operator:service-account-issuer-discovery" in bindings
    assert "arbor.dev:service-account-issuer-discovery" not in bindings
    pods = items(stack, SEED, tmp_path, "pods", "-n", NAMESPACE)
    assert {p["spec"].get("nodeName") for p in pods} == {"given-node-0"}
    running = {p["metadata"]["labels"].get("role") for p in pods if p["status"].get("phase") == "Running"}
    assert "main" in running, running  # etcd main, which runs as the seed's `etcd-backup` with its token


def test_a_second_run_changes_nothing(stack: Stack) -> None:
    """GIVEN the converged stack WHEN previewed THEN every step is `same`: the given seed's issuer reads as set."""
    assert steps_by_type(stack.preview_json()) == {}
