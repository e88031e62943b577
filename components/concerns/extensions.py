"""A seed's extension installations: namespaces and workloads in the seed, and each one's own garden access.

With garden access, as gardenlet and gardener-resource-manager's token requestor do it: the installation's
ServiceAccount `extension-<name>` in the garden namespace `seed-<seed>`, a token requested for it and kept in the
seed as `garden-access-extension` (renewed at 80% of its lifetime, components/reconciler/access_token.py), the
generic garden kubeconfig that reads that token, and both projected into the workloads
(components/render/extensions.py). The Seed record's operation `renew-garden-access-secrets` renews all of its
tokens at once (components/reconciler/seed_operation.py). The identity may read and update its seed's records and
those of the shoots on it, and nothing else (components/render/extension_rights.py): the seed grants its own, each
shoot its own.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components.bundles import ClusterAccess, GardenAccess
from components.concerns.objects import KubeObject, Record, secret_object
from components.naming import backup_entry
from components.plan.values import ExtensionValues, ExtensionWorkloadValues, SeedValues, ShootValues
from components.reconciler.access_token import DEFAULT_EXPIRATION_S, AccessToken
from components.reconciler.kube import certificate_authority
from components.reconciler.object_set import ObjectSet
from components.reconciler.seed_operation import SeedOperation
from components.render import extension_rights, extensions


def install_extensions(
    name: str, values: SeedValues, seed: ClusterAccess, garden: GardenAccess, parent: pulumi.Resource
) -> None:
    """Each installation's namespace and workloads, with garden access where the spec asks for it."""
    # Named objects: a replacement that created first would apply the new object and then delete it.
    on_seed = pulumi.ResourceOptions(
        parent=parent, provider=seed.provider, depends_on=list(seed.ready), delete_before_replace=True
    )
    garden_namespace = _garden_namespace(name, values, garden, parent)
    tokens: list[pulumi.Resource] = []
    for ext in values.extensions:
        prefix = f"{name}-extension-{ext.name}"
        namespace = KubeObject(f"{prefix}-namespace", extensions.seed_namespace(ext), on_seed)
        in_namespace = pulumi.ResourceOptions.merge(on_seed, pulumi.ResourceOptions(depends_on=[namespace]))
        generic: pulumi.Output[str] | None = None
        waits: list[pulumi.Resource] = []
        if ext.garden_access and garden_namespace is not None:
            generic, waits = _garden_access(prefix, values.name, ext, seed, garden, garden_namespace, in_namespace)
            tokens.append(waits[0])
        after = pulumi.ResourceOptions.merge(in_namespace, pulumi.ResourceOptions(depends_on=waits))
        for w in ext.workloads:
            KubeObject(f"{prefix}-{w.name}", _workload(ext, w, generic), after)
    if tokens:
        # After every token of the seed: a requested renewal of them all is done, its annotation goes.
        SeedOperation(
            f"{name}-seed-operation",
            kubeconfig=garden.cluster.reach,
            seed=values.name,
            opts=pulumi.ResourceOptions(parent=parent, depends_on=tokens),
        )


def _garden_namespace(
    name: str, values: SeedValues, garden: GardenAccess, parent: pulumi.Resource
) -> KubeObject | None:
    """The seed's namespace in the garden, made when one of its installations has garden access."""
    with_access = next((e for e in values.extensions if e.garden_access), None)
    if with_access is None:
        return None
    namespace = extensions.garden_namespace(values.name, with_access.garden_namespace)
    on_garden = pulumi.ResourceOptions(
        parent=parent, provider=garden.cluster.provider, depends_on=list(garden.api), delete_before_replace=True
    )
    for obj in extension_rights.seed_rights(values):
        KubeObject(f"{name}-extensions-{obj['kind'].lower()}", obj, on_garden)
    return KubeObject(f"{name}-garden-namespace", namespace, on_garden)


def grant_shoot_records(
    name: str, shoot: ShootValues, garden: GardenAccess, record: Record, parent: pulumi.Resource
) -> None:
    """Its seed's extensions' rights on the shoot's Shoot record and BackupEntry, in its project namespace."""
    if not shoot.garden_accounts:
        return
    rights: pulumi.Input[list[dict[str, Any]]] = extension_rights.shoot_rights(shoot, None)
    if shoot.backup:
        # The entry's name holds the Shoot record's uid.
        tid = shoot.technical_id
        rights = record.metadata.apply(lambda m: extension_rights.shoot_rights(shoot, backup_entry(tid, m["uid"])))
    # One resource for the Role and its binding (an older arbor's `<shoot>-extensions-role`, `-rolebinding`).
    ObjectSet(
        f"{name}-extensions", kubeconfig=garden.cluster.reach, cluster=garden.cluster.identifier, manifests=rights,
        # After the record, and so after the API (GardenAccess.project).
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[record]),
    )  # fmt: skip


def _garden_access(
    prefix: str,
    seed_name: str,
    ext: ExtensionValues,
    seed: ClusterAccess,
    garden: GardenAccess,
    garden_namespace: KubeObject,
    in_namespace: pulumi.ResourceOptions,
) -> tuple[pulumi.Output[str], list[pulumi.Resource]]:
    """The identity in the garden, its token kept in the seed, the generic kubeconfig; its name and what to await."""
    account = KubeObject(
        f"{prefix}-garden-serviceaccount",
        extensions.service_account(ext),
        pulumi.ResourceOptions(
            parent=in_namespace.parent, provider=garden.cluster.provider, depends_on=[garden_namespace]
        ),
    )
    access = extensions.access_secret(ext)
    token = AccessToken(
        f"{prefix}-garden-access",
        kubeconfig=garden.cluster.reach,
        namespace=ext.garden_namespace,
        service_account=ext.service_account,
        secret_name=access["metadata"]["name"],
        expiration_s=DEFAULT_EXPIRATION_S,
        secret_kubeconfig=seed.reach,
        secret_namespace=ext.namespace,
        secret_metadata={k: access["metadata"][k] for k in ("labels", "annotations")},
        seed=seed_name,
        opts=pulumi.ResourceOptions.merge(in_namespace, pulumi.ResourceOptions(depends_on=[account])),
    )
    secret = pulumi.Output.all(garden.cluster.endpoint, garden.cluster.kubeconfig).apply(
        lambda got: extensions.generic_kubeconfig_secret(ext, got[0], certificate_authority(got[1]))
    )
    generic = secret_object(
        f"{prefix}-generic-garden-kubeconfig",
        {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "immutable": True,
         "metadata": secret.apply(lambda s: s["metadata"]), "data": secret.apply(lambda s: s["data"])},
        in_namespace,
    )  # fmt: skip
    return secret.apply(lambda s: str(s["metadata"]["name"])), [token, generic]


def _workload(ext: ExtensionValues, w: ExtensionWorkloadValues, generic: pulumi.Output[str] | None) -> dict[str, Any]:
    """A workload's object, its pod spec waiting for the generic kubeconfig's name where it is injected."""
    shape = extensions.workload(ext, w, None)
    if generic is None:
        return shape
    return {**shape, "spec": generic.apply(lambda n: extensions.workload(ext, w, n)["spec"])}
