"""The Landscape component (`arbor:landscape:Landscape`): garden, then seeds, then shoots, in flow order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi

from components.bundles import ClusterAccess
from components.kinds import ProviderType
from components.layers.garden import STORE_ACCESS, Garden, GardenReference
from components.layers.seed import Seed
from components.layers.shoot import Shoot
from components.plan.values import LandscapePlan
from components.providers.contract import InfrastructureProvider
from components.providers.local import LocalProvider
from components.providers.local_backup import exported_reach
from components.reconciler.object_store import ObjectStore

# arbor owns the objects it applies: on a server-side-apply conflict its values win. Pulumi makes one field
# manager per resource state; after a refresh drops an unreachable cluster's objects from the state, `up`
# adopts them under a new manager, and without this the next change would conflict with the old one.
FORCE = {"pulumi.com/patchForce": "true"}


def _own_fields(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult | None:
    """Adds the force annotation to every Kubernetes object arbor applies (not to providers)."""
    metadata = args.props.get("metadata")
    if not args.type_.startswith("kubernetes:") or not isinstance(metadata, dict):
        return None
    annotations = {**(metadata.get("annotations") or {}), **FORCE}
    props = {**args.props, "metadata": {**metadata, "annotations": annotations}}
    return pulumi.ResourceTransformationResult(props, args.opts)


def seed_component(root: str, seed: str) -> str:
    """The resource name of a seed's component under the landscape `root` (hack/deletions.py finds it by this)."""
    return f"{root}-seed-{seed}"


def shoot_component(root: str, project: str, shoot: str) -> str:
    """The resource name of a shoot's component under the landscape `root` (hack/deletions.py finds it by this)."""
    return f"{root}-shoot-{project}-{shoot}"


def _object_store(
    plan: LandscapePlan,
    providers: Callable[[ProviderType], InfrastructureProvider],
    keep: bool,
    garden: Garden | GardenReference,
    parent: pulumi.Resource,
) -> ObjectStore | None:
    """The local object store this stack runs, where it has one: made before the seeds' buckets, and kept.

    Like a cloud bucket that outlives its seed, the store outlives its buckets: only `make down` removes it. A
    landscape has one: a seed stack of a sharded landscape puts its buckets into its garden stack's.
    """
    if not (keep or plan.object_store):
        return None
    local = providers(ProviderType.LOCAL)
    if not isinstance(local, LocalProvider):
        return None
    if isinstance(garden, GardenReference):
        local.share_store(garden.object_store(), garden.access.cluster)
        return None
    return local.object_store(garden.access.cluster, parent)


class Landscape(pulumi.ComponentResource):
    """A whole landscape; `clusters` maps every cluster key to its access bundle."""

    clusters: dict[str, ClusterAccess]
    shoots: dict[str, Shoot]

    def __init__(
        self,
        name: str,
        plan: LandscapePlan,
        providers: Callable[[ProviderType], InfrastructureProvider],
        opts: pulumi.ResourceOptions | None = None,
        *,
        garden_stack: str | None = None,
        keep_object_store: bool = False,
    ) -> None:
        """`plan` is this stack's part (plan/shards.py); a seed stack reaches its garden through `garden_stack`.

        `keep_object_store`: the stack made the local object store before; it stays even with no bucket left.
        """
        super().__init__("arbor:landscape:Landscape", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, transformations=[_own_fields])
        infra = providers(plan.garden.cluster.provider)
        if garden_stack:
            garden: Garden | GardenReference = GardenReference(
                f"{name}-garden", plan.garden, infra, garden_stack, child
            )
        else:
            garden = Garden(f"{name}-garden", plan.garden, infra, child)
        self.garden = garden
        self.store = _object_store(plan, providers, keep_object_store, garden, self)
        seeds = {
            s.name: Seed(
                seed_component(name, s.name),
                s,
                providers(s.cluster.provider),
                garden.access,
                child,
                backups=providers(s.backup.provider) if s.backup else None,
            ).access
            for s in plan.seeds
        }
        self.shoots = {}
        for shoot in plan.shoots:
            seed = seeds[shoot.seed] if shoot.seed else None
            self.shoots[shoot.cluster.key] = Shoot(
                shoot_component(name, shoot.project, shoot.name),
                shoot,
                providers(shoot.cluster.provider),
                garden.access,
                seed,
                child,
            )
        self.clusters = {
            a.key: a
            for a in [
                *([] if garden_stack else [garden.access.cluster]),
                *(s.cluster for s in seeds.values()),
                *(s.access for s in self.shoots.values()),
            ]
        }
        self.register_outputs({"clusters": sorted(self.clusters)})

    def store_outputs(self) -> dict[str, pulumi.Output[Any] | None]:
        """The local object store's endpoint (None: this stack runs none), and how seed stacks reach it (secret)."""
        if self.store is None:
            return {"objectStore": None}
        reach = exported_reach(self.store)
        access: pulumi.Output[dict[str, str]] = pulumi.Output.secret(pulumi.Output.all(**reach))
        return {"objectStore": self.store.endpoint, STORE_ACCESS: access}

    def garden_reach(self) -> pulumi.Output[str] | str:
        """How a seed stack's reconcilers reach the garden this stack made: its kubeconfig file (local), else ""."""
        reach = self.garden.access.cluster.kubeconfig_file if isinstance(self.garden, Garden) else None
        return reach if reach is not None else ""

    def kubeconfigs(self) -> pulumi.Output[dict[str, str]]:
        """Every cluster's admin kubeconfig by key, as one secret map."""
        return pulumi.Output.secret(pulumi.Output.all(**{k: a.kubeconfig for k, a in self.clusters.items()}))

    def admin_kubeconfig_expirations(self) -> dict[str, int]:
        """Each shoot's admin kubeconfig validity by `<project>/<name>` (issued on request: make kubeconfig)."""
        return {s.values.ref: s.values.credentials.admin_kubeconfig_expiration_s for s in self.shoots.values()}

    def network_plan(self) -> str:
        """Every shoot's subnet plan as readable tables, one after the other."""
        return "\n\n".join(s.network_table for s in self.shoots.values())

    def network_ranges(self) -> pulumi.Output[dict[str, dict[str, list[str]]]]:
        """Every shoot's ranges by `<project>/<name>`, with the IPv6 ones its cloud assigned."""
        return pulumi.Output.all(**{s.values.ref: s.network.ranges for s in self.shoots.values()})

    def endpoints(self) -> pulumi.Output[dict[str, str]]:
        """Every cluster's API endpoint by key."""
        return pulumi.Output.all(**{k: a.endpoint for k, a in self.clusters.items()})
