"""A hosted shoot's gardener-resource-manager as upstream runs it: a Deployment in its seed namespace, and a Service.

Its serving certificate is the shoot's Secret `gardener-resource-manager-server` (the control plane's credentials);
its seed identity is its pod's ServiceAccount (a Role on the shoot namespace alone); its shoot identity a token of
`kube-system/gardener-resource-manager` that arbor requests and renews into `shoot-access-gardener-resource-manager`
beside it, read through the generic token kubeconfig, as upstream's token requestor keeps it. Where no seed runs
pods (local), the provider runs the binary instead (components/providers/local_resource_manager.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi

from components import naming, pins
from components.bundles import ClusterAccess, ResourceManagerServing, SeedAccess, ServingSecret
from components.concerns.objects import KubeObject, secret_object
from components.plan.values import ShootValues
from components.reconciler.access_token import DEFAULT_EXPIRATION_S, AccessToken
from components.render import resource_manager as grm


def deploy_resource_manager(
    shoot: ShootValues,
    seed: SeedAccess,
    shoot_api: ClusterAccess,
    serving: ServingSecret,
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource] = (),
) -> ResourceManagerServing:
    """The token, Secrets, configuration, Deployment and Service in the shoot's seed namespace."""
    prefix, ns, host = f"{parent._name}-grm", shoot.seed_namespace, shoot.service_host or ""
    on_seed = pulumi.ResourceOptions(
        parent=parent, provider=seed.cluster.provider, depends_on=list(depends_on), delete_before_replace=True
    )
    token = AccessToken(
        f"{prefix}-shoot-access",
        kubeconfig=shoot_api.reach,
        namespace=grm.TARGET_NAMESPACES[0],
        service_account=grm.NAME,
        secret_name=grm.SHOOT_ACCESS_SECRET,
        expiration_s=DEFAULT_EXPIRATION_S,
        secret_kubeconfig=seed.cluster.reach,
        secret_namespace=ns,
        secret_metadata=grm.shoot_access_metadata(ns),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on)),
    )
    kubeconfig = serving.ca.apply(
        lambda ca: grm.generic_kubeconfig_secret(ns, shoot.topology.apiserver, ca)["stringData"]
    )
    shape = grm.generic_kubeconfig_secret(ns, shoot.topology.apiserver, "")
    generic = secret_object(f"{prefix}-generic-kubeconfig", {**shape, "stringData": kubeconfig}, on_seed)
    config = grm.config_map(ns, host)
    checksum = naming.checksum([config["data"]["config.yaml"].encode()])
    objects = [KubeObject(f"{prefix}-config", config, on_seed), token, generic]
    after = pulumi.ResourceOptions.merge(on_seed, pulumi.ResourceOptions(depends_on=objects))
    deployment = KubeObject(f"{prefix}-deployment", grm.deployment(ns, pins.RESOURCE_MANAGER.ref, checksum), after)
    service = KubeObject(f"{prefix}-service", grm.service(ns), on_seed)
    return ResourceManagerServing(url=pulumi.Output.from_input(grm.service_url(ns)), resources=[deployment, service])
