"""The machine CRDs machine-controller-manager works on (group `machine.sapcloud.io`), as MCM ships them; pure.

The files under `machine-crds/` are MCM's own, `kubernetes/crds/machine.sapcloud.io_<plural>.yaml` of its Go module
at `pins.MCM_VERSION`, copied byte for byte by hack/machine_crds.py (a unit test compares them with the module).
So the API server keeps exactly the fields MCM writes (a MachineSet's `machineSetCondition` and `lastOperation`,
say), and a new MCM pin brings its CRDs with it.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

from components import yaml_text

Object = dict[str, Any]
GROUP = "machine.sapcloud.io"
VERSION = "v1alpha1"
CRD_DIR = Path(__file__).parent / "machine-crds"
# Classes first: what the others reference.
PLURALS = ("machineclasses", "machines", "machinesets", "machinedeployments")


def file_name(plural: str) -> str:
    """The file of a CRD, named as in MCM's module."""
    return f"{GROUP}_{plural}.yaml"


@functools.cache
def _load(plural: str) -> Object:
    """A CRD as its checked-in file holds it, read once."""
    crd: Object = yaml_text.load((CRD_DIR / file_name(plural)).read_text())
    return crd


def crds() -> tuple[Object, ...]:
    """The four machine CRDs, each a copy the caller may change."""
    return tuple(copy.deepcopy(_load(plural)) for plural in PLURALS)
