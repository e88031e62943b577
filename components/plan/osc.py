"""OperatingSystemConfig (extensions.gardener.cloud/v1alpha1) as typed values, and restart planning.

Pure: node components return units and files; `merge` makes one OSC of them; `unit_hashes` gives each unit one
effective hash (its content, drop-ins and every file it lists in filePaths), so a diff of two OSCs names
exactly the units a change restarts; `restart_plan` is that diff, as gardener-node-agent acts on it
(docs/gardener/node-agent.md, section 4).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from components.naming import short_hash

API_VERSION = "extensions.gardener.cloud/v1alpha1"


class Purpose(StrEnum):
    """What an OSC is for: the user data of a new machine, or the configuration node-agent keeps applied."""

    PROVISION = "provision"
    RECONCILE = "reconcile"


class Command(StrEnum):
    """What node-agent does with a unit."""

    START = "start"
    RESTART = "restart"
    STOP = "stop"


@dataclass(frozen=True)
class Inline:
    """File content given in the OSC itself."""

    data: str
    encoding: str = ""  # "" (plain) or "b64"
    # Written as it is into user data (Gardener's `transmitUnencoded`): MCM substitutes placeholders in the raw text.
    transmit_unencoded: bool = False

    def to_object(self) -> dict[str, Any]:
        """The OSC `content` of a file."""
        content: dict[str, Any] = {"inline": {"encoding": self.encoding, "data": self.data}}
        if self.transmit_unencoded:
            content["transmitUnencoded"] = True
        return content

    def digest_source(self) -> str:
        """What a change of this content is detected by."""
        return f"inline:{self.encoding}:{self.data}"


@dataclass(frozen=True)
class ImageRef:
    """File content taken from an OCI image (node-agent extracts it)."""

    image: str
    file_path_in_image: str

    def to_object(self) -> dict[str, Any]:
        """The OSC `content` of a file."""
        return {"imageRef": {"image": self.image, "filePathInImage": self.file_path_in_image}}

    def digest_source(self) -> str:
        """What a change of this content is detected by: the image reference itself."""
        return f"image:{self.image}:{self.file_path_in_image}"


@dataclass(frozen=True)
class SecretRef:
    """File content from a Secret; `checksum` is the checksum of the referenced data, so changes are seen."""

    name: str
    data_key: str
    checksum: str

    def to_object(self) -> dict[str, Any]:
        """The OSC `content` of a file."""
        return {"secretRef": {"name": self.name, "dataKey": self.data_key}}

    def digest_source(self) -> str:
        """What a change of this content is detected by."""
        return f"secret:{self.name}:{self.data_key}:{self.checksum}"


Content = Inline | ImageRef | SecretRef


@dataclass(frozen=True)
class File:
    """A file node-agent writes."""

    path: str
    content: Content
    permissions: int = 0o600

    def to_object(self) -> dict[str, Any]:
        """The OSC shape of the file."""
        return {"path": self.path, "permissions": self.permissions, "content": self.content.to_object()}


@dataclass(frozen=True)
class DropIn:
    """A systemd drop-in of a unit."""

    name: str
    content: str


@dataclass(frozen=True)
class Unit:
    """A systemd unit node-agent manages; `file_paths` are the files whose change restarts it."""

    name: str
    content: str | None = None
    command: Command = Command.START
    enable: bool = True
    drop_ins: tuple[DropIn, ...] = ()
    file_paths: tuple[str, ...] = ()

    def to_object(self) -> dict[str, Any]:
        """The OSC shape of the unit."""
        obj: dict[str, Any] = {"name": self.name, "command": self.command.value, "enable": self.enable}
        if self.content is not None:
            obj["content"] = self.content
        if self.drop_ins:
            obj["dropIns"] = [{"name": d.name, "content": d.content} for d in self.drop_ins]
        if self.file_paths:
            obj["filePaths"] = list(self.file_paths)
        return obj


@dataclass(frozen=True)
class Part:
    """What one node component contributes: its units and files."""

    units: tuple[Unit, ...] = ()
    files: tuple[File, ...] = ()


@dataclass(frozen=True)
class OperatingSystemConfig:
    """One OSC: units and files sorted by name and path, so equal configurations render equally."""

    name: str
    purpose: Purpose
    units: tuple[Unit, ...] = ()
    files: tuple[File, ...] = ()
    extra_spec: Mapping[str, Any] = field(default_factory=dict)

    def to_object(self, namespace: str = "kube-system") -> dict[str, Any]:
        """The OSC as Gardener's API object."""
        spec: dict[str, Any] = {
            "purpose": self.purpose.value,
            **self.extra_spec,
            "units": [u.to_object() for u in self.units],
            "files": [f.to_object() for f in self.files],
        }
        return {
            "apiVersion": API_VERSION,
            "kind": "OperatingSystemConfig",
            "metadata": {"name": self.name, "namespace": namespace},
            "spec": spec,
        }


class MergeError(ValueError):
    """Two node components claim the same unit or file."""


def merge(
    name: str, purpose: Purpose, parts: Iterable[Part], extra_spec: Mapping[str, Any] | None = None
) -> OperatingSystemConfig:
    """One OSC of the components' parts; a unit or file defined twice is an error, never a silent overwrite."""
    units: dict[str, Unit] = {}
    files: dict[str, File] = {}
    for part in parts:
        for unit in part.units:
            if unit.name in units:
                raise MergeError(f"unit {unit.name} is defined twice")
            units[unit.name] = unit
        for file in part.files:
            if file.path in files:
                raise MergeError(f"file {file.path} is defined twice")
            files[file.path] = file
    for unit in units.values():
        missing = [p for p in unit.file_paths if p not in files]
        if missing:
            raise MergeError(f"unit {unit.name} lists files that no component writes: {', '.join(missing)}")
    return OperatingSystemConfig(
        name=name,
        purpose=purpose,
        units=tuple(units[n] for n in sorted(units)),
        files=tuple(files[p] for p in sorted(files)),
        extra_spec=dict(extra_spec or {}),
    )


def _digest(*parts: str) -> str:
    """A short, stable digest."""
    return short_hash(*parts, length=16)


def file_hashes(osc: OperatingSystemConfig) -> dict[str, str]:
    """One hash per file: its content source and permissions."""
    return {f.path: _digest(f.content.digest_source(), oct(f.permissions)) for f in osc.files}


def stopped_units(osc: OperatingSystemConfig) -> list[str]:
    """Units node-agent stops (or never enables) on the pool's nodes."""
    return [u.name for u in osc.units if u.command is Command.STOP or not u.enable]


def unit_hashes(osc: OperatingSystemConfig) -> dict[str, str]:
    """One effective hash per unit: content, command, enable, drop-ins and every file in its filePaths."""
    files = file_hashes(osc)
    return {
        u.name: _digest(
            u.content or "",
            u.command.value,
            str(u.enable),
            *(f"{d.name}={d.content}" for d in u.drop_ins),
            *(f"{p}={files[p]}" for p in u.file_paths),
        )
        for u in osc.units
    }


@dataclass(frozen=True)
class RestartPlan:
    """What node-agent does on a node when the OSC changes from old to new."""

    restart: tuple[str, ...] = ()
    stop: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()

    def to_object(self) -> dict[str, list[str]]:
        """The plan as plain lists, for outputs and summaries."""
        return {
            "restart": list(self.restart),
            "stop": list(self.stop),
            "write": list(self.write),
            "delete": list(self.delete),
        }


def restart_plan(
    old_units: Mapping[str, str],
    new_units: Mapping[str, str],
    old_files: Mapping[str, str],
    new_files: Mapping[str, str],
    stopped: Iterable[str] = (),
) -> RestartPlan:
    """The plan from old to new hashes.

    Changed or added units restart (or stop when their command is stop), removed units stop; changed or added
    files are written, removed files deleted.
    """
    stop_now = set(stopped)
    changed = {u for u, h in new_units.items() if old_units.get(u) != h}
    return RestartPlan(
        restart=tuple(sorted(changed - stop_now)),
        stop=tuple(sorted((set(old_units) - set(new_units)) | (changed & stop_now))),
        write=tuple(sorted(p for p, h in new_files.items() if old_files.get(p) != h)),
        delete=tuple(sorted(set(old_files) - set(new_files))),
    )


def plan_between(old: OperatingSystemConfig, new: OperatingSystemConfig) -> RestartPlan:
    """The restart plan between two OSCs."""
    stopped = [u.name for u in new.units if u.command is Command.STOP or not u.enable]
    return restart_plan(unit_hashes(old), unit_hashes(new), file_hashes(old), file_hashes(new), stopped)


def b64(text: str) -> Inline:
    """Inline content, base64-encoded as Gardener writes scripts and binaries' configs."""
    return Inline(data=base64.b64encode(text.encode()).decode(), encoding="b64")
