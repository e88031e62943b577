"""The Landscape component (`arbor:landscape:Landscape`): garden, then seeds, wired in flow order."""

from __future__ import annotations

from collections.abc import Callable

import pulumi

from components.garden import Garden
from components.plan import LandscapePlan
from components.providers.contract import ClusterAccess, InfrastructureProvider
from components.seed import Seed
from components.spec import ProviderType


class Landscape(pulumi.ComponentResource):
    """A whole landscape; `clusters` maps every cluster key to its access bundle."""

    clusters: dict[str, ClusterAccess]

    def __init__(
        self,
        name: str,
        plan: LandscapePlan,
        providers: Callable[[ProviderType], InfrastructureProvider],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("arbor:landscape:Landscape", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        garden = Garden(f"{name}-garden", plan.garden, providers(plan.garden.cluster.provider), child)
        seeds = [
            Seed(
                f"{name}-seed-{s.name}",
                s,
                providers(s.cluster.provider),
                pulumi.ResourceOptions(parent=self, depends_on=[garden]),
            )
            for s in plan.seeds
        ]
        self.clusters = {a.key: a for a in [garden.access, *(s.access for s in seeds)]}
        self.register_outputs({"clusters": sorted(self.clusters)})

    def kubeconfigs(self) -> pulumi.Output[dict[str, str]]:
        """Every cluster's admin kubeconfig by key, as one secret map."""
        return pulumi.Output.secret(pulumi.Output.all(**{k: a.kubeconfig for k, a in self.clusters.items()}))

    def endpoints(self) -> pulumi.Output[dict[str, str]]:
        """Every cluster's API endpoint by key."""
        return pulumi.Output.all(**{k: a.endpoint for k, a in self.clusters.items()})
