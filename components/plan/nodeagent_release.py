"""What gardener-node-agent's releases read differently: where its configuration is and how it gets the API's CA.

node-agent reads `config.yaml` up to v1.124 and `config-<its version>.yaml` from v1.125 (`GetConfigFilePath`);
up to v1.146 the configuration carries the CA as `apiServer.caBundle`, from v1.147 it names the file
`cluster-ca.crt` in `apiServer.caFile`, and the OSC writes that file. Read from gardener's module at each release.
"""

from __future__ import annotations

from dataclasses import dataclass

NODE_AGENT_DIR = "/var/lib/gardener-node-agent"
CLUSTER_CA_FILE = f"{NODE_AGENT_DIR}/cluster-ca.crt"
VERSIONED_CONFIG_SINCE = (1, 125)
CA_FILE_SINCE = (1, 147)


@dataclass(frozen=True)
class Release:
    """The file layout of one node-agent release."""

    config_path: str
    ca_file: bool


def release(version: str) -> Release:
    """The layout of node-agent `version` (`vMAJOR.MINOR.PATCH`, as the spec requires)."""
    major, minor = (int(part) for part in version.lstrip("v").split(".")[:2])
    versioned = (major, minor) >= VERSIONED_CONFIG_SINCE
    return Release(
        config_path=f"{NODE_AGENT_DIR}/config-{version}.yaml" if versioned else f"{NODE_AGENT_DIR}/config.yaml",
        ca_file=(major, minor) >= CA_FILE_SINCE,
    )
