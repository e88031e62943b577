"""Pure planning: spec -> per-component values (frozen dataclasses) with derived names.

Components get only their values, never the whole spec; everything here is deterministic and tested as data.
"""

from __future__ import annotations

from dataclasses import dataclass

from components import naming
from components.spec import ClusterSpec, LandscapeSpec, ProviderType


@dataclass(frozen=True)
class ClusterValues:
    """What a provider needs to create one cluster."""

    key: str
    provider: ProviderType
    name: str
    nodes: int


@dataclass(frozen=True)
class GardenValues:
    """Values of the Garden component."""

    cluster: ClusterValues


@dataclass(frozen=True)
class SeedValues:
    """Values of one Seed component."""

    name: str
    cluster: ClusterValues


@dataclass(frozen=True)
class LandscapePlan:
    """Values of every component of a landscape, in flow order."""

    garden: GardenValues
    seeds: tuple[SeedValues, ...]


def _cluster(stack: str, key: str, provider: ProviderType, spec: ClusterSpec) -> ClusterValues:
    """Values of one cluster; the name is what the provider calls it."""
    return ClusterValues(key=key, provider=provider, name=naming.local_cluster_name(stack, key), nodes=spec.nodes)


def plan_landscape(spec: LandscapeSpec, stack: str) -> LandscapePlan:
    """The plan of a validated landscape for one stack."""
    garden = GardenValues(
        cluster=_cluster(stack, naming.cluster_key("garden"), spec.garden.provider, spec.garden.cluster)
    )
    seeds = tuple(
        SeedValues(name=s.name, cluster=_cluster(stack, naming.cluster_key("seed", s.name), s.provider, s.cluster))
        for s in spec.seeds
    )
    return LandscapePlan(garden=garden, seeds=seeds)
