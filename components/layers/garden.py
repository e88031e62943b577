"""The Garden component (`arbor:garden:Garden`): the cluster where projects, seeds and shoots are recorded.

It installs arbor's API (CRDs), the project roles, and per project a Project record, the namespace
`garden-<project>` and the members' role bindings: viewers read, admins manage shoots.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components import naming
from components.bundles import GardenAccess
from components.concerns.encryption import etcd_encryption, rewrite
from components.concerns.objects import KubeObject
from components.concerns.shoot_pki import SecretTarget
from components.kinds import Role
from components.plan.values import GardenValues, ProjectValues
from components.providers.contract import InfrastructureProvider
from components.render import api

# What each role may do in its project's namespace. Resources are listed one by one, never "*": the namespace
# also holds InternalSecrets (a shoot's client CA, components/concerns/access.py), which no project member may read.
ROLE_RULES = {
    Role.ADMIN: [
        {"apiGroups": [naming.API_GROUP], "resources": ["shoots"], "verbs": ["*"]},
        {"apiGroups": [naming.API_GROUP], "resources": ["shoots/status"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list", "watch"]},
    ],
    Role.VIEWER: [
        {"apiGroups": [naming.API_GROUP], "resources": ["shoots", "shoots/status"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list", "watch"]},
    ],
}


def role_name(role: Role) -> str:
    """The ClusterRole of a project role, e.g. `arbor.dev:project:admin`."""
    return f"{naming.API_GROUP}:project:{role.value}"


class Garden(pulumi.ComponentResource):
    """The garden layer."""

    access: GardenAccess

    def __init__(
        self, name: str, values: GardenValues, infra: InfrastructureProvider, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("arbor:garden:Garden", name, None, opts)
        # On a machine arbor writes to (local), the keys write the configuration where the API server reads it.
        target = SecretTarget.on_machine(infra, values.cluster)
        encryption = etcd_encryption(name, values.encryption, self, target) if values.encryption else None
        config = encryption.source() if encryption else None
        cluster = infra.cluster(values.cluster, parent=self, encryption_config=config)
        if encryption:
            rewrite(name, encryption, cluster.reach, self)
        on_garden = pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=list(cluster.ready))
        crds: list[pulumi.Resource] = [
            KubeObject(f"{name}-crd-{crd['spec']['names']['plural']}", crd, on_garden) for crd in api.crds()
        ]
        roles = {
            role: k8s.rbac.v1.ClusterRole(
                f"{name}-role-{role.value}", metadata={"name": role_name(role)}, rules=rules, opts=on_garden
            )
            for role, rules in ROLE_RULES.items()
        }
        namespaces = {p.name: self._project(name, p, crds, roles, on_garden) for p in values.projects}
        self.access = GardenAccess(cluster=cluster, api=crds, namespaces=namespaces)
        self.register_outputs({"endpoint": cluster.endpoint, "projects": sorted(namespaces)})

    def _project(
        self,
        name: str,
        project: ProjectValues,
        crds: list[pulumi.Resource],
        roles: dict[Role, k8s.rbac.v1.ClusterRole],
        on_garden: pulumi.ResourceOptions,
    ) -> k8s.core.v1.Namespace:
        """A project's record, namespace and role bindings; returns the namespace."""
        prefix = f"{name}-project-{project.name}"
        record = api.project_record(project)
        KubeObject(prefix, record, pulumi.ResourceOptions.merge(on_garden, pulumi.ResourceOptions(depends_on=crds)))
        namespace = k8s.core.v1.Namespace(
            f"{prefix}-namespace",
            metadata={"name": project.namespace, "labels": {naming.label("project"): project.name}},
            # A project namespace holds the shoot records: deleting it by accident would orphan every shoot. It is
            # made after the API, so what the project holds waits for the namespace alone (GardenAccess.project).
            opts=pulumi.ResourceOptions.merge(
                on_garden, pulumi.ResourceOptions(delete_before_replace=True, depends_on=crds)
            ),
        )
        for role in Role:
            subjects = [
                {"kind": m.kind, "name": m.name}
                | (
                    {"namespace": project.namespace}
                    if m.kind == "ServiceAccount"
                    else {"apiGroup": "rbac.authorization.k8s.io"}
                )
                for m in project.members
                if m.role is role
            ]
            if not subjects:
                continue
            k8s.rbac.v1.RoleBinding(
                f"{prefix}-{role.value}s",
                metadata={"name": f"{role_name(role)}s", "namespace": project.namespace},
                role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name(role)},
                subjects=subjects,
                opts=pulumi.ResourceOptions.merge(
                    on_garden, pulumi.ResourceOptions(depends_on=[namespace, roles[role]])
                ),
            )
        return namespace


# The outputs of a garden stack a seed stack reads: every cluster's kubeconfig, and the garden's reference.
KUBECONFIGS, GARDEN_REACH = "kubeconfigs", "gardenReach"
# The garden stack's local object store, for its seed stacks' buckets: where it is and its root user (secret).
STORE_ACCESS = "objectStoreAccess"


class GardenReference(pulumi.ComponentResource):
    """A seed stack's garden: the garden stack's, reached through a StackReference (`arbor:garden:Garden` too).

    Its Kubernetes provider has the garden component's name and settings, so the garden objects a seed and its
    shoots keep (their records, the client CAs' InternalSecrets) stay with the provider they were made with.
    """

    access: GardenAccess

    def __init__(
        self,
        name: str,
        values: GardenValues,
        infra: InfrastructureProvider,
        stack: str,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("arbor:garden:Garden", name, None, opts)
        garden = pulumi.StackReference(f"{name}-stack", stack_name=stack, opts=pulumi.ResourceOptions(parent=self))
        key = values.cluster.key
        kubeconfig: pulumi.Output[str] = pulumi.Output.secret(garden.require_output(KUBECONFIGS)).apply(
            lambda k: str(k[key])
        )
        # A local garden's kubeconfig file (a path, in the clear as in the garden stack); a cloud's provider ignores it.
        reach = garden.get_output(GARDEN_REACH).apply(lambda r: str(r or ""))
        cluster = infra.reference(values.cluster, self, kubeconfig, reach)
        self.access = GardenAccess(cluster=cluster, api=[], namespaces={})
        self._stack = garden
        self.register_outputs({"stack": stack})

    def object_store(self) -> pulumi.Output[dict[str, str]]:
        """The garden stack's local object store (STORE_ACCESS), where this stack's seeds keep their buckets."""
        return pulumi.Output.secret(self._stack.require_output(STORE_ACCESS))
