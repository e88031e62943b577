"""A shoot's admin kubeconfig, issued on request: Gardener's `shoots/adminkubeconfig`, from the stack's outputs.

A client certificate of the shoot's client CA, read from the InternalSecret `<shoot>.ca-client` in its project
namespace of the garden (only the garden's operators can read it), naming the user `admin` in `system:masters`
unless told otherwise, valid for the shoot's `adminKubeconfig.expirationSeconds` (at most 24h). Nothing is kept:
the state holds no admin kubeconfig, so none goes stale in it and `up` has none to renew.

Usage: python hack/admin_kubeconfig.py <project>/<shoot> [--stack S] [--expiration-seconds N] [--user U]
       [--group G ...]     prints the kubeconfig (`make kubeconfig SHOOT=<project>/<shoot>`)
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pulumi_cli import pulumi

from components.naming import project_namespace
from components.reconciler.admin_kubeconfig import DEFAULT_GROUPS, expiration_problem, kubeconfig
from components.reconciler.credentials import CredentialError
from components.reconciler.kube import Kube, KubeError, certificate_authority
from components.reconciler.signing import issue
from components.render import pki

# The stack output of each shoot's default validity (the spec's `adminKubeconfig.expirationSeconds`).
EXPIRATIONS = "adminKubeconfigExpirationSeconds"
# Another stack's outputs, by name (a seed stack's landscape stack holds the garden).
Outputs = Callable[[str], Mapping[str, Any]]
# Reads a Secret-shaped object's data (base64 values) from a cluster: (kubeconfig, API path) -> data or None.
Reader = Callable[[str, str], Mapping[str, str] | None]


class RequestError(Exception):
    """A request that cannot be served: the message names the argument or what is missing."""


def _read(kubeconfig_text: str, path: str) -> Mapping[str, str] | None:
    """An object's `data` in the cluster, None when it is not there."""
    found = Kube.from_kubeconfig(kubeconfig_text).find(path)
    return None if found is None else dict(found.get("data") or {})


def client_ca_path(ref: str) -> str:
    """The API path of the InternalSecret holding a shoot's client CA, `<project>/<shoot>` given."""
    project, shoot = ref.split("/", 1)
    namespace = project_namespace(project)
    return f"/apis/arbor.dev/v1alpha1/namespaces/{namespace}/internalsecrets/{shoot}.{pki.CA_CLIENT}"


def garden_kubeconfig(outputs: Mapping[str, Any], others: Outputs) -> str:
    """How the stack reaches the garden: its own garden's kubeconfig, else (a seed stack) its landscape stack's."""
    reach = (outputs.get("kubeconfigs") or {}).get("garden")
    landscape = (outputs.get("shard") or {}).get("landscape")
    if not reach and landscape:
        reach = (others(str(landscape)).get("kubeconfigs") or {}).get("garden")
    if not reach:
        raise RequestError("the stack's outputs name no garden (run `make up` first)")
    return str(reach)


def request(
    outputs: Mapping[str, Any],
    ref: str,
    expiration_s: int | None = None,
    user: str = "admin",
    groups: tuple[str, ...] = DEFAULT_GROUPS,
    read: Reader = _read,
    others: Outputs = lambda _stack: {},
) -> str:
    """The kubeconfig for `ref` (`<project>/<shoot>`), from the stack's outputs and the garden's InternalSecret."""
    expirations = outputs.get(EXPIRATIONS) or {}
    if ref not in expirations:
        known = ", ".join(sorted(expirations)) or "none"
        raise RequestError(f"shoot: no shoot '{ref}' in this stack (it has: {known}); a sharded one is in its seed's")
    seconds = expirations[ref] if expiration_s is None else expiration_s
    if problem := expiration_problem(seconds):
        raise RequestError(f"--expiration-seconds: {problem}")
    if not user.strip():
        raise RequestError("--user: empty; give the user name the certificate is for")
    key = f"shoot/{ref}"
    server, shoot_kubeconfig = (outputs.get("endpoints") or {}).get(key), (outputs.get("kubeconfigs") or {}).get(key)
    if not server or not shoot_kubeconfig:
        raise RequestError(f"shoot: '{ref}' has no endpoint in the stack's outputs yet (run `make up` first)")
    data = read(garden_kubeconfig(outputs, others), client_ca_path(ref))
    if not data or pki.KEY_CA_CERT not in data or pki.KEY_CA_KEY not in data:
        raise RequestError(f"shoot: the garden holds no client CA for '{ref}' ({client_ca_path(ref)})")
    ca_cert, ca_key = (_decoded(data[k]) for k in (pki.KEY_CA_CERT, pki.KEY_CA_KEY))
    cert = issue(ca_cert, ca_key, user, list(groups), [], [], ["client"], int(seconds))
    return kubeconfig(str(server), certificate_authority(str(shoot_kubeconfig)), user, cert.cert, cert.key)


def _decoded(value: str) -> str:
    """A Secret data value as text."""
    return base64.b64decode(value).decode()


def stack_outputs(stack: str) -> dict[str, Any]:
    """A stack's outputs, secrets shown."""
    return dict(json.loads(pulumi(stack, "stack", "output", "--json", "--show-secrets", who="kubeconfig")))


def main(argv: list[str]) -> int:
    """Prints the kubeconfig; a request that cannot be served prints why and exits 1, without a traceback."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shoot", help="<project>/<shoot>")
    parser.add_argument("--stack", default=os.environ.get("ARBOR_STACK", "local"))
    parser.add_argument("--expiration-seconds", type=int, default=None)
    parser.add_argument("--user", default="admin")
    parser.add_argument("--group", action="append", dest="groups")
    args = parser.parse_args(argv)
    try:
        groups = tuple(args.groups) if args.groups else DEFAULT_GROUPS
        got = request(stack_outputs(args.stack), args.shoot, args.expiration_seconds, args.user, groups,
                      others=stack_outputs)  # fmt: skip
        sys.stdout.write(got)
    except (RequestError, KubeError, CredentialError) as error:
        print(f"kubeconfig: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
