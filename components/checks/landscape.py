"""Checks across the fields and objects of a landscape whose fields are each valid (components/spec).

References, unique names, derived name lengths, version skew and network rules as Gardener validates them; each
returns `landscape<path>: <reason>` lines, so one mistake is reported once, at the field a user wrote.
"""

from __future__ import annotations

from components.kinds import KUBELET_MAX_PODS, MAX_WORKER_SKEW, ProviderType
from components.spec import cidrs
from components.spec.landscape import LandscapeSpec, SeedSpec
from components.spec.shoot import CLOUD_IPV6, ShootSpec


def _minor(version: str) -> tuple[int, int]:
    """`1.34.4` -> (1, 34)."""
    major, minor, _ = version.split(".")
    return int(major), int(minor)


def _duplicates(names: list[str], path: str, what: str) -> list[str]:
    """A line for each repeated name, at the index of the repetition."""
    seen: set[str] = set()
    lines = []
    for i, name in enumerate(names):
        if name in seen:
            lines.append(f"landscape.{path}[{i}].name: duplicate {what} name '{name}'")
        seen.add(name)
    return lines


def _check_networking(
    shoot_at: str, shoot: ShootSpec, provider: ProviderType, others: dict[str, cidrs.Networks]
) -> list[str]:
    """A shoot's families and ranges, as Gardener validates them, for the provider it runs on."""
    at = f"{shoot_at}.networking"
    spec = shoot.networking
    net = spec.networks()
    lines = cidrs.check_families(at, net.ip_families)
    if lines:
        return lines
    if provider is ProviderType.GCP and net.ip_families == (cidrs.IPV6,):
        lines.append(f"{at}.ipFamilies: GCP does not run IPv6-only shoots, use [IPv4, IPv6]")
    if spec.ipv6_ipam_pool and (provider is not ProviderType.AWS or cidrs.IPV6 not in net.ip_families):
        lines.append(f"{at}.ipv6IpamPool: only an aws shoot with IPv6 takes its /56 from an IPAM pool")
    max_pods = [
        (f"{shoot_at}.workers[{j}].kubelet.maxPods", p.kubelet.max_pods or KUBELET_MAX_PODS)
        for j, p in enumerate(shoot.workers)
    ]
    lines += cidrs.check_ranges(at, net, CLOUD_IPV6.get(provider, ""))
    lines += cidrs.check_reserved(at, net)
    lines += cidrs.check_node_masks(at, net, {f.value: m for f, m in spec.node_mask_sizes.items()}, max_pods)
    lines += cidrs.check_overlaps(at, net, others)
    return lines


def _check_zones(at: str, provider: ProviderType, region: str, zones: list[str]) -> list[str]:
    """A cloud's zones lie in its region: gcp `<region>-<letter>` (europe-west1-b), aws `<region><letter>`."""
    if provider is ProviderType.LOCAL:
        return []
    prefix = f"{region}-" if provider is ProviderType.GCP else region
    example = "europe-west1-b in europe-west1" if provider is ProviderType.GCP else "eu-central-1a in eu-central-1"
    return [
        f"{at}.zones: zone '{zone}' is not a zone of region '{region}' (on {provider.value}, e.g. {example})"
        for zone in zones
        if not zone.startswith(prefix) or len(zone) == len(prefix)
    ]


def _check_seed(i: int, seed: SeedSpec) -> list[str]:
    """A seed's zones, its issuer's IAM OIDC provider (aws's alone) and its own networks."""
    zone_lines = _check_zones(f"landscape.seeds[{i}]", seed.provider, seed.region, seed.zones)
    issuer = seed.cluster.issuer
    if issuer and issuer.oidc_provider and seed.provider is not ProviderType.AWS:
        zone_lines.append(
            f"landscape.seeds[{i}].cluster.issuer.oidcProvider: an IAM OIDC provider names an aws seed's issuer; "
            f"on {seed.provider.value} arbor makes the trust from the URL alone"
        )
    at = f"landscape.seeds[{i}].networks"
    net = seed.networks.networks()
    lines = cidrs.check_families(at, net.ip_families)
    if lines:
        return zone_lines + lines
    # The seed's node range is optional: it is only there to keep shoots from overlapping it.
    lines += cidrs.check_ranges(at, net, CLOUD_IPV6.get(seed.provider, ""), optional=("nodes",))
    return zone_lines + lines + cidrs.check_reserved(at, net)


def _check_shoot(
    i: int, shoot: ShootSpec, projects: set[str], seeds: dict[str, SeedSpec], garden_provider: ProviderType
) -> list[str]:
    """Checks of one shoot against the rest of the landscape."""
    at = f"landscape.shoots[{i}]"
    lines = []
    # The names a shoot's name and project become are checked in names.py.
    if shoot.project not in projects:
        lines.append(f"{at}.project: project '{shoot.project}' is not defined in landscape.garden.projects")
    seed = seeds.get(shoot.seed or "")
    if shoot.self_hosted and shoot.seed:
        lines.append(f"{at}.seed: a self-hosted shoot has no seed")
    elif not shoot.self_hosted and not shoot.seed:
        lines.append(f"{at}.seed: required unless selfHosted is true")
    elif shoot.seed and not seed:
        lines.append(f"{at}.seed: seed '{shoot.seed}' is not defined in landscape.seeds")

    control_plane = _minor(shoot.kubernetes.version)
    for j, pool in enumerate(shoot.workers):
        pat = f"{at}.workers[{j}]"
        if pool.kubernetes_version:
            worker = _minor(pool.kubernetes_version)
            if worker > control_plane:
                lines.append(
                    f"{pat}.kubernetesVersion: {pool.kubernetes_version} is newer than the control plane "
                    f"{shoot.kubernetes.version}"
                )
            elif control_plane[1] - worker[1] > MAX_WORKER_SKEW:
                lines.append(
                    f"{pat}.kubernetesVersion: {pool.kubernetes_version} is more than {MAX_WORKER_SKEW} minors "
                    f"older than the control plane {shoot.kubernetes.version}"
                )
        if pool.control_plane and not shoot.self_hosted:
            lines.append(f"{pat}.controlPlane: only a self-hosted shoot has control-plane pools")
        if seed:
            for zone in pool.zones:
                if zone not in seed.zones:
                    zones = ", ".join(seed.zones)
                    lines.append(f"{pat}.zones: zone '{zone}' is not a zone of seed '{seed.name}' ({zones})")
    lines += _duplicates([p.name for p in shoot.workers], f"shoots[{i}].workers", "worker pool")
    if shoot.self_hosted and not any(p.control_plane for p in shoot.workers):
        lines.append(f"{at}.workers: a self-hosted shoot needs a pool with controlPlane: true")
    elif shoot.self_hosted and not any(p.control_plane and p.minimum > 0 for p in shoot.workers):
        lines.append(
            f"{at}.workers: a self-hosted shoot's control-plane pool needs minimum 1 or more (etcd runs there)"
        )

    provider = seed.provider if seed else garden_provider
    others = {f"seed '{seed.name}'": seed.networks.networks()} if seed else {}
    lines += _check_networking(at, shoot, provider, others)
    if seed:
        lines += _check_seed_families(at, shoot, seed)
    return lines


def _check_seed_families(at: str, shoot: ShootSpec, seed: SeedSpec) -> list[str]:
    """A hosted shoot's primary family is one of its seed's: the control plane in the seed serves and reaches it.

    Gardener hosts dual-stack shoots on single-stack seeds (its VPN runs in the seed's families), so only the
    primary family, which kube-apiserver advertises and node-agent dials, must be the seed's.
    """
    families = [f.value for f in shoot.networking.ip_families]
    seed_families = [f.value for f in seed.networks.ip_families]
    if cidrs.check_families(at, tuple(families)) or cidrs.check_families(at, tuple(seed_families)):
        return []  # reported at the families themselves
    primary = families[0]
    if primary in seed_families:
        return []
    return [
        f"{at}.networking.ipFamilies: {cidrs.names(families)} needs a seed with {primary} (its primary family), "
        f"but seed '{seed.name}' has {cidrs.names(seed_families)}: add {primary} to the seed's "
        "networks.ipFamilies (with its ranges) or host the shoot on a seed that has it"
    ]


def cross_checks(spec: LandscapeSpec) -> list[str]:
    """Checks across fields and objects of a landscape whose fields are each valid."""
    lines = _duplicates([p.name for p in spec.garden.projects], "garden.projects", "project")
    garden = spec.garden
    lines += _check_zones("landscape.garden", garden.provider, garden.region, garden.zones)
    lines += _duplicates([s.name for s in spec.seeds], "seeds", "seed")
    seen: set[tuple[str, str]] = set()
    for i, shoot in enumerate(spec.shoots):
        if (shoot.project, shoot.name) in seen:
            lines.append(f"landscape.shoots[{i}].name: shoot '{shoot.name}' exists twice in project '{shoot.project}'")
        seen.add((shoot.project, shoot.name))
    projects = {p.name for p in spec.garden.projects}
    seeds = {s.name: s for s in spec.seeds}
    for i, seed in enumerate(spec.seeds):
        lines += _check_seed(i, seed)
    for i, shoot in enumerate(spec.shoots):
        lines += _check_shoot(i, shoot, projects, seeds, spec.garden.provider)
    return lines
