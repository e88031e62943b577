"""A kubeconfig whose user reads a token from a file (pure): how a token requestor's tokens are used.

The file is renewed beside the kubeconfig (a projected Secret in a pod, a file of a process arbor runs); clients
read it again as it changes, so the kubeconfig itself never changes with the token.
"""

from __future__ import annotations

import base64

from components import yaml_text


def token_file_kubeconfig(
    server: str, ca_pem: str, token_file: str, cluster: str, user: str, ca_file: str | None = None
) -> str:
    """The kubeconfig of `server` (trusting `ca_pem`, or the CA file `ca_file`) whose user reads `token_file`."""
    trust = (
        {"certificate-authority": ca_file}
        if ca_file
        else {"certificate-authority-data": base64.b64encode(ca_pem.encode()).decode()}
    )
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster, "cluster": {"server": server, **trust}}],
        "users": [{"name": user, "user": {"tokenFile": token_file}}],
        "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": user}}],
        "current-context": cluster,
    }  # fmt: skip
    return yaml_text.dump(config, sort_keys=False)
