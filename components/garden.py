"""The Garden component (`arbor:garden:Garden`): the cluster where projects, seeds and shoots are recorded."""

from __future__ import annotations

import pulumi

from components.plan import GardenValues
from components.providers.contract import ClusterAccess, InfrastructureProvider


class Garden(pulumi.ComponentResource):
    """The garden layer; hands its ClusterAccess to the seeds and shoots."""

    access: ClusterAccess

    def __init__(
        self, name: str, values: GardenValues, infra: InfrastructureProvider, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("arbor:garden:Garden", name, None, opts)
        self.access = infra.cluster(values.cluster, parent=self)
        self.register_outputs({"endpoint": self.access.endpoint})
