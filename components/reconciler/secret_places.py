"""Where a credential writes its Secrets: a cluster's namespace, or a machine's directory.

A hosted shoot's credentials write Secrets in its seed namespace. A self-hosted shoot has no seed, and its
control plane starts before its API can hold a Secret: as kubeadm and gardenadm keep a first control-plane
machine's PKI on its disk, its credentials write each Secret as a directory of files, one per key (the layout of a
mounted Secret volume), in the machine's directory (a local shoot's: beside its cluster, on this machine).

Both places read and write a Secret's `data` as the API returns it (base64 values), so hashes and checksums are the
same wherever a Secret is.
"""

from __future__ import annotations

import base64
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from components.reconciler.files import write_file
from components.reconciler.kube import Kube, KubeError, secret_path

# The input that names a machine's directory in place of a cluster's kubeconfig and namespace.
DIRECTORY = "directory"


class Place(Protocol):
    """Where Secrets are read and written."""

    def find(self, name: str) -> dict[str, str] | None:
        """A Secret's `data` (base64 values); None when it is gone."""
        ...

    def put(self, name: str, data: Mapping[str, str]) -> None:
        """Creates or replaces a Secret with `data` (base64 values)."""
        ...

    def remove_if(self, name: str, holds: Any) -> None:
        """Removes a Secret while `holds(data)` says it still holds what was written; any other stays."""
        ...

    def describe(self, name: str) -> str:
        """The Secret as an error names it."""
        ...


class Namespace:
    """A cluster's namespace (a hosted shoot's seed namespace)."""

    def __init__(self, kube: Kube, namespace: str) -> None:
        self.kube, self.namespace = kube, namespace

    def find(self, name: str) -> dict[str, str] | None:
        """The Secret's `data` as the cluster has it."""
        secret = self.kube.find(secret_path(self.namespace, name))
        return None if secret is None else dict(secret.get("data") or {})

    def put(self, name: str, data: Mapping[str, str]) -> None:
        """An Opaque Secret, created or replaced."""
        body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": self.namespace},
                "type": "Opaque", "data": dict(data)}  # fmt: skip
        self.kube.create_or_replace(secret_path(self.namespace), body)

    def remove_if(self, name: str, holds: Any) -> None:
        """Deleted at the version read, so a Secret written again since (no longer ours) stays."""
        path = secret_path(self.namespace, name)
        secret = self.kube.find(path)
        if secret is None or not holds(secret.get("data") or {}):
            return
        try:
            self.kube.delete_if(path, secret.get("metadata", {}).get("resourceVersion"))
        except KubeError as err:
            if err.status != 409:  # written again since it was read: no longer ours
                raise

    def describe(self, name: str) -> str:
        """`Secret <namespace>/<name>`."""
        return f"Secret {self.namespace}/{name}"


class Directory:
    """A machine's directory: a Secret is `<directory>/<name>/<key>`, each file readable by its owner only."""

    def __init__(self, directory: str) -> None:
        self.root = Path(directory)

    def find(self, name: str) -> dict[str, str] | None:
        """Each file of the Secret's directory, base64-encoded."""
        folder = self.root / name
        if not folder.is_dir():
            return None
        files = sorted(f for f in folder.iterdir() if f.is_file() and not f.name.startswith("."))
        return {f.name: base64.b64encode(f.read_bytes()).decode() for f in files}

    def put(self, name: str, data: Mapping[str, str]) -> None:
        """Each key's file written atomically (files.write_file); files of keys it no longer has removed."""
        folder = self.root / name
        folder.mkdir(parents=True, exist_ok=True)
        for made in (self.root, folder):
            made.chmod(0o700)
        for key, value in data.items():
            write_file(folder / key, base64.b64decode(value).decode())
        for stale in (f for f in folder.iterdir() if f.is_file() and f.name not in data):
            stale.unlink()

    def remove_if(self, name: str, holds: Any) -> None:
        """The Secret's directory removed while it holds what was written."""
        data = self.find(name)
        if data is not None and holds(data):
            shutil.rmtree(self.root / name, ignore_errors=True)

    def describe(self, name: str) -> str:
        """`Secret <name> in <directory>`."""
        return f"Secret {name} in {self.root}"


def place_of(props: Mapping[str, Any]) -> Place:
    """The place a resource's inputs name: a machine's directory, or a cluster's kubeconfig and namespace."""
    if props.get(DIRECTORY):
        return Directory(str(props[DIRECTORY]))
    return Namespace(Kube.from_kubeconfig(props["kubeconfig"]), props["namespace"])
