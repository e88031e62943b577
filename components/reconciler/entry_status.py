"""EntryStatus: a cloud shoot's BackupEntry names the latest full snapshot etcd-backup-restore put in its bucket.

etcd-backup-restore beside a gcp or aws shoot's etcd main takes its full snapshots on its own schedule; arbor learns
of them by listing the entry's `<prefix>/v2/` with the seed's key (which may list its bucket, components/render/
backup.py) and writes the newest full snapshot's name and time into the BackupEntry's status, as the local shoots'
own snapshots do (etcd_snapshot.py). Refresh finds a newer one (an update the preview lists, once a day), and `up`
writes it; a status naming a newer snapshot (a step before a risky change) is kept.

The engine stores the provider pickled by reference to this module: keep its path and class names.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.reconciler.entry_store import StoreError, entry_store
from components.reconciler.etcd_snapshot import LAYOUT, SnapshotError, full_snapshots, rfc3339, write_status
from components.reconciler.provider import Provider

PROVIDER_VERSION = "1"
OBSERVED = ("latest", "time")


def latest_full(keys: Iterable[str]) -> tuple[str, str] | None:
    """The newest full snapshot among a prefix's keys, and its time (RFC 3339); None when there is none."""
    found = full_snapshots(keys)
    if not found:
        return None
    key, taken = max(found, key=lambda s: (s[1], s[0]))
    return key, rfc3339(taken)


def observe(props: dict[str, Any]) -> dict[str, Any]:
    """The newest full snapshot in the entry (latest and time, None for both while there is none)."""
    try:
        keys = entry_store(props["backup"]).keys(f"{props['prefix']}/{LAYOUT}/")
    except StoreError as error:
        raise SnapshotError(str(error)) from None
    latest = latest_full(keys)
    return dict(zip(OBSERVED, latest or (None, None), strict=True))


def _converge(props: dict[str, Any]) -> dict[str, Any]:
    """Reads the bucket, names what it found in the entry's status; the outputs."""
    outs = {**props, **observe(props), "due": False}
    if outs["latest"]:
        write_status(outs)
    return outs


class EntryStatusProvider(Provider):
    """One shoot's entry status from its bucket; nothing is captured, everything is read from the properties."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """What the bucket holds now (etcd-backup-restore may not have taken its first snapshot yet)."""
        return CreateResult(id_=f"{props['entryNamespace']}/{props['entry']}", outs=_converge(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """A newer snapshot found by refresh, or a new entry, is an update; nothing else."""
        inputs = [k for k in ("entry", "prefix", "entryNamespace", "version") if olds.get(k) != news.get(k)]
        wanted = bool(olds.get("due")) or bool(inputs)
        stables = [] if wanted else list(OBSERVED)
        return DiffResult(changes=wanted, replaces=[], stables=stables, delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Reads the bucket again and names its newest full snapshot."""
        return UpdateResult(outs=_converge(news))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """Whether the bucket holds a newer full snapshot than the one named; a bucket that does not answer, no."""
        try:
            due = observe(props)["latest"] not in (None, props.get("latest"))
        except SnapshotError:
            due = False
        return ReadResult(id_=id_, outs={**props, "due": due})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Nothing: the snapshots and the entry stay."""


class EntryStatus(Resource, module="arbor", name="EntryStatus"):
    """A cloud shoot's BackupEntry status from its bucket; `backup` (the seed's key) is secret."""

    if TYPE_CHECKING:
        latest: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        backup_data: pulumi.Input[dict[str, str]],
        prefix: pulumi.Input[str],
        entry: pulumi.Input[str],
        entry_namespace: str,
        garden_kubeconfig: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "backup": pulumi.Output.secret(backup_data), "prefix": prefix, "entry": entry,
            "entryNamespace": entry_namespace, "gardenKubeconfig": garden_kubeconfig, "version": PROVIDER_VERSION,
            "due": None, **dict.fromkeys(OBSERVED),
        }  # fmt: skip
        secret = pulumi.ResourceOptions(additional_secret_outputs=["backup"])
        super().__init__(EntryStatusProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret))
