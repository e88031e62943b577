"""Prints what `make up` made: each cluster with its API endpoint and how to reach it, and the object store.

Writes each admin kubeconfig to out/kubeconfigs/<key>.yaml (mode 0600; out/ is git-ignored; local stack).
Usage: python hack/summary.py <stack>
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def stack_output(stack: str, name: str) -> Any:
    """One stack output (null when the stack has none by that name), secrets shown."""
    cmd = ["pulumi", "stack", "output", name, "--stack", stack, "--json", "--show-secrets"]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    return json.loads(proc.stdout) if proc.returncode == 0 and proc.stdout.strip() else None


def main() -> None:
    """Writes the kubeconfigs and prints the summary."""
    stack = sys.argv[1]
    endpoints, kubeconfigs = stack_output(stack, "endpoints"), stack_output(stack, "kubeconfigs")
    out = Path("out/kubeconfigs")
    out.mkdir(parents=True, exist_ok=True)
    print(f"\narbor landscape '{stack}': {len(endpoints)} cluster(s)\n")
    for key in sorted(endpoints):
        path = out / f"{key.replace('/', '_')}.yaml"
        path.write_text(kubeconfigs[key])
        os.chmod(path, 0o600)
        print(f"  {key:<28} {endpoints[key]:<28} kubectl --kubeconfig {path} get nodes")
    store = stack_output(stack, "objectStore")
    if store:
        print(f"\n  object store (MinIO, TLS)    {store:<28} seeds' backup buckets: docs/backups.md")
    print('\nIn your shell: eval "$(make -s env)", then pulumi, kubectl and kwokctl work against this stack;')
    print(f"pulumi stack output kubeconfigs --show-secrets --json --stack {stack} prints every kubeconfig;")
    print("make kubeconfig SHOOT=<project>/<shoot> issues a shoot's admin kubeconfig on request, as Gardener does.")


if __name__ == "__main__":
    main()
