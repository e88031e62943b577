"""A process and every process under it, from /proc: what a timed-out `pulumi` leaves running unless stopped whole.

The engine starts its language host and plugins in process groups of their own, so killing the CLI (or its group)
leaves them running, reparented; the tree is read before anything is killed, while their parent is still known.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path


def processes() -> tuple[dict[int, list[int]], dict[int, int]]:
    """Every process's children and resident bytes, from one read of /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # Fields after the command name, which may hold spaces: ppid is the 2nd, rss (pages) the 22nd.
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            rss[int(entry.name)] = int(stat[21]) * os.sysconf("SC_PAGE_SIZE")
            children.setdefault(int(stat[1]), []).append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return children, rss


def tree(root: int, children: dict[int, list[int]]) -> list[int]:
    """`root` and every process under it."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def tree_rss(root: int) -> int:
    """Resident bytes of `root` and every process under it."""
    children, rss = processes()
    return sum(rss.get(pid, 0) for pid in tree(root, children))


def kill_tree(root: int) -> None:
    """SIGKILLs `root` and every process under it; those already gone are skipped."""
    for pid in tree(root, processes()[0]):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
