"""The system components in a shoot's kube-system: the network plugin (calico or cilium), kube-proxy, CoreDNS.

Gardener deploys them as ManagedResources (the networking extension, and gardenlet's kube-proxy and CoreDNS);
arbor renders the same objects for the shoot's provider to apply once the shoot's API serves. `objects` is pure:
the shoot's values and its resolved pod and service ranges (on gcp and aws the cloud assigns the IPv6 ones).
"""

from __future__ import annotations

from components.kinds import ProviderType
from components.plan.values import ShootValues
from components.render.system import calico, cilium, coredns, kubeproxy
from components.render.system.common import SYSTEM_LABELS, Object

__all__ = ["coredns", "key", "kubeproxy", "objects"]


def objects(shoot: ShootValues, pods: tuple[str, ...], services: tuple[str, ...]) -> list[Object]:
    """Every object, network plugin first (nodes turn Ready with it), then kube-proxy and CoreDNS."""
    # Where the shoot's kubelets reach the API (one address for every pool).
    api_server = next((v.api_server for v in shoot.node_settings.values()), "")
    plugin = calico if shoot.network_type == "calico" else cilium
    return [
        *plugin.objects(pods, api_server, SYSTEM_LABELS),
        *kubeproxy.objects(shoot.workers, pods, api_server, SYSTEM_LABELS),
        # A local shoot's API is a kwokctl cluster serving kube-apiserver's default service range, not the shoot's.
        *coredns.objects(services, SYSTEM_LABELS, fixed=shoot.networking.provider != ProviderType.LOCAL),
    ]


def key(obj: Object) -> str:
    """A name for an object's resource, unique in a shoot: `<kind>-<name>` in lower case, `:` as `-`."""
    return f"{obj['kind'].lower()}-{obj['metadata']['name'].replace(':', '-')}"
