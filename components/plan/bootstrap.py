"""What a new machine boots with, derived by the planner: a pool's provision OSC and its user data.

node-init pulls node-agent's image, installs its binary and hands over to `gardener-node-agent bootstrap`, which
fetches the pool's reconcile OSC (render/nodeagent.py) from the shoot. The bootstrap token and the machine name
are placeholders that machine-controller-manager substitutes per machine. The user data is a value of the pool:
the budget check, the machine classes and a self-hosted shoot's Secret all read the one the plan holds.
"""

from __future__ import annotations

import base64
import posixpath

from components import naming, yaml_text
from components.plan.nodeagent_release import CLUSTER_CA_FILE, NODE_AGENT_DIR, release
from components.plan.osc import File, Inline, OperatingSystemConfig, Part, Purpose, Unit, b64, merge
from components.plan.quantity import canonical
from components.plan.values import NodeValues

NODE_AGENT_IMAGE = "europe-docker.pkg.dev/gardener-project/releases/gardener/node-agent"


def secret_name(v: NodeValues) -> str:
    """`gardener-node-agent-<pool>-<hash16>`: the hash covers exactly what must roll the pool's machines."""
    minor = ".".join(v.kubernetes_version.split(".")[:2])
    # Quantities by value, as Gardener's key sums reservations as Quantities: `1024Mi` for `1Gi` rolls nothing.
    reserved = "-".join(canonical(v.kube_reserved.get(k, "")) for k in ("cpu", "memory", "pid", "ephemeral-storage"))
    eviction = "-".join(
        canonical(v.eviction_hard.get(k, ""))
        for k in (
            "imagefs.available",
            "imagefs.inodesFree",
            "memory.available",
            "nodefs.available",
            "nodefs.inodesFree",
        )
    )
    data = [
        minor,
        v.machine_type,
        v.image + v.image_version,
        v.cri,
        f"ca-rotation-{v.ca_rotation}",
        reserved,
        eviction,
        str(v.kubelet.get("cpuManagerPolicy", "")),
    ]
    return f"gardener-node-agent-{v.pool}-{naming.checksum(data)[:16]}"


def node_agent_files(v: NodeValues, **extra: object) -> tuple[File, ...]:
    """node-agent's configuration where its release reads it, and the API's CA in the file it names from v1.147.

    The configuration names the API, the Secret node-agent reads its OSC from and the kubelet's version (node-agent
    refuses it without `kubernetesVersion`); up to v1.146 it carries the CA as `caBundle`, a []byte in node-agent's
    Go type, so base64 in YAML. hack/nodeagent-validate checks the pinned release's layout with node-agent's own
    decoder and validation.
    """
    layout = release(v.node_agent_version)
    api: dict[str, str] = {"server": v.api_server}
    if layout.ca_file:
        api["caFile"] = CLUSTER_CA_FILE
    else:
        api["caBundle"] = base64.b64encode(v.ca_bundle.encode()).decode()
    osc_controller = {"secretName": secret_name(v), "kubernetesVersion": v.kubernetes_version}
    config = {
        "apiVersion": "nodeagent.config.gardener.cloud/v1alpha1",
        "kind": "NodeAgentConfiguration",
        "apiServer": api,
        "controllers": {"operatingSystemConfig": osc_controller},
        **extra,
    }
    files = (File(layout.config_path, Inline(yaml_text.dump(config, sort_keys=True))),)
    return (*files, File(CLUSTER_CA_FILE, b64(v.ca_bundle), 0o640)) if layout.ca_file else files


# What the cloud accepts as user data; over it, the machine cannot be created.
USER_DATA_BUDGET = {"aws": 16 * 1024, "gcp": 256 * 1024, "local": 256 * 1024}


BOOTSTRAP_TOKEN = "<<BOOTSTRAP_TOKEN>>"


MACHINE_NAME = "<<MACHINE_NAME>>"


def _init_script(v: NodeValues) -> str:
    """node-init: pull the node-agent image, install its binary, hand over to `gardener-node-agent bootstrap`."""
    image = f"{NODE_AGENT_IMAGE}:{v.node_agent_version}"
    return f"""#!/bin/bash
set -o errexit -o nounset -o pipefail
image={image}
mnt=$(mktemp -d)
trap 'ctr images unmount "$mnt" >/dev/null 2>&1 || true; rm -rf "$mnt"' EXIT
until ctr images pull --hosts-dir /etc/containerd/certs.d "$image" >/dev/null; do sleep 5; done
ctr images mount "$image" "$mnt"
install -D -m0755 "$mnt/gardener-node-agent" /opt/bin/gardener-node-agent
exec /opt/bin/gardener-node-agent bootstrap --config-dir={NODE_AGENT_DIR}
"""


def provision_osc(v: NodeValues) -> OperatingSystemConfig:
    """The OSC of a new machine: only node-init, with the bootstrap token and machine name as placeholders."""
    files = (
        File(f"{NODE_AGENT_DIR}/init.sh", b64(_init_script(v)), 0o755),
        *node_agent_files(v, bootstrap={"kubeletDataVolumeSize": 0}),
        # Raw in the user data: machine-controller-manager replaces the placeholders by plain string search.
        File(f"{NODE_AGENT_DIR}/credentials/bootstrap-token", Inline(BOOTSTRAP_TOKEN, transmit_unencoded=True)),
        File(f"{NODE_AGENT_DIR}/machine-name", Inline(MACHINE_NAME, transmit_unencoded=True)),
    )
    unit = Unit(
        "gardener-node-init.service",
        content=(
            "[Unit]\nDescription=Downloads the gardener-node-agent binary and starts its bootstrap\n"
            "After=network-online.target\nWants=network-online.target\n[Service]\nType=oneshot\n"
            f"Restart=on-failure\nRestartSec=5\nExecStart={NODE_AGENT_DIR}/init.sh\n"
            "[Install]\nWantedBy=multi-user.target\n"
        ),
        file_paths=tuple(f.path for f in files),
    )
    return merge(f"{secret_name(v)}-provision", Purpose.PROVISION, [Part(units=(unit,), files=files)])


def user_data(o: OperatingSystemConfig) -> str:
    """A provision OSC as the script a machine runs at first boot: write the files and units, start them."""
    lines = ["#!/bin/bash", "set -o errexit -o nounset -o pipefail"]
    for f in o.files:
        assert isinstance(f.content, Inline), "provision files are inline"
        lines += [f"mkdir -p '{posixpath.dirname(f.path)}'", *_write(f.path, f.content),
                  f"chmod {f.permissions:o} '{f.path}'"]  # fmt: skip
    for u in o.units:
        content = base64.b64encode((u.content or "").encode()).decode()
        lines += [f"echo '{content}' | base64 -d > '/etc/systemd/system/{u.name}'"]
    lines += ["systemctl daemon-reload"] + [f"systemctl enable --now '{u.name}' --no-block" for u in o.units]
    return "\n".join(lines) + "\n"


def _write(path: str, content: Inline) -> list[str]:
    """Shell lines writing one file: raw (no newline added) where MCM substitutes it, else decoded from base64."""
    if content.transmit_unencoded:
        # printf of a quoted literal: the placeholder stays a plain string MCM finds and replaces.
        assert "'" not in content.data, "raw user-data files hold no single quotes"
        return [f"printf '%s' '{content.data}' > '{path}'"]
    data = content.data if content.encoding == "b64" else base64.b64encode(content.data.encode()).decode()
    return [f"echo '{data}' | base64 -d > '{path}'"]


def pool_user_data(node: NodeValues) -> str:
    """A pool's user data: its provision OSC as the script its new machines run at first boot."""
    return user_data(provision_osc(node))


class UserDataTooLargeError(ValueError):
    """User data over what the provider accepts."""


def check_user_data(provider: str, data: str, where: str) -> None:
    """Refuses user data over the provider's budget, naming the pool, the size and the budget."""
    size, budget = len(data.encode()), USER_DATA_BUDGET[provider]
    if size > budget:
        raise UserDataTooLargeError(f"{where}: user data is {size} bytes, more than {provider}'s {budget}")
