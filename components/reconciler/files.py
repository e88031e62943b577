"""Files reconcilers write for local processes to read (keys, tokens, configuration): whole, the owner's only."""

from __future__ import annotations

import os
from pathlib import Path


def write_file(path: Path, text: str | None) -> bool:
    """Writes `text` atomically, readable by the owner only (it may hold keys), or removes the file for None.

    Returns whether the file changed. The rename makes a reader (kube-apiserver's reload) see old or new, never half.
    """
    current = path.read_text() if path.is_file() else None
    if current == text:
        return False
    if text is None:
        path.unlink()
        return True
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    partial.chmod(0o600)
    os.replace(partial, path)
    return True
