"""Which part of its landscape this stack converges (`arbor:shard`), and the landscape document it reads.

A stack without `arbor:shard` keeps its landscape in its own config (`arbor:landscape`) and is that landscape's
stack (with `stacks: perSeed`, its garden stack). A seed stack's config names its landscape and seed,
`arbor:shard: {landscape: <garden stack>, seed: <seed>}`; it reads the landscape from the garden stack's config file,
so every stack of a landscape (and a pull request's preview of each) sees the same document.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from components.checks import RefusalError
from components.checks.shards import LANDSCAPE, SHARD, landscape_record, shard_record
from components.layers.garden import GARDEN_REACH
from components.layers.landscape import Landscape
from components.plan.shards import Shard

PROJECT_FILE = Path("Pulumi.yaml")
LANDSCAPE_KEY = "arbor:landscape"
# A stack name as the engine allows it, and a seed's name (a DNS label, as the spec checks it).
STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
SEED_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def shard_of(raw: Any, stack: str) -> Shard:
    """The shard of `stack` from its `arbor:shard` config value (None: the landscape's own stack)."""
    if raw is None:
        return Shard(stack)
    if not isinstance(raw, dict):
        raise RefusalError("invalid arbor:shard", ["arbor:shard: must be a mapping {landscape: ..., seed: ...}"])
    lines = [f"arbor:shard.{k}: unknown field (landscape, seed)" for k in sorted(set(raw) - {"landscape", "seed"})]
    landscape, seed = raw.get("landscape"), raw.get("seed")
    if not (isinstance(landscape, str) and STACK_NAME.fullmatch(landscape)):
        lines.append("arbor:shard.landscape: must name the landscape's garden stack (letters, digits, `_.-`)")
    if not (isinstance(seed, str) and SEED_NAME.fullmatch(seed)):
        lines.append("arbor:shard.seed: must name a seed of the landscape (a DNS label)")
    if lines:
        raise RefusalError("invalid arbor:shard", lines)
    shard = Shard(str(landscape), str(seed))
    if shard.stack != stack:
        raise RefusalError("invalid arbor:shard", [f"arbor:shard: names the stack {shard.stack}, but this is {stack}"])
    return shard


def config_dir(project: Path = PROJECT_FILE) -> Path:
    """Where the project keeps its stacks' config files (Pulumi.yaml's stackConfigDir)."""
    settings = yaml.safe_load(project.read_text()) or {}
    return project.parent / str(settings.get("stackConfigDir") or ".")


def document(shard: Shard, directory: Path | None = None) -> Any:
    """A seed stack's landscape document: its garden stack's `arbor:landscape`, from that stack's config file."""
    path = (directory or config_dir()) / f"Pulumi.{shard.landscape}.yaml"
    try:
        config = (yaml.safe_load(path.read_text()) or {}).get("config") or {}
    except (OSError, yaml.YAMLError, AttributeError) as err:
        reason = getattr(err, "strerror", None) or type(err).__name__
        raise RefusalError("invalid arbor:shard", [f"arbor:shard.landscape: cannot read {path}: {reason}"]) from None
    if LANDSCAPE_KEY not in config:
        raise RefusalError("invalid arbor:shard", [f"arbor:shard.landscape: {path} has no {LANDSCAPE_KEY}"])
    return config[LANDSCAPE_KEY]


def identity(
    shard: Shard, previous: Mapping[str, Any], others: Callable[[str], Mapping[str, Any]], landscape: Landscape
) -> dict[str, object]:
    """What ties the stacks: a garden stack's identity and garden reference, or the garden a seed stack ran against."""
    if shard.seed is None:
        uid = uuid.uuid4().hex
        return {LANDSCAPE: landscape_record(shard.landscape, previous, uid), GARDEN_REACH: landscape.garden_reach()}
    garden = others(shard.landscape).get(LANDSCAPE)
    return {SHARD: shard_record(shard, garden.get("uid") if isinstance(garden, Mapping) else None)}
