"""The contract every infrastructure provider (local, gcp, aws) fulfils, and the data it hands back.

Layer components ask a provider for what they need and get plain data bundles back, never the provider
itself: the next layer depends on the bundle only (as pulumi-eks hands on its cluster outputs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import pulumi
import pulumi_kubernetes as k8s

from components.network import NetworkPlan, NodeNetwork
from components.plan import ClusterValues


@dataclass(frozen=True)
class ClusterAccess:
    """A cluster as the layers use it: its key, API endpoint, admin kubeconfig (secret) and a provider."""

    key: str
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    # What must exist before objects are applied to the cluster (its nodes, say); empty when nothing.
    ready: Sequence[pulumi.Resource] = ()


@dataclass(frozen=True)
class NetworkAccess:
    """A shoot's network as the later steps use it: every range resolved, and what must exist first.

    `ranges` maps `nodes`, `pods` and `services` to their CIDRs in the order of the shoot's families, with the
    IPv6 ones the cloud assigned; `subnets` maps each planned subnet name to its ID (empty on local).
    """

    ranges: pulumi.Output[dict[str, list[str]]]
    subnets: pulumi.Output[dict[str, str]]
    ready: Sequence[pulumi.Resource] = ()


class InfrastructureProvider(Protocol):
    """What a cloud (or the local runtime) provides to the layers."""

    def cluster(
        self, values: ClusterValues, parent: pulumi.Resource, depends_on: Sequence[pulumi.Resource] = ()
    ) -> ClusterAccess:
        """Registers a garden or seed cluster (created or existing), and a Kubernetes provider for it."""
        ...

    def network(self, plan: NetworkPlan, parent: pulumi.Resource) -> NetworkAccess:
        """The shoot's infrastructure network (VPC, subnets, gateways, routes, firewall), in place on migration."""
        ...

    def shoot_api(
        self,
        values: ClusterValues,
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource] = (),
        addresses: Sequence[NodeNetwork] = (),
    ) -> ClusterAccess:
        """Access to the API a hosted shoot's control plane serves, with the shoot's nodes (`addresses` planned)."""
        ...
