"""What an extension's garden identity may do, as RBAC in the garden (pure): its seed's records and nothing else.

Upstream's SeedAuthorizer lets an extension act for its seed on the objects that belong to that seed. RBAC names
objects, not relations, so the plan computes the names from the landscape: per seed a ClusterRole for its Seed
record and BackupBuckets, per shoot on it a Role in the project namespace for the Shoot record and its BackupEntry.
Both may be read (get; list and watch of that one name) and updated, their status too. A list or watch of all
shoots, another seed's objects, project Secrets and InternalSecrets match no rule: RBAC cannot say "the shoots of
this seed" as the authorizer does, so it says only the names (docs/extensions.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.naming import API_GROUP
from components.plan.values import SeedValues, ShootValues

Object = dict[str, Any]
RBAC = "rbac.authorization.k8s.io"
# A rule with resourceNames allows list and watch only with the field selector metadata.name=<name>.
VERBS = ("get", "list", "watch", "update", "patch")


def seed_role_name(seed: str) -> str:
    """The ClusterRole (and binding) of a seed's extensions: `arbor.dev:extensions:seed:<seed>`."""
    return f"{API_GROUP}:extensions:seed:{seed}"


def shoot_role_name(shoot: str) -> str:
    """The Role (and binding) in a shoot's project namespace: `arbor.dev:extensions:shoot:<shoot>`."""
    return f"{API_GROUP}:extensions:shoot:{shoot}"


def _rule(plural: str, names: Sequence[str]) -> Object:
    """Read and update of the named objects of one kind of arbor's API, and of their status."""
    return {"apiGroups": [API_GROUP], "resources": [plural, f"{plural}/status"], "resourceNames": list(names),
            "verbs": list(VERBS)}  # fmt: skip


def _subjects(accounts: Sequence[tuple[str, str]]) -> list[Object]:
    """The ServiceAccount subjects of garden accounts (namespace, name)."""
    return [{"kind": "ServiceAccount", "namespace": ns, "name": name} for ns, name in accounts]


def _binding(kind: str, name: str, accounts: Sequence[tuple[str, str]], namespace: str | None = None) -> Object:
    """A (Cluster)RoleBinding of the role of the same name to the accounts."""
    metadata: Object = {"name": name} | ({"namespace": namespace} if namespace else {})
    role = {"apiGroup": RBAC, "kind": kind.removesuffix("Binding"), "name": name}
    return {"apiVersion": f"{RBAC}/v1", "kind": kind, "metadata": metadata, "roleRef": role,
            "subjects": _subjects(accounts)}  # fmt: skip


def seed_rights(seed: SeedValues) -> list[Object]:
    """The ClusterRole of the seed's own Seed record and BackupBuckets, bound to its extensions' accounts."""
    name = seed_role_name(seed.name)
    rules = [_rule("seeds", [seed.name])] + ([_rule("backupbuckets", [seed.backup.bucket])] if seed.backup else [])
    role = {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": name}, "rules": rules}
    return [role, _binding("ClusterRoleBinding", name, seed.garden_accounts)]


def shoot_rights(shoot: ShootValues, backup_entry: str | None) -> list[Object]:
    """The Role of the shoot's Shoot record and BackupEntry in its project namespace, bound to its seed's accounts."""
    name, namespace = shoot_role_name(shoot.name), shoot.project_namespace
    rules = [_rule("shoots", [shoot.name])] + ([_rule("backupentries", [backup_entry])] if backup_entry else [])
    metadata = {"name": name, "namespace": namespace}
    role = {"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": metadata, "rules": rules}
    return [role, _binding("RoleBinding", name, shoot.garden_accounts, namespace)]
