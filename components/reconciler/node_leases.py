"""The node leases of a restarted kwok, handed over at once rather than when they expire.

kwok holds each node's lease (kube-node-lease) under an identity it makes anew at every start, its host name and a
random UUID; a kubelet's is its node's name, the same after a restart. So a restarted kwok finds its nodes' leases held
by its dead predecessor and leaves those nodes alone until the leases expire: 200 s with kwokctl's heartbeat factor,
exactly kube-controller-manager's grace period. Meanwhile no pod on them starts, and the controller manager may find
the nodes unreachable first, after which their pods stay not ready (seen: a seed's Deployment that never rolled out).
Clearing the holder of every lease not renewed since the start lets the new kwok take it at its next try (a quarter of
the lease's duration), well within the grace period.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from components.reconciler.kube import Kube, KubeError

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
# A lease renewed meanwhile (the `test` failed: 422), or gone (404), is its holder's: nothing to hand over.
HELD_ELSEWHERE = (404, 409, 422)


def stale(leases: Iterable[Mapping[str, Any]], since: datetime) -> list[tuple[str, str]]:
    """Name and renewTime of every held lease last renewed before `since` (kwok's last beat before it stopped)."""
    found = []
    for lease in leases:
        spec = lease.get("spec") or {}
        renewed = spec.get("renewTime")
        if spec.get("holderIdentity") and isinstance(renewed, str) and datetime.fromisoformat(renewed) < since:
            found.append((str(lease["metadata"]["name"]), renewed))
    return found


def release_stale(kube: Kube, since: datetime) -> list[str]:
    """Clears the holder of every node lease not renewed since `since`, unless renewed meanwhile; the names cleared."""
    released = []
    for name, renewed in stale(kube.get(LEASES)["items"], since):
        operations = [
            {"op": "test", "path": "/spec/renewTime", "value": renewed},
            {"op": "remove", "path": "/spec/holderIdentity"},
        ]
        try:
            kube.json_patch(f"{LEASES}/{name}", operations)
        except KubeError as err:
            if err.status not in HELD_ELSEWHERE:
                raise
            continue
        released.append(name)
    return released
