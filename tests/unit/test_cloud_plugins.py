"""`make tools` and the aws and gcp plugins: fetched when a registry answers, one notice when none does.

hack/tools.sh runs in a scratch clone (links to this one's hack/ and requirements.txt) whose .bin holds a fake
`pulumi` recording its arguments, with a scratch PULUMI_HOME, so nothing real is installed or touched.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def pin(package: str) -> str:
    """The version requirements.txt pins for a package."""
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if line.startswith(f"{package}=="):
            return line.split("==", 1)[1].split()[0]
    raise AssertionError(f"requirements.txt pins no {package}")


AWS, GCP = pin("pulumi-aws"), pin("pulumi-gcp")


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A scratch clone: this one's hack/ and requirements.txt, and a fake pulumi first on PATH."""
    root = tmp_path / "clone"
    (root / ".bin").mkdir(parents=True)
    (root / "hack").symlink_to(ROOT / "hack")
    (root / "requirements.txt").symlink_to(ROOT / "requirements.txt")
    fake = root / ".bin" / "pulumi"
    fake.write_text('#!/usr/bin/env bash\necho "$*" >> "$(dirname "$0")/calls"\necho "installed $4"\n')
    fake.chmod(0o755)
    return root


def tools(clone: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`hack/tools.sh cloud-plugins` in the scratch clone."""
    scratch = {"ARBOR_ROOT": str(clone), "ARBOR_CACHE": str(clone / "cache"), "ARBOR_STACK": "local"}
    return subprocess.run(
        [str(ROOT / "hack" / "tools.sh"), "cloud-plugins"], env={**os.environ, **scratch, **env},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def calls(clone: Path) -> list[str]:
    """The fake pulumi's invocations."""
    path = clone / ".bin" / "calls"
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture
def mirror() -> Iterator[str]:
    """A plugin mirror on loopback that answers every request (the probe only needs an answer)."""

    class Handler(BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self.send_response(200)
            self.end_headers()

        def log_message(self, *_: object) -> None:
            """Quiet."""

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_reachable_registry_installs_both_plugins_at_the_pins(clone: Path, mirror: str) -> None:
    """GIVEN a mirror that answers WHEN `make tools` runs THEN pulumi installs aws and gcp at requirements' pins."""
    proc = tools(clone, ARBOR_PLUGIN_SERVER=mirror)
    assert proc.returncode == 0, proc.stderr
    assert calls(clone) == [
        f"plugin install resource aws {AWS} --server {mirror}",
        f"plugin install resource gcp {GCP} --server {mirror}",
    ]
    assert proc.stdout.count("installed now") == 2


@pytest.mark.parametrize(
    ("server", "reason"),
    [("http://127.0.0.1:1", "Failed to connect"), ("https://plugins.invalid", "Could not resolve host")],
    ids=["refused", "no-such-host"],
)
def test_an_unreachable_registry_says_what_to_run_and_does_not_fail(clone: Path, server: str, reason: str) -> None:
    """GIVEN a registry that cannot be reached WHEN `make tools` runs THEN exit 0, no install, and the commands."""
    proc = tools(clone, ARBOR_PLUGIN_SERVER=server)
    assert proc.returncode == 0, proc.stderr
    assert calls(clone) == []
    assert f"tried {server}: curl: " in proc.stdout and reason in proc.stdout
    assert "not installed: no plugin registry reachable" in proc.stdout
    assert f"pulumi plugin install resource aws {AWS} && pulumi plugin install resource gcp {GCP}" in proc.stdout
    assert "ARBOR_PLUGIN_SERVER=<mirror URL> make tools" in proc.stdout


def test_installed_plugins_are_not_fetched_again(clone: Path) -> None:
    """GIVEN both plugins in PULUMI_HOME WHEN `make tools` runs THEN no registry is asked and pulumi is not run."""
    for name, version in (("aws", AWS), ("gcp", GCP)):
        plugin = clone / "cache" / "pulumi" / "plugins" / f"resource-{name}-v{version}" / f"pulumi-resource-{name}"
        plugin.parent.mkdir(parents=True)
        plugin.write_text("#!/bin/sh\n")
        plugin.chmod(0o755)
    proc = tools(clone, ARBOR_PLUGIN_SERVER="http://127.0.0.1:1")
    assert proc.returncode == 0 and calls(clone) == []
    assert "tried" not in proc.stdout and proc.stdout.count("installed (0s)") == 2


@pytest.mark.parametrize(("stack", "off"), [("local", "true"), ("gcp-example", "false"), ("aws-example", "false")])
def test_plugin_acquisition_is_off_for_the_local_stack_only(stack: str, off: str) -> None:
    """GIVEN `make -s env STACK=<stack>` WHEN read THEN automatic plugin acquisition is off for local only."""
    proc = subprocess.run(
        ["make", "-s", "env", f"STACK={stack}"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert f"export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION={off}" in proc.stdout.splitlines()
    assert f"export ARBOR_STACK={stack}" in proc.stdout.splitlines()
