"""The environment a user gets: `eval "$(make -s env)"` puts the tools on PATH, offline, with this clone's backend."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.integration.engine import ROOT

pytestmark = pytest.mark.integration


def shell(script: str) -> str:
    """Runs `script` after `eval "$(make -s env)"` in a clean login-less bash, from the repository root."""
    proc = subprocess.run(
        ["bash", "-c", f'eval "$(make -s env)" && {script}'],
        cwd=ROOT,
        env={"HOME": os.environ["HOME"], "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


def test_make_env_puts_the_built_tools_first_on_path() -> None:
    """GIVEN a shell with a bare PATH WHEN it evals `make -s env` THEN pulumi, kubectl and kwokctl are arbor's."""
    for tool in ("pulumi", "kubectl", "kwokctl", "kube-apiserver", "etcd"):
        assert shell(f"command -v {tool}") == str(ROOT / ".bin" / tool)
    assert shell("pulumi version") == "v" + shell("source hack/env.sh && echo ${PULUMI_VERSION#v}")


def test_make_env_sets_an_offline_pulumi_with_the_clone_backend() -> None:
    """GIVEN `make -s env` WHEN inspected THEN no update check, no plugin download, and the clone's backend."""
    out = shell(
        "echo $PULUMI_SKIP_UPDATE_CHECK $PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION $PULUMI_BACKEND_URL $KWOK_WORKDIR"
    )
    assert out.split() == ["true", "true", f"file://{ROOT}/.state?metadata=skip", str(ROOT / ".kwok")]
