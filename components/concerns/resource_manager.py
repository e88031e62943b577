"""A hosted shoot's gardener-resource-manager and its KUBERNETES_SERVICE_HOST webhook (render/resource_manager.py).

Its identities first: the ServiceAccount `gardener-resource-manager` with its Role in the seed's shoot namespace
(source) and in the shoot's kube-system (target). Then the server: a process where the provider runs one (local),
else upstream's Deployment (resource_manager_deployment.py). Last, the registration in the shoot, which calls it:
with the server gone, pods are still admitted, without the env (failurePolicy Ignore). Self-hosted shoots get none.
"""

from __future__ import annotations

import base64

import pulumi

from components.bundles import ClusterAccess, SeedAccess, ServingSecret
from components.concerns.resource_manager_deployment import deploy_resource_manager
from components.concerns.shoot_pki import CredentialOutputs, ShootPki
from components.plan.values import ShootValues
from components.providers.contract import InfrastructureProvider
from components.reconciler.object_set import ObjectSet
from components.render import pki
from components.render import resource_manager as grm
from components.render.objects import CHECKSUM_ONLY


def serving_secret(certificate: CredentialOutputs) -> ServingSecret:
    """A certificate that writes its Secret, as its server reads it there: the Secret, its issuer, its checksum."""
    assert certificate.ca is not None and certificate.checksums is not None  # a leaf that writes its Secret
    name = certificate.credential.name
    return ServingSecret(name, certificate.ca, certificate.secret_data()[name][CHECKSUM_ONLY])


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
    # Each cluster's objects as one resource that keeps them once (reconciler/object_set.py).
    after_seed = [seed.namespaces[ns], *seed.resource_crds, *seed.cluster.ready]
    in_shoot = list(shoot_api.ready)
    identities: list[pulumi.Resource] = [
        ObjectSet(f"{prefix}-source", kubeconfig=seed.cluster.reach, cluster=seed.cluster.identifier,
                  manifests=[grm.service_account(ns), *grm.source_rights(ns)],
                  opts=pulumi.ResourceOptions(parent=parent, depends_on=after_seed)),
        ObjectSet(f"{prefix}-target", kubeconfig=shoot_api.reach, cluster=shoot_api.identifier,
                  manifests=[grm.service_account("kube-system"), *grm.target_rights()],
                  opts=pulumi.ResourceOptions(parent=parent, depends_on=in_shoot)),
    ]  # fmt: skip
    serving = serving_secret(credentials[pki.RESOURCE_MANAGER_SERVER])
    server = infra.resource_manager(shoot, seed, shoot_api, serving, parent, identities) or deploy_resource_manager(
        shoot, seed, shoot_api, serving, parent, identities
    )
    ca = serving.ca.apply(lambda pem: base64.b64encode(pem.encode()).decode())
    # The CA is public: the registration is readable in the preview.
    registration = pulumi.Output.unsecret(pulumi.Output.all(server.url, ca).apply(
        lambda got: [grm.webhook_configuration(got[0], got[1])]))  # fmt: skip
    webhook = ObjectSet(
        f"{prefix}-webhook",
        kubeconfig=shoot_api.reach,
        cluster=shoot_api.identifier,
        manifests=registration,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[*in_shoot, *server.resources]),
    )
    return [*server.resources, webhook]
