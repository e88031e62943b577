"""The Shoot component (`arbor:shoot:Shoot`): a cluster users get, in the order of Gardener's reconciliation.

Flow, each step depending only on what it needs: the Shoot record -> infrastructure (the shoot's network: VPC,
subnets, gateways; nothing on local) -> credentials (PKI) -> the control plane -> the shoot's API and nodes
(workers) -> system components in kube-system -> health (ShootStatus writes the record's status).

A hosted shoot's control plane runs in its seed namespace: etcd main and events, then kube-apiserver, then
kube-controller-manager and kube-scheduler, with their credentials as Secrets beside them. A self-hosted
shoot's control plane is the same pod specs as static pods (components/render/staticpods.py), delivered with their
credentials as files through the control-plane pool's OperatingSystemConfig. The backup entry joins the flow
with the backup issue.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.bundles import ClusterAccess, GardenAccess, NetworkAccess, SeedAccess
from components.concerns.access import admin_kubeconfig, register_client_ca
from components.concerns.encryption import EtcdEncryption, etcd_encryption, rewrite
from components.concerns.objects import KubeObject
from components.concerns.shoot_pki import ShootPki, issue_shoot_pki
from components.concerns.workers import Workers
from components.plan import network
from components.plan.values import ShootValues
from components.providers.contract import InfrastructureProvider
from components.reconciler.kube import certificate_authority
from components.reconciler.osc_secret import OperatingSystemConfig
from components.reconciler.shoot_status import ShootStatus
from components.render import api, controlplane, machines, nodeagent, osc, pki, staticpods, topology


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
    """One shoot, hosted on a seed or self-hosted."""

    values: ShootValues
    access: ClusterAccess
    network: NetworkAccess
    network_table: str
    credentials: ShootPki
    encryption: EtcdEncryption
    admin_kubeconfig: pulumi.Output[str]
    status: ShootStatus

    def __init__(
        self,
        name: str,
        values: ShootValues,
        infra: InfrastructureProvider,
        garden: GardenAccess,
        seed: SeedAccess | None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("arbor:shoot:Shoot", name, None, opts)
        self.values = values
        shoot_record = KubeObject(
            f"{name}-record",
            api.shoot_record(values),
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=garden.cluster.provider,
                depends_on=[*garden.api, garden.namespaces[values.project]],
            ),
        )

        # Infrastructure first: the control plane and nodes need the shoot's network.
        network_plan = network.plan_network(values.networking)
        self.network_table = network.table(network_plan)
        # The table reaches reviewers in the preview (and its JSON) as an info diagnostic on the shoot.
        pulumi.log.info(network.PLAN_PREFIX + self.network_table, resource=self)
        self.network = infra.network(network_plan, parent=self)

        # Credentials: the shoot's PKI; its client CA is also kept in the garden, where members cannot read it.
        self.credentials = issue_shoot_pki(name, values, parent=self)
        register_client_ca(
            f"{name}-ca-client",
            values,
            self.credentials[pki.CA_CLIENT],
            pulumi.ResourceOptions(
                parent=self,
                provider=garden.cluster.provider,
                depends_on=[*garden.api, garden.namespaces[values.project]],
            ),
        )
        client_ca = self.credentials[pki.CA_CLIENT]
        self.encryption = etcd_encryption(name, values.encryption, parent=self)
        sources = self._sources(self.credentials)
        sources[controlplane.ENCRYPTION_SECRET] = pulumi.Output.all(
            **{controlplane.ENCRYPTION_KEY: self.encryption.config}
        )
        shoot_api = functools.partial(
            infra.shoot_api,
            values.cluster,
            self,
            addresses=network.node_networks(values.networking, values.cluster.nodes),
            encryption_config=self.encryption.config,
            client_ca=client_ca.cert,
            machines=machines.local_nodes(values),
        )
        workers: list[pulumi.Resource] = []
        if seed is None:
            control_plane: list[pulumi.Resource] = []
            self.access = shoot_api(list(self.network.ready))
            static = self._static_pods(values, sources)
            node_configs = self._node_configuration(name, values, static)
            for pool in (p for p in values.workers if p.control_plane):
                control_plane += infra.publish_static_pods(self.access, pool.name, static.manifests, self)
        else:
            done = self._hosted_control_plane(name, values, seed, sources)
            control_plane = list(done.values())
            # The shoot's API and nodes come once its control plane runs.
            after = [done["kube-controller-manager"], done["kube-scheduler"]]
            self.access = shoot_api(after)
            node_configs = self._node_configuration(name, values, None)
            # Machines join once the shoot's API serves: MCM and its sidecar work against it.
            workers = Workers(
                f"{name}-workers",
                values,
                infra,
                seed,
                self.network,
                self.access,
                sources,
                after=control_plane,
                opts=pulumi.ResourceOptions(parent=self),
            ).deployments
        # Objects of resources whose encryption changed are written again once the API server runs the new config.
        rewritten = rewrite(name, self.encryption, self.access.kubeconfig, parent=self)
        self.admin_kubeconfig = admin_kubeconfig(
            name,
            client_ca,
            server=self.access.endpoint,
            server_ca=self.access.kubeconfig.apply(certificate_authority),
            expiration_s=values.credentials.admin_kubeconfig_expiration_s,
            parent=self,
        )
        in_shoot = pulumi.ResourceOptions(
            parent=self, provider=self.access.provider, depends_on=list(self.access.ready)
        )
        system = k8s.core.v1.ConfigMap(
            f"{name}-shoot-info",
            metadata={"name": "shoot-info", "namespace": "kube-system"},
            data=shoot_info(values),
            opts=in_shoot,
        )
        # kube-apiserver reaches kubelets (logs, exec, port-forward) with its kubelet client certificate's user.
        k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-kube-apiserver-kubelet",
            metadata={"name": "system:kube-apiserver:kubelet"},
            role_ref={
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "system:kubelet-api-admin",
            },
            subjects=[{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": pki.KUBELET_CLIENT_USER}],
            opts=in_shoot,
        )

        self.status = ShootStatus(
            f"{name}-status",
            namespace=values.project_namespace,
            shoot=values.name,
            seed_namespace=values.seed_namespace,
            expected_nodes=sum(p.minimum for p in values.workers),
            garden_kubeconfig=garden.cluster.kubeconfig,
            seed_kubeconfig=seed.cluster.kubeconfig if seed else None,
            shoot_kubeconfig=self.access.kubeconfig,
            kubernetes_version=values.kubernetes_version,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[
                    shoot_record,
                    system,
                    rewritten,
                    *control_plane,
                    *self.access.ready,
                    *node_configs,
                    *workers,
                ],
            ),
        )
        self.register_outputs(
            {"endpoint": self.access.endpoint, "state": self.status.state, "ranges": self.network.ranges}
        )

    def _sources(self, credentials: ShootPki) -> dict[str, pulumi.Output[dict[str, str]]]:
        """The contents of every Secret the control plane mounts, by Secret name (credentials, encryption)."""
        secrets = credentials.secrets()
        # Only kube-controller-manager signs with the client CA: it alone gets the key, in a Secret of its own.
        signer = secrets[pki.CA_CLIENT]
        secrets[pki.CA_CLIENT_SIGNER] = signer
        secrets[pki.CA_CLIENT] = {k: v for k, v in signer.items() if k != pki.KEY_CA_KEY}
        return {name: pulumi.Output.all(**data) for name, data in secrets.items()}

    def _hosted_control_plane(
        self, name: str, values: ShootValues, seed: SeedAccess, sources: Mapping[str, pulumi.Output[dict[str, str]]]
    ) -> dict[str, pulumi.Resource]:
        """Secrets, ConfigMaps and workloads in the seed namespace, each component after what it talks to."""
        namespace = seed.namespaces[values.seed_namespace]
        on_seed = pulumi.ResourceOptions(parent=self, provider=seed.cluster.provider)
        in_namespace = pulumi.ResourceOptions.merge(on_seed, pulumi.ResourceOptions(depends_on=[namespace]))
        secrets: list[pulumi.Resource] = [
            k8s.core.v1.Secret(
                f"{name}-secret-{secret}",
                metadata={"name": secret, "namespace": values.seed_namespace},
                string_data=data,
                opts=in_namespace,
            )
            for secret, data in sources.items()
        ]
        # A control plane that is not ready in five minutes will not be; fail the update rather than wait ten.
        wait = pulumi.CustomTimeouts(create="5m", update="5m")
        done: dict[str, pulumi.Resource] = {}
        for workload in controlplane.control_plane(values, topology.hosted(values)):
            configs = [
                k8s.core.v1.ConfigMap(
                    f"{name}-{c['metadata']['name']}", metadata=c["metadata"], data=c["data"], opts=in_namespace
                )
                for c in workload.config_maps
            ]
            first = [namespace, *self.network.ready, *secrets, *configs]
            after = [*(done[d] for d in workload.depends_on), *configs] if workload.depends_on else first
            opts = pulumi.ResourceOptions.merge(on_seed, pulumi.ResourceOptions(depends_on=after, custom_timeouts=wait))
            if workload.service:
                service = workload.service
                k8s.core.v1.Service(
                    f"{name}-{service['metadata']['name']}",
                    metadata=service["metadata"],
                    spec=service["spec"],
                    opts=in_namespace,
                )
            # Checksums of what the pods mount: a rotated credential rolls exactly the components that use it.
            contents = {c["metadata"]["name"]: pulumi.Output.from_input(c["data"]) for c in workload.config_maps}
            contents |= {n: sources[n] for n in controlplane.mounted(workload) if n in sources}
            rendered = pulumi.Output.all(**contents).apply(functools.partial(controlplane.with_checksums, workload))
            kind = k8s.apps.v1.StatefulSet if workload.kind == "StatefulSet" else k8s.apps.v1.Deployment
            done[workload.component] = kind(
                f"{name}-{workload.component}",
                metadata=workload.object["metadata"],
                # Hashes reveal nothing of the credentials: the spec stays readable in the preview.
                spec=pulumi.Output.unsecret(rendered.apply(lambda o: o["spec"])),
                opts=opts,
            )
        return done

    def _static_pods(
        self, values: ShootValues, sources: Mapping[str, pulumi.Output[dict[str, str]]]
    ) -> StaticControlPlane:
        """The control plane as static pods: their OSC part and each manifest, once every source is known."""
        workloads = controlplane.control_plane(values, topology.static())
        config_maps = {c["metadata"]["name"]: c["data"] for w in workloads for c in w.config_maps}
        everything = pulumi.Output.all(**sources).apply(lambda got: {**config_maps, **got})
        pods = everything.apply(lambda got: staticpods.static_pods(workloads, got))
        manifests = {w.component: pods.apply(functools.partial(_manifest, w.component)) for w in workloads}
        return StaticControlPlane(part=pods.apply(staticpods.osc_part), manifests=manifests)

    def _node_configuration(
        self, name: str, values: ShootValues, static: StaticControlPlane | None
    ) -> list[pulumi.Resource]:
        """Per pool: the reconcile OSC (with the static pods on control-plane pools) and, self-hosted, the user data.

        A hosted shoot's user data is its machine classes' (concerns/workers.py); a self-hosted shoot's machines
        boot from the Secret in its own kube-system.
        """
        made: list[pulumi.Resource] = []
        for pool in values.workers:
            node = nodeagent.node_values(values, pool)
            if static:
                made.append(
                    k8s.core.v1.Secret(
                        f"{name}-user-data-{pool.name}",
                        metadata={
                            "name": f"user-data-{pool.name}",
                            "namespace": "kube-system",
                            "labels": {nodeagent.POOL_LABEL: pool.name},
                        },
                        string_data={"userData": nodeagent.user_data(nodeagent.provision_osc(node))},
                        opts=pulumi.ResourceOptions(
                            parent=self, provider=self.access.provider, depends_on=list(self.access.ready)
                        ),
                    )
                )
            extra = [static.part] if static and pool.control_plane else []
            config = pulumi.Output.all(*extra).apply(functools.partial(nodeagent.reconcile_osc, node))
            made.append(
                OperatingSystemConfig(
                    f"{name}-osc-{pool.name}",
                    kubeconfig=self.access.kubeconfig,
                    pool=pool.name,
                    secret=config.apply(functools.partial(_osc_secret, pool.name)),
                    unit_hashes=config.apply(osc.unit_hashes),
                    file_hashes=config.apply(osc.file_hashes),
                    stopped_units=config.apply(osc.stopped_units),
                    opts=pulumi.ResourceOptions(parent=self, depends_on=list(self.access.ready)),
                )
            )
        return made


def _manifest(component: str, pods: Sequence[staticpods.StaticPod]) -> dict[str, Any]:
    """The manifest of one component among the static pods."""
    return next(p.manifest for p in pods if p.name == component)


def _osc_secret(pool: str, config: osc.OperatingSystemConfig) -> dict[str, object]:
    """node-agent's Secret of a pool's OSC (pool first, for partial application)."""
    return nodeagent.osc_secret(config, pool)


@dataclass(frozen=True)
class StaticControlPlane:
    """A self-hosted control plane: the OSC part with every manifest and file, and each manifest by component."""

    part: pulumi.Output[osc.Part]
    manifests: dict[str, pulumi.Output[dict[str, Any]]]
