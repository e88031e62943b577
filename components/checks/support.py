"""What a valid landscape asks for that arbor does not run yet, refused before any change."""

from __future__ import annotations

from components.kinds import ProviderType
from components.plan.values import LandscapePlan, ShootValues


def unsupported(plan: LandscapePlan) -> list[str]:
    """What a valid landscape asks for that arbor does not run yet, one line each (checked before any change)."""
    lines = []
    garden = plan.garden.cluster
    if garden.provider is ProviderType.LOCAL and garden.kubeconfig_secret:
        # A local seed may be given (a kwokctl cluster someone else runs); the local garden is arbor's own.
        lines.append("landscape.garden.cluster.kubeconfigSecret: a local garden is created, not connected to")
    if plan.garden.encryption and plan.garden.cluster.provider is not ProviderType.LOCAL:
        # A cloud's managed API server encrypts at rest with the cloud's own keys, configured there.
        provider = plan.garden.cluster.provider.value
        lines.append(f"landscape.garden.encryption: only a local garden's API server is configured, not {provider}")
    for i, seed in enumerate(plan.seeds):
        if seed.cluster.provider is not ProviderType.LOCAL and "IPv6" in seed.ip_families:
            # GKE and EKS seeds are created IPv4; a seed that says IPv6 would promise what its cluster lacks.
            lines.append(
                f"landscape.seeds[{i}].networks.ipFamilies: a seed on {seed.cluster.provider.value} is created IPv4, "
                "IPv6 seeds are not supported yet: use [IPv4] (it hosts dual-stack shoots, as Gardener's seeds do)"
            )
    lines += _backups(plan)
    for i, shoot in enumerate(plan.shoots):
        provider = shoot.cluster.provider
        if provider is ProviderType.LOCAL:
            continue
        if shoot.self_hosted:
            lines += _self_hosted_on_cloud(i, shoot)
        elif shoot.dns is None:
            lines.append(
                f"landscape.shoots[{i}].seed: a shoot on a {provider.value} seed is reached at "
                "api.<shoot>.<project>.<domain>: set landscape.garden.dns (the zone arbor writes its records in)"
            )
    return lines


def _self_hosted_on_cloud(i: int, shoot: ShootValues) -> list[str]:
    """What a self-hosted shoot on a cloud cannot ask for yet: arbor makes its one control-plane machine itself."""
    at, provider = f"landscape.shoots[{i}]", shoot.cluster.provider.value
    lines = []
    if shoot.dns is None:
        lines.append(
            f"{at}.selfHosted: a self-hosted shoot on {provider} is reached at api.<shoot>.<project>.<domain>, "
            "a load balancer in front of its control-plane machine: set landscape.garden.dns"
        )
    # Further pools are machine-controller-manager's, inside the shoot (concerns/workers.py).
    for j, pool in enumerate(shoot.workers):
        if pool.control_plane and (pool.minimum, pool.maximum) != (1, 1):
            lines.append(
                f"{at}.workers[{j}].minimum: a self-hosted shoot on {provider} runs its control plane on exactly "
                f"one machine (one etcd member; minimum and maximum 1), not {pool.minimum}..{pool.maximum}"
            )
    return lines


def _backups(plan: LandscapePlan) -> list[str]:
    """A cloud seed's backups go to a cloud's object store, a local seed's to the local one (MinIO on loopback)."""
    lines = []
    for i, seed in enumerate(plan.seeds):
        if seed.backup is None:
            # Local seeds join once arbor snapshots their shoots' etcd into the store; until then a bucket is optional.
            if seed.shoot_namespaces and seed.cluster.provider is not ProviderType.LOCAL:
                provider = seed.cluster.provider.value
                hosted = ", ".join(seed.shoot_namespaces)
                lines.append(
                    f"landscape.seeds[{i}].backup: seed '{seed.name}' hosts shoots ({hosted}) but has no "
                    f"backup bucket, so their etcd would live only as long as its volume: give it "
                    f"backup: {{provider: {provider}}}"
                )
            continue
        local_seed = seed.cluster.provider is ProviderType.LOCAL
        local_store = seed.backup.provider is ProviderType.LOCAL
        if local_store and not local_seed:
            lines.append(
                f"landscape.seeds[{i}].backup.provider: the local object store listens on this machine's loopback, "
                f"which etcd-backup-restore on a {seed.cluster.provider.value} seed cannot reach: use gcp or aws"
            )
        elif local_seed and not local_store:
            lines.append(
                f"landscape.seeds[{i}].backup.provider: a local seed's buckets are in the local object store (MinIO "
                f"on loopback): use local, not {seed.backup.provider.value}"
            )
    return lines
