"""Destructive changes against the previous update's records: refused with a line saying what to do, or confirmed."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components import checks
from components.checks import previous as previous_update
from components.plan.planner import plan_landscape
from tests.unit.spec_cases import base, changed


def deployed(doc: dict[str, Any] | None = None) -> dict[str, Any]:
    """The stack outputs an update of `doc` (the base landscape by default) recorded."""
    plan = plan_landscape(checks.parse_landscape(doc or base()), "s")
    return checks.records(plan)


def second_seed(backup: bool = False) -> dict[str, Any]:
    """The base landscape with a second seed `local-2` (with backups if asked) that hosts dev/web."""
    doc = base()
    doc["seeds"].append(
        {"name": "local-2", "provider": "local", "networks": {"pods": "10.32.0.0/12", "services": "10.48.0.0/16"}}
        | ({"backup": {"provider": "local"}} if backup else {})
    )
    if backup:
        doc["seeds"][0]["backup"] = {"provider": "local"}
    doc["shoots"][0]["seed"] = "local-2"
    return doc


def without(doc: dict[str, Any], kind: str, name: str, confirm: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """`doc` without the shoot (`project/name`) or seed `name`, and with `confirm` as its confirmDeletion."""
    doc = copy.deepcopy(doc)
    doc[kind] = [x for x in doc[kind] if f"{x.get('project', '')}/{x['name']}".removeprefix("/") != name]
    if confirm is not None:
        doc["confirmDeletion"] = confirm
    return doc


def refused(doc: dict[str, Any], before: dict[str, Any]) -> list[str]:
    """The lines of the previous-update stage for `doc` ([] when it passes)."""
    try:
        checks.check(doc, "s", lambda: before)
    except checks.RefusalError as err:
        assert err.heading.startswith("refused change")
        return err.lines
    return []


def moved(doc: dict[str, Any], index: int, **fields: Any) -> dict[str, Any]:
    """`doc` with shoot `index` changed (a field set to None is removed)."""
    doc = copy.deepcopy(doc)
    for key, value in fields.items():
        doc["shoots"][index].pop(key, None)
        if value is not None:
            doc["shoots"][index][key] = value
    return doc


WEB, ROOT = "landscape.shoots[0]", "landscape.shoots[2]"
# A hosted shoot's rotation counters as recorded, none rotated.
ROTATION = {"ca": 0, "etcdCA": 0, "frontProxyCA": 0, "serviceAccountKey": 0, "bootstrapToken": 0}
DOWNGRADE = "Kubernetes does not support downgrading a control plane (etcd data is written by the newer version)"
CASES = [
    ("same landscape", base(), deployed(), []),
    ("patch update", changed("shoots.0.kubernetes.version", "1.34.5"), deployed(), []),
    ("minor update", changed("shoots.1.kubernetes.version", "1.34.0"), deployed(), []),
    (
        "patch downgrade",
        changed("shoots.0.kubernetes.version", "1.34.3"),
        deployed(),
        [f"{WEB}.kubernetes.version: 1.34.4 -> 1.34.3 is a downgrade; {DOWNGRADE}: keep 1.34.4 or set a later version"],
    ),
    (
        "minor downgrade",
        changed("shoots.0.kubernetes.version", "1.33.0"),
        deployed(),
        [f"{WEB}.kubernetes.version: 1.34.4 -> 1.33.0 is a downgrade; {DOWNGRADE}: keep 1.34.4 or set a later version"],
    ),
    (
        "minor skip",
        base(),
        deployed(changed("shoots.0.kubernetes.version", "1.32.5")),
        [
            f"{WEB}.kubernetes.version: 1.32.5 -> 1.34.4 skips a minor; a control plane updates one minor at a time, "
            "as Gardener allows: set 1.33.x, run up, then 1.34.4"
        ],
    ),
    (
        "pool downgrade",
        changed("shoots.0.workers.0.kubernetesVersion", "1.33.1"),
        deployed(changed("shoots.0.workers.0.kubernetesVersion", "1.33.2")),
        [
            f"{WEB}.workers[0].kubernetesVersion: 1.33.2 -> 1.33.1 is a downgrade; Kubernetes does not support "
            "downgrading a kubelet (its node's state is written by the newer version): keep 1.33.2 or set a later "
            "version"
        ],
    ),
    (
        "pool minor skip (its machines are replaced)",
        changed("shoots.0.workers.0.kubernetesVersion", "1.34.1"),
        deployed(changed("shoots.0.workers.0.kubernetesVersion", "1.32.9")),
        [],
    ),
    (
        "pool following its control plane",
        changed("shoots.0.workers.0.kubernetesVersion", "1.34.4"),
        deployed(changed("shoots.0.workers.0.kubernetesVersion", "1.33.2")),
        [],
    ),
    (
        "seed change between seeds with backups (a migration)",
        moved(second_seed(backup=True), 0, seed="local-1"),
        deployed(second_seed(backup=True)),
        [],
    ),
    (
        "seed change from a seed without backups",
        moved(second_seed(), 0, seed="local-1"),
        deployed(second_seed()),
        [
            f"{WEB}.seed: local-2 -> local-1: a migration moves etcd and the shoot's state through the seeds' buckets, "
            "and seeds local-2 and local-1 have no backup; add it first"
        ],
    ),
    (
        "seed change with a credentials rotation",
        moved(second_seed(backup=True), 0, seed="local-1", credentials={"rotation": {"ca": 1}}),
        deployed(second_seed(backup=True)),
        [
            f"{WEB}.seed: local-2 -> local-1: cannot move while credentials or encryption keys rotate; finish the "
            "rotation in one update and move the control plane in another"
        ],
    ),
    (
        "seed change during an encryption key rotation",
        moved(second_seed(backup=True), 0, seed="local-1", encryption={"keyRotation": "prepare"}),
        deployed(moved(second_seed(backup=True), 0, encryption={"keyRotation": "prepare"})),
        [
            f"{WEB}.seed: local-2 -> local-1: cannot move while credentials or encryption keys rotate; finish the "
            "rotation in one update and move the control plane in another"
        ],
    ),
    (
        "seed change from a seed removed at once",
        moved(without(second_seed(backup=True), "seeds", "local-2", {"seeds": ["local-2"]}), 0, seed="local-1"),
        deployed(second_seed(backup=True)),
        [
            f"{WEB}.seed: local-2 -> local-1: both seeds must stay in landscape.seeds while the control plane "
            "moves (a seed removed at once has no cluster to move from or to); keep seed local-2 until both are"
        ],
    ),
    (
        "hosted to self-hosted",
        moved(base(), 1, seed=None, selfHosted=True, workers=base()["shoots"][2]["workers"]),
        deployed(),
        [
            "landscape.shoots[1].selfHosted: cannot change from hosted on seed local-1 to self-hosted: the control "
            "plane would be rebuilt with an empty etcd; keep it hosted, or create a new shoot and move the workloads"
        ],
    ),
    (
        "self-hosted to hosted",
        moved(base(), 2, selfHosted=None, seed="local-1", workers=base()["shoots"][1]["workers"]),
        deployed(),
        [
            f"{ROOT}.seed: cannot change from self-hosted to hosted: the control plane would be rebuilt with an empty "
            "etcd; keep it self-hosted, or create a new shoot and move the workloads"
        ],
    ),
    (
        "pods range",
        changed("shoots.0.networking.pods", "100.80.0.0/12"),
        deployed(),
        [f"{WEB}.networking.pods: cannot change the IPv4 range once set (it was 100.64.0.0/12, now 100.80.0.0/12)"],
    ),
    (
        "seed services range",
        changed("seeds.0.networks", {"pods": "10.0.0.0/12", "services": "10.17.0.0/16"}),
        deployed(),
        [
            "landscape.seeds[0].networks.services: cannot change the IPv4 range once set (it was 10.16.0.0/16, "
            "now 10.17.0.0/16)"
        ],
    ),
    (
        "shoot removed",
        without(base(), "shoots", "dev/web"),
        deployed(),
        [
            "landscape.shoots: dev/web was removed; deleting it destroys its cluster, etcd data, CAs, keys and admin "
            "credentials: put it back, or to delete it, add to the landscape `confirmDeletion: {shoots: [dev/web]}`"
        ],
    ),
    ("shoot removed and confirmed", without(base(), "shoots", "dev/web", {"shoots": ["dev/web"]}), deployed(), []),
    (
        "confirmation of a shoot in the spec",
        {**base(), "confirmDeletion": {"shoots": ["ops/db"]}},
        deployed(),
        [
            "landscape.confirmDeletion.shoots[0]: ops/db is still in landscape.shoots[1]; remove this confirmation, "
            "or the shoot too to delete it"
        ],
    ),
    (
        "seed with shoots removed",
        without(without(second_seed(), "shoots", "dev/web", {"shoots": ["dev/web"]}), "seeds", "local-2"),
        deployed(second_seed()),
        [
            "landscape.seeds: local-2 was removed while it hosted dev/web; deleting it destroys its cluster and the "
            "control planes of the shoots it hosted: put it back, or to delete it, add to the landscape "
            "`confirmDeletion: {seeds: [local-2]}`"
        ],
    ),
    (
        "seed with shoots removed and confirmed",
        without(
            without(second_seed(), "shoots", "dev/web"),
            "seeds",
            "local-2",
            {"shoots": ["dev/web"], "seeds": ["local-2"]},
        ),
        deployed(second_seed()),
        [],
    ),
    ("seed without shoots removed", base(), deployed({**second_seed(), "shoots": base()["shoots"]}), []),
    (
        "confirmation of a seed in the spec",
        {**base(), "confirmDeletion": {"seeds": ["local-1"]}},
        deployed(),
        [
            "landscape.confirmDeletion.seeds[0]: local-1 is still in landscape.seeds[0]; remove this confirmation, "
            "or the seed too to delete it"
        ],
    ),
    (
        "first update after the upgrade: the removal is known from networks",
        without(base(), "shoots", "dev/web"),
        {k: v for k, v in deployed().items() if k not in ("shoots", "seeds")},
        [
            "landscape.shoots: dev/web was removed; deleting it destroys its cluster, etcd data, CAs, keys and admin "
            "credentials: put it back, or to delete it, add to the landscape `confirmDeletion: {shoots: [dev/web]}`"
        ],
    ),
    (
        "first update after the upgrade: confirmed",
        without(base(), "shoots", "dev/web", {"shoots": ["dev/web"]}),
        {k: v for k, v in deployed().items() if k not in ("shoots", "seeds")},
        [],
    ),
    ("no previous update", without(base(), "shoots", "dev/web"), {}, []),
]


@pytest.mark.parametrize(("case", "doc", "before", "lines"), CASES, ids=[c[0] for c in CASES])
def test_changes(case: str, doc: dict[str, Any], before: dict[str, Any], lines: list[str]) -> None:
    """GIVEN the previous update's records WHEN a landscape is checked THEN exactly these lines refuse it."""
    assert refused(doc, before) == lines


def test_records_hold_version_hosting_and_seed() -> None:
    """GIVEN the base landscape WHEN recorded THEN each shoot's versions, images, hosting, plugin, seed."""
    records = deployed()
    assert records["shoots"] == {
        "dev/web": {
            "kubernetesVersion": "1.34.4",
            "workers": {"pool-a": "1.34.4"},
            "images": {"pool-a": ["gardenlinux", "1877.0"]},
            "hosting": "hosted",
            "networkType": "calico",
            "seed": "local-1",
            "rotation": ROTATION,
        },
        "ops/db": {
            "kubernetesVersion": "1.33.6",
            "workers": {"pool-a": "1.33.6"},
            "images": {"pool-a": ["gardenlinux", "1877.0"]},
            "hosting": "hosted",
            "networkType": "calico",
            "seed": "local-1",
            "rotation": ROTATION,
        },
        "ops/root": {
            "kubernetesVersion": "1.34.4",
            "workers": {"cp": "1.34.4"},
            "images": {"cp": ["gardenlinux", "1877.0"]},
            "hosting": "self-hosted",
            "networkType": "calico",
        },
    }
    assert records["seeds"]["local-1"]["shoots"] == ["dev/web", "ops/db"]
    assert set(records) == {"networks", "encryption", "credentials", "shoots", "seeds"}


def test_a_confirmed_deletion_is_announced_and_a_stale_one_asks_to_be_removed() -> None:
    """GIVEN confirmations of a removed shoot and of one never deployed WHEN checked THEN a notice each."""
    doc = without(base(), "shoots", "dev/web", {"shoots": ["dev/web", "dev/gone"]})
    notices = checks.check(doc, "s", deployed).notices
    assert notices == [
        "landscape.confirmDeletion.shoots[0]: this update deletes dev/web and its cluster, etcd data, CAs, keys "
        "and admin credentials",
        "landscape.confirmDeletion.shoots[1]: dev/gone is not in the previous update, nothing to delete; remove "
        "this line",
    ]


@pytest.mark.parametrize(
    ("value", "line"),
    [
        (
            {"shoots": ["web"]},
            "landscape.confirmDeletion.shoots[0]: 'web' is not a shoot as <project>/<name> (for example dev/web)",
        ),
        ({"shoots": ["dev/web", "dev/web"]}, "landscape.confirmDeletion.shoots: duplicate 'dev/web'"),
        (
            {"seeds": ["Local"]},
            "landscape.confirmDeletion.seeds[0]: 'Local' is not a DNS-1123 label (lower-case letters, digits and '-')",
        ),
        ({"shots": ["dev/web"]}, "landscape.confirmDeletion.shots: unknown field; did you mean 'shoots'?"),
    ],
)
def test_confirmation_fields(value: dict[str, Any], line: str) -> None:
    """GIVEN a malformed confirmation WHEN parsed THEN its field is named."""
    with pytest.raises(checks.RefusalError) as err:
        checks.check({**base(), "confirmDeletion": value}, "s", dict)
    assert err.value.heading == "invalid landscape"
    assert line in err.value.lines


def test_versions_that_are_not_releases_are_not_compared() -> None:
    """GIVEN a recorded version that is not <major>.<minor>.<patch> WHEN compared THEN nothing is refused."""
    assert previous_update.version_change("p", "latest", "1.30.0") == []
