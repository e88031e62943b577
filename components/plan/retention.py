"""Which full snapshots of an entry garbage collection removes: etcd-backup-restore's Exponential policy.

Gardener's etcd runs etcd-backup-restore with `--garbage-collection-policy=Exponential`; arbor applies the same rule
to the full snapshots it takes of a local shoot's etcd. Kept: the newest, always; every one of the last hour;
the newest of each hour of the last day; of each day of the last week; of each week up to five weeks. The rest
goes. The bucket is versioned: what is collected stays restorable as a noncurrent version until the lifecycle
expires it (render/backup.py, NONCURRENT_DAYS).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

HOUR, DAY, WEEK = timedelta(hours=1), timedelta(days=1), timedelta(weeks=1)
# etcd-backup-restore keeps a daily snapshot for the week that ends the day before today, so for eight days.
DAILY_FOR, WEEKLY_FOR = 8 * DAY, 5 * WEEK


def _window(taken: datetime, now: datetime) -> tuple[str, int] | None:
    """The window a snapshot stands for (only the newest of a window is kept); None: too old to keep."""
    age = now - taken
    if age >= WEEKLY_FOR:
        return None
    if age >= DAILY_FOR:
        return "week", int(age / WEEK)
    if age >= DAY:
        return "day", (now.date() - taken.date()).days
    return "hour", int(taken.timestamp() // HOUR.total_seconds())


def collectable(snapshots: Iterable[tuple[str, datetime]], now: datetime) -> list[str]:
    """The keys of the full snapshots the policy removes, oldest first; never the newest, nor one of the last hour."""
    newest_first = sorted(snapshots, key=lambda s: s[1], reverse=True)
    seen: set[tuple[str, int]] = set()
    gone: list[str] = []
    for index, (key, taken) in enumerate(newest_first):
        window = _window(taken, now)
        kept = index == 0 or now - taken < HOUR
        if not kept and (window is None or window in seen):
            gone.append(key)
        elif window is not None:
            seen.add(window)
    return list(reversed(gone))
