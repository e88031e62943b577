"""What the cloud providers share: a Kubernetes provider for a created or an existing cluster, machine classes."""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any, cast

import pulumi
import pulumi_kubernetes as k8s

from components import naming
from components.bundles import (
    ClusterAccess,
    ExposedControlPlane,
    Issuer,
    NetworkAccess,
    ResourceManagerServing,
    SeedAccess,
    ServingSecret,
)
from components.plan.catalogue import ImageSource
from components.plan.network import Carve, NetworkPlan
from components.plan.values import ClusterValues, ControlPlaneMachine, LocalNode, ShootValues, ZoneDeployment
from components.providers.snapshot_step import snapshot_step
from components.reconciler.entry_status import EntryStatus
from components.reconciler.kube import server_of
from components.render.backup import KEY_PREFIX
from components.render.machine_pools import machine_class
from components.render.machine_providers import nodes_subnet
from components.render.machines import Object


def access(
    values: ClusterValues,
    parent: pulumi.Resource,
    kubeconfig: pulumi.Output[str],
    endpoint: pulumi.Output[str],
    ready: Sequence[pulumi.Resource] = (),
    issuer: Issuer | None = None,
) -> ClusterAccess:
    """A Kubernetes provider for the cluster, identified by `<provider>:<name>`, and its access bundle.

    The kubeconfig is secret whatever the caller gave: every reconciler that takes it keeps it, and the engine keeps
    an output secret where its input was (a dynamic provider takes no secrets, so the engine marks them again).
    """
    kubeconfig = pulumi.Output.secret(kubeconfig)
    identifier = naming.cluster_identifier(values.provider.value, values.name)
    provider = k8s.Provider(
        f"{parent._name}-k8s",
        kubeconfig=kubeconfig,
        cluster_identifier=identifier,
        # ConfigMaps and Secrets change in place, as kubectl apply does: a replacement would recreate them.
        enable_config_map_mutable=True,
        enable_secret_mutable=True,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=list(ready)),
    )
    return ClusterAccess(
        values.key, endpoint, kubeconfig, lambda: provider, ready, identifier=identifier, issuer=issuer
    )


def given_kubeconfig(values: ClusterValues) -> pulumi.Output[str]:
    """An existing cluster's kubeconfig, from the stack's secret config key its spec names."""
    assert values.kubeconfig_secret
    return pulumi.Config("arbor").require_secret(values.kubeconfig_secret)


def existing(values: ClusterValues, parent: pulumi.Resource, issuer: Issuer | None = None) -> ClusterAccess:
    """An existing cluster, reached with the kubeconfig kept in the stack's secret config key; `issuer` where given."""
    kubeconfig = given_kubeconfig(values)
    endpoint = kubeconfig.apply(server_of)
    return access(values, parent, kubeconfig, pulumi.Output.unsecret(endpoint), issuer=issuer)


def _noted(message: str, value: str) -> str:
    """`value`, with `message` in the update's diagnostics (the preview names each image a lookup found)."""
    pulumi.log.info(message)
    return value


class CloudProvider:
    """What GCP and AWS share: existing clusters by kubeconfig; created ones are each cloud's own."""

    def __init__(self) -> None:
        # One lookup per image and region: every zone's class of a pool carries the same image.
        self._found: dict[tuple[ImageSource, str], pulumi.Output[str]] = {}

    def cluster(
        self,
        values: ClusterValues,
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource] = (),
        *,
        encryption_config: pulumi.Input[str] | None = None,
    ) -> ClusterAccess:
        """An existing cluster when the spec names its kubeconfig secret, else one created in the cloud."""
        if encryption_config is not None:
            # plan.unsupported refuses this before anything is registered; the cloud's API server is its own.
            raise ValueError(f"cluster '{values.name}': encryption at rest is the cloud's here, not arbor's")
        if values.kubeconfig_secret:
            return existing(values, parent, self.trusted(values.issuer, values, parent) if values.issuer else None)
        return self.created(values, parent, depends_on)

    def trusted(self, url: pulumi.Input[str], values: ClusterValues, parent: pulumi.Resource) -> Issuer:
        """An existing seed's issuer at `url`, as this cloud's identities trust it."""
        raise NotImplementedError

    def reference(
        self, values: ClusterValues, parent: pulumi.Resource, kubeconfig: pulumi.Output[str], reach: pulumi.Output[str]
    ) -> ClusterAccess:
        """A cluster another stack registered: its kubeconfig is the whole credential (an exec plugin's)."""
        return access(values, parent, kubeconfig, pulumi.Output.unsecret(kubeconfig.apply(server_of)))

    def created(
        self, values: ClusterValues, parent: pulumi.Resource, depends_on: Sequence[pulumi.Resource]
    ) -> ClusterAccess:
        """A cluster created by arbor in this cloud."""
        raise NotImplementedError

    def network(self, plan: NetworkPlan, parent: pulumi.Resource) -> NetworkAccess:
        """The shoot's network in this cloud, grouped under one `arbor:shoot:Network` component."""
        group = pulumi.ComponentResource(
            "arbor:shoot:Network", f"{parent._name}-network", None, pulumi.ResourceOptions(parent=parent)
        )
        access = self.build_network(plan, group)
        group.register_outputs({"ranges": access.ranges})
        return access

    def build_network(self, plan: NetworkPlan, parent: pulumi.Resource) -> NetworkAccess:
        """VPC or network, subnets, gateways, routes and firewall of one shoot in this cloud."""
        raise NotImplementedError

    # The MachineClass `provider` of this cloud's sidecar.
    class_provider = ""

    def machine_class(self, shoot: ShootValues, d: ZoneDeployment, network: NetworkAccess) -> Object:
        """The class of one pool's zone; its providerSpec once the zone's subnet and the nodes' identity are known."""
        subnet = nodes_subnet(shoot.network_plan, d.zone)
        if network.nodes is None:
            raise ValueError(f"{shoot.technical_id}: the network has no nodes' identity for machine classes")
        spec = pulumi.Output.all(network.subnets, network.nodes, self.machine_image(shoot, d)).apply(
            lambda got: self.provider_spec(shoot, d, got[0][subnet], got[1], got[2])
        )
        return machine_class(shoot.machine_namespace, d, self.class_provider, spec)

    def machine_image(self, shoot: ShootValues, d: ZoneDeployment) -> pulumi.Input[str]:
        """The cloud image of a pool's machines: the one its profile pins, else the one its lookup finds."""
        source = shoot.images.get(d.pool)
        if source is None:
            # The catalogue checks refuse a cloud pool whose profile has no image for it.
            raise ValueError(f"{shoot.technical_id}: pool {d.pool} has no {'/'.join(d.image)} image in its profile")
        if source.pinned:
            return source.pinned
        key = (source, shoot.networking.region)
        if key not in self._found:
            looked = f"{shoot.ref}: {' '.join(d.image)} ({source.architecture}) in {key[1]}"
            self._found[key] = self.looked_up(*key).apply(lambda found: _noted(f"{looked} is {found}", found))
        return self._found[key]

    def looked_up(self, source: ImageSource, region: str) -> pulumi.Output[str]:
        """The image a profile's lookup finds (an invoke, so the preview shows the ID the class will carry)."""
        raise NotImplementedError

    def provider_spec(
        self, shoot: ShootValues, d: ZoneDeployment, subnet_id: str, nodes: dict[str, str], image: str
    ) -> Object:
        """The providerSpec of one pool's zone with its subnet's ID, the nodes' identity and its image resolved."""
        raise NotImplementedError

    def machine_controller(
        self,
        shoot: ShootValues,
        seed: SeedAccess,
        shoot_api: ClusterAccess,
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> Sequence[pulumi.Resource]:
        """Nothing: the seed's kubelets run machine-controller-manager's Deployment."""
        return []

    def resource_manager(
        self,
        shoot: ShootValues,
        seed: SeedAccess,
        shoot_api: ClusterAccess,
        serving: ServingSecret,
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> ResourceManagerServing | None:
        """Nothing: the seed's kubelets run its Deployment (components/concerns/resource_manager_deployment.py)."""
        return None

    def control_plane_move(
        self,
        shoot: ShootValues,
        seed: SeedAccess,
        backup: pulumi.Output[dict[str, Any]],
        state: tuple[pulumi.Output[str], pulumi.Output[dict[str, Any]]],
        garden: ClusterAccess,
        parent: pulumi.Resource,
    ) -> Sequence[pulumi.Resource]:
        """None: etcd-backup-restore v0.39.0 cannot restore etcd 3.6, so the checks refuse a seed change here."""
        return []

    def etcd_snapshots(
        self,
        shoot: ShootValues,
        seed: SeedAccess,
        backup: pulumi.Output[dict[str, str]],
        entry: pulumi.Output[str],
        garden: ClusterAccess,
        risky: Sequence[pulumi.Input[str]],
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> Sequence[pulumi.Resource]:
        """The entry's status from the bucket, and the step before a risky change asking for a full snapshot.

        etcd-backup-restore beside etcd main takes the daily ones itself (components/render/backup_restore.py), and
        EntryStatus names the newest in the entry; the step reaches it through the seed API server's pod proxy,
        with the seed's kubeconfig (and its exec plugin, where it has one).
        """
        opts = pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on))
        prefix = pulumi.Output.unsecret(backup.apply(lambda d: d[KEY_PREFIX]))  # the entry's name, nothing secret
        status = EntryStatus(
            f"{parent._name}-entry-status", backup_data=backup, prefix=prefix, entry=entry,
            entry_namespace=shoot.project_namespace, garden_kubeconfig=garden.reach, opts=opts,
        )  # fmt: skip
        request = pulumi.Output.all(seed.cluster.reach, entry, garden.reach).apply(
            lambda got: {
                "seedKubeconfig": got[0], "seedNamespace": shoot.seed_namespace, "entry": got[1],
                "entryNamespace": shoot.project_namespace, "gardenKubeconfig": got[2],
            }
        )  # fmt: skip
        return [status, snapshot_step(parent._name, request, risky, opts)]

    def control_plane_machine(
        self, shoot: ShootValues, network: NetworkAccess, bundle: pulumi.Output[str], parent: pulumi.Resource
    ) -> ExposedControlPlane:
        """The machine in its zone's nodes subnet, from its pool's image, grouped under one component."""
        machine = shoot.control_plane_machine
        if machine is None or network.vpc is None or network.nodes is None:
            raise ValueError(f"{shoot.technical_id}: only a self-hosted cloud shoot has a control-plane machine")
        group = pulumi.ComponentResource(
            "arbor:shoot:ControlPlaneMachine", f"{parent._name}-cp", None, pulumi.ResourceOptions(parent=parent)
        )
        subnet = network.subnets.apply(operator.itemgetter(nodes_subnet(shoot.network_plan, machine.deployment.zone)))
        image = self.machine_image(shoot, machine.deployment)
        exposed = self.build_control_plane_machine(shoot, machine, subnet, network, image, bundle, group)
        group.register_outputs({"address": exposed.address})
        return exposed

    def build_control_plane_machine(
        self,
        shoot: ShootValues,
        machine: ControlPlaneMachine,
        subnet: pulumi.Output[str],
        network: NetworkAccess,
        image: pulumi.Input[str],
        bundle: pulumi.Output[str],
        parent: pulumi.Resource,
    ) -> ExposedControlPlane:
        """The instance, identity, bundle secret and load balancer of a control-plane machine in this cloud."""
        raise NotImplementedError

    def publish_static_pods(
        self,
        access: ClusterAccess,
        pool: str,
        manifests: Mapping[str, pulumi.Output[dict[str, Any]]],
        parent: pulumi.Resource,
    ) -> list[pulumi.Resource]:
        """Nothing: a real machine's kubelet publishes mirror pods of its static pods itself."""
        return []

    def machine_directory(self, values: ClusterValues) -> str | None:
        """None: a cloud machine gets its credentials at its first boot."""
        return None

    def shoot_api(
        self,
        values: ClusterValues,
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource] = (),
        *,
        encryption_config: pulumi.Input[str | dict[str, str]] | None = None,
        client_ca: pulumi.Input[str] | None = None,
        machines: Sequence[LocalNode] = (),
        kubeconfig: pulumi.Input[str] | None = None,
        pki: pulumi.Input[dict[str, str]] | None = None,
        restore: pulumi.Input[dict[str, str]] | None = None,
    ) -> ClusterAccess:
        """The API arbor serves at the shoot's external domain (`kubeconfig`), once `depends_on` (its records) exist.

        A shoot without domain names has no kubeconfig here; the checks refuse it before anything is registered.
        """
        if kubeconfig is None:
            raise pulumi.RunError(f"{values.key}: a shoot on {values.provider.value} needs landscape.garden.dns")
        config = pulumi.Output.from_input(kubeconfig)
        endpoint = pulumi.Output.unsecret(config.apply(server_of))
        return access(values, parent, config, endpoint, ready=list(depends_on))


def carved(block: pulumi.Output[str], carve: Carve) -> pulumi.Output[str]:
    """The carve's concrete range once the cloud has assigned its parent's IPv6 block."""

    def of(value: str | None) -> str:
        if not value:
            raise ValueError(f"{carve.parent} has no IPv6 block to carve {carve} from")
        return carve.of(value)

    return block.apply(of)


def resolve(value: str | Carve, blocks: Mapping[str, pulumi.Output[str]]) -> pulumi.Input[str]:
    """A plan range as a value: a string as it is, a carve from its parent's real block (`blocks` by name)."""
    return carved(blocks[value.parent], value) if isinstance(value, Carve) else value


def secret(value: pulumi.Output[str]) -> pulumi.Output[str]:
    """`value`, marked secret."""
    return cast(pulumi.Output[str], pulumi.Output.secret(value))
