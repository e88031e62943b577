"""Control-plane workloads as static pods: the Deployment-to-static-pod translation; pure.

A self-hosted shoot runs its control plane on its control-plane pool's nodes. The same pod specs as a hosted
control plane (components/render/controlplane.py, with the `static` topology) become pod manifests under
`/etc/kubernetes/manifests/`, which kubelet runs. Volumes become host paths:

- a Secret or ConfigMap volume becomes the directory `/var/lib/static-pods/<pod>/<volume>/`, and each of its keys
  a file there (Secrets 0600, ConfigMaps 0644), so the container sees the same files at the same mount paths;
- an emptyDir becomes a directory of the same name that outlives the pod (etcd's data stays on the node).

Every manifest carries `arbor.dev/config-hash`, a hash of its spec and of every file it reads: a changed
credential changes exactly the manifests that mount it, and kubelet restarts exactly those pods. All of it is
delivered as one part of the control-plane pool's OperatingSystemConfig; node-agent writes the files.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components import naming, yaml_text
from components.plan.osc import Content, File, Inline, Part, SecretRef
from components.render.controlplane import Workload
from components.render.objects import CHECKSUM_ONLY

MANIFESTS_DIR = "/etc/kubernetes/manifests"
FILES_DIR = "/var/lib/static-pods"
CONFIG_HASH = naming.label("config-hash")
SECRET_MODE, CONFIG_MAP_MODE, MANIFEST_MODE = 0o600, 0o644, 0o600
# What each kind of pod volume becomes on the node, and the mode of its files.
HOST_PATH_TYPE = {"secret": "Directory", "configMap": "Directory", "emptyDir": "DirectoryOrCreate"}

# Sources of Secret and ConfigMap volumes: object name -> key -> content (or a Secret's checksum alone).
Sources = Mapping[str, Mapping[str, str]]
# The keys of each Secret written where the machine's files are, by name.
Held = Mapping[str, Sequence[str]]
EMPTY: Held = {}


class MissingSourceError(KeyError):
    """A pod mounts a Secret or ConfigMap that the sources do not hold."""


@dataclass(frozen=True)
class StaticPod:
    """One component as kubelet runs it from a manifest, with the files its volumes became."""

    name: str
    manifest: dict[str, Any]
    files: tuple[File, ...]

    @property
    def config_hash(self) -> str:
        """The hash in the manifest's annotations."""
        return str(self.manifest["metadata"]["annotations"][CONFIG_HASH])

    @property
    def manifest_path(self) -> str:
        """Where kubelet finds the manifest."""
        return f"{MANIFESTS_DIR}/{self.name}.yaml"


def _contents(source: str, data: Mapping[str, str], held: Held) -> list[tuple[str, Content]]:
    """Each key's content: inline, or a reference to the Secret where it is written (given by its checksum)."""
    if CHECKSUM_ONLY not in data:
        return [(key, Inline(text)) for key, text in sorted(data.items())]
    if source not in held:
        raise MissingSourceError(f"Secret {source} is given by its checksum, but not where it is held")
    return [(key, SecretRef(source, key, data[CHECKSUM_ONLY])) for key in sorted(held[source])]


def _volume_files(pod: str, volume: dict[str, Any], sources: Sources, held: Held) -> tuple[str, list[File]]:
    """The host directory of one volume and the files to write into it."""
    directory = f"{FILES_DIR}/{pod}/{volume['name']}"
    if "secret" in volume or "configMap" in volume:
        kind = "secret" if "secret" in volume else "configMap"
        source = volume["secret"]["secretName"] if kind == "secret" else volume["configMap"]["name"]
        if source not in sources:
            raise MissingSourceError(f"{pod}: volume {volume['name']} mounts {kind} {source}, which is not given")
        mode = SECRET_MODE if kind == "secret" else CONFIG_MAP_MODE
        files = [File(f"{directory}/{key}", content, mode) for key, content in _contents(source, sources[source], held)]
        return directory, files
    if "emptyDir" in volume:
        return directory, []
    raise ValueError(f"{pod}: volume {volume['name']} is neither a Secret, a ConfigMap nor an emptyDir")


def static_pod(workload: Workload, sources: Sources, held: Held = EMPTY) -> StaticPod:
    """The static pod of a control-plane workload: its manifest with host-path volumes, and their files.

    A Secret given by its checksum alone (written where the machine's files are) becomes a reference per key of
    `held` (its keys, by Secret name): Gardener's `secretRef` file content, resolved when the OSC is written.
    """
    name = workload.component
    template = workload.object["spec"]["template"]
    spec = copy.deepcopy(template["spec"])
    files: list[File] = []
    for volume in spec.get("volumes", []):
        kind = next(k for k in HOST_PATH_TYPE if k in volume)
        directory, written = _volume_files(name, volume, sources, held)
        files += written
        volume_name = volume["name"]
        volume.clear()
        volume.update(name=volume_name, hostPath={"path": directory, "type": HOST_PATH_TYPE[kind]})
    digest = hashlib.sha256(yaml_text.dump(spec, sort_keys=True).encode())
    for f in files:
        digest.update(f"{f.path}\n{f.content.digest_source()}\n".encode())
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "kube-system",
            "labels": dict(template["metadata"]["labels"]),
            "annotations": {CONFIG_HASH: digest.hexdigest()[:16]},
        },
        "spec": spec,
    }
    return StaticPod(name, manifest, tuple(files))


def static_pods(workloads: Iterable[Workload], sources: Sources, held: Held = EMPTY) -> tuple[StaticPod, ...]:
    """Every workload as a static pod."""
    return tuple(static_pod(w, sources, held) for w in workloads)


def osc_part(pods: Iterable[StaticPod]) -> Part:
    """The control-plane pool's OSC part: each manifest and the files of its volumes; no unit restarts for them."""
    files: list[File] = []
    for pod in pods:
        files += pod.files
        files.append(File(pod.manifest_path, Inline(yaml_text.dump(pod.manifest, sort_keys=False)), MANIFEST_MODE))
    return Part(files=tuple(files))
