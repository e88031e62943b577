"""A shoot's state in its entry without a store: what persists, the document, the seal, the provider's decisions.

The upload to the real MinIO store and the read back are exercised in tests/integration/test_backups.py.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pulumi.output import Unknown
from pulumi.runtime import rpc

from components.checks import parse_landscape
from components.plan.planner import plan_landscape
from components.reconciler import entry_store, state_key
from components.reconciler import shoot_state as reconciler
from components.reconciler.kube import Kube, KubeError
from components.render import controlplane, pki, shoot_state
from tests.unit.landscape_mocks import registered
from tests.unit.spec_cases import base
from tests.unit.test_local_backups import outs
from tests.unit.test_shoot_exposure import unwrapped

KEYS = st.binary(min_size=32, max_size=32).map(lambda b: base64.b64encode(b).decode())
ENCRYPTION = {"encryption-configuration.yaml": "E"}
SECRETS = {"ca": {"ca.crt": "C", "ca.key": "K"}, "etcd-encryption-secret": ENCRYPTION}
# Where a seed namespace holds them: a CA's signer Secret, the encryption configuration's own.
SOURCES = {
    "ca": {"secret": "ca-signer", "keys": ["ca.crt", "ca.key"]},
    "etcd-encryption-secret": {"secret": "etcd-encryption-secret", "keys": ["encryption-configuration.yaml"]},
}


def machine(name: str, **changes: Any) -> dict[str, Any]:
    """A Machine as machine-controller-manager keeps it in the seed."""
    obj: dict[str, Any] = {
        "apiVersion": "machine.sapcloud.io/v1alpha1", "kind": "Machine",
        "metadata": {
            "name": name, "namespace": "shoot--dev--web", "uid": "u-1", "resourceVersion": "7",
            "creationTimestamp": "2026-11-27T10:00:00Z", "labels": {"name": "web-pool-a"},
            "annotations": {"deployment.kubernetes.io/revision": "3"},
            "ownerReferences": [{"kind": "MachineSet", "name": "web-pool-a-abc", "uid": "u-0", "controller": True}],
        },
        "spec": {"class": {"kind": "MachineClass", "name": "web-pool-a-1"}, "providerID": f"kwok://{name}"},
        "status": {"node": name, "currentStatus": {"phase": "Running", "lastUpdateTime": "2026-11-27T10:05:00Z"}},
    }  # fmt: skip
    for path, value in changes.items():
        *parents, leaf = path.split(".")
        target = obj
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    return obj


def test_the_state_carries_the_cas_and_keys_whole_and_no_leaf() -> None:
    """GIVEN a hosted shoot's credentials WHEN its persisted ones are chosen THEN every CA and key, no certificate."""
    creds = pki.credentials("shoot--dev--web", ("10.0.0.0/16",))
    chosen = {c.name for c in shoot_state.persisted(creds)}
    assert chosen == {pki.CA, pki.CA_ETCD, pki.CA_FRONT_PROXY, pki.CA_CLIENT, pki.SERVICE_ACCOUNT_KEY}
    assert {c.kind for c in creds if c.name not in chosen} <= {pki.Kind.CERT, pki.Kind.TOKEN}


def test_a_state_is_one_object_under_the_entrys_etcd_prefix() -> None:
    """GIVEN an entry WHEN its state's key is made THEN it is one object in `<entry>/shoot-state/`."""
    key = shoot_state.object_key("shoot--dev--web--uid")
    assert key == "shoot--dev--web--uid/shoot-state/shootstate.json.gz.sealed"


@given(
    st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True), unique=True, max_size=5),
    st.text(max_size=20),
    st.randoms(),
)
def test_the_document_moves_with_what_a_restore_needs_and_only_that(names: list[str], beat: str, rnd: Any) -> None:
    """GIVEN machines WHEN their heartbeat, uid, version, order or volatile annotations change THEN the same bytes.

    A changed provider ID (what a restore needs) changes the checksum.
    """
    machines = [machine(n) for n in names]
    first = shoot_state.document({}, SECRETS, shoot_state.machine_state({"machines": machines}))
    churned = [
        machine(n, **{"status.currentStatus.lastUpdateTime": beat, "metadata.uid": beat,
                      "metadata.resourceVersion": beat,
                      "metadata.annotations": {"deployment.kubernetes.io/revision": beat}})
        for n in names
    ]  # fmt: skip
    rnd.shuffle(churned)
    assert shoot_state.document({}, SECRETS, shoot_state.machine_state({"machines": churned})) == first
    if names:
        moved = copy.deepcopy(machines)
        moved[0]["spec"]["providerID"] += "-x"
        again = shoot_state.document({}, SECRETS, shoot_state.machine_state({"machines": moved}))
        assert shoot_state.checksum(again) != shoot_state.checksum(first)


def test_a_machine_keeps_its_name_spec_owners_and_node_not_its_status() -> None:
    """GIVEN a Machine WHEN kept for a restore THEN its name, labels, owners by name, spec and node name."""
    kept = shoot_state.machine_object(machine("m-1"))
    assert kept == {
        "name": "m-1", "labels": {"name": "web-pool-a"}, "annotations": {},
        "ownerReferences": [{"kind": "MachineSet", "name": "web-pool-a-abc"}],
        "spec": {"class": {"kind": "MachineClass", "name": "web-pool-a-1"}, "providerID": "kwok://m-1"}, "node": "m-1",
    }  # fmt: skip
    # Where MCM names the node in its label alone.
    labelled = machine("m-2", **{"metadata.labels": {"node": "n-2"}, "status": {}})
    assert shoot_state.machine_object(labelled)["node"] == "n-2"


@given(st.binary(max_size=4096), KEYS, KEYS)
def test_a_sealed_state_opens_with_its_key_only(data: bytes, key: str, other: str) -> None:
    """GIVEN a document WHEN sealed THEN it opens with its key to the same bytes, with no other, and hides it."""
    sealed = reconciler.seal(data, key)
    assert reconciler.unseal(sealed, key) == data
    assert sealed != reconciler.seal(data, key)  # a fresh nonce each time
    if len(data) >= 16:
        assert data not in sealed[len(reconciler.MAGIC) :]
    if other != key:
        with pytest.raises(reconciler.StateError, match="does not open with this stack's key"):
            reconciler.unseal(sealed, other)


@given(st.binary(max_size=200), st.integers(min_value=0, max_value=400), KEYS)
def test_an_altered_or_foreign_object_is_refused_in_one_line(data: bytes, at: int, key: str) -> None:
    """GIVEN a sealed state with one byte flipped, or bytes of another format WHEN opened THEN a StateError."""
    sealed = bytearray(reconciler.seal(data, key))
    sealed[at % len(sealed)] ^= 0x01
    with pytest.raises(reconciler.StateError):
        reconciler.unseal(bytes(sealed), key)
    with pytest.raises(reconciler.StateError, match="not an arbor shoot state"):
        reconciler.unseal(data, key)


def state_props(**changes: Any) -> dict[str, Any]:
    """A ShootStateBackup's outputs after its first generation."""
    props = {
        "shoot": "web", "namespace": "garden-dev", "seedNamespace": "shoot--dev--web", "backup": {"bucketName": "b"},
        "object": shoot_state.object_key("shoot--dev--web--uid"), "seedKubeconfig": "s", "gardenKubeconfig": "g",
        "version": reconciler.PROVIDER_VERSION, "key": reconciler.new_key(), "due": False, "generation": 1,
        "checksum": "c1", "size": 100, "lastUpload": "2026-11-27T10:00:00Z",
        "secretsDigest": reconciler.secrets_digest(reconciler.checksums_of(SECRETS)),
        "machinesDigest": reconciler.digest({}), "sources": SOURCES,
    }  # fmt: skip
    return {**props, **changes}


@pytest.mark.parametrize(
    ("olds", "news", "wanted"),
    [
        ({}, {}, False),
        ({"due": True}, {}, True),
        (
            {},
            {
                "secretsDigest": reconciler.secrets_digest(
                    reconciler.checksums_of({**SECRETS, "ca": {"ca.crt": "C2", "ca.key": "K2"}})
                )
            },
            True,
        ),
        ({}, {"object": shoot_state.object_key("shoot--dev--web--uid2")}, True),
        ({}, {"key": "another"}, True),
    ],
)
def test_a_new_generation_is_wanted_when_secrets_place_or_machines_moved(
    olds: dict[str, Any], news: dict[str, Any], wanted: bool
) -> None:
    """GIVEN the last generation and new inputs WHEN diffed THEN an update when the state may have moved.

    Otherwise nothing, and the description stays. A new key (a key resource made again) seals a new generation.
    """
    before = state_props(**olds)
    after = {**state_props(generation=None, checksum=None), **news}
    after["key"] = news.get("key", before["key"])
    result = reconciler.ShootStateProvider().diff("s", before, after)
    assert bool(result.changes) == wanted and not result.replaces
    assert ("generation" in (result.stables or [])) != wanted


def test_a_preview_with_secrets_not_known_yet_is_an_update_not_a_crash() -> None:
    """GIVEN a CA rotation's preview (the secrets' digest unknown) WHEN diffed THEN an update is planned."""
    unknown = Unknown()  # type: ignore[no-untyped-call]
    after = {**state_props(), "secretsDigest": unknown}
    result = reconciler.ShootStateProvider().diff("s", state_props(), after)
    assert result.changes and not result.replaces


class Store:
    """An entry's store that keeps what is put, and says whether the object is there."""

    def __init__(self) -> None:
        self.written: list[tuple[str, bytes, dict[str, str]]] = []

    def put(self, key: str, data: bytes, metadata: dict[str, str]) -> None:
        """Kept."""
        self.written.append((key, data, metadata))

    def present(self, _key: str) -> bool:
        """Always."""
        return True


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Store:
    """A kept store, the seed's machines empty and no garden to write to."""
    kept = Store()
    monkeypatch.setattr(reconciler, "entry_store", lambda data: kept)
    monkeypatch.setattr(reconciler, "live_machines", lambda props: shoot_state.machine_state({}))
    monkeypatch.setattr(reconciler, "write_status", lambda props: None)
    return kept


def test_a_state_is_uploaded_sealed_once_per_change_under_one_key(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a new ShootStateBackup WHEN made, updated unchanged, then with a new CA THEN generations 1, 1, 2.

    Each upload is sealed under the shoot's key (its own resource's) with the secrets the seed holds; neither the
    inputs nor the outputs hold a secret's content, only its digest.
    """
    seed = {"secrets": SECRETS}
    monkeypatch.setattr(reconciler, "seed_secrets", lambda props: seed["secrets"])
    provider = reconciler.ShootStateProvider()
    news = state_props(generation=None, checksum=None, size=None, lastUpload=None)
    made = outs(provider.create(news))
    assert made["generation"] == 1 and len(store.written) == 1
    assert "secrets" not in made and '"K"' not in json.dumps(made)  # the CA's key is nowhere in the outputs
    key, (_, blob, meta) = made["key"], store.written[0]
    document = json.loads(reconciler.unseal(blob, key))
    assert document["secrets"] == SECRETS and meta[reconciler.META_CHECKSUM] == made["checksum"]
    same = outs(provider.update("s", made, news))
    assert (same["generation"], same["key"], len(store.written)) == (1, key, 1)
    seed["secrets"] = {**SECRETS, "ca": {"ca.crt": "C2", "ca.key": "K2"}}
    rotated = {**news, "secretsDigest": reconciler.secrets_digest(reconciler.checksums_of(seed["secrets"]))}
    moved = outs(provider.update("s", same, rotated))
    assert (moved["generation"], moved["key"], len(store.written)) == (2, key, 2)
    assert json.loads(reconciler.unseal(store.written[1][1], key))["secrets"]["ca"]["ca.crt"] == "C2"


class SeedSecrets:
    """A seed answering for its Secrets (their data base64-encoded, as the API server gives it)."""

    def __init__(self, secrets: dict[str, dict[str, str]]) -> None:
        self.secrets = secrets

    def find(self, path: str) -> dict[str, Any] | None:
        """The Secret the path names, None when it is not there."""
        name = path.rsplit("/", 1)[1]
        if name not in self.secrets:
            return None
        return {"data": {k: base64.b64encode(v.encode()).decode() for k, v in self.secrets[name].items()}}


@pytest.mark.parametrize(
    ("held", "error"),
    [
        ({"ca-signer": {"ca.crt": "C", "ca.key": "K"}, "etcd-encryption-secret": ENCRYPTION}, None),
        ({"ca-signer": {"ca.crt": "C", "ca.key": "K2"}, "etcd-encryption-secret": ENCRYPTION},
         "the Secrets ca-signer, etcd-encryption-secret in shoot--dev--web are not what arbor wrote: run `make up`"),
        ({"ca-signer": {"ca.crt": "C"}, "etcd-encryption-secret": ENCRYPTION},
         "Secret shoot--dev--web/ca-signer has no ca.key"),
        ({"ca-signer": {"ca.crt": "C", "ca.key": "K"}}, "Secret shoot--dev--web/etcd-encryption-secret is missing"),
    ],
)  # fmt: skip
def test_the_state_takes_the_persisted_secrets_from_the_seed_once_they_match_their_digest(
    held: dict[str, dict[str, str]], error: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN the seed's Secrets WHEN the state reads them THEN the persisted secrets, or a line saying what differs."""
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: SeedSecrets(held)))
    props = state_props()
    if error is None:
        assert reconciler.wanted_secrets(props) == SECRETS
        return
    with pytest.raises(reconciler.StateError) as raised:
        reconciler.wanted_secrets(props)
    assert str(raised.value).startswith(error)


def test_a_key_is_made_once_and_never_changes() -> None:
    """GIVEN a shoot's state key WHEN made THEN 256 random bits; WHEN diffed or refreshed THEN it stays as it is."""
    provider = reconciler.ShootStateKeyProvider()
    made = outs(provider.create({"key": None}))
    assert len(base64.b64decode(made["key"])) == 32 and made["key"] != outs(provider.create({"key": None}))["key"]
    assert not provider.diff("k", made, {"key": None}).changes
    assert outs(provider.read("k", made)) == made


@pytest.mark.parametrize(("moved", "present", "due"), [(False, True, False), (True, True, True), (False, False, True)])
def test_refresh_finds_a_generation_due_when_machines_moved_or_the_object_is_gone(
    moved: bool, present: bool, due: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN the machine state and the bucket WHEN refreshed THEN due when the machines moved or the object is gone."""
    machines = shoot_state.machine_state({"machines": [machine("m-1")]} if moved else {})
    monkeypatch.setattr(reconciler, "live_machines", lambda props: machines)
    monkeypatch.setattr(reconciler, "_present", lambda props: present)
    props = state_props(machinesDigest=reconciler.digest(shoot_state.machine_state({})))
    assert outs(reconciler.ShootStateProvider().read("s", props))["due"] is due


def test_hosted_shoots_on_seeds_with_backups_seal_their_state_after_their_machines() -> None:
    """GIVEN a local landscape with backups WHEN registered THEN each hosted shoot's state, its CAs whole.

    The upload waits for the ShootState record and the workers; the self-hosted shoot (no entry) has none.
    """
    raw = base()
    raw["seeds"] = [{**seed, "backup": {"provider": "local"}} for seed in raw["seeds"]]
    built, mocks = registered(plan_landscape(parse_landscape(raw), "local"))
    states = sorted(n for n, t in mocks.types.items() if t == "pulumi-python:dynamic/arbor:ShootStateBackup")
    assert states == ["arbor-shoot-dev-web-shoot-state", "arbor-shoot-ops-db-shoot-state"]
    inputs = mocks.inputs["arbor-shoot-dev-web-shoot-state"]
    # Where the seed holds each persisted secret (the state reads them there), and their digest: no content.
    sources = inputs["sources"]
    assert set(sources) == {pki.CA, pki.CA_ETCD, pki.CA_FRONT_PROXY, pki.CA_CLIENT, pki.SERVICE_ACCOUNT_KEY,
                            controlplane.ENCRYPTION_SECRET}  # fmt: skip
    assert sources[pki.CA] == {"secret": pki.signer(pki.CA), "keys": [pki.KEY_CA_CERT, pki.KEY_CA_KEY]}
    assert sources[pki.SERVICE_ACCOUNT_KEY]["secret"] == pki.SERVICE_ACCOUNT_KEY
    assert re.fullmatch(r"[0-9a-f]{64}", inputs["secretsDigest"]) and "secrets" not in inputs
    assert inputs["object"].endswith("/shoot-state/shootstate.json.gz.sealed")
    record = mocks.inputs["arbor-shoot-dev-web-shoot-state-record"]
    assert record["kind"] == "ShootState" and record["spec"]["object"] == inputs["object"]
    edges = built.edges["arbor-shoot-dev-web-shoot-state"]
    assert {"arbor-shoot-dev-web-shoot-state-record", "arbor-shoot-dev-web-workers-pool-a-z1"} <= edges
    # After the SecretSet that writes the Secrets it reads them from (through the control plane that mounts them).
    assert "arbor-shoot-dev-web-secrets" in built.before("arbor-shoot-dev-web-shoot-state")
    # It names the last steps only (the machines, the webhook), which wait for every other; the status the upload.
    steps = {
        f"arbor-shoot-dev-web-{c}"
        for c in (
            "etcd",
            "kube-apiserver",
            "controllers",
            "cluster",
            "workers-mcm",
            "workers-pool-a-z1",
            "grm-webhook",
            "grm-process",
        )
    }
    assert steps <= built.before("arbor-shoot-dev-web-shoot-state")
    assert {*steps, "arbor-shoot-dev-web-shoot-state"} <= built.before("arbor-shoot-dev-web-status")
    assert len(built.edges["arbor-shoot-dev-web-shoot-state"]) < 8
    # So is the shoot's cluster (its PKI read there); no admin kubeconfig is kept (issued on request).
    assert "arbor-shoot-dev-web-secrets" in built.before("arbor-shoot-dev-web-cluster")
    assert "arbor-shoot-dev-web-admin-kubeconfig" not in mocks.types
    # Sealed under the shoot's key, a resource of its own that waits only for the project namespace, where it writes
    # its copy (a restore reads it first).
    assert mocks.types["arbor-shoot-dev-web-shoot-state-key"] == "pulumi-python:dynamic/arbor:ShootStateKey"
    assert built.edges.get("arbor-shoot-dev-web-shoot-state-key") == {"arbor-garden-project-dev-namespace"}
    held = mocks.inputs["arbor-shoot-dev-web-shoot-state-key"]["copy"]
    assert (held["namespace"], held["name"]) == ("garden-dev", "web.shoot-state-key")
    # What reads the state is given the key by reference to that copy, never the key.
    restore = mocks.inputs["arbor-shoot-dev-web-machine-restore"]
    for handed in (restore["key"], inputs["key"]):
        ref = handed.get("value", handed)
        assert ref[state_key.SECRET_REF] == held and ref["digest"] == "<state key digest>"
    # The machines of a namespace that lost them come back before the pool's MachineDeployment is applied.
    assert restore["deployments"] == ["shoot--dev--web-pool-a-z1"] and restore["object"] == inputs["object"]
    mcm, pool = "arbor-shoot-dev-web-workers-mcm", "arbor-shoot-dev-web-workers-pool-a-z1"
    assert "arbor-shoot-dev-web-machine-restore" in built.edges[mcm] and mcm in built.edges[pool]
    # The bucket's credentials by reference to the Secret written first (from the seed's): the state holds none.
    assert set(unwrapped(restore["backup"])) == {entry_store.SECRET_REF, "storePrefix", "digest"}
    assert "secretAccessKey" not in json.dumps(unwrapped(restore["backup"]))
    assert "arbor-shoot-dev-web-etcd-backup" in built.edges["arbor-shoot-dev-web-machine-restore"]


def machine_set(name: str, deployment: str) -> dict[str, Any]:
    """A MachineSet of a MachineDeployment, as MCM keeps it."""
    return {
        "metadata": {"name": name, "uid": "u-s", "labels": {"name": deployment, "machine-template-hash": "h1"},
                     "ownerReferences": [{"kind": "MachineDeployment", "name": deployment, "uid": "u-d"}]},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"name": deployment}}},
        "status": {"replicas": 1},
    }  # fmt: skip


def owned(name: str, machine_set: str) -> dict[str, Any]:
    """A Machine of a MachineSet."""
    return machine(name, **{"metadata.ownerReferences": [{"kind": "MachineSet", "name": machine_set}]})


def test_a_restore_writes_machines_then_their_sets_of_planned_pools_only() -> None:
    """GIVEN a state with two pools' machines WHEN restored with one pool planned THEN its machines, then its set.

    Machines first (a set made first would make new ones to reach its replicas); no owner references or status
    (their owners adopt them, MCM reads each machine's VM by its provider ID); a removed pool's never come back.
    """
    kept = shoot_state.machine_state({
        "machinesets": [machine_set("web-pool-a-z1-abc", "web-pool-a-z1"), machine_set("old-x", "old")],
        "machines": [owned("m-1", "web-pool-a-z1-abc"), owned("m-2", "old-x")],
    })  # fmt: skip
    written = shoot_state.restorable(kept, ["web-pool-a-z1"], "shoot--dev--web")
    assert [(kind, obj["metadata"]["name"]) for kind, obj in written] == [
        ("machines", "m-1"),
        ("machinesets", "web-pool-a-z1-abc"),
    ]
    for _, obj in written:
        assert obj["apiVersion"] == "machine.sapcloud.io/v1alpha1" and obj["metadata"]["namespace"] == "shoot--dev--web"
        assert "ownerReferences" not in obj["metadata"] and "status" not in obj
    assert written[0][1]["spec"]["providerID"] == "kwok://m-1"
    assert written[1][1]["metadata"]["labels"]["machine-template-hash"] == "h1"


def restore_props(**changes: Any) -> dict[str, Any]:
    """A MachineRestore's outputs."""
    props = {"seedNamespace": "shoot--dev--web", "deployments": ["web-pool-a-z1"], "backup": {}, "object": "o",
             "key": "k", "seedKubeconfig": "s", "version": reconciler.PROVIDER_VERSION, "restored": 0,
             "due": False}  # fmt: skip
    return {**props, **changes}


@pytest.mark.parametrize(("live", "present", "due"), [(0, True, True), (1, True, False), (0, False, False)])
def test_a_namespace_that_lost_every_machine_object_is_restored_from_the_state(
    live: int, present: bool, due: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN the seed namespace's machine objects and the bucket WHEN refreshed and updated THEN restored if all lost.

    One machine object left means MCM's business as usual; no state in the bucket, nothing to restore.
    """
    state = {"machines": shoot_state.machine_state({
        "machinesets": [machine_set("web-pool-a-z1-abc", "web-pool-a-z1")],
        "machines": [owned("m-1", "web-pool-a-z1-abc")],
    })}  # fmt: skip
    monkeypatch.setattr(reconciler, "_machine_count", lambda props: live)
    monkeypatch.setattr(reconciler, "_present", lambda props: present)
    monkeypatch.setattr(reconciler, "fetch", lambda props: state)
    created: list[tuple[str, str]] = []

    class Seed:
        def create(self, path: str, body: dict[str, Any]) -> None:
            created.append((path.rsplit("/", 1)[1], body["metadata"]["name"]))

    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda kubeconfig: Seed()))
    provider = reconciler.MachineRestoreProvider()
    read = outs(provider.read("r", restore_props()))
    assert read["due"] is due and bool(provider.diff("r", read, restore_props(due=None)).changes) == due
    updated = outs(provider.update("r", read, restore_props(due=None)))
    assert updated["restored"] == (2 if due else 0)
    assert created == ([("machines", "m-1"), ("machinesets", "web-pool-a-z1-abc")] if due else [])


DATA = {"bucketName": "b", "accessKeyID": "a", "secretAccessKey": "s", "storePrefix": "p"}


@pytest.mark.parametrize(
    ("status", "due"), [(404, True), (0, False), (403, False)], ids=["gone", "unreachable", "denied"]
)
def test_a_namespace_without_machines_or_its_backup_secret_is_due_for_a_restore(
    status: int, due: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN no machine object and the referenced Secret missing (a seed made again) WHEN refreshed THEN due.

    The update comes after the SecretSet writes the Secret again; a seed that does not answer says nothing.
    """

    def reading(where: dict[str, Any], name: str) -> dict[str, str]:
        raise KubeError(f"Secret {where['namespace']}/{name}: no", status)

    monkeypatch.setattr(reconciler, "_machine_count", lambda props: 0)
    monkeypatch.setattr(entry_store, "secret_keys", reading)
    backup = entry_store.reference("kubeconfig", "shoot--dev--web", DATA)
    read = outs(reconciler.MachineRestoreProvider().read("r", restore_props(backup=backup)))
    assert read["due"] is due


def test_a_reference_a_preview_does_not_know_yet_is_no_change() -> None:
    """GIVEN the reference unknown in a preview (a seed made again), whole or in part WHEN diffed THEN no change."""
    olds = restore_props(backup=entry_store.reference("kubeconfig", "shoot--dev--web", DATA))
    partly = {**entry_store.reference("kubeconfig", "shoot--dev--web", DATA), "digest": rpc.UNKNOWN}
    for backup in (rpc.UNKNOWN, partly):
        news = restore_props(backup=backup, due=None)
        assert not reconciler.MachineRestoreProvider().diff("r", olds, news).changes


@pytest.mark.parametrize(("given", "changes"), [(DATA, False), ({**DATA, "secretAccessKey": "rotated"}, True)])
def test_a_restore_kept_with_the_data_takes_a_reference_to_the_same_data_as_no_change(
    given: dict[str, str], changes: bool
) -> None:
    """GIVEN a restore an older arbor kept with the data WHEN given a reference THEN a change only for other data."""
    olds = restore_props(backup=given)
    news = restore_props(backup=entry_store.reference("kubeconfig", "shoot--dev--web", DATA), due=None)
    assert bool(reconciler.MachineRestoreProvider().diff("r", olds, news).changes) is changes
