"""node-agent's access to a shoot: its ServiceAccount in kube-system and the token Secret it reads with it.

Without Gardener's NodeAgentAuthorizer, node-agent (by its bootstrap token) reads the Secret `gardener-node-agent`
(key `token`) and keeps the token in `/var/lib/gardener-node-agent/credentials/token`; gardener-resource-manager's
token-requestor keeps that Secret. Here an AccessToken does (components/reconciler/access_token.py).
"""

from __future__ import annotations

import pulumi

from components.bundles import ClusterAccess
from components.concerns.objects import KubeObject
from components.reconciler.access_token import DEFAULT_EXPIRATION_S, AccessToken
from components.render.nodeagent import NODE_AGENT_ACCESS

NAMESPACE = "kube-system"


def service_account() -> dict[str, object]:
    """node-agent's ServiceAccount; no pod mounts its token (as token-requestor makes it)."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": NODE_AGENT_ACCESS, "namespace": NAMESPACE},
        "automountServiceAccountToken": False,
    }


def node_agent_access(name: str, access: ClusterAccess, *, parent: pulumi.Resource) -> list[pulumi.Resource]:
    """The ServiceAccount, then its token in the Secret node-agent reads, once the shoot's API serves."""
    account = KubeObject(
        f"{name}-node-agent-serviceaccount",
        service_account(),
        pulumi.ResourceOptions(parent=parent, provider=access.provider, depends_on=list(access.ready)),
    )
    token = AccessToken(
        f"{name}-node-agent-token",
        kubeconfig=access.reach,
        namespace=NAMESPACE,
        service_account=NODE_AGENT_ACCESS,
        secret_name=NODE_AGENT_ACCESS,
        expiration_s=DEFAULT_EXPIRATION_S,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[account]),
    )
    return [account, token]
