"""Where a hosted shoot's etcd keeps its data: a persistent volume per etcd on a cloud seed.

As Gardener's etcd-druid claims it: a StatefulSet's volume claim template on the seed's `gardener.cloud-fast`
StorageClass (components/render/storage.py renders the class and the claim).

Local seeds keep emptyDir: kwok runs no pods and has no provisioner, and a local shoot's etcd data lives in its own
local cluster (protected). Self-hosted shoots keep their data on the control-plane node.
"""

from __future__ import annotations

from components.kinds import ProviderType
from components.plan.values import EtcdVolume

# The StorageClass a provider extension deploys on its seeds for etcd (gardener-extension-provider-aws, -gcp).
STORAGE_CLASS = "gardener.cloud-fast"
# The providers' etcd storage defaults: main 25Gi (their `etcd.storage.capacity`), events 10Gi.
CAPACITY = {"main": "25Gi", "events": "10Gi"}
# Gardener's claim template names: `main-etcd` for the important etcd main, the etcd's own name for events.
CLAIMS = {"main": "main-etcd", "events": "etcd-events"}


def etcd_volumes(seed_provider: ProviderType | None) -> dict[str, EtcdVolume]:
    """Each etcd's volume on a seed of `seed_provider` (None: self-hosted); none where etcd keeps emptyDir."""
    if seed_provider is None or seed_provider is ProviderType.LOCAL:
        return {}
    return {role: EtcdVolume(CLAIMS[role], STORAGE_CLASS, capacity) for role, capacity in CAPACITY.items()}
