"""What a valid landscape asks for that arbor does not run yet, refused before any change."""

from __future__ import annotations

from components.kinds import ProviderType
from components.plan.values import LandscapePlan


def unsupported(plan: LandscapePlan) -> list[str]:
    """What a valid landscape asks for that arbor does not run yet, one line each (checked before any change)."""
    lines = []
    layers = [("landscape.garden", plan.garden.cluster)] + [
        (f"landscape.seeds[{i}]", seed.cluster) for i, seed in enumerate(plan.seeds)
    ]
    for path, cluster in layers:
        if cluster.provider is ProviderType.LOCAL and cluster.kubeconfig_secret:
            lines.append(f"{path}.cluster.kubeconfigSecret: local clusters are created, not connected to")
    if plan.garden.encryption and plan.garden.cluster.provider is not ProviderType.LOCAL:
        # A cloud's managed API server encrypts at rest with the cloud's own keys, configured there.
        provider = plan.garden.cluster.provider.value
        lines.append(f"landscape.garden.encryption: only a local garden's API server is configured, not {provider}")
    for i, shoot in enumerate(plan.shoots):
        if shoot.self_hosted and shoot.cluster.provider is not ProviderType.LOCAL:
            lines.append(
                f"landscape.shoots[{i}].selfHosted: self-hosted shoots on {shoot.cluster.provider.value} are not "
                "supported yet (their control-plane machines need the workers issue)"
            )
        elif not shoot.self_hosted and shoot.cluster.provider is not ProviderType.LOCAL:
            lines.append(
                f"landscape.shoots[{i}].seed: shoots on {shoot.cluster.provider.value} seeds are not supported yet "
                "(they need the workers issue)"
            )
    return lines
