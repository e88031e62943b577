"""node-agent's access to a shoot: its ServiceAccount in kube-system and the token Secret it reads with it.

Without Gardener's NodeAgentAuthorizer, node-agent (by its bootstrap token) reads the Secret `gardener-node-agent`
(key `token`) and keeps the token in `/var/lib/gardener-node-agent/credentials/token`; gardener-resource-manager's
token-requestor keeps that Secret, and makes the ServiceAccount it names. Here an AccessToken does both
(components/reconciler/access_token.py), so no other resource reaches the shoot's API for it.
"""

from __future__ import annotations

import pulumi

from components.bundles import ClusterAccess
from components.reconciler.access_token import DEFAULT_EXPIRATION_S, AccessToken
from components.render.nodeagent import NODE_AGENT_ACCESS

NAMESPACE = "kube-system"


def node_agent_access(name: str, access: ClusterAccess, *, parent: pulumi.Resource) -> list[pulumi.Resource]:
    """node-agent's ServiceAccount and its token in the Secret node-agent reads, once the shoot's API serves."""
    token = AccessToken(
        f"{name}-node-agent-token",
        kubeconfig=access.reach,
        namespace=NAMESPACE,
        service_account=NODE_AGENT_ACCESS,
        secret_name=NODE_AGENT_ACCESS,
        expiration_s=DEFAULT_EXPIRATION_S,
        makes_service_account=True,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=list(access.ready)),
    )
    return [token]
