"""Rules about RBAC: who is bound to what, in the garden, seeds and shoots."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arbor_policies.resource import Resource, items, mapping

RBAC = "kubernetes:rbac.authorization.k8s.io/v1:"
BINDINGS = (f"{RBAC}ClusterRoleBinding", f"{RBAC}RoleBinding")
ROLES = (f"{RBAC}ClusterRole", f"{RBAC}Role")
CLUSTER_ADMIN = "cluster-admin"


def _subjects(r: Resource) -> list[Mapping[str, Any]]:
    """The subjects of a binding."""
    return [mapping(s) for s in items(r.props.get("subjects"))]


def _subject(s: Mapping[str, Any]) -> str:
    """`Group platform-team`, `ServiceAccount kube-system/x`."""
    name = "/".join(str(p) for p in (s.get("namespace"), s.get("name")) if p)
    return f"{s.get('kind')} {name}"


def cluster_admin_bindings(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """cluster-admin is bound only to the subjects in `allowedSubjects` (names), never to a project's members."""
    if r.type not in BINDINGS or mapping(r.props.get("roleRef")).get("name") != CLUSTER_ADMIN:
        return []
    allowed = {str(s) for s in items(config.get("allowedSubjects"))}
    return [
        f"{r.label()} binds cluster-admin to {_subject(s)}: bind a role with the verbs it needs, or add "
        f"'{s.get('name')}' to this policy's `allowedSubjects`"
        for s in _subjects(r)
        if str(s.get("name")) not in allowed
    ]


def public_subjects(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """No binding names a group every caller is in (`publicSubjects`), but of a role meant for all (`publicRoles`)."""
    if r.type not in BINDINGS or mapping(r.props.get("roleRef")).get("name") in items(config.get("publicRoles")):
        return []
    public = {str(s) for s in items(config.get("publicSubjects"))}
    return [
        f"{r.label()} grants its role to {_subject(s)}, which every caller of the API is in: name the users, "
        "groups or service accounts that need it"
        for s in _subjects(r)
        if str(s.get("name")) in public
    ]


def wildcard_rules(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """No role grants every resource of every API group: such a rule is cluster-admin under another name."""
    if r.type not in ROLES:
        return []
    problems = []
    for i, rule in enumerate(mapping(x) for x in items(r.props.get("rules"))):
        if "*" in items(rule.get("apiGroups")) and "*" in items(rule.get("resources")):
            problems.append(
                f"{r.label()} rule {i} grants every resource of every API group ('*' and '*'): list the groups "
                "and resources the role needs"
            )
    return problems
