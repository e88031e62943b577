"""A hosted shoot's gardener-resource-manager and its KUBERNETES_SERVICE_HOST webhook (render/resource_manager.py).

Its identities first: the ServiceAccount `gardener-resource-manager` with its Role in the seed's shoot namespace
(source) and in the shoot's kube-system (target). Then the server: a process where the provider runs one (local),
else upstream's Deployment (resource_manager_deployment.py). Last, the registration in the shoot, which calls it:
with the server gone, pods are still admitted, without the env (failurePolicy Ignore). Self-hosted shoots get none.
"""

from __future__ import annotations

import base64

import pulumi

from components.bundles import ClusterAccess, SeedAccess
from components.concerns.objects import KubeObject
from components.concerns.resource_manager_deployment import deploy_resource_manager
from components.concerns.shoot_pki import ShootPki
from components.plan.values import ShootValues
from components.providers.contract import InfrastructureProvider
from components.render import pki
from components.render import resource_manager as grm


def _objects(prefix: str, objects: list[dict[str, object]], opts: pulumi.ResourceOptions) -> list[pulumi.Resource]:
    """Each object as a resource named by its kind."""
    return [KubeObject(f"{prefix}-{str(o['kind']).lower()}", o, opts) for o in objects]


def resource_manager(
    name: str,
    shoot: ShootValues,
    infra: InfrastructureProvider,
    seed: SeedAccess,
    shoot_api: ClusterAccess,
    credentials: ShootPki,
    parent: pulumi.Resource,
) -> list[pulumi.Resource]:
    """Identities, server and webhook registration of a hosted shoot's resource manager; what to wait for."""
    if shoot.service_host is None:
        return []
    prefix, ns = f"{name}-grm", shoot.seed_namespace
    # Named objects: a replacement that created first would apply the new object and then delete it.
    on_seed = pulumi.ResourceOptions(
        parent=parent, provider=seed.cluster.provider, delete_before_replace=True,
        depends_on=[seed.namespaces[ns], *seed.resource_crds, *seed.cluster.ready],
    )  # fmt: skip
    in_shoot = pulumi.ResourceOptions(
        parent=parent, provider=shoot_api.provider, depends_on=list(shoot_api.ready), delete_before_replace=True
    )
    identities = _objects(f"{prefix}-source", [grm.service_account(ns), *grm.source_rights(ns)], on_seed)
    identities += _objects(f"{prefix}-target", [grm.service_account("kube-system"), *grm.target_rights()], in_shoot)
    serving = credentials[pki.RESOURCE_MANAGER_SERVER].string_data()
    server = infra.resource_manager(shoot, seed, shoot_api, serving, parent, identities) or deploy_resource_manager(
        shoot, seed, shoot_api, serving, parent, identities
    )
    ca = serving[pki.KEY_CA_CERT].apply(lambda pem: base64.b64encode(pem.encode()).decode())
    shape = grm.webhook_configuration("", "")
    webhooks = pulumi.Output.all(server.url, ca).apply(
        lambda got: grm.webhook_configuration(got[0], got[1])["webhooks"]
    )
    after = pulumi.ResourceOptions.merge(in_shoot, pulumi.ResourceOptions(depends_on=list(server.resources)))
    registration = KubeObject(f"{prefix}-webhook", {**shape, "webhooks": webhooks}, after)
    return [*server.resources, registration]
