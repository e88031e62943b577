"""The Seed component (`arbor:seed:Seed`): a cluster that hosts shoot control planes.

It records the seed in the garden and creates, per hosted shoot, the namespace `shoot--<project>--<shoot>`
that holds the shoot's control plane.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components import api, naming, records
from components.garden import GardenAccess
from components.plan import SeedValues
from components.providers.contract import ClusterAccess, InfrastructureProvider


@dataclass(frozen=True)
class SeedAccess:
    """What the shoots need of their seed: its cluster and their namespaces in it."""

    name: str
    cluster: ClusterAccess
    namespaces: dict[str, k8s.core.v1.Namespace]


class Seed(pulumi.ComponentResource):
    """One seed layer."""

    access: SeedAccess

    def __init__(
        self,
        name: str,
        values: SeedValues,
        infra: InfrastructureProvider,
        garden: GardenAccess,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("arbor:seed:Seed", name, None, opts)
        cluster = infra.cluster(values.cluster, parent=self)
        record = api.seed_record(values)
        records.record(
            f"{name}-record",
            record,
            opts=pulumi.ResourceOptions(parent=self, provider=garden.cluster.provider, depends_on=garden.api),
        )
        namespaces = {
            ns: k8s.core.v1.Namespace(
                f"{name}-{ns}",
                metadata={"name": ns, "labels": {"gardener.cloud/role": "shoot", naming.label("seed"): values.name}},
                opts=pulumi.ResourceOptions(
                    parent=self, provider=cluster.provider, depends_on=list(cluster.ready), delete_before_replace=True
                ),
            )
            for ns in values.shoot_namespaces
        }
        self.access = SeedAccess(name=values.name, cluster=cluster, namespaces=namespaces)
        self.register_outputs({"endpoint": cluster.endpoint, "shootNamespaces": sorted(namespaces)})
