"""A local shoot's cluster as the shoot's own: its PKI written before kwokctl makes one, its restore planned, kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from components.reconciler import entry_store, etcd_snapshot, kwokctl, local_cluster, shoot_cluster, signing
from components.reconciler.files import write_file
from components.reconciler.kube import Kube
from components.render import packed_keys
from tests.unit.test_entry_store import Listed
from tests.unit.test_shoot_state import SeedSecrets

DAY_S = 24 * 3600
PREFIX = "shoot--dev--web--1234/etcd-main"
BACKUP = {"storePrefix": PREFIX}


@pytest.fixture(scope="module")
def shoot_pki() -> dict[str, str]:
    """A shoot's CA and service-account key, as the `pki` input carries them."""
    ca = signing.self_signed_ca("ca", DAY_S)
    return {"ca": ca.cert, "caKey": ca.key, "serviceAccountKey": signing.key_pem(signing.new_key())}


def public_der(pem: str) -> bytes:
    """A private key's public half, DER."""
    key = serialization.load_pem_private_key(pem.encode(), password=None)
    return key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def test_a_pki_whose_keys_are_kept_as_their_primes_writes_the_same_files(
    tmp_path: Path, shoot_pki: dict[str, str]
) -> None:
    """GIVEN the shoot's PKI with its keys as their primes (the state's input) WHEN written THEN the PEMs as issued."""
    compact = {k: packed_keys.compacted(v) for k, v in shoot_pki.items()}
    assert compact["caKey"] != shoot_pki["caKey"] and compact["serviceAccountKey"] != shoot_pki["serviceAccountKey"]
    cluster = kwokctl.Cluster("c", str(tmp_path))
    assert shoot_cluster.write_pki(cluster, compact)
    pki = cluster.dir / "pki"
    assert (pki / "ca.key").read_text() == shoot_pki["caKey"]
    assert public_der((pki / "admin.key").read_text()) == public_der(shoot_pki["serviceAccountKey"])


def test_a_new_cluster_gets_the_shoots_ca_and_signs_tokens_with_its_service_account_key(
    tmp_path: Path, shoot_pki: dict[str, str]
) -> None:
    """GIVEN the shoot's PKI WHEN written for a new cluster THEN kwokctl's layout: its CA, a certificate it signed.

    The certificate's key is the service-account key (kwokctl signs tokens with admin.key); it serves at loopback
    and is a system:masters client. A PKI already there is never touched.
    """
    cluster = kwokctl.Cluster("c", str(tmp_path))
    assert shoot_cluster.write_pki(cluster, shoot_pki)
    pki = cluster.dir / "pki"
    assert sorted(p.name for p in pki.iterdir()) == ["admin.crt", "admin.key", "ca.crt", "ca.key"]
    assert (pki / "ca.crt").read_text() == shoot_pki["ca"] and (pki / "ca.key").read_text() == shoot_pki["caKey"]
    cert = x509.load_pem_x509_certificate((pki / "admin.crt").read_bytes())
    ca = x509.load_pem_x509_certificate(shoot_pki["ca"].encode())
    cert.verify_directly_issued_by(ca)
    assert public_der((pki / "admin.key").read_text()) == public_der(shoot_pki["serviceAccountKey"])
    assert cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    ) == public_der(shoot_pki["serviceAccountKey"])
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in sans.get_values_for_type(x509.DNSName)
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1", "::1"]
    organization = cert.subject.get_attributes_for_oid(x509.NameOID.ORGANIZATION_NAME)[0].value
    assert organization == "system:masters"
    before = (pki / "admin.crt").read_text()
    assert not shoot_cluster.write_pki(cluster, {**shoot_pki, "ca": "other"})
    assert (pki / "admin.crt").read_text() == before and not (cluster.dir / ".pki.partial").exists()


def test_a_pki_without_its_key_is_refused_before_anything_is_written(tmp_path: Path, shoot_pki: dict[str, str]) -> None:
    """GIVEN a PKI lacking the service-account key WHEN written THEN one line naming it, and no `pki/`."""
    cluster = kwokctl.Cluster("c", str(tmp_path))
    with pytest.raises(shoot_cluster.RestoreError, match=r"^cluster 'c': the shoot's PKI lacks serviceAccountKey$"):
        shoot_cluster.write_pki(cluster, {**shoot_pki, "serviceAccountKey": ""})
    assert not (cluster.dir / "pki").exists()


@pytest.mark.parametrize("lacking", [None, "ca.key", "id_rsa"])
def test_a_hosted_shoots_cluster_reads_its_pki_in_the_seed_namespace(
    tmp_path: Path, shoot_pki: dict[str, str], lacking: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN `pki` naming the seed namespace WHEN written THEN the PKI its Secrets hold, or one line naming the gap.

    The `ca-signer` Secret holds the CA and its key, `service-account-key` the key tokens are signed with: the same
    files as from the PKI itself, and the state keeps only where they are.
    """
    held = {
        "ca-signer": {"ca.crt": shoot_pki["ca"], "ca.key": shoot_pki["caKey"]},
        "service-account-key": {"id_rsa": shoot_pki["serviceAccountKey"], "id_rsa.pub": "<public>"},
    }
    for secret in held.values():
        secret.pop(lacking or "", None)
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: SeedSecrets(held)))
    cluster = kwokctl.Cluster("c", str(tmp_path))
    where = {"seedKubeconfig": "kubeconfig-file:/seed", "namespace": "shoot--dev--web"}
    if lacking is None:
        assert shoot_cluster.write_pki(cluster, where)
        pki = cluster.dir / "pki"
        assert (pki / "ca.crt").read_text() == shoot_pki["ca"] and (pki / "ca.key").read_text() == shoot_pki["caKey"]
        assert public_der((pki / "admin.key").read_text()) == public_der(shoot_pki["serviceAccountKey"])
        return
    gap = "ca-signer" if lacking == "ca.key" else "service-account-key"
    with pytest.raises(shoot_cluster.RestoreError, match=rf"^the shoot's PKI: Secret shoot--dev--web/{gap} has no"):
        shoot_cluster.write_pki(cluster, where)
    assert not (cluster.dir / "pki").exists()


def test_a_new_cluster_starts_from_the_newest_full_snapshot_and_keeps_it_pending_until_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN an entry with snapshots WHEN a cluster is planned THEN the newest full one is pending, not a delta.

    An empty entry (a new shoot) plans nothing; a cluster without backups plans nothing and asks no store.
    """
    store = Listed([
        f"{PREFIX}/v2/Full-00000000-00000010-1700000000.gz",
        f"{PREFIX}/v2/Full-00000000-00000020-1700086400.gz",
        f"{PREFIX}/v2/Incr-00000021-00000030-1700090000.gz",
        "other--entry/etcd-main/v2/Full-00000000-00000040-1800000000.gz",
    ])  # fmt: skip
    monkeypatch.setattr(shoot_cluster, "entry_store", lambda data: store)
    cluster = kwokctl.Cluster("c", str(tmp_path))
    assert shoot_cluster.plan_restore(cluster, None) is None and shoot_cluster.pending(cluster) is None
    newest = f"{PREFIX}/v2/Full-00000000-00000020-1700086400.gz"
    assert shoot_cluster.plan_restore(cluster, BACKUP) == newest
    assert shoot_cluster.pending(cluster) == newest and shoot_cluster.restored_from(cluster) is None
    empty = kwokctl.Cluster("new", str(tmp_path))
    monkeypatch.setattr(shoot_cluster, "entry_store", lambda data: Listed([]))
    assert shoot_cluster.plan_restore(empty, BACKUP) is None and shoot_cluster.pending(empty) is None


def test_a_cluster_is_never_made_empty_while_its_entry_does_not_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a store that refuses WHEN a cluster is planned THEN RestoreError in one line, and nothing pending."""

    def refused(data: dict[str, str]) -> Listed:
        raise entry_store.StoreError(f"listing {PREFIX}/v2/ in bucket b: 503")

    monkeypatch.setattr(shoot_cluster, "entry_store", refused)
    cluster = kwokctl.Cluster("c", str(tmp_path))
    with pytest.raises(shoot_cluster.RestoreError, match=r"^cannot tell whether .* holds a snapshot: listing .*503$"):
        shoot_cluster.plan_restore(cluster, BACKUP)
    assert shoot_cluster.pending(cluster) is None


def test_a_restored_member_keeps_the_name_and_peer_url_its_kwok_yaml_gives_etcd(tmp_path: Path) -> None:
    """GIVEN a cluster's kwok.yaml WHEN a restore reads it THEN etcd's name, cluster and peer URL, nothing else."""
    cluster = kwokctl.Cluster("c", str(tmp_path))
    peer = "http://0.0.0.0:20003"
    args = ["--name=node0", "--data-dir=/x/etcd", f"--initial-cluster=node0={peer}",
            f"--initial-advertise-peer-urls={peer}", "--listen-client-urls=http://0.0.0.0:20002"]  # fmt: skip
    config: dict[str, Any] = {"components": [{"name": "kube-apiserver", "args": ["--name=no"]},
                                             {"name": "etcd", "args": args}]}  # fmt: skip
    cluster.dir.mkdir(parents=True)
    (cluster.dir / "kwok.yaml").write_text(yaml.safe_dump(config))
    assert shoot_cluster._member_flags(cluster) == [args[0], args[2], args[3]]


def test_a_clusters_outputs_keep_its_entry_for_its_final_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a shoot's cluster WHEN its outputs are made THEN they keep the entry: delete gets outputs, not inputs."""
    monkeypatch.setattr(kwokctl, "endpoint", lambda c: "https://127.0.0.1:1")
    monkeypatch.setattr(kwokctl, "kubeconfig", lambda c: "k")
    props = {"clusterName": "c", "workdir": str(tmp_path), "kubernetesVersion": "v1", "version": "3", "restore": BACKUP}
    assert local_cluster._outputs(props, kwokctl.Cluster("c", str(tmp_path)))["restore"] == BACKUP


def test_a_pending_restore_reads_as_a_stopped_cluster_so_up_finishes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a running cluster with a restore a killed run left pending WHEN read THEN not running: `up` restores."""
    cluster = kwokctl.Cluster("c", str(tmp_path))
    (cluster.dir / "arbor").mkdir(parents=True)
    (cluster.dir / "kwok.yaml").write_text("{}")
    monkeypatch.setattr(kwokctl, "ready", lambda c: True)
    monkeypatch.setattr(kwokctl, "stopped_components", lambda c: [])
    monkeypatch.setattr(local_cluster, "_outputs", lambda props, c: {**props, "running": True})
    props = {"clusterName": "c", "workdir": str(tmp_path), "running": True}
    provider = local_cluster.LocalClusterProvider()
    assert dict(provider.read("c", props).outs or {})["running"] is True
    write_file(cluster.dir / "arbor" / "restore-pending", f"{PREFIX}/v2/Full-00000000-00000020-1.gz")
    read = dict(provider.read("c", props).outs or {})
    assert read["running"] is False and provider.diff("c", read, props).changes


def test_a_cluster_with_an_entry_is_deleted_only_after_its_final_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a shoot's cluster holding data WHEN deleted THEN a full snapshot into its entry first; failing, kept.

    A cluster without data, or whose restore is pending (its etcd is not the shoot's yet), is not snapshotted.
    """
    cluster = kwokctl.Cluster("c", str(tmp_path))
    (cluster.dir / "etcd" / "member").mkdir(parents=True)
    (cluster.dir / "kwok.yaml").write_text("{}")
    taken: list[dict[str, Any]] = []
    monkeypatch.setattr(kwokctl, "ready", lambda c: True)
    monkeypatch.setattr(kwokctl, "stopped_components", lambda c: [])

    def take(props: dict[str, Any]) -> dict[str, Any]:
        taken.append(props)
        return {"latest": "k"}

    monkeypatch.setattr(shoot_cluster, "take", take)
    deleted: list[kwokctl.Cluster] = []
    monkeypatch.setattr(kwokctl, "delete", deleted.append)
    provider = local_cluster.LocalClusterProvider()
    entry = {**BACKUP, "bucketName": "b"}
    props: dict[str, Any] = {"clusterName": "c", "workdir": str(tmp_path), "restore": entry}
    provider.delete("c", props)
    assert [(t["cluster"], t["prefix"], t["backup"]["bucketName"]) for t in taken] == [("c", PREFIX, "b")]
    assert deleted == [cluster]

    def failing(props: dict[str, Any]) -> dict[str, Any]:
        raise etcd_snapshot.SnapshotError("uploading it to bucket b: 503")

    monkeypatch.setattr(shoot_cluster, "take", failing)
    with pytest.raises(shoot_cluster.RestoreError, match=r"^cluster 'c' is kept: its final snapshot failed \(.*503\)"):
        provider.delete("c", props)
    assert deleted == [cluster]
    write_file(etcd_snapshot.restore_marker(cluster), "x")
    assert shoot_cluster.final_snapshot(cluster, entry) is None
    provider.delete("c", {**props, "restore": None})
    assert len(deleted) == 2 and len(taken) == 1


def test_no_snapshot_is_taken_of_a_cluster_whose_restore_is_pending(tmp_path: Path) -> None:
    """GIVEN a cluster made from a snapshot, not yet restored WHEN a snapshot is asked for THEN refused in one line."""
    cluster = kwokctl.Cluster("c", str(tmp_path))
    write_file(etcd_snapshot.restore_marker(cluster), "x")
    props = {"cluster": "c", "workdir": str(tmp_path), "backup": {}, "prefix": PREFIX}
    with pytest.raises(
        etcd_snapshot.SnapshotError, match=r"^cluster 'c' is being restored from a snapshot: run `make up`"
    ):
        etcd_snapshot.take(props)


def test_a_clusters_files_are_kept_as_hashes_and_an_edited_one_is_drift(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a running cluster's encryption and client CA files WHEN read THEN their hashes, as drift needs them.

    An older state's contents compare as theirs, an edited file is a diff, and dropping encryption is still refused.
    """
    cluster = kwokctl.Cluster("c", str(tmp_path))
    monkeypatch.setattr(kwokctl, "ready", lambda c: True)
    monkeypatch.setattr(kwokctl, "stopped_components", lambda c: [])
    monkeypatch.setattr(kwokctl, "endpoint", lambda c: "https://127.0.0.1:1")
    monkeypatch.setattr(kwokctl, "kubeconfig", lambda c: "kind: Config\n")
    monkeypatch.setattr(kwokctl, "extra_client_cas", lambda c: "CA\n")
    write_file(cluster.dir / "kwok.yaml", "{}")
    write_file(cluster.encryption_file, "kind: EncryptionConfiguration\n")
    news = {"clusterName": "c", "workdir": str(tmp_path), "kubernetesVersion": "v1", "version": "3",
            "encryptionConfig": "kind: EncryptionConfiguration\n", "extraClientCas": "CA\n"}  # fmt: skip
    provider = local_cluster.LocalClusterProvider()
    read = dict(provider.read("c", news).outs or {})
    assert read["encryptionConfig"] == local_cluster.digest(news["encryptionConfig"]) != news["encryptionConfig"]
    assert read["extraClientCas"].startswith(local_cluster.DIGEST) and "CA\n" not in str(read)
    assert not provider.diff("c", read, news).changes
    assert not provider.diff("c", {**read, **{k: news.get(k) for k in local_cluster.UPDATE_ON}}, news).changes
    write_file(cluster.encryption_file, "kind: EncryptionConfiguration\n# edited\n")
    assert provider.diff("c", dict(provider.read("c", news).outs or {}), news).changes
    with pytest.raises(kwokctl.KwokError, match="removing the encryption configuration"):
        provider.update("c", read, {**news, "encryptionConfig": None})


def test_a_seed_publishes_its_issuers_keys_and_an_older_seed_gets_the_flag_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a seed's cluster serving its issuer WHEN its flags are made THEN its JWKS URI is its own API's.

    A new cluster names its URL by `SERVER` (known at creation); an older seed's state lacks the input: an update,
    which sets the flag and restarts it once, and then no diff. A cluster not serving it has no such flag.
    """
    cluster = kwokctl.Cluster("c", str(tmp_path))
    monkeypatch.setattr(kwokctl, "endpoint", lambda c: "https://127.0.0.1:31000")
    seed = {"servesIssuer": True}
    assert local_cluster._apiserver_flags(seed, cluster)[local_cluster.JWKS_FLAG] == kwokctl.SERVER + "/openid/v1/jwks"
    write_file(cluster.dir / "kwok.yaml", "{}")
    made = local_cluster._apiserver_flags(seed, cluster)
    assert made[local_cluster.JWKS_FLAG] == "https://127.0.0.1:31000/openid/v1/jwks"
    assert local_cluster._apiserver_flags({}, cluster)[local_cluster.JWKS_FLAG] is None
    olds = {"clusterName": "c", "workdir": str(tmp_path), "kubernetesVersion": "v1", "version": "3", "running": True}
    provider = local_cluster.LocalClusterProvider()
    assert provider.diff("c", olds, {**olds, **seed}).changes
    assert not provider.diff("c", {**olds, **seed}, {**olds, **seed}).changes
