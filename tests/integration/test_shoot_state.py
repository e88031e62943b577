"""Shoot state on the real engine: each hosted shoot's persisted secrets and machines, sealed in its entry.

The local landscape's seed has backups, so `up` uploads each hosted shoot's state into its entry in the real MinIO
store, and the ShootState record in the garden describes it. The tests open it with the key from the stack's state
(as a restore does) and compare it with what the seed holds.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from components.reconciler import kwokctl, shoot_state, state_key
from components.reconciler.kube import certificate_authority, server_of
from components.render import shoot_state as rendered
from tests.integration.engine import Stack, items, kube_items, kubectl, steps_by_type, token_kubeconfig
from tests.integration.test_backups import HOSTED, entry_status, root_client, secret_data, seed_client
from tests.integration.test_encryption import etcd_value
from tests.integration.test_local_mcm import SETTLE_S, machine_objects, processes, unowned_deployments

STATE = "pulumi-python:dynamic/arbor:ShootStateBackup"
CLUSTER = "pulumi-python:dynamic/arbor:LocalCluster"
# The namespace of the user objects a lost cluster must get back.
KEPT = "kept"


def running(stack: Stack, tmp_path: Path, namespace: str = "") -> dict[str, bool]:
    """Whether each Machine of the stack's seeds (of one seed namespace) runs (MCM made its node), by name."""
    machines = machine_objects(stack, tmp_path, "machines")
    return {m["metadata"]["name"]: (m.get("status") or {}).get("currentStatus", {}).get("phase") == "Running"
            for m in machines if m["metadata"]["namespace"] == (namespace or m["metadata"]["namespace"])}  # fmt: skip


def shoot_nodes(stack: Stack, tmp_path: Path) -> dict[str, str]:
    """dev/web's Nodes: name to uid."""
    return {n["metadata"]["name"]: n["metadata"]["uid"] for n in items(stack, "shoot/dev/web", tmp_path, "nodes")}


def records(stack: Stack, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """The ShootState records of the garden, by shoot name."""
    return {r["metadata"]["name"]: r for r in items(stack, "garden", tmp_path, "shootstates", "-A")}


def state_of(stack: Stack, shoot: str) -> dict[str, Any]:
    """A shoot's ShootStateBackup outputs from the stack's state: its key, object and the seed's `etcd-backup`."""
    return stack.resource_outputs(STATE)[f"arbor-shoot-{shoot}-shoot-state"]


def test_each_hosted_shoots_state_is_sealed_in_its_entry_and_opens_with_the_stacks_key(
    local_stack: Stack, tmp_path: Path
) -> None:
    """GIVEN the converged landscape, its machines made WHEN its shoot states are read THEN each is the seed's.

    The object holds no secret in the clear; opened with the key in the stack's state, it carries the shoot's CA
    (the certificate the seed serves, and its private key), its other CAs and keys, etcd's encryption configuration,
    and every Machine machine-controller-manager made with its node. The record shows its generation and checksum,
    never the content.
    """
    deadline = time.monotonic() + SETTLE_S
    while (unowned_deployments(local_stack, tmp_path) or not all(running(local_stack, tmp_path).values())) and (
        time.monotonic() < deadline
    ):
        time.sleep(5)
    local_stack.up()  # refresh finds the machines MCM made since, and uploads them
    described = records(local_stack, tmp_path)
    assert set(described) == {shoot for _, shoot in HOSTED.values()}
    for namespace, (project, shoot) in HOSTED.items():
        record, outputs = described[shoot], state_of(local_stack, f"{project}-{shoot}")
        assert record["metadata"]["namespace"] == f"garden-{project}"
        assert "BEGIN" not in json.dumps(record) and record["status"]["size"] > 0
        assert record["spec"]["object"] == outputs["object"]
        backup = secret_data(local_stack, tmp_path, namespace)
        sealed = seed_client(backup).get_object(backup["bucketName"], record["spec"]["object"]).read()
        assert sealed.startswith(shoot_state.MAGIC) and b"PRIVATE KEY" not in sealed
        # Opened with the key its reference reads from the garden's InternalSecret: the state keeps the key once.
        assert outputs["key"][state_key.SECRET_REF]["name"] == f"{shoot}.shoot-state-key"
        document = shoot_state.fetch(outputs)
        assert record["status"]["generation"] >= 1
        assert rendered.checksum(rendered.canonical(document)) == record["status"]["checksum"]
        secrets = document["secrets"]
        assert set(secrets) >= {"ca", "ca-client", "ca-etcd", "ca-front-proxy", "service-account-key",
                                "etcd-encryption-secret"}  # fmt: skip
        (served,) = items(local_stack, "seed/local-1", tmp_path, "secrets", "-n", namespace,
                          "--field-selector", "metadata.name=ca")  # fmt: skip
        assert secrets["ca"]["ca.crt"] == base64.b64decode(served["data"]["ca.crt"]).decode()
        cert = x509.load_pem_x509_certificate(secrets["ca"]["ca.crt"].encode())
        key = serialization.load_pem_private_key(secrets["ca"]["ca.key"].encode(), password=None)
        assert key.public_key() == cert.public_key()
        made = {m["metadata"]["name"]: m for m in machine_objects(local_stack, tmp_path, "machines")
                if m["metadata"]["namespace"] == namespace}  # fmt: skip
        kept = {m["name"]: m for m in document["machines"]["machines"]}
        assert made and set(kept) == set(made)
        for name, machine in kept.items():
            assert machine["node"] == made[name]["metadata"]["labels"]["node"] and machine["spec"].get("providerID")
        with pytest.raises(shoot_state.StateError):
            shoot_state.fetch({**outputs, "key": shoot_state.new_key()})


def test_a_state_is_uploaded_again_when_it_is_gone_and_not_when_nothing_moved(
    local_stack: Stack, tmp_path: Path
) -> None:
    """GIVEN a converged landscape WHEN nothing moved THEN no upload; WHEN one state is deleted THEN it comes back.

    The preview (with refresh, as `make up`) lists the one shoot's state as an update, and `up` uploads its next
    generation, which opens as before.
    """
    local_stack.up()
    assert STATE not in steps_by_type(local_stack.preview_json("--refresh"), ops=("same", "refresh"))
    before = records(local_stack, tmp_path)["web"]
    root_client(local_stack).remove_object(before["spec"]["bucketName"], before["spec"]["object"])

    steps = steps_by_type(local_stack.preview_json("--refresh"), ops=("same", "refresh"))
    assert steps.get(STATE) == ["update"]
    local_stack.up()
    after = records(local_stack, tmp_path)["web"]
    assert after["status"]["generation"] == before["status"]["generation"] + 1
    assert after["status"]["checksum"] == before["status"]["checksum"]
    assert shoot_state.fetch(state_of(local_stack, "dev-web"))["secrets"]["ca"]


def test_machines_lost_from_the_seed_come_back_from_the_state_and_no_node_is_replaced(
    local_stack: Stack, tmp_path: Path
) -> None:
    """GIVEN dev/web's machine objects lost from its seed (MCM down, as in a seed rebuilt) WHEN up THEN adopted.

    The seed namespace's `etcd-backup` Secret is gone too, as in a seed made again: the restore names it by
    reference and cannot read the bucket until the EntrySecret writes it again. The preview lists the restore; `up`
    writes the Secret, then the state's Machines and MachineSets back before the pool's MachineDeployment, MCM
    finds each machine's node by its name and adopts it: the same Machines run, and the shoot has the same Nodes
    (names and uids), none new.
    """
    namespace, seed = "shoot--dev--web", local_stack.outputs()["kubeconfigs"]["seed/local-1"]
    local_stack.up()  # the state holds the machines as they are now
    nodes = {
        n["metadata"]["name"]: n["metadata"]["uid"] for n in items(local_stack, "shoot/dev/web", tmp_path, "nodes")
    }
    before = sorted(m for m in running(local_stack, tmp_path, namespace))
    assert before and set(before) <= set(nodes)
    for (owner, _), pid in processes(local_stack).items():
        if owner == namespace:
            os.kill(pid, signal.SIGKILL)
    for kind in ("machinedeployments", "machinesets", "machines"):
        for obj in machine_objects(local_stack, tmp_path, kind):
            if obj["metadata"]["namespace"] == namespace:
                what = (f"{kind}.machine.sapcloud.io", obj["metadata"]["name"], "-n", namespace)
                kubectl(seed, tmp_path, "patch", *what, "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
                kubectl(seed, tmp_path, "delete", *what, "--wait=false", "--ignore-not-found")
    deadline = time.monotonic() + 60
    while running(local_stack, tmp_path, namespace) and time.monotonic() < deadline:
        time.sleep(1)
    assert not running(local_stack, tmp_path, namespace)
    kubectl(seed, tmp_path, "delete", "secret", "etcd-backup", "-n", namespace)

    steps = steps_by_type(local_stack.preview_json("--refresh"), ops=("same", "refresh"))
    assert steps.get("pulumi-python:dynamic/arbor:MachineRestore") == ["update"]
    assert steps.get("pulumi-python:dynamic/arbor:EntrySecret") == ["update"]
    local_stack.up()
    deadline = time.monotonic() + SETTLE_S
    while (
        not ((now := running(local_stack, tmp_path, namespace)) and all(now.values())) and time.monotonic() < deadline
    ):
        time.sleep(5)
    assert sorted(now) == before and all(now.values()), now
    after = {
        n["metadata"]["name"]: n["metadata"]["uid"] for n in items(local_stack, "shoot/dev/web", tmp_path, "nodes")
    }
    assert after == nodes


def shoot_objects(kubeconfig: str, tmp_path: Path) -> dict[str, tuple[str, Any]]:
    """The user objects of namespace `kept` in a shoot: kind/name to uid and data."""
    found = kube_items(kubeconfig, tmp_path, "namespaces,configmaps,secrets,serviceaccounts", "-n", KEPT)
    return {
        f"{o['kind']}/{o['metadata']['name']}": (o["metadata"]["uid"], o.get("data"))
        for o in found
        if o["metadata"].get("namespace", o["metadata"]["name"]) == KEPT and o["metadata"]["name"] != "kube-root-ca.crt"
    }


def test_a_lost_shoot_cluster_comes_back_from_its_latest_snapshot_as_the_same_cluster(
    local_stack: Stack, tmp_path: Path
) -> None:
    """GIVEN user objects in dev/web, snapshotted WHEN its cluster is lost (etcd and PKI) and up runs THEN all back.

    The refreshing preview lists the cluster made again; `up` starts it from the entry's newest snapshot with the
    shoot's own PKI: the same objects (uids, data), Secrets still encrypted in etcd, the same Nodes, and the admin
    kubeconfig and service-account token issued before the loss still work. The cluster names its snapshot.
    """
    local_stack.up()
    admin = local_stack.admin_kubeconfig("dev/web")
    kubectl(admin, tmp_path, "create", "namespace", KEPT)
    kubectl(admin, tmp_path, "-n", KEPT, "create", "configmap", "settings", "--from-literal=colour=blue")
    kubectl(admin, tmp_path, "-n", KEPT, "create", "secret", "generic", "password", "--from-literal=value=s3cret")
    kubectl(admin, tmp_path, "-n", KEPT, "create", "serviceaccount", "robot")
    token = kubectl(admin, tmp_path, "-n", KEPT, "create", "token", "robot", "--duration=2h").strip()
    objects, nodes = shoot_objects(admin, tmp_path), shoot_nodes(local_stack, tmp_path)
    assert len(objects) == 5 and nodes  # with the namespace's default ServiceAccount
    asked = dataclasses.replace(local_stack, env={**(local_stack.env or {}), "ARBOR_BACKUP_REQUEST": f"t{time.time()}"})
    asked.up()
    snapshot = entry_status(local_stack, tmp_path, "shoot--dev--web")["name"]

    kwokctl.delete(kwokctl.Cluster(f"{local_stack.name}-shoot-dev-web", os.environ["KWOK_WORKDIR"]))
    steps = steps_by_type(local_stack.preview_json("--refresh"), ops=("same", "refresh"))
    assert "create" in steps.get(CLUSTER, []), steps
    local_stack.up()

    assert local_stack.resource_outputs(CLUSTER)["arbor-shoot-dev-web-cluster"]["restoredFrom"] == snapshot
    assert shoot_objects(admin, tmp_path) == objects
    assert shoot_nodes(local_stack, tmp_path) == nodes
    assert etcd_value(local_stack, f"/registry/secrets/{KEPT}/password", "shoot-dev-web").startswith(b"k8s:enc:")
    who = kubectl(token_kubeconfig(admin, server_of(admin), token), tmp_path, "auth", "whoami")
    assert f"system:serviceaccount:{KEPT}:robot" in who
    # Served with the shoot's CA: the one its seed namespace's `ca` Secret holds.
    ca = base64.b64decode(items(local_stack, "seed/local-1", tmp_path, "secrets", "-n", "shoot--dev--web",
                                "--field-selector", "metadata.name=ca")[0]["data"]["ca.crt"]).decode()  # fmt: skip
    assert certificate_authority(admin) == ca
