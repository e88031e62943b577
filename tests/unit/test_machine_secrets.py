"""A self-hosted local shoot's credentials write their Secrets in its machine's directory, as files once."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path
from typing import Any

from cryptography import x509

from components.checks import parse_landscape
from components.concerns.shoot_pki import SecretTarget
from components.plan.planner import plan_landscape
from components.reconciler import ca_source, credential_secrets, kwokctl, local_cluster, pki, shoot_cluster, signing
from components.reconciler.secret_places import Directory
from components.render import pki as credentials
from tests.unit.landscape_mocks import registered
from tests.unit.spec_cases import base

YEAR_S = 365 * 24 * 3600
SHOOT = "arbor-shoot-ops-root"


def _ca_inputs(directory: Path) -> dict[str, Any]:
    """The shoot CA's inputs as the program sends them, writing its Secrets (signer among them) in `directory`."""
    target = SecretTarget.on_machine(str(directory), "local:local-shoot-ops-root")
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
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and place.find("ca") == encoded
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


def test_a_self_hosted_local_shoots_cluster_and_leaves_hold_no_key() -> None:
    """GIVEN the local landscape WHEN registered THEN its CAs and key write its machine's files; no copy elsewhere.

    Its cluster names that directory, made after the CA and key wrote it, and no leaf is given its CA's key.
    """
    built, mocks = registered(plan_landscape(parse_landscape(base()), "local"))
    ca = mocks.inputs[f"{SHOOT}-pki-ca"]
    machine = ca["directory"]
    assert machine.endswith("/machines/local-shoot-ops-root") and credentials.signer(credentials.CA) in ca["secrets"]
    assert mocks.inputs[f"{SHOOT}-pki-service-account-key"]["directory"] == machine
    assert mocks.inputs[f"{SHOOT}-cluster"]["pki"] == {"directory": machine}
    after = built.edges[f"{SHOOT}-cluster"]
    assert {f"{SHOOT}-pki-ca", f"{SHOOT}-pki-service-account-key"} <= {d.rsplit("::", 1)[-1] for d in after}, after
    leaves = {
        n: i for n, i in mocks.inputs.items() if n.startswith(f"{SHOOT}-pki-") and "commonName" in i and "caHash" in i
    }
    assert leaves and all(not i.get("caKey") and i["directory"] == machine for i in leaves.values()), sorted(leaves)
