"""Encryption at rest on real etcd: a garden-only landscape whose API server encrypts configmaps, then stops, rotates.

The tests run in file order on one stack: each step is one `up` of a changed spec, checked by reading raw values
from the garden's etcd with etcdctl (kwokctl's etcd listens in plain HTTP on loopback).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

from tests.integration.engine import (
    ROOT,
    Stack,
    cluster_dir,
    kubectl,
    make_stack,
    remove_stack,
    require_environment,
    steps_by_type,
)

pytestmark = [pytest.mark.integration, pytest.mark.own_landscape]
REWRITE = "pulumi-python:dynamic/arbor:EncryptionRewrite"
PLAINTEXT = b"k8s\x00"  # kube-apiserver's protobuf envelope: what an unencrypted object starts with
# Every key the garden's configuration held during the tests; none may be readable in the state.
SEEN_KEYS: set[str] = set()


def landscape(**encryption: Any) -> dict[str, Any]:
    """A garden-only landscape whose API server encrypts as given."""
    return {"garden": {"provider": "local", "cluster": {"nodes": 0}, "encryption": encryption}}


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    """A throwaway garden encrypting configmaps with aescbc, converged once."""
    require_environment()
    made = make_stack(
        ROOT, ROOT / "stacks", {"arbor:landscape": landscape(provider="aescbc", resources=["configmaps"])}
    )
    try:
        made.up()
        yield made
    finally:
        remove_stack(made)


def converge(stack: Stack, **encryption: Any) -> None:
    """Sets the garden's encryption and runs `up`."""
    stack.set_config({"arbor:landscape": landscape(**encryption)})
    stack.up()


def etcd_value(stack: Stack, key: str, cluster: str = "garden") -> bytes:
    """The raw value of `key` in the etcd of one of the stack's clusters (the garden's unless named)."""
    config = next(yaml.safe_load_all((cluster_dir(f"{stack.name}-{cluster}") / "kwok.yaml").read_text()))
    etcd = next(c for c in config["components"] if c["name"] == "etcd")
    url = next(a.split("=", 1)[1] for a in etcd["args"] if a.startswith("--listen-client-urls="))
    cmd = ["etcdctl", f"--endpoints={url.replace('0.0.0.0', '127.0.0.1')}", "get", key, "--print-value-only"]
    value = subprocess.run(cmd, capture_output=True, check=True).stdout
    assert value, f"{key} is not in etcd"
    return value


def garden_kubeconfig(stack: Stack) -> str:
    """The garden's admin kubeconfig."""
    return str(stack.outputs()["kubeconfigs"]["garden"])


def rewritten(stack: Stack) -> dict[str, int]:
    """The counts of the garden's last rewrite."""
    resource = next(r for r in stack.export()["deployment"]["resources"] if r["type"] == REWRITE)
    return dict(resource["outputs"]["rewritten"])


def checkpoint(stack: Stack) -> str:
    """The raw checkpoint of the stack in the file backend, as stored (secrets as ciphertext)."""
    stacks = Path(urlparse(os.environ["PULUMI_BACKEND_URL"]).path) / ".pulumi" / "stacks" / "arbor"
    plain, packed = stacks / f"{stack.name}.json", stacks / f"{stack.name}.json.gz"
    return plain.read_text() if plain.exists() else gzip.decompress(packed.read_bytes()).decode()


def key_secrets(stack: Stack) -> list[str]:
    """The keys in the garden's encryption configuration file, as the API server reads them."""
    config = yaml.safe_load(
        (cluster_dir(f"{stack.name}-garden") / "arbor" / "encryption-configuration.yaml").read_text()
    )
    keys = [k["secret"] for p in config["resources"][0]["providers"] for v in p.values() for k in v.get("keys", [])]
    SEEN_KEYS.update(keys)
    return keys


def test_added_resource_is_encrypted_in_etcd(stack: Stack, tmp_path: Path) -> None:
    """GIVEN configmaps configured WHEN a configmap is written THEN etcd holds it, and every existing one, encrypted."""
    kubeconfig = garden_kubeconfig(stack)
    kubectl(kubeconfig, tmp_path, "create", "configmap", "probe", "-n", "default", "--from-literal=word=plaintext")
    kubectl(kubeconfig, tmp_path, "create", "secret", "generic", "probe", "-n", "default", "--from-literal=k=v")
    assert etcd_value(stack, "/registry/configmaps/default/probe").startswith(b"k8s:enc:aescbc:v1:key1:")
    assert etcd_value(stack, "/registry/secrets/default/probe").startswith(b"k8s:enc:aescbc:v1:key1:")
    assert etcd_value(stack, "/registry/configmaps/kube-system/extension-apiserver-authentication").startswith(
        b"k8s:enc:aescbc:v1:key1:"
    )
    assert etcd_value(stack, "/registry/namespaces/default").startswith(PLAINTEXT)
    assert set(rewritten(stack)) == {"secrets", "configmaps"}


def test_resources_and_provider_in_one_update_are_refused(stack: Stack) -> None:
    """GIVEN configmaps with aescbc WHEN resources and provider change together THEN preview refuses with the field."""
    stack.set_config({"arbor:landscape": landscape(provider="aesgcm", resources=[], keyRotation="prepare")})
    try:
        result = stack.run("preview", check=False)
    finally:
        stack.set_config({"arbor:landscape": landscape(provider="aescbc", resources=["configmaps"])})
    assert result.returncode != 0
    assert "landscape.garden.encryption: resources and provider change in one update" in result.stdout + result.stderr


def test_removed_resource_is_stored_in_plaintext(stack: Stack) -> None:
    """GIVEN encrypted configmaps WHEN configmaps are removed THEN every configmap is plaintext in etcd, secrets not."""
    converge(stack, provider="aescbc", resources=[])
    assert etcd_value(stack, "/registry/configmaps/default/probe").startswith(PLAINTEXT)
    assert etcd_value(stack, "/registry/configmaps/kube-system/extension-apiserver-authentication").startswith(
        PLAINTEXT
    )
    assert etcd_value(stack, "/registry/secrets/default/probe").startswith(b"k8s:enc:aescbc:v1:key1:")
    counts = rewritten(stack)
    assert list(counts) == ["configmaps"] and counts["configmaps"] >= 2


def test_rotation_prepare_rewrites_with_the_new_key_and_complete_drops_the_old(stack: Stack, tmp_path: Path) -> None:
    """GIVEN aescbc key1 WHEN a rotation to secretbox is prepared, then completed THEN key2 writes; key1 goes."""
    key_secrets(stack)
    converge(stack, provider="secretbox", resources=[], keyRotation="prepare")
    assert etcd_value(stack, "/registry/secrets/default/probe").startswith(b"k8s:enc:secretbox:v1:key2:")
    assert len(key_secrets(stack)) == 2

    converge(stack, provider="secretbox", resources=[], keyRotation="complete")
    assert len(key_secrets(stack)) == 1
    secret = json.loads(kubectl(garden_kubeconfig(stack), tmp_path, "get", "secret", "probe", "-o", "json"))
    assert secret["data"] == {"k": "dg=="}


def test_second_up_changes_nothing(stack: Stack) -> None:
    """GIVEN a converged encrypted garden WHEN previewed with refresh THEN nothing changes."""
    assert steps_by_type(stack.preview_json("--refresh"), ops=("same", "refresh")) == {}


def test_no_key_or_private_key_in_plaintext_in_the_state(stack: Stack) -> None:
    """GIVEN the stack after `up` WHEN its raw checkpoint is scanned THEN no encryption or private key is readable."""
    state = checkpoint(stack)
    assert "PRIVATE KEY" not in state
    key_secrets(stack)
    assert len(SEEN_KEYS) == 2, "key1 (aescbc) and key2 (secretbox)"
    for secret in SEEN_KEYS:
        assert secret not in state
        assert secret[:24] not in state
