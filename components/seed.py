"""The Seed component (`arbor:seed:Seed`): a cluster that hosts shoot control planes."""

from __future__ import annotations

import pulumi

from components.plan import SeedValues
from components.providers.contract import ClusterAccess, InfrastructureProvider


class Seed(pulumi.ComponentResource):
    """One seed layer; hands its ClusterAccess to the shoots it hosts."""

    access: ClusterAccess

    def __init__(
        self, name: str, values: SeedValues, infra: InfrastructureProvider, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("arbor:seed:Seed", name, None, opts)
        self.access = infra.cluster(values.cluster, parent=self)
        self.register_outputs({"endpoint": self.access.endpoint})
