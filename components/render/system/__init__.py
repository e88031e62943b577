"""The system components in a shoot's kube-system: the network plugin (calico or cilium), kube-proxy, CoreDNS.

With them, what the shoot itself tells and grants: `shoot-info` and kube-apiserver's access to kubelets.

Gardener deploys them as ManagedResources (the networking extension, and gardenlet's kube-proxy and CoreDNS);
arbor renders the same objects for one resource to apply once the shoot's API serves. `render` is pure, and its
values (`SystemValues`) are small: the resource keeps them, not the objects, and renders again where it applies
(components/reconciler/system_components.py). The pod and service ranges are the resolved ones (on gcp and aws
the cloud assigns the IPv6 ones).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from components.kinds import ProviderType
from components.plan.values import ShootValues
from components.render import pki
from components.render.system import calico, cilium, coredns, kubeproxy
from components.render.system.common import RBAC, SYSTEM_LABELS, Object, SystemPool, meta

__all__ = ["SystemPool", "SystemValues", "coredns", "hashes", "key", "kubeproxy", "objects", "render", "values_of"]


@dataclass(frozen=True)
class SystemValues:
    """What a shoot's system components are rendered from."""

    network: str  # the network plugin: calico or cilium
    api_server: str  # where the shoot's kubelets (and host-network pods) reach the API
    pools: tuple[SystemPool, ...]
    pods: tuple[str, ...]
    services: tuple[str, ...]
    # Whether kube-dns takes its fixed address in the services range (not on a local shoot: its API is a kwokctl
    # cluster serving kube-apiserver's default service range, not the shoot's).
    fixed_dns: bool
    # The data of `shoot-info`; a state written before it was among these objects has none (and did not own it).
    info: Mapping[str, str] = field(default_factory=dict)

    def to_object(self) -> dict[str, Any]:
        """The values as plain JSON data (a resource's input)."""
        return dataclasses.asdict(self)

    @staticmethod
    def from_object(obj: Mapping[str, Any]) -> SystemValues:
        """The values from their JSON data."""
        pools = tuple(SystemPool(**p) for p in obj["pools"])
        fields = {**obj, "pools": pools, "pods": tuple(obj["pods"]), "services": tuple(obj["services"])}
        return SystemValues(**fields)


def values_of(shoot: ShootValues, pods: tuple[str, ...], services: tuple[str, ...]) -> SystemValues:
    """A shoot's values, with its pod and service ranges."""
    return SystemValues(
        network="calico" if shoot.network_type == "calico" else "cilium",
        # One address for every pool.
        api_server=next((v.api_server for v in shoot.node_settings.values()), ""),
        pools=tuple(SystemPool(p.name, p.kubernetes_version) for p in shoot.workers),
        pods=pods,
        services=services,
        fixed_dns=shoot.networking.provider != ProviderType.LOCAL,
        info=shoot_info(shoot),
    )


def render(values: SystemValues) -> list[Object]:
    """Every object, network plugin first (nodes turn Ready with it), then kube-proxy and CoreDNS."""
    plugin = calico if values.network == "calico" else cilium
    return [
        *_shoot_core(values.info),
        *plugin.objects(values.pods, values.api_server, SYSTEM_LABELS),
        *kubeproxy.objects(values.pools, values.pods, values.api_server, SYSTEM_LABELS),
        *coredns.objects(values.services, SYSTEM_LABELS, fixed=values.fixed_dns),
    ]


def objects(shoot: ShootValues, pods: tuple[str, ...], services: tuple[str, ...]) -> list[Object]:
    """Every object of a shoot's system components, with its pod and service ranges."""
    return render(values_of(shoot, pods, services))


def _shoot_core(info: Mapping[str, str]) -> list[Object]:
    """`shoot-info`, and the binding that lets kube-apiserver reach kubelets (logs, exec, port-forward) as its user."""
    if not info:
        return []
    binding = {
        "apiVersion": f"{RBAC}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": meta(pki.KUBELET_CLIENT_USER, namespaced=False),
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "system:kubelet-api-admin"},
        "subjects": [{"apiGroup": RBAC, "kind": "User", "name": pki.KUBELET_CLIENT_USER}],
    }
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("shoot-info"), "data": dict(info)}
    return [config, binding]


def shoot_info(shoot: ShootValues) -> dict[str, str]:
    """The data of `kube-system/shoot-info`, as Gardener publishes it inside every shoot."""
    return {
        "shootName": shoot.name,
        "projectName": shoot.project,
        "technicalID": shoot.technical_id,
        "kubernetesVersion": shoot.kubernetes_version,
        "nodeNetwork": ",".join(shoot.networking.nodes),
        "podNetwork": ",".join(shoot.networking.pods),
        "serviceNetwork": ",".join(shoot.networking.services),
        "ipFamilies": ",".join(shoot.networking.ip_families),
        "seedName": shoot.seed or "",
    }
