"""A dynamic resource that keeps `size` bytes in the state, as one of arbor's resources keeps its inputs.

The content is derived from a seed (SHA-256 in counter mode, hex): as incompressible as keys and certificates, and
the same on every run, so a second `up` or a preview finds nothing to change.
"""

import hashlib
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider


def content(seed: str, size: int) -> str:
    """`size` hex characters derived from `seed`."""
    blocks = (hashlib.sha256(f"{seed}/{i}".encode()).hexdigest() for i in range(size // 64 + 1))
    return "".join(blocks)[:size]


class BlobProvider(ResourceProvider):
    """Keeps its inputs; outputs a hash of them, as arbor's reconcilers output hashes."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Nothing outside the state: the ID and the hash."""
        digest = hashlib.sha256(props["content"].encode()).hexdigest()[:16]
        return CreateResult(id_=props["seed"], outs={"seed": props["seed"], "hash": digest})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """A change only when the seed changed (never, within a run)."""
        return DiffResult(changes=olds.get("seed") != news.get("seed"))


class Blob(Resource, module="bench", name="Blob"):
    """`size` bytes of content as an input."""

    def __init__(self, name: str, *, seed: str, size: int, opts: pulumi.ResourceOptions) -> None:
        super().__init__(BlobProvider(), name, {"seed": seed, "content": content(seed, size), "hash": None}, opts)


class ShootOf(pulumi.ComponentResource):
    """A shoot's component: its resources' parent, as arbor's Shoot is."""

    def __init__(self, name: str) -> None:
        super().__init__("bench:index:Shoot", name)
