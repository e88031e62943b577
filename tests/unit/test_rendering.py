"""Pure renderers against golden files: control-plane workloads, arbor's API, records, the plan."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from components.checks import parse_landscape
from components.plan.planner import plan_landscape
from components.render import api, controlplane
from tests.unit.spec_cases import base

PLAN = plan_landscape(parse_landscape(base()), "local")
WEB = PLAN.shoots[0]


class _Plain(yaml.SafeDumper):
    """Writes shared sub-objects out in full: goldens are read by people, not by YAML anchors."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump(objects: list[Any]) -> str:
    """Objects as a YAML stream, keys in their rendered order."""
    return yaml.dump_all(objects, Dumper=_Plain, sort_keys=False)


def test_control_plane_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN a hosted shoot WHEN its control plane is rendered THEN it matches the golden manifests."""
    objects: list[Any] = []
    for w in controlplane.control_plane(WEB):
        objects += [w.object, *([w.service] if w.service else [])]
    golden("control-plane-web.yaml", dump(objects))


def test_api_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN arbor's API WHEN rendered THEN the CRDs and records match the golden manifests."""
    records = [api.project_record(PLAN.garden.projects[0]), api.seed_record(PLAN.seeds[0]), api.shoot_record(WEB)]
    golden("api.yaml", dump([*api.crds(), *records]))


def test_plan_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN the base landscape WHEN planned THEN the values match the golden file (names and hashes stable)."""
    golden("plan.json", json.dumps(dataclasses.asdict(PLAN), indent=1, default=str) + "\n")


@pytest.mark.parametrize("workload", controlplane.control_plane(WEB), ids=lambda w: w.component)
def test_every_workload_selects_its_own_pods(workload: controlplane.Workload) -> None:
    """GIVEN a workload WHEN rendered THEN its selector matches its pod labels, and its Service selects them too."""
    spec = workload.object["spec"]
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    if workload.service:
        assert workload.service["spec"]["selector"].items() <= labels.items()
    assert workload.object["metadata"]["namespace"] == "shoot--dev--web"


def test_api_server_talks_to_both_etcds_and_uses_the_shoot_ranges() -> None:
    """GIVEN a shoot WHEN its kube-apiserver is rendered THEN etcd main, events and the service range are set."""
    command = controlplane.kube_apiserver(WEB, WEB.topology).pod_spec["containers"][0]["command"]
    assert "--etcd-servers=https://etcd-main-client.shoot--dev--web.svc:2379" in command
    assert "--etcd-servers-overrides=/events#https://etcd-events-client.shoot--dev--web.svc:2379" in command
    assert f"--service-cluster-ip-range={WEB.networking.services[0]}" in command
    image = controlplane.kube_apiserver(WEB, WEB.topology).pod_spec["containers"][0]["image"]
    assert image == "registry.k8s.io/kube-apiserver:v1.34.4"


def test_shoot_record_of_a_shoot_without_labels_has_no_labels_field() -> None:
    """GIVEN a shoot without labels WHEN recorded THEN metadata has no empty labels (the server would drop it)."""
    assert "labels" not in api.shoot_record(PLAN.shoots[1])["metadata"]
