"""The GCP provider: garden and seed clusters as regional GKE clusters, or existing clusters by kubeconfig.

Created clusters keep deletion protection on (deleting a seed loses its shoots' control planes: a user must
turn it off on purpose), release on the regular channel, run VPC-native with workload identity and the persistent
disk CSI driver (etcd's volumes), and get one node pool of `nodes` per zone, on the default network; shoots get
networks of their own (gcp_network.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

from components import naming
from components.bundles import (
    BackupAccess,
    ClusterAccess,
    ExposedControlPlane,
    HeldSecret,
    Issuer,
    MachineCredentials,
    NetworkAccess,
)
from components.plan.catalogue import ImageSource
from components.plan.network import NetworkPlan
from components.plan.values import (
    BackupValues,
    ClusterValues,
    ControlPlaneMachine,
    ShootValues,
    ZoneDeployment,
    seed_audience,
)
from components.providers import cloud, gcp_backup, gcp_control_plane, gcp_credentials, gcp_network
from components.providers.kubeconfig import exec_kubeconfig
from components.render import machine_providers
from components.render.machines import Object, Sidecar

GKE_NAME_MAX = 40
MACHINE_TYPE = "e2-standard-4"


def gke_issuer(project: str, location: str, cluster: str) -> str:
    """A GKE cluster's ServiceAccount token issuer (public: its discovery document and keys are served there)."""
    return f"https://container.googleapis.com/v1/projects/{project}/locations/{location}/clusters/{cluster}"


class GcpProvider(cloud.CloudProvider):
    """InfrastructureProvider on Google Cloud (project and credentials from the `gcp:` config, as usual)."""

    class_provider = machine_providers.GCP_CLASS_PROVIDER

    def created(
        self, values: ClusterValues, parent: pulumi.Resource, depends_on: Sequence[pulumi.Resource]
    ) -> ClusterAccess:
        """A GKE cluster with its node pool, or an existing cluster."""
        name, region = naming.capped(values.name, GKE_NAME_MAX), values.region
        # Protected as well as deletion-protected: it holds the cluster's etcd data.
        opts = pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on), protect=True)
        cluster = gcp.container.Cluster(
            f"{parent._name}-gke",
            name=name,
            location=values.region,
            node_locations=list(values.zones),
            remove_default_node_pool=True,
            initial_node_count=1,
            deletion_protection=True,
            networking_mode="VPC_NATIVE",
            ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(stack_type="IPV4"),
            release_channel=gcp.container.ClusterReleaseChannelArgs(channel="REGULAR"),
            # The Compute Engine persistent disk CSI driver provisions etcd's volumes (GKE's default, made explicit).
            addons_config=gcp.container.ClusterAddonsConfigArgs(
                gce_persistent_disk_csi_driver_config=gcp.container.ClusterAddonsConfigGcePersistentDiskCsiDriverConfigArgs(
                    enabled=True
                )
            ),
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                workload_pool=gcp.organizations.get_client_config_output().project.apply(lambda p: f"{p}.svc.id.goog")
            ),
            opts=opts,
        )
        pool = gcp.container.NodePool(
            f"{parent._name}-pool",
            cluster=cluster.id,
            location=values.region,
            node_count=values.nodes,
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=MACHINE_TYPE,
                oauth_scopes=["https://www.googleapis.com/auth/cloud-platform"],
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA"
                ),
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            opts=pulumi.ResourceOptions(parent=parent),
        )
        endpoint = cluster.endpoint.apply(lambda e: f"https://{e}")
        kubeconfig = cloud.secret(
            pulumi.Output.all(endpoint, cluster.master_auth.cluster_ca_certificate).apply(
                lambda a: exec_kubeconfig(name, a[0], a[1] or "", "gke-gcloud-auth-plugin", [])
            )
        )
        # A seed's tokens are trusted by its bucket's workload identity pool: GKE publishes each cluster's issuer.
        issuer = None
        if values.key.startswith("seed/"):
            project = gcp.organizations.get_client_config_output().project
            url = pulumi.Output.all(project, cluster.name).apply(lambda got: gke_issuer(got[0], region, got[1]))
            issuer = self.trusted(url, values, parent)
        return cloud.access(values, parent, kubeconfig, endpoint, ready=[pool], issuer=issuer)

    def trusted(self, url: pulumi.Input[str], values: ClusterValues, parent: pulumi.Resource) -> Issuer:
        """A seed's issuer (its GKE cluster's, or an existing one's), trusted by a workload identity pool of its own."""
        name, seed = naming.capped(values.name, GKE_NAME_MAX), values.key.removeprefix("seed/")
        return gcp_credentials.seed_pool(name, pulumi.Output.from_input(url), seed_audience(seed), parent)

    def build_network(self, plan: NetworkPlan, parent: pulumi.Resource) -> NetworkAccess:
        """The shoot's network, subnets, Cloud Router and NAT, and firewall rules."""
        return gcp_network.network(plan, parent)

    def machine_sidecar(self, namespace: str) -> Sidecar:
        """machine-controller-manager-provider-gcp."""
        return machine_providers.sidecar_gcp(namespace)

    def looked_up(self, source: ImageSource, region: str) -> pulumi.Output[str]:
        """The newest image of the family in the project (`gcp.compute.get_image`); images are global."""
        found = gcp.compute.get_image_output(project=source.project, family=source.family)
        return found.name.apply(lambda name: f"projects/{source.project}/global/images/{name}")

    def provider_spec(
        self, shoot: ShootValues, d: ZoneDeployment, subnet_id: str, nodes: dict[str, str], image: str
    ) -> Object:
        """A Compute Engine class in the nodes subnetwork, running as the nodes' service account."""
        net = shoot.networking
        values = machine_providers.GcpMachineValues(
            shoot.technical_id, net.region, subnet_id, nodes["serviceAccount"], net.ip_families
        )
        return machine_providers.gcp_provider_spec(d, values, image)

    def shoot_issuer(
        self, shoot: ShootValues, public_key: pulumi.Output[str], parent: pulumi.Resource
    ) -> Issuer | None:
        """Its keys held by a workload identity pool of the shoot's own (nothing published)."""
        return gcp_credentials.shoot_pool(shoot, public_key, parent) if shoot.machine_audience else None

    def machine_credentials(
        self, shoot: ShootValues, network: NetworkAccess, seed: ClusterAccess, parent: pulumi.Resource
    ) -> MachineCredentials:
        """A service account with the compute rights machines need, scoped bindings, and its key."""
        return gcp_credentials.machine_credentials(shoot, network, seed.issuer, parent)

    def backup_bucket(
        self, values: BackupValues, seed: ClusterAccess, holder: HeldSecret, parent: pulumi.Resource
    ) -> BackupAccess:
        """The seed's bucket with Gardener's safety settings and an identity for that bucket alone.

        A service account the seed's `etcd-backup` ServiceAccounts act as through a pool (workload identity: no
        key), else its key, an output that writes no Secret: the seed writes `holder` from `data`.
        """
        return gcp_backup.backup_bucket(values, seed.issuer, parent)

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
        """A Compute Engine instance behind a passthrough load balancer (gcp_control_plane.py)."""
        assert network.vpc is not None  # a cloud network has its VPC
        return gcp_control_plane.control_plane_machine(shoot, machine, subnet, network.vpc, image, bundle, parent)
