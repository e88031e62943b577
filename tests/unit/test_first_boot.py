"""A self-hosted cloud shoot's first control-plane boot: the bundle and the user data that fetches it, run for real.

The scripts run under bash with `$ROOT` a temporary directory and `ctr`, `systemctl` and `curl` stubbed on PATH
(they log their arguments), so the tests see the files a machine would get and the units it would start.
"""

from __future__ import annotations

import base64
import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from components.plan import bootstrap
from components.plan.nodeagent_release import NODE_AGENT_DIR
from components.plan.osc import DropIn, File, ImageRef, Inline, Part, Purpose, Unit, merge
from components.render import first_boot, nodeagent
from tests.unit.test_nodeagent import BASE

TOKEN = "abcdef.0123456789abcdef"
MACHINE = "shoot--ops--root-cp-z1-0"
KUBELET = first_boot.KubeletClient("https://127.0.0.1", "CA\n", "CERT\n", "KEY\n")
STUBS = {
    # ctr: a pull succeeds; a mount puts the image's files (those named in IMAGE_FILES, each holding the image's
    # reference) at the target; `run` prints the packed bundle as the AWS CLI would.
    "ctr": 'echo "ctr $*" >> "$LOG"\n'
    'if [ "$2" = mount ]; then for f in $IMAGE_FILES; do echo "$3" > "$4/$f"; done; fi\n'
    'if [ "$2" = unmount ]; then rm -f "$3"/*; fi\n'
    'if [ "$1" = run ]; then cat "$PACKED"; fi\n',
    "systemctl": 'echo "systemctl $*" >> "$LOG"\n',
    "curl": 'echo "curl $*" >> "$LOG"\n'
    'case "$*" in *metadata*) echo \'{"access_token": "ya29.token", "expires_in": 3599}\';;\n'
    '*) printf \'{"name": "x", "payload": {"data": "%s"}}\' "$(base64 -w0 < "$PACKED")";; esac\n',
}


def run(tmp_path: Path, script: str, packed: str = "") -> str:
    """Runs `script` with ROOT at tmp_path/root and the stubs first on PATH; returns what the stubs logged."""
    bin_dir, log, packed_file = tmp_path / "bin", tmp_path / "log", tmp_path / "packed"
    bin_dir.mkdir(exist_ok=True)
    for name, body in STUBS.items():
        (bin_dir / name).write_text("#!/bin/bash\n" + body)
        (bin_dir / name).chmod(0o755)
    packed_file.write_text(packed)
    env = {**os.environ, "ROOT": str(tmp_path / "root"), "LOG": str(log), "PACKED": str(packed_file),
           "IMAGE_FILES": "kubelet gardener-node-agent", "PATH": f"{bin_dir}:{os.environ['PATH']}"}  # fmt: skip
    done = subprocess.run(["bash", "-c", script], env=env, timeout=30, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return log.read_text() if log.exists() else ""


def cp_bundle() -> str:
    """The first-boot bundle of the base pool with one static pod's files, as a control-plane machine gets it."""
    static = Part(files=(File("/etc/kubernetes/manifests/etcd-main.yaml", Inline("kind: Pod\n"), 0o600),))
    return first_boot.bundle(
        nodeagent.reconcile_osc(BASE, [static]), bootstrap.provision_osc(BASE), KUBELET, MACHINE, TOKEN
    )


def test_bundle_writes_every_file_of_both_oscs_fills_the_placeholders_and_starts_the_units(tmp_path: Path) -> None:
    """GIVEN the control-plane pool's OSCs WHEN the bundle runs THEN each file is there with its content and mode."""
    log = run(tmp_path, cp_bundle())
    root = tmp_path / "root"
    reconcile, provision = nodeagent.reconcile_osc(BASE), bootstrap.provision_osc(BASE)
    # node-agent's config.yaml is in both: the provision one (with its bootstrap settings) is written last.
    for f in {f.path: f for f in [*reconcile.files, *provision.files]}.values():
        written = root / f.path.lstrip("/")
        assert stat.S_IMODE(written.stat().st_mode) == f.permissions, f.path
        if isinstance(f.content, Inline) and not f.content.transmit_unencoded:
            expected = base64.b64decode(f.content.data) if f.content.encoding == "b64" else f.content.data.encode()
            assert written.read_bytes() == expected, f.path
    credentials = root / NODE_AGENT_DIR.lstrip("/") / "credentials"
    assert (credentials / "bootstrap-token").read_text() == TOKEN
    assert (root / NODE_AGENT_DIR.lstrip("/") / "machine-name").read_text() == MACHINE
    assert (root / "etc/kubernetes/manifests/etcd-main.yaml").read_text() == "kind: Pod\n"
    kubeconfig = yaml.safe_load((root / first_boot.KUBELET_KUBECONFIG.lstrip("/")).read_text())
    assert kubeconfig["clusters"][0]["cluster"]["server"] == "https://127.0.0.1"
    assert kubeconfig["users"][0]["user"]["client-certificate"] == first_boot.KUBELET_CLIENT_PEM
    assert (root / first_boot.KUBELET_CLIENT_PEM.lstrip("/")).read_text() == "CERT\nKEY\n"
    assert (root / first_boot.DONE.lstrip("/")).exists()
    # kubelet registers under the name its certificate carries.
    extra = (root / first_boot.KUBELET_EXTRA_ARGS.lstrip("/")).read_text()
    assert extra == f"KUBELET_EXTRA_ARGS=--hostname-override={MACHINE}\n"
    assert "EnvironmentFile=-/var/lib/kubelet/extra_args" in (nodeagent.kubelet(BASE).units[0].content or "")
    started = [line.split()[3] for line in log.splitlines() if line.startswith("systemctl enable")]
    assert started == [u.name for u in [*reconcile.units, *provision.units] if u.name != "gardener-node-agent.service"]
    assert "ctr images pull --hosts-dir /etc/containerd/certs.d europe-docker.pkg.dev" in log


def test_image_files_are_extracted_from_their_image(tmp_path: Path) -> None:
    """GIVEN a file from an image WHEN the bundle runs THEN containerd mounts that image and the file is copied."""
    image = "europe-docker.pkg.dev/gardener-project/releases/hyperkube:v1.34.3"
    config = merge(
        "x", Purpose.RECONCILE, [Part(files=(File("/opt/bin/kubelet", ImageRef(image, "/kubelet"), 0o755),))]
    )
    log = run(tmp_path, first_boot.bundle(config, merge("p", Purpose.PROVISION, []), KUBELET, MACHINE, TOKEN))
    assert (tmp_path / "root/opt/bin/kubelet").read_text() == image + "\n"
    assert f"ctr images mount {image}" in log


def test_units_and_drop_ins_are_written_and_a_unit_of_the_image_is_only_started(tmp_path: Path) -> None:
    """GIVEN a unit with content and drop-ins and one without WHEN the bundle runs THEN both start, one is written."""
    units = (Unit("a.service", "[Service]\n", drop_ins=(DropIn("10-x.conf", "[Service]\nX=1\n"),)), Unit("b.service"))
    config = merge("x", Purpose.RECONCILE, [Part(units=units)])
    log = run(tmp_path, first_boot.bundle(config, merge("p", Purpose.PROVISION, []), KUBELET, MACHINE, TOKEN))
    systemd = tmp_path / "root/etc/systemd/system"
    assert (systemd / "a.service").read_text() == "[Service]\n"
    assert (systemd / "a.service.d/10-x.conf").read_text() == "[Service]\nX=1\n"
    assert not (systemd / "b.service").exists()
    assert "systemctl enable --now b.service --no-block" in log


@pytest.mark.parametrize("provider", ["gcp", "aws"])
def test_user_data_fetches_the_packed_bundle_runs_it_once_and_holds_no_secret(tmp_path: Path, provider: str) -> None:
    """GIVEN the bundle in the secret store WHEN the machine boots twice THEN it is applied once; no token inside."""
    bundle = cp_bundle()
    user_data = (
        first_boot.gcp_user_data("projects/123/secrets/shoot--ops--root-cp")
        if provider == "gcp"
        else first_boot.aws_user_data("arn:aws:secretsmanager:eu-west-1:1:secret:shoot--ops--root-cp-AbCd", "eu-west-1")
    )
    assert TOKEN not in user_data and "BEGIN" not in user_data
    log = run(tmp_path, user_data, packed=first_boot.packed(bundle, "ops/root"))
    assert (tmp_path / "root" / first_boot.FIRST_BOOT_DIR.lstrip("/") / "apply.sh").read_text() == bundle
    assert (tmp_path / "root/etc/kubernetes/manifests/etcd-main.yaml").exists()
    fetch = "secretsmanager get-secret-value --region eu-west-1" if provider == "aws" else "Bearer ya29.token"
    assert fetch in log
    second = run(tmp_path, user_data, packed="not even base64")
    assert second == log, "a second boot fetched or applied again"


def test_a_bundle_over_the_secret_stores_limit_is_refused_with_its_size() -> None:
    """GIVEN a bundle that does not compress below 64 KiB WHEN packed THEN the error names the shoot and the sizes."""
    noise = base64.b64encode(os.urandom(60 * 1024)).decode()
    with pytest.raises(first_boot.BundleTooLargeError, match=r"ops/root: the first-boot bundle packs to \d+ bytes"):
        first_boot.packed(noise, "ops/root")


def test_a_packed_bundle_is_deterministic() -> None:
    """GIVEN the same bundle twice WHEN packed THEN the same bytes (no timestamp): no new secret version per up."""
    assert first_boot.packed(cp_bundle(), "x") == first_boot.packed(cp_bundle(), "x")


@settings(max_examples=25, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=200))
def test_any_inline_content_arrives_byte_for_byte(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    """GIVEN any file content WHEN the bundle writes it THEN the file holds exactly that (no quoting breaks it)."""
    tmp_path = tmp_path_factory.mktemp("content")
    config = merge("x", Purpose.RECONCILE, [Part(files=(File("/etc/x it's", Inline(text), 0o644),))])
    run(tmp_path, first_boot.bundle(config, merge("p", Purpose.PROVISION, []), KUBELET, MACHINE, TOKEN))
    assert (tmp_path / "root/etc/x it's").read_bytes() == text.encode()


def test_first_boot_bundle_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN the base control-plane pool WHEN its first-boot bundle is rendered THEN it matches the golden script."""
    golden("first-boot-cp.sh", cp_bundle())
