"""Static pods of a self-hosted control plane: golden manifests, the translation as a table, config hashes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from components.checks import parse_landscape
from components.plan import osc
from components.plan.nodes import node_values
from components.plan.planner import plan_landscape
from components.render import controlplane, nodeagent, staticpods
from tests.unit.spec_cases import base

ROOT = plan_landscape(parse_landscape(base()), "local").shoots[2]  # ops/root, self-hosted
WORKLOADS = controlplane.control_plane(ROOT)


def sources(**changed: dict[str, str]) -> dict[str, dict[str, str]]:
    """Contents of every Secret and ConfigMap the control plane mounts; placeholders stand for the PEMs."""
    out: dict[str, dict[str, str]] = {}
    for w in WORKLOADS:
        for c in w.config_maps:
            out[c["metadata"]["name"]] = dict(c["data"])
        for volume in w.pod_spec.get("volumes", []):
            if "secret" in volume:
                name = volume["secret"]["secretName"]
                out[name] = {"ca.crt": f"<{name} ca>", "tls.crt": f"<{name} cert>", "tls.key": f"<{name} key>"}
    out.update(changed)
    return out


PODS = staticpods.static_pods(WORKLOADS, sources())


def by_name(pods: tuple[staticpods.StaticPod, ...]) -> dict[str, staticpods.StaticPod]:
    """The static pods by component."""
    return {p.name: p for p in pods}


def test_static_manifests_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN a self-hosted shoot WHEN its control plane is rendered as static pods THEN the manifests match."""
    golden("static-pods-root.yaml", yaml.safe_dump_all([p.manifest for p in PODS], sort_keys=False))


def _volume(pod: str, name: str) -> dict[str, Any]:
    """One volume of a static pod's manifest."""
    spec = by_name(PODS)[pod].manifest["spec"]
    return dict(next(v for v in spec["volumes"] if v["name"] == name))


TRANSLATION = [
    ("Secret volume", "kube-apiserver", "ca-etcd",
     {"name": "ca-etcd", "hostPath": {"path": "/var/lib/static-pods/kube-apiserver/ca-etcd", "type": "Directory"}}),
    ("ConfigMap volume", "kube-scheduler", "kube-scheduler-kubeconfig",
     {"name": "kube-scheduler-kubeconfig",
      "hostPath": {"path": "/var/lib/static-pods/kube-scheduler/kube-scheduler-kubeconfig", "type": "Directory"}}),
    ("emptyDir stays on the node", "etcd-main", "data",
     {"name": "data", "hostPath": {"path": "/var/lib/static-pods/etcd-main/data", "type": "DirectoryOrCreate"}}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "pod", "volume", "expected"), TRANSLATION, ids=[c[0] for c in TRANSLATION])
def test_volumes_become_host_paths(case: str, pod: str, volume: str, expected: dict[str, Any]) -> None:
    """GIVEN a pod volume WHEN translated THEN it is the host path of its directory under /var/lib/static-pods."""
    assert _volume(pod, volume) == expected


def test_keys_become_files_secrets_private() -> None:
    """GIVEN Secret and ConfigMap keys WHEN translated THEN each is a file, Secrets 0600, ConfigMaps 0644."""
    files = {f.path: f for f in by_name(PODS)["kube-controller-manager"].files}
    key = files["/var/lib/static-pods/kube-controller-manager/ca-client-signer/tls.key"]
    assert key.permissions == 0o600 and key.content == osc.Inline("<ca-client-signer key>")
    config = files["/var/lib/static-pods/kube-controller-manager/kube-controller-manager-kubeconfig/kubeconfig"]
    assert config.permissions == 0o644 and "https://127.0.0.1:443" in config.content.digest_source()


def test_containers_see_the_same_files_at_the_same_paths() -> None:
    """GIVEN a translated pod WHEN its mounts are read THEN every mount path is unchanged from the hosted spec."""
    hosted = {w.component: w for w in controlplane.control_plane(ROOT)}
    for pod in PODS:
        mounts = pod.manifest["spec"]["containers"][0]["volumeMounts"]
        assert mounts == hosted[pod.name].pod_spec["containers"][0]["volumeMounts"]


def test_static_pods_share_the_host_network_with_distinct_etcd_ports() -> None:
    """GIVEN the static topology WHEN rendered THEN pods use the host network and the etcds do not collide."""
    ports = set()
    for pod in PODS:
        spec = pod.manifest["spec"]
        assert spec["hostNetwork"] is True and spec["priorityClassName"] == "system-node-critical"
        for container in spec["containers"]:
            ports |= {p["containerPort"] for p in container["ports"]}
    assert {2379, 2380, 2382, 2383} <= ports
    command = by_name(PODS)["kube-apiserver"].manifest["spec"]["containers"][0]["command"]
    assert "--etcd-servers=https://127.0.0.1:2379" in command
    assert "--etcd-servers-overrides=/events#https://127.0.0.1:2382" in command


def test_a_changed_credential_changes_only_the_manifests_that_mount_it() -> None:
    """GIVEN a new etcd client certificate WHEN rendered again THEN only kube-apiserver's config hash changes."""
    rotated = staticpods.static_pods(WORKLOADS, sources(**{"etcd-client": {"tls.crt": "<new>", "tls.key": "<new>"}}))
    before, after = by_name(PODS), by_name(rotated)
    changed = sorted(n for n in before if before[n].config_hash != after[n].config_hash)
    assert changed == ["kube-apiserver"]


def test_a_missing_source_is_an_error_naming_pod_and_volume() -> None:
    """GIVEN sources without a Secret a pod mounts WHEN translated THEN the error names pod, volume and Secret."""
    partial = sources()
    del partial["ca-etcd"]
    with pytest.raises(staticpods.MissingSourceError, match="etcd-main: volume ca-etcd mounts secret ca-etcd"):
        staticpods.static_pods(WORKLOADS, partial)


def test_control_plane_pool_osc_carries_manifests_and_files_and_keeps_its_key() -> None:
    """GIVEN the control-plane pool WHEN its OSC gets the static pods THEN manifests are files, and no roll follows."""
    pool = ROOT.workers[0]
    node = node_values(ROOT, pool)
    plain, with_pods = nodeagent.reconcile_osc(node), nodeagent.reconcile_osc(node, [staticpods.osc_part(PODS)])
    paths = {f.path for f in with_pods.files}
    assert {f"/etc/kubernetes/manifests/{p.name}.yaml" for p in PODS} <= paths
    assert "/var/lib/static-pods/etcd-main/etcd-server/tls.key" in paths
    assert plain.name == with_pods.name  # static pods change files, never the pool's key
    assert osc.unit_hashes(plain) == osc.unit_hashes(with_pods)  # no unit restarts for them: kubelet watches
