"""Pure planning: spec -> per-component values (frozen dataclasses) with derived names.

Components get only their values, never the whole spec; everything here is deterministic and tested as data.
"""

from __future__ import annotations

import dataclasses

from components import naming
from components.kinds import ProviderType
from components.plan import storage, topology
from components.plan.catalogue import ImageSource, pool_images
from components.plan.catalogue import profiles as catalogue_profiles
from components.plan.network import NetworkValues, plan_network
from components.plan.nodes import with_nodes
from components.plan.values import (
    STS_AUDIENCE,
    BackupValues,
    ClusterValues,
    CredentialsValues,
    DeletionValues,
    DnsValues,
    EncryptionValues,
    ExtensionValues,
    ExtensionWorkloadValues,
    GardenValues,
    LandscapePlan,
    MemberValues,
    PoolValues,
    ProjectValues,
    SeedValues,
    ShootValues,
    VolumeValues,
    garden_accounts,
    seed_audience,
    shoot_audience,
)
from components.spec.catalogue import CloudProfiles
from components.spec.extensions import ExtensionSpec
from components.spec.landscape import ClusterSpec, GardenSpec, LandscapeSpec, SeedClusterSpec, SeedSpec
from components.spec.shoot import EncryptionSpec, ShootSpec, WorkerPool

# The domain of Gardener's local setup, for a landscape that names no DNS zone (its names resolve to loopback).
LOCAL_DOMAIN = "local.gardener.cloud"


def _cluster(
    stack: str, key: str, provider: ProviderType, spec: ClusterSpec, region: str = "local", zones: tuple[str, ...] = ()
) -> ClusterValues:
    """Values of one cluster; the name is what the provider calls it."""
    return ClusterValues(
        key=key,
        provider=provider,
        name=naming.local_cluster_name(stack, key),
        nodes=spec.nodes,
        kubeconfig_secret=spec.kubeconfig_secret,
        region=region,
        zones=zones or ("local-a",),
        **_issuer(spec),
    )


def _issuer(spec: ClusterSpec) -> dict[str, str | None]:
    """An existing seed's given issuer, as its cluster's values hold it (none for every other cluster)."""
    issuer = spec.issuer if isinstance(spec, SeedClusterSpec) else None
    return {"issuer": issuer.url, "oidc_provider": issuer.oidc_provider} if issuer else {}


def _backup(stack: str, spec: SeedSpec, garden: GardenSpec) -> BackupValues | None:
    """A seed's backup bucket: its region defaults to the seed's; its name is unique per domain and stack."""
    if spec.backup is None:
        return None
    domain = garden.dns.domain if garden.dns else ""
    bucket = spec.backup.bucket or naming.backup_bucket(spec.name, domain, stack)
    region = spec.backup.region or spec.region
    return BackupValues(spec.backup.provider, region, bucket, spec.name, audience=_backup_audience(spec))


def _backup_audience(spec: SeedSpec) -> str | None:
    """Workload identity for a seed's bucket where its cloud can trust the seed's token issuer, else None (a key).

    An EKS seed arbor makes publishes its issuer through the IAM OIDC provider it also makes (for the EBS CSI
    driver), so an S3 bucket's role trusts the seed's ServiceAccount tokens; a GKE seed's issuer is public, and the
    seed's workload identity pool trusts it. A bucket in the other cloud trusts the same public issuer through a
    provider or pool made for it. A local seed's API server publishes its issuer to the local store, whose STS
    trusts it. An existing seed's issuer is trusted where the spec names it (`cluster.issuer`); one that names none
    keeps a key.
    """
    assert spec.backup is not None
    return _audience(spec, spec.backup.provider)


def _audience(seed: SeedSpec, cloud: ProviderType) -> str | None:
    """The audience `cloud`'s identities trust a seed's ServiceAccount tokens for (made, or existing and named)."""
    if seed.cluster.kubeconfig_secret is not None and seed.cluster.issuer is None:
        return None
    if cloud is ProviderType.AWS:
        return STS_AUDIENCE
    return seed_audience(seed.name)


def _seed(stack: str, spec: SeedSpec, shoots: list[ShootSpec], garden: GardenSpec) -> SeedValues:
    """Values of one seed, with the namespaces of the shoots it hosts."""
    hosted = tuple(naming.shoot_namespace(s.project, s.name) for s in shoots if s.seed == spec.name)
    return SeedValues(
        name=spec.name,
        cluster=_cluster(
            stack, naming.cluster_key("seed", spec.name), spec.provider, spec.cluster, spec.region, tuple(spec.zones)
        ),
        region=spec.region,
        zones=tuple(spec.zones),
        shoot_namespaces=hosted,
        ip_families=tuple(f.value for f in spec.networks.ip_families),
        networks={"nodes": spec.networks.nodes, "pods": spec.networks.pods, "services": spec.networks.services},
        backup=_backup(stack, spec, garden),
        extensions=_extensions(spec),
    )


def _extensions(spec: SeedSpec) -> tuple[ExtensionValues, ...]:
    """A seed's extension installations."""
    return tuple(_extension(spec.name, tuple(spec.zones), e) for e in spec.extensions)


def _extension(seed: str, zones: tuple[str, ...], spec: ExtensionSpec) -> ExtensionValues:
    """Values of one extension installation, named as gardenlet names a ControllerInstallation's."""
    workloads = tuple(
        ExtensionWorkloadValues(
            w.name, w.image, w.replicas, spec.garden_access and w.inject_garden_kubeconfig, w.requests.model_dump()
        )
        for w in spec.workloads
    )
    return ExtensionValues(
        name=spec.name,
        type=spec.type,
        seed=seed,
        namespace=naming.extension_name(spec.name),
        garden_namespace=naming.seed_namespace(seed),
        service_account=naming.extension_name(spec.name),
        zones=zones,
        garden_access=spec.garden_access,
        workloads=workloads,
    )


def _zones(spec: ShootSpec, default: list[str]) -> tuple[str, ...]:
    """The shoot's zones: those its pools name, in order of first mention, else its seed's (or garden's)."""
    named = [z for p in spec.workers for z in p.zones]
    return tuple(dict.fromkeys(named)) or tuple(default)


def _pool(p: WorkerPool, spec: ShootSpec) -> PoolValues:
    """Values of one worker pool; its Kubernetes version defaults to the shoot's."""
    return PoolValues(
        name=p.name,
        machine_type=p.machine.type,
        image=p.machine.image.name,
        image_version=p.machine.image.version,
        minimum=p.minimum,
        maximum=p.maximum,
        zones=tuple(p.zones),
        control_plane=p.control_plane,
        kubernetes_version=p.kubernetes_version or spec.kubernetes.version,
        kubelet=p.kubelet.model_dump(by_alias=True, exclude_none=True, include={"max_pods", "cpu_manager_policy"}),
        kube_reserved=dict(p.kubelet.kube_reserved),
        eviction_hard=dict(p.kubelet.eviction_hard),
        cri=p.cri.name,
        registry_mirrors=dict(p.cri.registry_mirrors),
        sysctls=dict(p.sysctls),
        max_surge=p.max_surge,
        max_unavailable=p.max_unavailable,
        volume=VolumeValues(p.volume.size_gb, p.volume.type or "", p.volume.encrypted),
    )


def _networking(spec: ShootSpec, technical_id: str, where: SeedSpec | GardenSpec) -> NetworkValues:
    """A shoot's network values on the provider, region and zones it runs in."""
    net = spec.networking
    return NetworkValues(
        technical_id=technical_id,
        provider=where.provider,
        region=where.region,
        zones=_zones(spec, where.zones),
        ip_families=tuple(f.value for f in net.ip_families),
        nodes=net.nodes,
        pods=net.pods,
        services=net.services,
        node_masks=net.node_masks(),
        ipv6_ipam_pool=net.ipv6_ipam_pool,
    )


def _nodes(spec: ShootSpec) -> int:
    """The nodes arbor makes for a shoot: a self-hosted one's, a node per pool minimum (MCM makes a hosted one's)."""
    return sum(p.minimum for p in spec.workers) if spec.self_hosted else 0


def _images(spec: ShootSpec, networking: NetworkValues, profiles: CloudProfiles) -> dict[str, ImageSource]:
    """Each cloud pool's image source from its provider's profile (the checks refused pools without one)."""
    pools = [(p.name, p.machine.type, p.machine.image.name, p.machine.image.version) for p in spec.workers]
    return pool_images(networking.provider, profiles.get(networking.provider), networking.region, pools)


def _shoot(
    stack: str, spec: ShootSpec, seed: SeedSpec | None, garden: GardenSpec, profiles: CloudProfiles
) -> ShootValues:
    """Values of one shoot; its own cluster runs where its seed runs (or where the garden runs)."""
    technical_id = naming.shoot_namespace(spec.project, spec.name)
    networking = _networking(spec, technical_id, seed or garden)
    key = naming.cluster_key("shoot", f"{spec.project}/{spec.name}")
    shoot = ShootValues(
        name=spec.name,
        project=spec.project,
        project_namespace=naming.project_namespace(spec.project),
        technical_id=technical_id,
        seed=None if spec.self_hosted else spec.seed,
        kubernetes_version=spec.kubernetes.version,
        networking=networking,
        workers=tuple(_pool(p, spec) for p in spec.workers),
        node_agent_version=spec.node_agent.version,
        labels=tuple(sorted(spec.labels.items())),
        # On local the shoot's API is a cluster of its own, with a node per pool minimum (bounded by the checks:
        # the local limit holds for local shoots only, so the count is not validated as a garden's or seed's `nodes`).
        cluster=_cluster(stack, key, networking.provider, ClusterSpec.model_construct(nodes=_nodes(spec))),
        credentials=CredentialsValues(
            rotation=spec.credentials.rotation.model_dump(by_alias=True),
            admin_kubeconfig_expiration_s=spec.admin_kubeconfig.expiration_seconds,
        ),
        encryption=_encryption(spec.encryption),
        cloud_credentials_secret=spec.cloud_credentials_secret,
        cloud_credentials=spec.cloud_credentials,
        machine_audience=_machine_audience(spec, seed, networking.provider, technical_id),
        issuer_bucket=_issuer_bucket(stack, spec, garden, networking.provider),
        network_type=spec.networking.type.value,
        images=_images(spec, networking, profiles),
        dns=_dns(spec, garden, networking.provider),
        service_host=None if spec.self_hosted else _service_host(spec, garden),
        etcd_volumes=storage.etcd_volumes(None if spec.self_hosted else networking.provider),
        backup=None if seed is None or spec.self_hosted else _backup(stack, seed, garden),
        garden_accounts=() if seed is None or spec.self_hosted else garden_accounts(_extensions(seed)),
        network_plan=plan_network(networking),
        topology=topology.static() if spec.self_hosted else topology.hosted(technical_id),
    )
    return with_nodes(shoot)


def _machine_audience(spec: ShootSpec, seed: SeedSpec | None, provider: ProviderType, technical_id: str) -> str | None:
    """Workload identity for the machines' identity arbor makes, where its role can trust MCM's token issuer.

    As for a bucket (`_backup_audience`): MCM runs in the seed, so a shoot on an EKS or GKE seed arbor made (or an
    existing one that names its issuer), in the seed's cloud, gets an identity its ServiceAccount uses. A self-hosted
    shoot's MCM runs behind its own API, whose issuer arbor publishes for its cloud (render/service_account_issuer.py).
    Pasted credentials are the user's; local machines (kwok nodes) need no identity.
    """
    if spec.cloud_credentials_secret is not None or provider is ProviderType.LOCAL:
        return None
    if spec.self_hosted:
        return STS_AUDIENCE if provider is ProviderType.AWS else shoot_audience(technical_id)
    if seed is None or seed.provider != provider:
        return None
    return _audience(seed, provider)


def _issuer_bucket(stack: str, spec: ShootSpec, garden: GardenSpec, provider: ProviderType) -> str | None:
    """Where a self-hosted aws shoot whose machines' role arbor makes publishes its issuer; None elsewhere."""
    if not spec.self_hosted or provider is not ProviderType.AWS or spec.cloud_credentials_secret is not None:
        return None
    domain = garden.dns.domain if garden.dns else ""
    return naming.issuer_bucket(naming.shoot_namespace(spec.project, spec.name), domain, stack)


def _dns(spec: ShootSpec, garden: GardenSpec, provider: ProviderType) -> DnsValues | None:
    """The shoot's API names in the landscape's zone (Gardener's external and internal domains), if it names one.

    A local shoot's API is a kwokctl cluster of its own, not arbor's kube-apiserver: no names to record.
    """
    if garden.dns is None or provider is ProviderType.LOCAL:
        return None
    domain = garden.dns.domain
    return DnsValues(
        provider=garden.dns.provider.value,
        zone=garden.dns.zone,
        external=f"api.{spec.name}.{spec.project}.{domain}",
        internal=f"api.{spec.name}.{spec.project}.internal.{domain}",
    )


def _service_host(spec: ShootSpec, garden: GardenSpec) -> str:
    """KUBERNETES_SERVICE_HOST in the shoot's pods: `api.<shoot>.<project>.internal.<domain>`, its API's internal name.

    The domain is the landscape's, or Gardener's local one where the landscape names none.
    """
    domain = garden.dns.domain if garden.dns else LOCAL_DOMAIN
    return f"api.{spec.name}.{spec.project}.internal.{domain}"


def derive(shoot: ShootValues) -> ShootValues:
    """The shoot with every derived value computed again from its own values (for a copy with changed values)."""
    return with_nodes(dataclasses.replace(shoot, network_plan=plan_network(shoot.networking)))


def _encryption(spec: EncryptionSpec) -> EncryptionValues:
    """Values of one API server's encryption at rest."""
    return EncryptionValues(tuple(spec.resources), spec.provider.value, spec.key_rotation.value)


def plan_landscape(spec: LandscapeSpec, stack: str) -> LandscapePlan:
    """The plan of a validated landscape for one stack."""
    garden = GardenValues(
        cluster=_cluster(
            stack,
            naming.cluster_key("garden"),
            spec.garden.provider,
            spec.garden.cluster,
            spec.garden.region,
            tuple(spec.garden.zones),
        ),
        projects=tuple(
            ProjectValues(
                name=p.name,
                namespace=naming.project_namespace(p.name),
                members=tuple(MemberValues(m.name, m.kind.value, m.role) for m in p.members),
            )
            for p in spec.garden.projects
        ),
        encryption=_encryption(spec.garden.encryption) if spec.garden.encryption else None,
    )
    seeds = tuple(_seed(stack, s, spec.shoots, spec.garden) for s in spec.seeds)
    by_name = {s.name: s for s in spec.seeds}
    catalogue = catalogue_profiles(spec.cloud_profiles)
    shoots = tuple(_shoot(stack, s, by_name.get(s.seed or ""), spec.garden, catalogue) for s in spec.shoots)
    confirmed = DeletionValues(tuple(spec.confirm_deletion.shoots), tuple(spec.confirm_deletion.seeds))
    store = any(s.backup is not None and s.backup.provider is ProviderType.LOCAL for s in seeds)
    return LandscapePlan(
        garden=garden, seeds=seeds, shoots=shoots, deletions=confirmed, layout=spec.stacks, object_store=store
    )
