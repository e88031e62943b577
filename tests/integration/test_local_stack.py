"""The local stack on the real engine: clusters come up, stay converged, survive a crash, and go away cleanly."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
from pathlib import Path

import pytest
import secret_copies

from components.reconciler.kube import Kube, KubeError
from components.reconciler.seed_operation import OPERATION, RENEW_GARDEN_ACCESS_SECRETS
from tests.integration.engine import (
    LOCAL_LANDSCAPE,
    ROOT,
    Stack,
    cluster_dir,
    kubectl,
    make_stack,
    processes_of,
    remove_stack,
    steps_by_type,
    token_kubeconfig,
)

pytestmark = pytest.mark.integration
GARDEN_MOUNT = "/var/run/secrets/gardener.cloud/garden/generic-kubeconfig"
LOCAL_CLUSTER = "pulumi-python:dynamic/arbor:LocalCluster"
ACCESS_TOKEN = "pulumi-python:dynamic/arbor:AccessToken"
SEED_OPERATION = "pulumi-python:dynamic/arbor:SeedOperation"
API = "/apis/arbor.dev/v1alpha1"


def test_up_creates_garden_and_seed_with_a_kwok_node_each(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN the local landscape WHEN `up` ran THEN each cluster answers kubectl and lists its Ready kwok node.

    Its one controller manager and one scheduler run without leader election: neither holds a lease.
    """
    kubeconfigs = local_stack.outputs()["kubeconfigs"]
    assert sorted(kubeconfigs) == ["garden", "seed/local-1", "shoot/dev/web", "shoot/ops/db", "shoot/ops/root"]
    for key, cluster in [
        ("garden", f"{local_stack.name}-garden"),
        ("seed/local-1", f"{local_stack.name}-seed-local-1"),
    ]:
        nodes = json.loads(kubectl(kubeconfigs[key], tmp_path, "get", "nodes", "-o", "json"))["items"]
        assert [n["metadata"]["name"] for n in nodes] == [f"{cluster}-node-0"]
        ready = {c["type"]: c["status"] for c in nodes[0]["status"]["conditions"]}["Ready"]
        assert ready == "True"
        version = json.loads(kubectl(kubeconfigs[key], tmp_path, "version", "-o", "json"))["serverVersion"]
        assert version["gitVersion"] == os.environ["KUBERNETES_VERSION"]
        leases = kubectl(kubeconfigs[key], tmp_path, "get", "leases", "-n", "kube-system", "-o", "name").split()
        elected = {f"lease.coordination.k8s.io/{c}" for c in ("kube-controller-manager", "kube-scheduler")}
        assert not elected & set(leases), leases


@pytest.mark.parametrize("index", range(len(LOCAL_LANDSCAPE["shoots"])))
def test_every_shoot_runs_its_system_components(local_stack: Stack, tmp_path: Path, index: int) -> None:
    """GIVEN the local landscape WHEN `up` ran THEN each shoot's kube-system holds its system components.

    calico, kube-proxy per pool at the pool's version with the shoot's pod ranges, CoreDNS behind kube-dns, and
    `shoot-info` with kube-apiserver's kubelet binding.
    """
    shoot = LOCAL_LANDSCAPE["shoots"][index]
    config = local_stack.outputs()["kubeconfigs"][f"shoot/{shoot['project']}/{shoot['name']}"]
    kinds = "daemonsets,deployments,services,configmaps"
    found = json.loads(kubectl(config, tmp_path, "-n", "kube-system", "get", kinds, "-o", "json"))["items"]
    names = {(o["kind"], o["metadata"]["name"]) for o in found}
    version = shoot["kubernetes"]["version"]
    proxies = {("DaemonSet", f"kube-proxy-{p['name']}-v{version}") for p in shoot["workers"]}
    expected = {("DaemonSet", "calico-node"), ("Deployment", "calico-kube-controllers"), ("Deployment", "coredns")}
    assert expected | proxies | {("Service", "kube-dns"), ("ConfigMap", "kube-proxy-config")} <= names
    proxy_config = next(o for o in found if o["metadata"]["name"] == "kube-proxy-config")["data"]["config.yaml"]
    pods = shoot["networking"]["pods"]
    assert f"clusterCIDR: {','.join(pods) if isinstance(pods, list) else pods}" in proxy_config
    crds = kubectl(config, tmp_path, "get", "crd", "-o", "name")
    assert "customresourcedefinition.apiextensions.k8s.io/ippools.crd.projectcalico.org" in crds.split()
    # With them, what the shoot tells (`shoot-info`) and grants kube-apiserver (its kubelet user's binding).
    info = next(o for o in found if o["metadata"]["name"] == "shoot-info")["data"]
    assert (info["shootName"], info["projectName"], info["kubernetesVersion"]) == (
        shoot["name"],
        shoot["project"],
        version,
    )
    binding = json.loads(
        kubectl(config, tmp_path, "get", "clusterrolebinding", "system:kube-apiserver:kubelet", "-o", "json")
    )
    assert binding["roleRef"]["name"] == "system:kubelet-api-admin"


def test_a_system_component_deleted_in_a_shoot_is_applied_again(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN a shoot's calico-kube-controllers deleted WHEN refreshed THEN that shoot's system components update.

    One resource keeps the shoot's system components as hashes: the preview names the object (the refreshed hash
    is empty), nothing else changes, and `up` applies it again from the values it keeps.
    """
    config = local_stack.outputs()["kubeconfigs"]["shoot/dev/web"]
    kubectl(config, tmp_path, "-n", "kube-system", "delete", "deployment", "calico-kube-controllers")

    preview = local_stack.preview_json("--refresh", "--diff")
    changed = {s["urn"].rsplit("::", 1)[-1]: s for s in preview["steps"] if s["op"] not in ("same", "refresh")}
    assert {n: s["op"] for n, s in changed.items()} == {"arbor-shoot-dev-web-system": "update"}
    assert (
        changed["arbor-shoot-dev-web-system"]["oldState"]["outputs"]["objects"]["deployment-calico-kube-controllers"]
        == ""
    )

    local_stack.up()
    names = kubectl(config, tmp_path, "-n", "kube-system", "get", "deployments", "-o", "name").split()
    assert "deployment.apps/calico-kube-controllers" in names
    assert not [s for s in local_stack.preview_json("--refresh")["steps"] if s["op"] not in ("same", "refresh")]


def test_the_seed_runs_its_extension_installation(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN provider-local on seed local-1 WHEN `up` ran THEN its namespace runs its workload, garden kubeconfig in."""
    seed = local_stack.outputs()["kubeconfigs"]["seed/local-1"]
    namespace = json.loads(kubectl(seed, tmp_path, "get", "namespace", "extension-provider-local", "-o", "json"))
    labels = namespace["metadata"]["labels"]
    assert labels["gardener.cloud/role"] == "extension"
    assert labels["controllerregistration.core.gardener.cloud/name"] == "provider-local"
    deployment = json.loads(kubectl(seed, tmp_path, "-n", "extension-provider-local", "get", "deployment",
                                    "gardener-extension-provider-local", "-o", "json"))  # fmt: skip
    pod = deployment["spec"]["template"]["spec"]
    env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]}
    assert env == {"SEED_NAME": "local-1", "GARDEN_KUBECONFIG": f"{GARDEN_MOUNT}/kubeconfig"}
    sources = [s["secret"]["name"] for s in pod["volumes"][0]["projected"]["sources"]]
    assert sources[0].startswith("generic-garden-kubeconfig-") and sources[1] == "garden-access-extension"
    # The kubernetes provider awaited the rollout: kwok's node runs the pod.
    assert deployment["status"]["readyReplicas"] == 1


def test_an_extensions_garden_token_acts_for_its_seed_only(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN provider-local's garden access WHEN its token is used THEN the garden knows it as the installation.

    It authenticates as `system:serviceaccount:seed-local-1:extension-provider-local` (a real TokenReview); with it
    the installation reads and updates its Seed record and the Shoot records on local-1, and is refused (403, not
    401) a list of all shoots and the project's Secrets.
    """
    outputs = local_stack.outputs()
    seed, garden = outputs["kubeconfigs"]["seed/local-1"], outputs["kubeconfigs"]["garden"]
    secret = json.loads(kubectl(seed, tmp_path, "-n", "extension-provider-local", "get", "secret",
                                "garden-access-extension", "-o", "json"))  # fmt: skip
    assert secret["metadata"]["labels"]["resources.gardener.cloud/purpose"] == "token-requestor"
    assert "serviceaccount.resources.gardener.cloud/token-renew-timestamp" in secret["metadata"]["annotations"]
    token = base64.b64decode(secret["data"]["token"]).decode()
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
    status = Kube.from_kubeconfig(garden).create("/apis/authentication.k8s.io/v1/tokenreviews", review)["status"]
    assert status["user"]["username"] == "system:serviceaccount:seed-local-1:extension-provider-local"

    extension = Kube.from_kubeconfig(token_kubeconfig(garden, outputs["endpoints"]["garden"], token))
    assert extension.get(f"{API}/seeds/local-1")["metadata"]["name"] == "local-1"
    assert extension.get(f"{API}/namespaces/garden-dev/shoots/web")["spec"]["seedName"] == "local-1"
    marked = extension.merge_patch(f"{API}/seeds/local-1", {"metadata": {"annotations": {"test.arbor.dev/seen": "1"}}})
    assert marked["metadata"]["annotations"]["test.arbor.dev/seen"] == "1"
    extension.merge_patch(f"{API}/seeds/local-1", {"metadata": {"annotations": {"test.arbor.dev/seen": None}}})
    for path in (f"{API}/shoots", f"{API}/namespaces/garden-dev/shoots", "/api/v1/namespaces/garden-dev/secrets"):
        with pytest.raises(KubeError) as refused:
            extension.get(path)
        assert refused.value.status == 403, path


def test_a_seed_annotated_for_renewal_renews_its_garden_tokens(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN local-1 annotated renew-garden-access-secrets WHEN previewed THEN the renewal says so; `up` renews.

    As for gardenlet: every garden access token of the seed is renewed, then the annotation is removed.
    """
    outputs = local_stack.outputs()
    seed, garden = outputs["kubeconfigs"]["seed/local-1"], outputs["kubeconfigs"]["garden"]
    secret = ("-n", "extension-provider-local", "get", "secret", "garden-access-extension")
    args = (*secret, "-o", "jsonpath={.data.token}")
    before = kubectl(seed, tmp_path, *args)
    kubectl(garden, tmp_path, "annotate", "seeds.arbor.dev", "local-1", f"{OPERATION}={RENEW_GARDEN_ACCESS_SECRETS}")
    shown = local_stack.run("preview", "--diff").stdout
    assert "requested: the Seed record local-1 is annotated" in shown and "renewAfter" in shown, shown[-3000:]
    assert steps_by_type(local_stack.preview_json()) == {ACCESS_TOKEN: ["update"], SEED_OPERATION: ["update"]}
    local_stack.up()
    after = kubectl(seed, tmp_path, *args)
    assert after != before
    token = base64.b64decode(after).decode()
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
    assert Kube.from_kubeconfig(garden).create("/apis/authentication.k8s.io/v1/tokenreviews", review)["status"][
        "authenticated"
    ]
    record = json.loads(kubectl(garden, tmp_path, "get", "seeds.arbor.dev", "local-1", "-o", "json"))
    assert OPERATION not in (record["metadata"].get("annotations") or {})


def shoot_transitions(stack: Stack, tmp_path: Path) -> dict[str, tuple[str, str]]:
    """Per condition of shoot dev/web: its status and lastTransitionTime."""
    garden = stack.outputs()["kubeconfigs"]["garden"]
    shoot = json.loads(kubectl(garden, tmp_path, "get", "shoot", "-n", "garden-dev", "web", "-o", "json"))
    return {c["type"]: (c["status"], c["lastTransitionTime"]) for c in shoot["status"]["conditions"]}


def test_second_up_changes_nothing(local_stack: Stack) -> None:
    """GIVEN a converged stack WHEN previewed again with refresh THEN no resource changes."""
    preview = local_stack.preview_json("--refresh")
    assert steps_by_type(preview, ops=("same", "refresh")) == {}


def test_kubeconfig_is_secret_in_state(local_stack: Stack) -> None:
    """GIVEN the stack's state WHEN exported THEN no private key or certificate is there in plaintext."""
    state = json.dumps(local_stack.export())
    assert "PRIVATE KEY" not in state and "client-key-data" not in state
    cluster = next(r for r in local_stack.export()["deployment"]["resources"] if r["type"] == LOCAL_CLUSTER)
    assert "ciphertext" in cluster["outputs"]["kubeconfig"]


def test_every_private_key_is_kept_once(local_stack: Stack) -> None:
    """GIVEN the stack's state, its secrets shown WHEN scanned THEN each private key and etcd key has one holder.

    Issue 19's rule, checked by hack/secret_copies.py in every encoding arbor keeps a key in: the client CA's garden
    InternalSecret (`<shoot>-ca-client`) is copied from where the CA wrote it, so its state holds no key. A self-hosted
    shoot's credentials write its machine's files: its cluster reads its PKI there, and its control-plane OSC refers to
    them; the garden's encryption keys write its configuration where its cluster reads it. The object store's root
    password is kept once too: the store writes it to the garden, and nothing else keeps it (not the stack's outputs).
    The seed's bucket has no key (a role the seed's tokens assume), only the OpenID client secret the store checks
    their tokens with, kept by the bucket alone.
    """
    state = json.loads(local_stack.run("stack", "export", "--show-secrets").stdout)
    assert secret_copies.copies(state) == []
    # Each shoot's CA is there, held by its resource alone.
    held = {n for names in secret_copies.holders(state).values() for n in names}
    assert {f"arbor-shoot-{s}-pki-ca" for s in ("dev-web", "ops-db", "ops-root")} <= held, held
    passwords = {key: names for key, names in secret_copies.holders(state).items() if key.startswith("password:")}
    assert sorted(sorted(names) for names in passwords.values()) == [
        ["arbor-seed-local-1-backup"],
        ["local-object-store"],
    ]


def test_a_self_hosted_shoots_machine_files_deleted_are_written_again(local_stack: Stack) -> None:
    """GIVEN the self-hosted shoot's machine directory WHEN its files are deleted THEN drift; `up` writes them again.

    The same credentials: a CA or key is never generated anew (its leaves are issued again, as Gardener does).
    """
    machine = Path(os.environ["KWOK_WORKDIR"]) / "machines" / f"{local_stack.name}-shoot-ops-root"
    signer = machine / "ca-signer" / "ca.key"
    key = signer.read_text()
    shutil.rmtree(machine)
    preview = local_stack.preview_json("--refresh")
    updated = {s["urn"].rsplit("::", 1)[-1] for s in preview["steps"] if s["op"] == "update"}
    assert {"arbor-shoot-ops-root-pki-ca", "arbor-shoot-ops-root-encryption-keys"} <= updated, updated
    local_stack.up()
    assert signer.read_text() == key and (machine / "etcd-encryption-secret").is_dir()
    assert steps_by_type(local_stack.preview_json("--refresh"), ops=("same", "refresh")) == {}


def node_lease_holder(kubeconfig: str, node: str, tmp_path: Path) -> str:
    """Who holds the node's lease (kwok's identity, new at every start), "" when no one does."""
    args = ("-n", "kube-node-lease", "get", "lease", node, "-o", "jsonpath={.spec.holderIdentity}")
    return kubectl(kubeconfig, tmp_path, *args).strip()


def test_refresh_notices_killed_clusters_and_up_restores_them(local_stack: Stack, tmp_path: Path) -> None:
    """GIVEN the garden's and seed's processes killed (a reboot) WHEN refreshed THEN both drift; one `up` restores."""
    garden, seed = f"{local_stack.name}-garden", f"{local_stack.name}-seed-local-1"
    clusters = (("garden", garden), ("seed/local-1", seed))
    transitions = shoot_transitions(local_stack, tmp_path)
    kubeconfigs = local_stack.outputs()["kubeconfigs"]
    holders = {key: node_lease_holder(kubeconfigs[key], f"{cluster}-node-0", tmp_path) for key, cluster in clusters}
    killed = processes_of(f"{garden}/") + processes_of(f"{seed}/")
    assert killed, "the garden and seed clusters should be running"
    for line in killed:
        os.kill(int(line.split()[0]), signal.SIGKILL)

    # A refreshing preview (it records nothing) sees both stopped: `up` will start them.
    preview = local_stack.preview_json("--refresh")
    updated = {s["urn"].rsplit("::", 1)[-1] for s in preview["steps"] if s["op"] == "update"}
    assert {"arbor-garden-cluster", "arbor-seed-local-1-cluster"} <= updated, updated
    assert "arbor-shoot-dev-web-cluster" not in updated

    # As `make up` after a reboot: the refresh configures the kubernetes providers while the clusters are down; the
    # restarted servers' new kubeconfigs make them connect again, so one `up` is enough.
    local_stack.up()
    restarted = local_stack.outputs()["kubeconfigs"]
    for key, cluster in clusters:
        assert processes_of(f"{cluster}/"), f"up should have restarted {cluster}"
        nodes = kubectl(restarted[key], tmp_path, "get", "nodes", "-o", "name")
        assert nodes.split() == [f"node/{cluster}-node-0"]
        # The killed kwok's lease is handed over: the new kwok runs the node's pods at its next beat, not after the
        # lease expires, when kube-controller-manager would find the node unreachable (reconciler/node_leases.py).
        lease = node_lease_holder(restarted[key], f"{cluster}-node-0", tmp_path)
        assert holders[key] and lease != holders[key], (holders[key], lease)
    # The shoots' status was written again (the garden could not be asked), and conditions that held all along
    # keep their transition time.
    assert shoot_transitions(local_stack, tmp_path) == transitions
    assert steps_by_type(local_stack.preview_json("--refresh"), ops=("same", "refresh")) == {}


def test_destroy_leaves_no_cluster_and_no_process() -> None:
    """GIVEN a converged stack WHEN destroyed THEN its clusters' files and processes are gone."""
    stack = make_stack(ROOT, ROOT / "stacks", {"arbor:landscape": {**LOCAL_LANDSCAPE, "seeds": [], "shoots": []}})
    try:
        stack.up()
        assert processes_of(f"{stack.name}-garden/")
        stack.run("destroy", "--yes", "--skip-preview", "--suppress-progress", "--ignore-protect")
        assert processes_of(f"{stack.name}-") == []
        assert not cluster_dir(f"{stack.name}-garden").exists()
    finally:
        remove_stack(stack)


def test_invalid_landscape_stops_before_any_change_with_one_line_per_problem() -> None:
    """GIVEN a landscape with two mistakes WHEN previewed THEN both lines are printed, no traceback, nothing planned."""
    broken = {**LOCAL_LANDSCAPE, "seeds": [{"name": "local-1", "provider": "local", "zones": ["local-a", "local-a"]}]}
    broken["shoots"] = [{**LOCAL_LANDSCAPE["shoots"][0], "kubernetes": {"version": "1.29.0"}}]
    stack = make_stack(ROOT, ROOT / "stacks", {"arbor:landscape": broken})
    try:
        proc = stack.run("preview", "--json", check=False)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0
        assert "landscape.seeds[0].zones: duplicate 'local-a'" in out
        assert (
            "landscape.shoots[0].kubernetes.version: Kubernetes 1.29.0 is not supported (supported minors: 1.32, 1.33, "
            "1.34)" in out
        )
        assert "Traceback" not in out
        steps = json.loads(proc.stdout).get("steps") or []
        assert [s["op"] for s in steps if s["op"] != "same" and "Stack" not in s["urn"]] == []
    finally:
        remove_stack(stack)


def test_real_urns_match_the_mocked_snapshot(local_stack: Stack) -> None:
    """GIVEN the converged stack WHEN its state is exported THEN its URNs are the unit tests' snapshot."""
    snapshot = (ROOT / "tests" / "unit" / "golden" / "local-urns.txt").read_text().split()
    urns = sorted(
        r["urn"].replace(f"urn:pulumi:{local_stack.name}::", "urn:pulumi:local::")
        for r in local_stack.export()["deployment"]["resources"]
        # The engine's own providers: dynamic resources', the built-in one that reads the previous outputs, and the
        # command plugin's default one (the snapshot steps'), which mocks never register.
        if not r["type"].startswith(("pulumi:pulumi:Stack", "pulumi:providers:pulumi-python"))
        and r["type"] not in ("pulumi:providers:pulumi", "pulumi:providers:command")
    )
    assert urns == snapshot
