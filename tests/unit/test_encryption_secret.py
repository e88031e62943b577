"""A hosted shoot's encryption keys write the configuration's Secret themselves: the state keeps the keys once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime import rpc

from components.checks import parse_landscape
from components.plan.planner import plan_landscape
from components.reconciler import credential_secrets, kwokctl, local_cluster, secret_set
from components.reconciler import encryption as keys_and_rewrite
from components.reconciler.kube import Kube
from components.render import controlplane, objects
from components.render.encryption import render_config
from components.render.packing import pack
from tests.unit.landscape_mocks import registered
from tests.unit.spec_cases import base
from tests.unit.test_credential_secrets import COLLECTION, NAMESPACE, Cluster
from tests.unit.test_shoot_state import SeedSecrets

PROVIDER = keys_and_rewrite.EncryptionKeysProvider()
SECRET = controlplane.ENCRYPTION_SECRET
RESOURCES = ["configmaps"]
KEYS_INPUTS = {"provider": "aescbc", "keyRotation": "complete", "version": keys_and_rewrite.PROVIDER_VERSION,
               "keys": None}  # fmt: skip


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Cluster:
    """A seed whose API is the in-memory Cluster."""
    fake = Cluster()
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: fake))
    return fake


def hosted(**changed: Any) -> dict[str, Any]:
    """A hosted shoot's keys' inputs as the program sends them: writing the configuration in its seed namespace."""
    where = {"kubeconfig": "k", "namespace": NAMESPACE, "secrets": keys_and_rewrite.secret_layout(),
             "cluster": "local:seed"}  # fmt: skip
    props = credential_secrets.writing({**KEYS_INPUTS, **changed}, where)
    return {**props, "resources": RESOURCES, "configHash": None, "writeKey": None}


def created() -> tuple[dict[str, Any], dict[str, Any]]:
    """Keys created and refreshed: their outputs and the inputs the next `check` makes."""
    outs = PROVIDER.create(hosted()).outs or {}
    read = PROVIDER.read("id", outs)
    assert read.outs is not None and read.inputs is not None
    return read.outs, PROVIDER.check(read.inputs, hosted()).inputs


def test_hosted_keys_write_the_configuration_and_keep_only_its_hashes(cluster: Cluster) -> None:
    """GIVEN a hosted shoot's keys WHEN created THEN the Secret holds the configuration; the state, the keys once."""
    outs, news = created()
    config = render_config(RESOURCES, outs["keys"])
    assert cluster.data(SECRET) == {controlplane.ENCRYPTION_KEY: config}
    assert outs["configHash"] == keys_and_rewrite.config_hash(config) and outs["writeKey"] == "key1"
    assert outs[credential_secrets.CHECKSUMS] == {SECRET: objects.checksum({controlplane.ENCRYPTION_KEY: config})}
    secret = outs["keys"][0]["secret"]
    assert json.dumps(outs).count(secret) == 1 and "config" not in outs
    # The refresh records what reveals no key; `check` carries it on, so the next preview knows it.
    assert secret not in json.dumps(news) and news["keys"] is None
    assert {k: news[k] for k in keys_and_rewrite.CARRIED} == {k: outs[k] for k in keys_and_rewrite.CARRIED}
    assert not PROVIDER.diff("id", outs, news).changes


def test_a_rotation_carries_nothing_and_writes_the_new_configuration(cluster: Cluster) -> None:
    """GIVEN hosted keys WHEN a rotation is prepared THEN nothing is carried and the update writes the new text."""
    outs, _ = created()
    read = PROVIDER.read("id", outs).inputs or {}
    news = PROVIDER.check(read, hosted(keyRotation="prepare")).inputs
    assert all(news[k] is None for k in ("configHash", "writeKey", credential_secrets.CHECKSUMS))
    assert PROVIDER.diff("id", outs, news).changes
    updated = PROVIDER.update("id", outs, news).outs or {}
    assert [k["name"] for k in updated["keys"]] == ["key2", "key1"] and updated["writeKey"] == "key2"
    assert cluster.data(SECRET) == {controlplane.ENCRYPTION_KEY: render_config(RESOURCES, updated["keys"])}


@pytest.mark.parametrize("drift", ["deleted", "edited"])
def test_a_drifted_secret_is_written_again_from_the_same_keys(cluster: Cluster, drift: str) -> None:
    """GIVEN hosted keys WHEN their Secret is deleted or edited THEN an update writes it again, the keys kept."""
    outs, news = created()
    path = f"{COLLECTION}/{SECRET}"
    if drift == "deleted":
        cluster.delete(path)
    else:
        cluster.objects[path]["data"] = {controlplane.ENCRYPTION_KEY: "ZWRpdGVk"}
    drifted = PROVIDER.read("id", outs).outs or {}
    assert PROVIDER.diff("id", drifted, news).changes
    # The preview knows what the rewrite will report: the same configuration.
    assert news["configHash"] == outs["configHash"]
    updated = PROVIDER.update("id", drifted, news).outs or {}
    assert updated["keys"] == outs["keys"] and updated["configHash"] == outs["configHash"]
    assert cluster.data(SECRET) == {controlplane.ENCRYPTION_KEY: render_config(RESOURCES, outs["keys"])}


def test_older_keys_start_writing_with_one_update_and_keep_their_keys(cluster: Cluster) -> None:
    """GIVEN keys an older arbor made (its SecretSet wrote the Secret) WHEN they write it now THEN one update."""
    older = PROVIDER.create(dict(KEYS_INPUTS)).outs or {}
    assert "configHash" not in older and cluster.objects == {}
    news = PROVIDER.check(dict(KEYS_INPUTS), hosted()).inputs
    assert PROVIDER.diff("id", older, news).changes
    updated = PROVIDER.update("id", older, news).outs or {}
    assert updated["keys"] == older["keys"]
    assert cluster.data(SECRET) == {controlplane.ENCRYPTION_KEY: render_config(RESOURCES, older["keys"])}


def test_a_garden_or_seeds_keys_write_nothing_and_keep_their_inputs(cluster: Cluster) -> None:
    """GIVEN keys with nowhere to write WHEN created, refreshed, checked THEN nothing written, inputs as they were."""
    outs = PROVIDER.create(dict(KEYS_INPUTS)).outs or {}
    assert set(outs) == set(KEYS_INPUTS) and cluster.objects == {}
    assert PROVIDER.read("id", outs).inputs is None
    assert PROVIDER.check(dict(KEYS_INPUTS), dict(KEYS_INPUTS)).inputs == KEYS_INPUTS
    assert not PROVIDER.diff("id", outs, dict(KEYS_INPUTS)).changes


def test_deleted_keys_remove_the_secret_they_wrote(cluster: Cluster) -> None:
    """GIVEN hosted keys WHEN deleted (the shoot is) THEN their Secret goes with them."""
    outs, _ = created()
    PROVIDER.delete("id", outs)
    assert cluster.objects == {}


def test_the_local_cluster_reads_the_configuration_where_the_keys_wrote_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN `encryptionConfig` naming the seed's Secret WHEN compared and resolved THEN as the text it names.

    Its digest is the text's, so an older state that held the text is no change; the file gets the Secret's text.
    """
    config = "kind: EncryptionConfiguration\n"
    where = local_cluster.file_in_seed("kubeconfig-file:/seed", NAMESPACE, SECRET, controlplane.ENCRYPTION_KEY,
                                       keys_and_rewrite.config_hash(config))  # fmt: skip
    assert local_cluster.digest(where) == local_cluster.digest(config)
    provider = local_cluster.LocalClusterProvider()
    olds = {"clusterName": "c", "workdir": str(tmp_path), "kubernetesVersion": "v1", "version": "3",
            "encryptionConfig": local_cluster.digest(config), "extraClientCas": None}  # fmt: skip
    assert not provider.diff("c", olds, {**olds, "encryptionConfig": where}).changes
    assert provider.diff("c", olds, {**olds, "encryptionConfig": {**where, "digest": "sha256:other"}}).changes
    # A preview that does not know it yet (its keys update in the same run) leaves the comparison to the `up`.
    assert not provider.diff("c", olds, {**olds, "encryptionConfig": rpc.UNKNOWN}).changes
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: SeedSecrets({SECRET: {}})))
    with pytest.raises(kwokctl.KwokError, match=f"^the encryption configuration: Secret {NAMESPACE}/{SECRET} has no"):
        local_cluster._content(where)
    monkeypatch.setattr(
        Kube, "from_kubeconfig", staticmethod(lambda _: SeedSecrets({SECRET: {controlplane.ENCRYPTION_KEY: config}}))
    )
    assert local_cluster._content(where) == config and local_cluster._content(config) == config


def test_a_set_whose_secrets_others_write_is_never_read_as_gone(cluster: Cluster) -> None:
    """GIVEN a SecretSet left with no Secret of its own WHEN refreshed THEN it stays (else every `up` made it again)."""
    provider = secret_set.SecretSetProvider()
    props = {"kubeconfig": "k", "namespace": NAMESPACE, "secrets": pack({}), "others": [SECRET],
             "version": secret_set.PROVIDER_VERSION}  # fmt: skip
    outs = provider.create(props).outs or {}
    assert outs["hashes"] == {} and provider.read("id", outs).id == "id"


def test_a_hosted_shoots_encryption_key_is_held_by_its_keys_alone() -> None:
    """GIVEN the local landscape WHEN registered THEN a hosted shoot's keys write the Secret; nothing else holds it.

    Its local cluster is given where the Secret is. A self-hosted local shoot's keys write it in its machine's
    directory, and its cluster is given where it is there too (its static pods' OSC still carries the text).
    """
    built, mocks = registered(plan_landscape(parse_landscape(base()), "local"))
    prefix = "arbor-shoot-dev-web"
    keys = mocks.inputs[f"{prefix}-encryption-keys"]
    assert keys["namespace"] == "shoot--dev--web" and set(keys["secrets"]) == {SECRET}
    assert any("shoot--dev--web" in dep for dep in built.edges[f"{prefix}-encryption-keys"])
    mock_secret = "bW9jaw=="  # landscape_mocks' key
    holders = {name for name, inputs in mocks.inputs.items() if mock_secret in json.dumps(inputs, default=str)}
    assert not {h for h in holders if h.startswith(prefix)}, holders
    given = mocks.inputs[f"{prefix}-cluster"]["encryptionConfig"]
    assert given["secret"] == SECRET and given["namespace"] == "shoot--dev--web"
    assert given["digest"] == local_cluster.DIGEST + "c0" * 8
    machine = mocks.inputs["arbor-shoot-ops-root-encryption-keys"]["directory"]
    assert (
        machine.endswith("/machines/local-shoot-ops-root")
        and "kubeconfig" not in mocks.inputs["arbor-shoot-ops-root-encryption-keys"]
    )
    given = mocks.inputs["arbor-shoot-ops-root-cluster"]["encryptionConfig"]
    assert (
        given["directory"] == machine and given["secret"] == SECRET and given["digest"].startswith(local_cluster.DIGEST)
    )
    assert "arbor-shoot-ops-root-cluster" not in holders, holders
