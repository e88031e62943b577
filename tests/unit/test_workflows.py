"""The GitHub workflows: the pull request's preview and the hourly reconcile of every landscape stack."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

WORKFLOWS = Path(__file__).parents[2] / ".github" / "workflows"


def workflow(name: str) -> dict[str, Any]:
    """A workflow file as data; `on` under its own name (YAML 1.1 would read the bare key as true)."""
    data = yaml.safe_load((WORKFLOWS / name).read_text())
    return {("on" if k is True else k): v for k, v in data.items()}


def step_using(job: dict[str, Any], action: str) -> dict[str, Any]:
    """The job's one step that uses an action (by name, without its version)."""
    [step] = [s for s in job["steps"] if str(s.get("uses", "")).split("@")[0] == action]
    return dict(step)


def test_reconcile_converges_each_landscape_hourly_as_make_up_does() -> None:
    """GIVEN reconcile.yml WHEN read THEN hourly and on demand, each listed stack runs `make up` in its environment."""
    flow = workflow("reconcile.yml")
    [cron] = [c["cron"] for c in flow["on"]["schedule"]]
    minute, hour, *rest = cron.split()
    assert minute.isdigit() and hour == "*" and rest == ["*", "*", "*"]
    assert "workflow_dispatch" in flow["on"]
    job = flow["jobs"]["reconcile"]
    assert job["strategy"]["matrix"]["stack"] == "${{ fromJSON(vars.ARBOR_LANDSCAPES || '[]') }}"
    assert job["if"] == "vars.ARBOR_LANDSCAPES != ''" and job["environment"] == "${{ matrix.stack }}"
    # One run per stack at a time, never cancelled by the next one.
    assert job["concurrency"] == {"group": "arbor-landscape-${{ matrix.stack }}", "cancel-in-progress": False}
    assert job["strategy"]["fail-fast"] is False and job["timeout-minutes"] <= 90
    assert [s["run"] for s in job["steps"] if "run" in s] == ['make up STACK="${{ matrix.stack }}"']
    # The backend and passphrase from the environment's secrets; the clouds by federation, no stored key.
    assert set(job["env"]) == {"PULUMI_BACKEND_URL", "PULUMI_CONFIG_PASSPHRASE"}
    assert flow["permissions"] == {"contents": "read", "id-token": "write"}
    aws = step_using(job, "aws-actions/configure-aws-credentials")["with"]
    assert set(aws) == {"role-to-assume", "aws-region"}
    gcp = step_using(job, "google-github-actions/auth")["with"]
    assert set(gcp) == {"workload_identity_provider", "service_account"}


def test_both_workflows_share_the_tool_cache() -> None:
    """GIVEN the preview and reconcile workflows WHEN their tool caches are read THEN the same paths and key."""
    caches = [
        step_using(workflow(name)["jobs"][job], "actions/cache")["with"]
        for name, job in (("preview.yml", "preview"), ("reconcile.yml", "reconcile"))
    ]
    assert caches[0] == caches[1]
    assert "hack/versions.sh" in caches[0]["key"] and "~/.cache/arbor/tools" in caches[0]["path"]
