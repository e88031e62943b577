"""The first boot of a self-hosted cloud shoot's control-plane machine (Gardener's `gardenadm init`), rendered pure.

No API serves before the first control-plane machine runs one, so that machine cannot fetch its OSC from the
shoot as node-agent does. arbor keeps what it needs as a *bundle* in the cloud's secret store (Secret Manager,
Secrets Manager), readable only by the machine's own identity: the control-plane pool's reconcile OSC (static pods,
their credentials, kubelet, containerd), kubelet's client kubeconfig, and node-init with a bootstrap token. The
user data holds no secret, only how to fetch the bundle with the instance's credentials. The bundle writes the
files and units and starts them: kubelet runs the static pods, and node-init hands over to node-agent once the
API it now serves knows the token, as on every other machine.
"""

from __future__ import annotations

import base64
import gzip
import posixpath
import shlex
from dataclasses import dataclass

from components import yaml_text
from components.plan.bootstrap import BOOTSTRAP_TOKEN, MACHINE_NAME
from components.plan.osc import Command, File, ImageRef, Inline, OperatingSystemConfig, Unit

# Where the fetched bundle is unpacked and run; the marker keeps a reboot from running it again (GCP runs its
# startup script at every boot).
FIRST_BOOT_DIR = "/var/lib/arbor-first-boot"
DONE = f"{FIRST_BOOT_DIR}/done"
# What the secret stores accept as one secret's value (Secret Manager and Secrets Manager alike).
BUNDLE_BUDGET = 64 * 1024
# kubelet's client kubeconfig (the `--kubeconfig` its unit runs with) and certificate: on a first control-plane
# machine no API can sign a bootstrap request before kubelet has started the API server's static pod (kubeadm
# writes them as well). The certificate sits where kubelet's own bootstrap puts it, so kubelet renews it in place.
KUBELET_KUBECONFIG = "/var/lib/kubelet/kubeconfig-real"
KUBELET_CLIENT_PEM = "/var/lib/kubelet/pki/kubelet-client-current.pem"
# The environment file kubelet's unit reads its extra flags from.
KUBELET_EXTRA_ARGS = "/var/lib/kubelet/extra_args"
# The AWS CLI image the fetch runs in, through containerd (machine images carry containerd, not the CLI).
AWS_CLI_IMAGE = "public.ecr.aws/aws-cli/aws-cli:2.31.3"
SECRET_MANAGER_API = "https://secretmanager.googleapis.com/v1"
GCP_METADATA = "http://metadata.google.internal/computeMetadata/v1"
SYSTEMD_DIR = "/etc/systemd/system"
# node-init starts node-agent once its bootstrap succeeds (the API serves, the token is known); started earlier,
# node-agent would only fail without credentials.
STARTED_BY_NODE_INIT = "gardener-node-agent.service"


@dataclass(frozen=True)
class KubeletClient:
    """What kubelet starts with on a first control-plane machine: the API, its CA, its client certificate and key."""

    server: str
    ca: str
    cert: str
    key: str


def kubelet_kubeconfig(kubelet: KubeletClient) -> str:
    """The kubeconfig kubelet starts with: the API and its CA inline, its certificate and key from the PEM file."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "default", "cluster": {"server": kubelet.server, "certificate-authority-data": _b64(kubelet.ca)}}
        ],
        "users": [
            {"name": "default", "user": {"client-certificate": KUBELET_CLIENT_PEM, "client-key": KUBELET_CLIENT_PEM}}
        ],
        "contexts": [{"name": "default", "context": {"cluster": "default", "user": "default"}}],
        "current-context": "default",
    }
    return yaml_text.dump(config, sort_keys=False)


class BundleTooLargeError(ValueError):
    """A packed bundle over what a secret store holds."""


def _b64(text: str) -> str:
    """`text` in base64, as the script decodes it (no quoting can break it)."""
    return base64.b64encode(text.encode()).decode()


def _at(path: str) -> str:
    """A path below `$ROOT` (empty on a machine; a directory where the tests run the script)."""
    return '"$ROOT"' + shlex.quote(path)


def _file_lines(f: File) -> list[str]:
    """Shell lines writing one OSC file: inline content decoded, an image's file extracted with containerd."""
    path = _at(f.path)
    lines = [f"mkdir -p {_at(posixpath.dirname(f.path))}"]
    if isinstance(f.content, Inline):
        data = f.content.data if f.content.encoding == "b64" else _b64(f.content.data)
        lines.append(f"echo '{data}' | base64 -d > {path}")
    elif isinstance(f.content, ImageRef):
        image, inner = shlex.quote(f.content.image), shlex.quote(f.content.file_path_in_image.lstrip("/"))
        lines.append(f"extract {image} {inner} {path}")
    else:
        raise ValueError(f"{f.path}: a first boot writes inline and image files, not {type(f.content).__name__}")
    return [*lines, f"chmod {f.permissions:o} {path}"]


def _unit_lines(u: Unit) -> list[str]:
    """Shell lines writing one unit and its drop-ins (a unit without content is the image's own)."""
    unit = f"{SYSTEMD_DIR}/{u.name}"
    lines = [f"mkdir -p {_at(unit + '.d')}"] if u.drop_ins else []
    if u.content is not None:
        lines.append(f"echo '{_b64(u.content)}' | base64 -d > {_at(unit)}")
    return lines + [f"echo '{_b64(d.content)}' | base64 -d > {_at(f'{unit}.d/{d.name}')}" for d in u.drop_ins]


EXTRACT = """extract() {
  local mnt
  mnt=$(mktemp -d)
  until ctr images pull --hosts-dir /etc/containerd/certs.d "$1" >/dev/null; do sleep 5; done
  ctr images mount "$1" "$mnt" >/dev/null
  install -D -m0755 "$mnt/$2" "$3"
  ctr images unmount "$mnt" >/dev/null
  rmdir "$mnt"
}"""


def bundle(
    reconcile: OperatingSystemConfig,
    provision: OperatingSystemConfig,
    kubelet: KubeletClient,
    machine: str,
    token: str,
) -> str:
    """The script a first control-plane machine runs: the pool's OSC and node-init applied, the units started.

    The provision OSC's placeholders are filled here (MCM fills them for its machines): `machine` is the instance's
    name, `token` a bootstrap token (`<id>.<secret>`) the shoot gets once its API serves.
    """
    lines = ["#!/bin/bash", "set -o errexit -o nounset -o pipefail", 'ROOT="${ROOT:-}"', EXTRACT]
    for f in reconcile.files:
        lines += _file_lines(f)
    lines += _file_lines(File(KUBELET_CLIENT_PEM, Inline(kubelet.cert + kubelet.key)))
    lines += _file_lines(File(KUBELET_KUBECONFIG, Inline(kubelet_kubeconfig(kubelet))))
    # kubelet registers as the machine its certificate names (`system:node:<machine>`), not as the host's name (an
    # EC2 host is `ip-<address>`): the node authorizer admits no other.
    lines += _file_lines(File(KUBELET_EXTRA_ARGS, Inline(f"KUBELET_EXTRA_ARGS=--hostname-override={machine}\n")))
    for f in provision.files:
        content = f.content
        if isinstance(content, Inline) and content.transmit_unencoded:
            filled = content.data.replace(BOOTSTRAP_TOKEN, token).replace(MACHINE_NAME, machine)
            content = Inline(filled)
        lines += _file_lines(File(f.path, content, f.permissions))
    units = [*reconcile.units, *provision.units]
    lines.append(f"mkdir -p {_at(SYSTEMD_DIR)} {_at(FIRST_BOOT_DIR)}")
    for u in units:
        lines += _unit_lines(u)
    lines.append("systemctl daemon-reload")
    lines += [f"systemctl enable --now {shlex.quote(u.name)} --no-block" for u in units if _started(u)]
    lines.append(f"touch {_at(DONE)}")
    return "\n".join(lines) + "\n"


def _started(u: Unit) -> bool:
    """Whether the first boot starts `u`: enabled, not stopped, not left to node-init."""
    return u.enable and u.command is not Command.STOP and u.name != STARTED_BY_NODE_INIT


def packed(script: str, where: str) -> str:
    """The bundle as the secret store keeps it: gzip (no timestamp, so equal bundles pack equally), base64."""
    data = base64.b64encode(gzip.compress(script.encode(), mtime=0)).decode()
    if len(data) > BUNDLE_BUDGET:
        raise BundleTooLargeError(
            f"{where}: the first-boot bundle packs to {len(data)} bytes, more than {BUNDLE_BUDGET}"
        )
    return data


def _run_fetched(fetch: str) -> str:
    """The user data around a fetch command that prints the packed bundle: once, retried until it succeeds."""
    return f"""#!/bin/bash
set -o errexit -o nounset -o pipefail
ROOT="${{ROOT:-}}"
[ -e {_at(DONE)} ] && exit 0
mkdir -p {_at(FIRST_BOOT_DIR)}
chmod 700 {_at(FIRST_BOOT_DIR)}
until packed=$({fetch}); do sleep 5; done
printf '%s' "$packed" | base64 -d | gunzip > {_at(FIRST_BOOT_DIR + "/apply.sh")}
exec bash {_at(FIRST_BOOT_DIR + "/apply.sh")}
"""


def gcp_user_data(secret: str) -> str:
    """A GCP instance's startup script: its service account's token from the metadata server reads `secret`.

    `secret` is the Secret Manager resource (`projects/<number>/secrets/<id>`); the latest version is read.
    """
    token = (
        f"curl -sSf -H 'Metadata-Flavor: Google' {GCP_METADATA}/instance/service-accounts/default/token"
        ' | sed -n \'s/.*"access_token": *"\\([^"]*\\)".*/\\1/p\''
    )
    access = f"{SECRET_MANAGER_API}/{secret}/versions/latest:access"
    fetch = (
        f'curl -sSf -H "Authorization: Bearer $({token})" {shlex.quote(access)}'
        ' | sed -n \'s/.*"data": *"\\([^"]*\\)".*/\\1/p\' | base64 -d'
    )
    return _run_fetched(fetch)


def aws_user_data(secret_arn: str, region: str) -> str:
    """An EC2 instance's user data: the AWS CLI, run by containerd on the host network, reads `secret_arn`.

    Its credentials are the instance profile's, through IMDSv2 (the instance requires session tokens).
    """
    # A failed try may leave its container behind, which would refuse the next one's name.
    cli = (
        "{ ctr containers rm arbor-first-boot >/dev/null 2>&1 || true; } && "
        f"ctr images pull {AWS_CLI_IMAGE} >/dev/null && ctr run --rm --net-host {AWS_CLI_IMAGE} arbor-first-boot "
        f"aws secretsmanager get-secret-value --region {shlex.quote(region)} --secret-id {shlex.quote(secret_arn)} "
        "--query SecretString --output text"
    )
    return _run_fetched(cli)
