"""The Shoot component (`arbor:shoot:Shoot`): a cluster users get, in the order of Gardener's reconciliation.

Flow, each step depending only on what it needs: the seed namespace (Seed) -> the Shoot record ->
infrastructure (the shoot's network: VPC, subnets, gateways; nothing on local) -> etcd main and events ->
kube-apiserver -> kube-controller-manager and kube-scheduler -> the shoot's API and nodes (workers) -> system
components in kube-system -> health (ShootStatus writes the record's status). The backup entry joins the flow
with the backup issue.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components import api, controlplane, network, nodeagent, osc, records
from components.garden import GardenAccess
from components.plan import ShootValues
from components.providers.contract import ClusterAccess, InfrastructureProvider, NetworkAccess
from components.reconciler.osc_secret import OperatingSystemConfig
from components.reconciler.shoot_status import ShootStatus
from components.seed import SeedAccess


def shoot_info(shoot: ShootValues) -> dict[str, str]:
    """The data of `kube-system/shoot-info`, as Gardener publishes it inside every shoot."""
    return {
        "shootName": shoot.name,
        "projectName": shoot.project,
        "technicalID": shoot.technical_id,
        "kubernetesVersion": shoot.kubernetes_version,
        "nodeNetwork": ",".join(shoot.networking.nodes),
        "podNetwork": ",".join(shoot.networking.pods),
        "serviceNetwork": ",".join(shoot.networking.services),
        "ipFamilies": ",".join(shoot.networking.ip_families),
        "seedName": shoot.seed or "",
    }


class Shoot(pulumi.ComponentResource):
    """One hosted shoot."""

    values: ShootValues
    access: ClusterAccess
    network: NetworkAccess
    status: ShootStatus

    def __init__(
        self,
        name: str,
        values: ShootValues,
        infra: InfrastructureProvider,
        garden: GardenAccess,
        seed: SeedAccess,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("arbor:shoot:Shoot", name, None, opts)
        self.values = values
        record = api.shoot_record(values)
        shoot_record = records.record(
            f"{name}-record",
            record,
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=garden.cluster.provider,
                depends_on=[*garden.api, garden.namespaces[values.project]],
            ),
        )

        # Infrastructure first: the control plane and nodes need the shoot's network.
        network_plan = network.plan_network(values.networking)
        # The table reaches reviewers in the preview (and its JSON) as an info diagnostic on the shoot.
        pulumi.log.info(network.PLAN_PREFIX + network.table(network_plan), resource=self)
        self.network = infra.network(network_plan, parent=self)

        # Control plane in the seed namespace, each component after what it talks to.
        namespace = seed.namespaces[values.seed_namespace]
        # A control plane that is not ready in five minutes will not be; fail the update rather than wait ten.
        wait = pulumi.CustomTimeouts(create="5m", update="5m")
        on_seed = pulumi.ResourceOptions(parent=self, provider=seed.cluster.provider)
        done: dict[str, pulumi.Resource] = {}
        for workload in controlplane.control_plane(values):
            after = [done[d] for d in workload.depends_on] or [namespace, *self.network.ready]
            opts = pulumi.ResourceOptions.merge(on_seed, pulumi.ResourceOptions(depends_on=after, custom_timeouts=wait))
            service = workload.service
            if service:
                k8s.core.v1.Service(
                    f"{name}-{service['metadata']['name']}",
                    metadata=service["metadata"],
                    spec=service["spec"],
                    opts=pulumi.ResourceOptions.merge(on_seed, pulumi.ResourceOptions(depends_on=[namespace])),
                )
            kind = k8s.apps.v1.StatefulSet if workload.kind == "StatefulSet" else k8s.apps.v1.Deployment
            done[workload.component] = kind(
                f"{name}-{workload.component}",
                metadata=workload.object["metadata"],
                spec=workload.object["spec"],
                opts=opts,
            )

        # The shoot's API and nodes come once its control plane runs.
        after_control_plane = [done["kube-controller-manager"], done["kube-scheduler"]]
        addresses = network.node_networks(values.networking, values.cluster.nodes)
        self.access = infra.shoot_api(values.cluster, parent=self, depends_on=after_control_plane, addresses=addresses)
        node_configs = self._node_configuration(name, values, namespace, on_seed)
        system = k8s.core.v1.ConfigMap(
            f"{name}-shoot-info",
            metadata={"name": "shoot-info", "namespace": "kube-system"},
            data=shoot_info(values),
            opts=pulumi.ResourceOptions(parent=self, provider=self.access.provider, depends_on=list(self.access.ready)),
        )

        self.status = ShootStatus(
            f"{name}-status",
            namespace=values.project_namespace,
            shoot=values.name,
            seed_namespace=values.seed_namespace,
            expected_nodes=sum(p.minimum for p in values.workers),
            garden_kubeconfig=garden.cluster.kubeconfig,
            seed_kubeconfig=seed.cluster.kubeconfig,
            shoot_kubeconfig=self.access.kubeconfig,
            kubernetes_version=values.kubernetes_version,
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[shoot_record, system, *done.values(), *self.access.ready, *node_configs]
            ),
        )
        self.register_outputs(
            {"endpoint": self.access.endpoint, "state": self.status.state, "ranges": self.network.ranges}
        )

    def _node_configuration(
        self, name: str, values: ShootValues, namespace: k8s.core.v1.Namespace, on_seed: pulumi.ResourceOptions
    ) -> list[pulumi.Resource]:
        """Per pool: the provision user data in the seed namespace, the reconcile OSC in the shoot."""
        made: list[pulumi.Resource] = []
        for pool in values.workers:
            node = nodeagent.node_values(values, pool)
            made.append(
                k8s.core.v1.Secret(
                    f"{name}-user-data-{pool.name}",
                    metadata={
                        "name": f"user-data-{pool.name}",
                        "namespace": values.seed_namespace,
                        "labels": {"worker.gardener.cloud/pool": pool.name},
                    },
                    string_data={"userData": nodeagent.user_data(nodeagent.provision_osc(node))},
                    opts=pulumi.ResourceOptions.merge(on_seed, pulumi.ResourceOptions(depends_on=[namespace])),
                )
            )
            config = nodeagent.reconcile_osc(node)
            made.append(
                OperatingSystemConfig(
                    f"{name}-osc-{pool.name}",
                    kubeconfig=self.access.kubeconfig,
                    pool=pool.name,
                    secret=nodeagent.osc_secret(config, pool.name),
                    unit_hashes=osc.unit_hashes(config),
                    file_hashes=osc.file_hashes(config),
                    stopped_units=[u.name for u in config.units if u.command is osc.Command.STOP or not u.enable],
                    opts=pulumi.ResourceOptions(parent=self, depends_on=list(self.access.ready)),
                )
            )
        return made
