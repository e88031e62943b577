"""Pure kubeconfig rendering for cloud clusters: exec credentials, so nothing long-lived is stored."""

from __future__ import annotations

import base64
from typing import Any

from components import yaml_text


def exec_kubeconfig(name: str, server: str, ca_data: str, command: str, args: list[str]) -> str:
    """A kubeconfig whose user runs `command args` for a token (gke-gcloud-auth-plugin, aws eks get-token)."""
    config: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
        "users": [
            {
                "name": name,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": command,
                        "args": args,
                        "interactiveMode": "Never",
                        "provideClusterInfo": True,
                    }
                },
            }
        ],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
    }
    return yaml_text.dump(config, sort_keys=False)


def client_certificate_kubeconfig(name: str, server: str, ca_pem: str, cert_pem: str, key_pem: str) -> str:
    """A kubeconfig of a client certificate: for an API arbor serves and issues certificates for itself."""

    def data(pem: str) -> str:
        return base64.b64encode(pem.encode()).decode()

    config: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority-data": data(ca_pem)}}],
        "users": [
            {"name": name, "user": {"client-certificate-data": data(cert_pem), "client-key-data": data(key_pem)}}
        ],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
    }
    return yaml_text.dump(config, sort_keys=False)
