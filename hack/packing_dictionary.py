"""Writes a new version of the dictionary that packed values are compressed with (components/render/packing.py).

A packed value is deflated with a preset dictionary: text that Kubernetes objects as arbor renders them share
(keys, labels, images, flags), so that even a small ObjectSet compresses as if its kind were already known
(zstd's and brotli's dictionaries work the same way). The text is the canonical JSON of representative rendered
objects, taken from the golden files of the renderers' unit tests (none holds a key or a token), the most common
last: deflate looks back at most 32 KiB, the nearest first.

A dictionary, once a state holds values packed with it, never changes: a new one is written under the next
version (`packing-dictionary/<n>.txt`), packing.py then packs with it and still reads every older version by its
prefix. Usage (project root): python hack/packing_dictionary.py <n>
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.render.packing import DICTIONARY_DIR, WINDOW, canonical_json  # noqa: E402

GOLDEN = ROOT / "tests" / "unit" / "golden"
# Least common first: a self-hosted shoot's static pods and OSC, then what every hosted shoot has.
SOURCES = (
    "static-pods-root.yaml",
    "osc-reconcile-pool-a.yaml",
    "extension-rights.yaml",
    "resource-manager.yaml",
    "mcm-local.yaml",
    "control-plane-web.yaml",
)


def dictionary() -> str:
    """The sources' objects as canonical JSON, one per line, the last WINDOW bytes."""
    objects = [o for name in SOURCES for o in yaml.safe_load_all((GOLDEN / name).read_text()) if o]
    text = "\n".join(canonical_json(o) for o in objects)
    return text.encode()[-WINDOW:].decode(errors="ignore")


def main(argv: list[str]) -> None:
    """Writes version argv[0]; refuses to overwrite one that exists."""
    target = DICTIONARY_DIR / f"{int(argv[0])}.txt"
    if target.exists():
        sys.exit(f"{target.relative_to(ROOT)} exists: a dictionary never changes; write the next version")
    target.write_text(dictionary())
    print(f"wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
