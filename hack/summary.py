"""Prints what `make up` made: each cluster with its API endpoint, and how to reach it.

Writes each admin kubeconfig to out/kubeconfigs/<key>.yaml (mode 0600; out/ is git-ignored; local stack).
Usage: python hack/summary.py <stack>
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def stack_output(stack: str, name: str) -> dict[str, str]:
    """One stack output as a dict, secrets shown."""
    cmd = ["pulumi", "stack", "output", name, "--stack", stack, "--json", "--show-secrets"]
    value: dict[str, str] = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return value


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
    print('\nIn your shell: eval "$(make -s env)", then pulumi, kubectl and kwokctl work against this stack;')
    print(f"pulumi stack output kubeconfigs --show-secrets --json --stack {stack} prints every kubeconfig.")


if __name__ == "__main__":
    main()
