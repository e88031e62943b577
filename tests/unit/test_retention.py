"""The retention of a local shoot's full snapshots: etcd-backup-restore's Exponential policy (plan/retention.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.plan import retention
from components.reconciler import etcd_snapshot
from components.reconciler.entry_store import StoreError

NOW = datetime(2026, 11, 28, 10, 50, tzinfo=UTC)


def ago(**delta: float) -> tuple[str, datetime]:
    """A snapshot taken that long before NOW, named by its age."""
    taken = NOW - timedelta(**delta)
    return f"Full-{int(taken.timestamp())}", taken


@pytest.mark.parametrize(
    ("snapshots", "gone"),
    [
        ([], []),
        # The newest stays whatever its age, so an entry is never emptied.
        ([ago(weeks=9)], []),
        ([ago(weeks=9), ago(weeks=10)], [ago(weeks=10)]),
        # Every snapshot of the last hour stays.
        ([ago(minutes=5), ago(minutes=20), ago(minutes=59)], []),
        # Of an earlier hour of the last day, its newest.
        ([ago(minutes=5), ago(hours=3, minutes=1), ago(hours=3, minutes=40), ago(hours=4)], [ago(hours=3, minutes=40)]),
        # The hour of a snapshot kept as recent counts as held: 09:55 stands for 09:00-10:00, 09:20 goes.
        ([ago(minutes=55), ago(minutes=90)], [ago(minutes=90)]),
        # Of a day of the last week, its newest: two of 2026-11-25 (3 days ago), one goes.
        ([ago(minutes=1), ago(days=3, hours=1), ago(days=3, hours=5)], [ago(days=3, hours=5)]),
        # Of a week up to five weeks back, its newest; older than five weeks, none.
        ([ago(minutes=1), ago(days=10), ago(days=12), ago(days=20), ago(days=36)], [ago(days=36), ago(days=12)]),
    ],
)
def test_the_exponential_policy_keeps_the_newest_of_each_window(
    snapshots: list[tuple[str, datetime]], gone: list[tuple[str, datetime]]
) -> None:
    """GIVEN an entry's full snapshots WHEN collected at NOW THEN exactly the older ones of each window go."""
    assert retention.collectable(snapshots, NOW) == [key for key, _ in sorted(gone, key=lambda s: s[1])]


def test_a_day_of_hourly_snapshots_keeps_one_an_hour_and_a_month_of_daily_ones_one_a_week() -> None:
    """GIVEN a snapshot every 20 minutes for a day WHEN collected THEN the last hour's three and one an hour stay.

    And of one a day for 60 days: today's, one a day for the seven days before, one a week up to five weeks.
    """
    day = [ago(minutes=20 * i + 1) for i in range(72)]  # 10:49 back to 11:09 the day before
    kept = {key for key, _ in day} - set(retention.collectable(day, NOW))
    assert len(kept) == 3 + 23  # 10:49, 10:29, 10:09; the newest of each hour from 09:00 back to 11:00
    month = [ago(days=i, minutes=1) for i in range(60)]
    kept = {key for key, _ in month} - set(retention.collectable(month, NOW))
    assert len(kept) == 1 + 7 + 4  # weeks 1 to 4 back (8 to 34 days)


moments = st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2026, 12, 31), timezones=st.just(UTC)).map(
    lambda t: t.replace(microsecond=0)
)


@given(st.lists(moments, max_size=40, unique=True), moments)
def test_collection_keeps_the_newest_the_last_hour_and_is_stable(times: list[datetime], now: datetime) -> None:
    """GIVEN any snapshots and any moment THEN the newest and the last hour stay, and collecting again takes none."""
    snapshots = [(f"k{t.timestamp()}", t) for t in times]
    gone = retention.collectable(snapshots, now)
    assert set(gone) <= {key for key, _ in snapshots}
    if snapshots:
        assert max(snapshots, key=lambda s: s[1])[0] not in gone
    assert not {key for key, t in snapshots if timedelta(0) <= now - t < retention.HOUR} & set(gone)
    rest = [s for s in snapshots if s[0] not in gone]
    assert retention.collectable(rest, now) == []


class Entry:
    """An entry's S3 store: lists its keys, removes what it is told, or refuses."""

    def __init__(self, keys: list[str], refuses: bool = False) -> None:
        self.held, self.refuses, self.removed = list(keys), refuses, list[str]()

    def keys(self, prefix: str) -> list[str]:
        """The keys under the prefix."""
        if self.refuses:
            raise StoreError("listing: connection refused")
        return [k for k in self.held if k.startswith(prefix)]

    def remove(self, keys: list[str]) -> None:
        """Removed."""
        self.removed += keys


@pytest.mark.parametrize("refuses", [False, True])
def test_a_snapshot_collects_its_entrys_old_full_snapshots_and_a_refusing_store_fails_nothing(refuses: bool) -> None:
    """GIVEN an entry's keys WHEN a snapshot collects THEN only full snapshots the policy lets go are removed.

    A delta, a chunk of a full snapshot still uploading and other objects are never touched; a store that refuses
    gives nothing back and raises nothing (the next snapshot collects again).
    """
    prefix = "shoot--dev--web--uid/etcd-main"
    full = [f"{prefix}/v2/Full-00000000-{i:08d}-{int((NOW - timedelta(days=d)).timestamp())}.gz"
            for i, d in enumerate((0, 40, 45), start=1)]  # fmt: skip
    others = [f"{prefix}/v2/Incr-00000003-00000004-{int(NOW.timestamp())}.gz",
              f"{prefix}/v2/Full-00000000-00000009-{int((NOW - timedelta(days=50)).timestamp())}.gz/0000000001",
              "shoot--dev--web--uid/shoot-state/shootstate.json.gz.sealed"]  # fmt: skip
    entry = Entry([*full, *others], refuses=refuses)
    gone = etcd_snapshot.collect_garbage(entry, prefix, NOW)  # type: ignore[arg-type]
    assert gone == entry.removed == ([] if refuses else [full[2], full[1]])
