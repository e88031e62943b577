"""A self-hosted local shoot's credentials write their Secrets in its machine's directory, as files once."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from components import yaml_text
from components.checks import parse_landscape
from components.concerns.shoot_pki import SecretTarget
from components.plan.osc import SecretRef
from components.plan.planner import plan_landscape
from components.reconciler import (
    ca_source,
    credential_secrets,
    kwokctl,
    local_cluster,
    osc_secret,
    pki,
    shoot_cluster,
    signing,
)  # fmt: skip
from components.reconciler.kube import Kube, KubeError
from components.reconciler.secret_places import Directory
from components.render import controlplane, objects, staticpods
from components.render import pki as credentials
from tests.unit.landscape_mocks import registered
from tests.unit.spec_cases import base
from tests.unit.test_landscape_mocks import LOCAL
from tests.unit.test_reconciler_reads import _Cluster, osc_inputs
from tests.unit.test_staticpods import WORKLOADS

YEAR_S = 365 * 24 * 3600
SHOOT = "arbor-shoot-ops-root"


def _ca_inputs(directory: Path) -> dict[str, Any]:
    """The shoot CA's inputs as the program sends them, writing its Secrets (signer among them) in `directory`."""
    target = SecretTarget(None, "", cluster="local:local-shoot-ops-root", directory=str(directory))
    ca = next(
        c
        for c in credentials.credentials("ns", ("10.0.0.0/16",), (), hosted=False, signers=True)
        if c.name == credentials.CA
    )
    props = {"commonName": "kubernetes", "validitySeconds": YEAR_S, "rotation": 0, "version": pki.PROVIDER_VERSION}
    return credential_secrets.writing(props, target.writes(ca))


def _leaf_inputs(directory: Path, ca_cert: str) -> dict[str, Any]:
    """A leaf issued from the CA's signer in `directory`: the CA named by its Secret and hash, never its key."""
    props = {ca_source.CA_SECRET: credentials.signer(credentials.CA), "caHash": ca_source.ca_hash(ca_cert),
             "commonName": "kube-apiserver", "organizations": [], "dnsNames": ["api"], "ipAddresses": [],
             "usages": ["server"], "validitySeconds": YEAR_S, "rotation": 0, "published": True,
             "version": pki.PROVIDER_VERSION}  # fmt: skip
    layout = {"kube-apiserver": {"ca.crt": "caCert", "tls.crt": "cert", "tls.key": "key"}}
    return credential_secrets.writing(props, {"directory": str(directory), "secrets": layout})


def test_a_directory_holds_each_secret_as_a_mounted_volume_does(tmp_path: Path) -> None:
    """GIVEN a machine directory WHEN a Secret is written, rewritten and removed THEN a file per key, its owner's only.

    A key it no longer has goes; a Secret that no longer holds what was written is left to whoever wrote it.
    """
    place = Directory(str(tmp_path / "machine"))
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in {"ca.crt": "C", "ca.key": "K"}.items()}
    place.put("ca", encoded)
    folder = tmp_path / "machine" / "ca"
    assert (folder / "ca.key").read_text() == "K" and stat.S_IMODE((folder / "ca.key").stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == stat.S_IMODE(folder.parent.stat().st_mode) == 0o700
    assert place.find("ca") == encoded
    place.put("ca", {"ca.crt": encoded["ca.crt"]})
    assert sorted(p.name for p in folder.iterdir()) == ["ca.crt"] and place.find("gone") is None
    place.remove_if("ca", lambda data: False)
    assert folder.is_dir()
    place.remove_if("ca", lambda data: data == {"ca.crt": encoded["ca.crt"]})
    assert not folder.exists() and "ca in" in place.describe("ca")


def test_a_ca_writes_its_files_and_a_leaf_is_issued_from_them_without_the_key(tmp_path: Path) -> None:
    """GIVEN the CA writing in a machine directory WHEN a leaf is issued THEN from the signer's files, no key kept.

    The CA's files are drift when deleted: its update writes the same key again; its deletion removes them.
    """
    provider = pki.CertificateAuthorityProvider()
    ca = provider.create(_ca_inputs(tmp_path)).outs or {}
    signer = tmp_path / credentials.signer(credentials.CA)
    key = (signer / credentials.KEY_CA_KEY).read_text()
    assert key.startswith("-----BEGIN") and (tmp_path / credentials.CA / "ca.crt").is_file()
    leaf_props = _leaf_inputs(tmp_path, ca["cert"])
    leaf = pki.CertificateProvider().create(leaf_props).outs or {}
    issued = x509.load_pem_x509_certificate(leaf["cert"].encode())
    assert issued.issuer == x509.load_pem_x509_certificate(ca["cert"].encode()).subject
    assert key not in json.dumps([leaf_props, leaf]) and "caKey" not in leaf
    assert (tmp_path / "kube-apiserver" / "tls.crt").read_text() == leaf["cert"]
    for folder in (signer, tmp_path / credentials.CA):
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()
    drifted = provider.read("id", ca).outs or {}
    assert provider.diff("id", drifted, _ca_inputs(tmp_path)).changes
    again = provider.update("id", drifted, _ca_inputs(tmp_path)).outs or {}
    assert (signer / credentials.KEY_CA_KEY).read_text() == key and again["cert"] == ca["cert"]
    provider.delete("id", again)
    assert not signer.exists() and not (tmp_path / credentials.CA).exists()


def test_a_self_hosted_cluster_is_made_with_the_pki_its_machine_directory_holds(tmp_path: Path) -> None:
    """GIVEN a machine directory holding the CA and service-account key WHEN the cluster is made THEN from those files.

    The encryption configuration is read there too: the cluster's inputs name where, with a digest.
    """
    ca, sa = signing.self_signed_ca("kubernetes", YEAR_S), signing.new_key()
    place = Directory(str(tmp_path / "machine"))

    def put(name: str, data: dict[str, str]) -> None:
        place.put(name, {k: base64.b64encode(v.encode()).decode() for k, v in data.items()})

    put(credentials.signer(credentials.CA), {credentials.KEY_CA_CERT: ca.cert, credentials.KEY_CA_KEY: ca.key})
    put(credentials.SERVICE_ACCOUNT_KEY, {credentials.KEY_RSA_PRIVATE: signing.key_pem(sa)})
    put("etcd-encryption-secret", {"encryption-configuration.yaml": "kind: EncryptionConfiguration\n"})
    cluster = kwokctl.Cluster(name="local-shoot-ops-root", workdir=str(tmp_path))
    assert shoot_cluster.write_pki(cluster, {"directory": str(tmp_path / "machine")})
    assert (cluster.dir / "pki" / "ca.key").read_text() == ca.key
    reference = local_cluster.file_in_directory(str(tmp_path / "machine"), "etcd-encryption-secret",
                                                "encryption-configuration.yaml", "ab" * 32)  # fmt: skip
    assert local_cluster.digest(reference) == local_cluster.DIGEST + "ab" * 8
    assert local_cluster._content(reference) == "kind: EncryptionConfiguration\n"


def test_a_self_hosted_local_shoots_keys_are_held_once() -> None:
    """GIVEN the local landscape WHEN registered THEN its credentials write its machine's files; no copy elsewhere.

    Its cluster names that directory, made after the CA and key wrote it; its leaves are one LeafSet there; its
    control-plane OSC refers to the files (Gardener's `secretRef`), read in when it is written.
    """
    built, mocks = registered(plan_landscape(parse_landscape(base()), "local"))
    ca = mocks.inputs[f"{SHOOT}-pki-ca"]
    machine = ca["directory"]
    assert machine.endswith("/machines/local-shoot-ops-root") and credentials.signer(credentials.CA) in ca["secrets"]
    assert mocks.inputs[f"{SHOOT}-pki-service-account-key"]["directory"] == machine
    assert mocks.inputs[f"{SHOOT}-cluster"]["pki"] == {"directory": machine}
    after = built.edges[f"{SHOOT}-cluster"]
    assert {f"{SHOOT}-pki-ca", f"{SHOOT}-pki-service-account-key"} <= {d.rsplit("::", 1)[-1] for d in after}, after
    leaves = mocks.inputs[f"{SHOOT}-pki-leaves"]
    assert leaves["directory"] == machine and credentials.KUBE_APISERVER in leaves["leaves"]
    mock_key = "bW9jaw=="  # landscape_mocks' key, as every credential's
    holders = {n for n, i in mocks.inputs.items() if n.startswith(SHOOT) and mock_key in json.dumps(i, default=str)}
    assert holders <= {f"{SHOOT}-pki-{c}" for c in ("ca", "ca-client", "ca-etcd", "ca-front-proxy")}, holders
    reading = [i for n, i in mocks.inputs.items() if n.startswith(f"{SHOOT}-osc-") and i.get("secretsFrom")]
    assert len(reading) == 1 and reading[0]["secretsFrom"]["directory"] == machine


def test_a_static_pod_refers_to_a_secret_its_machine_holds() -> None:
    """GIVEN a Secret given by its checksum WHEN its static pod is rendered THEN a reference per key, hashed by it.

    A new checksum changes the manifest's hash (the pod restarts); a Secret neither given nor held is an error.
    """
    workload = next(w for w in WORKLOADS if w.component == "kube-apiserver")
    sources = {name: {objects.CHECKSUM_ONLY: "c1"} for name in controlplane.mounted(workload)}
    held = {name: ("k",) for name in sources}
    pod = staticpods.static_pod(workload, sources, held)
    refs = [f.content for f in pod.files if isinstance(f.content, SecretRef)]
    assert refs and {r.checksum for r in refs} == {"c1"} and all(r.data_key == "k" for r in refs)
    renewed = staticpods.static_pod(workload, {n: {objects.CHECKSUM_ONLY: "c2"} for n in sources}, held)
    assert renewed.config_hash != pod.config_hash
    with pytest.raises(staticpods.MissingSourceError, match="not where it is held"):
        staticpods.static_pod(workload, sources, {})


def test_an_osc_writes_its_references_inline_and_an_edit_is_still_drift(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN an OSC whose file refers to a machine's Secret WHEN written THEN inline, the state keeping the reference.

    Read back as written it is no change, edited it is drift; a missing Secret is an error naming it.
    """
    Directory(str(tmp_path)).put("ca", {"ca.key": base64.b64encode(b"-----BEGIN KEY-----\n").decode()})
    ref = {"path": "/p", "permissions": 384, "content": {"secretRef": {"name": "ca", "dataKey": "ca.key"}}}
    text = yaml_text.dump({"spec": {"files": [ref]}}, sort_keys=False)
    cluster = _Cluster(None)
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: cluster))
    provider = osc_secret.OperatingSystemConfigProvider()
    inputs = {**osc_inputs(text), "secretsFrom": {"directory": str(tmp_path)}}
    outs = provider.create(inputs).outs or {}
    written = yaml_text.load(cluster.written[0]["stringData"]["osc.yaml"])
    # Plain, as a credential's file was before it was a reference: the Secret node-agent reads is the same.
    assert written["spec"]["files"][0]["content"] == {"inline": {"encoding": "", "data": "-----BEGIN KEY-----\n"}}
    assert "BEGIN KEY" not in json.dumps(outs) and outs[osc_secret.WRITTEN] != outs["oscHash"]
    as_written = _Cluster(cluster.written[0]["stringData"]["osc.yaml"])
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: as_written))
    assert not provider.diff("s", provider.read("s", outs).outs or {}, inputs).changes
    edited = _Cluster("spec: {}\n")
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: edited))
    assert provider.diff("s", provider.read("s", outs).outs or {}, inputs).changes
    with pytest.raises(KubeError, match="Secret gone in"):
        provider.create({**inputs, "secret": osc_inputs(text.replace("name: ca", "name: gone"))["secret"]})


def test_the_local_gardens_encryption_keys_write_its_configuration_where_its_cluster_reads_it() -> None:
    """GIVEN the local stack WHEN registered THEN the garden's keys write its machine's file; its cluster refers."""
    _, mocks = registered(plan_landscape(parse_landscape(LOCAL), "local"))
    keys = mocks.inputs["arbor-garden-encryption-keys"]
    assert keys["directory"].endswith("/machines/local-garden") and "kubeconfig" not in keys
    given = mocks.inputs["arbor-garden-cluster"]["encryptionConfig"]
    assert given["directory"] == keys["directory"] and given["digest"].startswith(local_cluster.DIGEST)
    assert "bW9jaw==" not in json.dumps(mocks.inputs["arbor-garden-cluster"], default=str)
