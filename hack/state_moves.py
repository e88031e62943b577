"""State moves: what an older arbor kept in a resource that a newer one keeps in another, handed over without a delete.

When arbor moves an object from one resource to another (docs/state.md lists the moves: a hosted shoot's
certificate Secrets, its other control-plane Secrets, its control-plane workloads, a shoot's system components), the
engine would delete the old resource after the update, and its provider the object with it, right after the new
resource wrote it. `make up` and `make preview` therefore run this first: it drops such resources from the state
(`pulumi stack export`, the entries and every reference to them removed, `pulumi stack import`) and leaves their
objects alone; the new resource writes them over in place. Nothing in a cluster or cloud changes here, and a
state with nothing to move is left as it is, so it runs on every `up`.

Prints one line per resource moved. Usage: python hack/state_moves.py <stack> [--dry-run]
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pulumi_cli import export, import_state

from components.render import pki

SHOOT = "arbor:shoot:Shoot"
OBJECT_SET = "pulumi-python:dynamic/arbor:ObjectSet"
ADMIN_KUBECONFIG = "pulumi-python:dynamic/arbor:AdminKubeconfig"
CERTIFICATE = "pulumi-python:dynamic/arbor:Certificate"
LOCAL_CLUSTER = "pulumi-python:dynamic/arbor:LocalCluster"
WORKERS = "arbor:shoot:Workers"


@dataclass(frozen=True)
class Move:
    """What moves: resources of a type (or under a prefix ending with `:`), children of a `parent_type` component.

    Never a protected resource: state moves hand over objects a new resource writes again, never data.

    Each is named `<component>-<rest>`, where `rest` matches `pattern` whole.
    """

    type_prefix: str
    parent_type: str
    pattern: str
    now: str  # what keeps the object now, for the line printed
    # Inputs the resource must have as given (a certificate only its Secrets hold: `published` false).
    inputs: Mapping[str, Any] = field(default_factory=dict)
    # A type one of its siblings must have (a local shoot's: its LocalCluster); "" for any.
    beside: str = ""

    def takes(self, type_: str) -> bool:
        """Whether a resource type is this move's: under a prefix that ends with `:`, else that type exactly."""
        return type_.startswith(self.type_prefix) if self.type_prefix.endswith(":") else type_ == self.type_prefix

    def matches(self, resource: Mapping[str, Any], parents: Mapping[str, Mapping[str, Any]]) -> bool:
        """Whether `resource` is one this move hands over."""
        parent = parents.get(resource.get("parent") or "")
        if not self.takes(str(resource.get("type", ""))) or parent is None or parent.get("type") != self.parent_type:
            return False
        if resource.get("protect"):
            return False  # what holds data never leaves the state here (a CA, a key, a cluster)
        given = resource.get("inputs") or {}
        if (given.get("spec") or {}).get("type") == "LoadBalancer":
            return False  # a load balancer stays where it is: its status (the cloud's address) feeds DNS records
        if any(given.get(k) != v for k, v in self.inputs.items()):
            return False
        siblings = (r for r in parents.values() if r.get("parent") == resource.get("parent"))
        if self.beside and not any(r.get("type") == self.beside for r in siblings):
            return False
        name, component = _name(resource), _name(parent)
        rest = name.removeprefix(f"{component}-")
        return rest != name and re.fullmatch(self.pattern, rest) is not None


def _name(resource: Mapping[str, Any]) -> str:
    """A resource's name: its URN's last part."""
    return str(resource["urn"]).rsplit("::", 1)[-1]


def certificate_secrets() -> str:
    """A pattern of the Secret resources a hosted shoot's certificates write now, whatever the shoot's domains."""
    every = pki.credentials("shoot", (), hosted=True, domains=("api.example", "api.internal.example"))
    names = sorted({secret for c in every if c.kind is pki.Kind.CERT for secret in pki.secrets_of(c)})
    return "secret-(" + "|".join(re.escape(n) for n in names) + ")"


# The components of a hosted control plane, as an older arbor named their workloads.
CONTROL_PLANE = "etcd-main|etcd-events|kube-apiserver|kube-controller-manager|kube-scheduler"
COMPONENT_OBJECTS = "its component's objects (`<shoot>-<component>`, or its group's: `-etcd`, `-controllers`)"
MCM_SEED = "MCM's objects in the seed (`<shoot>-workers-mcm`)"
SYSTEM = "the shoot's system components (`<shoot>-system`)"
EXTENSION_RIGHTS = "the seed's extensions' rights on the shoot's records (`<shoot>-extensions`)"
GRM_OBJECTS = "the resource manager's objects on that cluster (`<shoot>-grm-source`, `-target`, `-webhook`)"

MOVES = (
    Move("kubernetes:core/v1:Secret", SHOOT, certificate_secrets(), "the certificate that issues it"),
    # Every other Secret of a hosted shoot's control plane: now its one SecretSet (the first move that matches wins).
    Move("kubernetes:core/v1:Secret", SHOOT, r"secret-.+", "the shoot's control-plane Secrets (`<shoot>-secrets`)"),
    # Each object of a shoot's system components (`<shoot>-system-<kind>-<name>`): now one resource applies them all.
    Move("kubernetes:", SHOOT, r"system-.+", SYSTEM),
    # `shoot-info` and kube-apiserver's kubelet binding in the shoot: now among its system components too.
    Move("kubernetes:core/v1:ConfigMap", SHOOT, r"shoot-info", SYSTEM),
    Move("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", SHOOT, r"kube-apiserver-kubelet", SYSTEM),
    # A hosted control plane's workloads, with their ConfigMaps and Services: now one ObjectSet per component.
    Move("kubernetes:apps/v1:", SHOOT, rf"({CONTROL_PLANE})", COMPONENT_OBJECTS),
    Move("kubernetes:core/v1:ConfigMap", SHOOT, r"kube-(controller-manager|scheduler)-kubeconfig", COMPONENT_OBJECTS),
    Move("kubernetes:core/v1:Service", SHOOT, r"etcd-(main|events)-client|kube-apiserver", COMPONENT_OBJECTS),
    # Components that start together, once an ObjectSet each: now one per group (concerns/control_plane.py, GROUPS).
    Move(OBJECT_SET, SHOOT, r"etcd-(main|events)", "the shoot's etcd (`<shoot>-etcd`)"),
    Move(OBJECT_SET, SHOOT, r"kube-(controller-manager|scheduler)", "its controllers (`<shoot>-controllers`)"),
    # machine-controller-manager's objects in the seed and its rights in the shoot: now an ObjectSet each.
    Move("kubernetes:", WORKERS, r"mcm-(serviceaccount|role|rolebinding|configmap|deployment|service)", MCM_SEED),
    Move("kubernetes:", WORKERS, r"mcm-shoot-.+", "MCM's rights in the shoot (`<shoot>-workers-mcm-shoot`)"),
    # gardener-resource-manager's identities (seed, shoot) and its webhook registration: now an ObjectSet each.
    Move("kubernetes:", SHOOT, r"grm-(source|target)-(serviceaccount|role|rolebinding)", GRM_OBJECTS),
    Move("kubernetes:", SHOOT, r"grm-webhook", GRM_OBJECTS),
    # A pool's zone (`<shoot>-workers-{user-data,class,deployment}-<pool>-z<n>`): now one ObjectSet of the three,
    # `<shoot>-workers-<pool>-z<n>`.
    Move(
        "kubernetes:",
        WORKERS,
        r"(user-data|class|deployment)-.+-z\d+",
        "its zone's ObjectSet (`<shoot>-workers-<pool>-z<n>`)",
    ),
    # Its seed's extensions' Role and RoleBinding on a shoot's records in the garden: now one ObjectSet.
    Move("kubernetes:rbac.authorization.k8s.io/v1:Role", SHOOT, r"extensions-role", EXTENSION_RIGHTS),
    Move("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", SHOOT, r"extensions-rolebinding", EXTENSION_RIGHTS),
    # A shoot's client CA in the garden (the InternalSecret `<shoot>.ca-client`): now an ObjectSet of the same name
    # (a hosted shoot's: a CaCopy, copying it from the seed).
    Move("kubernetes:arbor.dev/v1alpha1:InternalSecret", SHOOT, r"ca-client", "its resource (`<shoot>-ca-client`)"),
    # A hosted shoot's leaves that only their Secrets hold (`<shoot>-pki-<leaf>`, a Certificate each): now one LeafSet,
    # which issues them again once (their checksums are now of what they are issued from, not of their content).
    Move(CERTIFICATE, SHOOT, r"pki-.+", "the shoot's leaves (`<shoot>-pki-leaves`)", {"published": False}),
    # A self-hosted local shoot's leaves, which wrote no Secret (`<shoot>-pki-<leaf>`): now one LeafSet too, writing
    # them in its machine directory. A cloud shoot's (no local cluster beside them) stay.
    Move(
        CERTIFICATE,
        SHOOT,
        r"pki-.+",
        "the shoot's leaves (`<shoot>-pki-leaves`)",
        {"kubeconfig": None},
        beside=LOCAL_CLUSTER,
    ),
    # A shoot's admin kubeconfig: issued on request now (hack/admin_kubeconfig.py), nothing kept; it held only a
    # certificate that expires by itself, so there is nothing to delete either.
    Move(ADMIN_KUBECONFIG, SHOOT, r"admin-kubeconfig", "nothing: issued on request (`make kubeconfig SHOOT=...`)"),
    # A self-hosted shoot's user data per pool (`<shoot>-user-data-<pool>`, a Secret in its kube-system): now an
    # ObjectSet of the same name, whose state keeps the content once (packed) instead of three times.
    Move("kubernetes:core/v1:Secret", SHOOT, r"user-data-.+", "its ObjectSet (`<shoot>-user-data-<pool>`)"),
    # A local self-hosted shoot's mirror pods (`<shoot>-<component>-<pool>-<index>`): now one ObjectSet per node.
    Move(
        "kubernetes:core/v1:Pod",
        SHOOT,
        rf"({CONTROL_PLANE})-.+-\d+",
        "its node's static pods (`<shoot>-static-pods-<pool>-<index>`)",
    ),
    # node-agent's ServiceAccount in the shoot (`<shoot>-node-agent-serviceaccount`): its AccessToken makes it now,
    # as Gardener's token-requestor does, so a hosted shoot keeps no Kubernetes provider of its own in the state.
    Move(
        "kubernetes:core/v1:ServiceAccount",
        SHOOT,
        r"node-agent-serviceaccount",
        "its token (`<shoot>-node-agent-token`)",
    ),
)


def moved(resources: Iterable[Mapping[str, Any]], moves: Iterable[Move] = MOVES) -> dict[str, str]:
    """The URNs the moves hand over, with what keeps each object now (the first move that matches)."""
    resources, moves = list(resources), list(moves)
    by_urn = {str(r["urn"]): r for r in resources}
    found = {str(r["urn"]): next((m.now for m in moves if m.matches(r, by_urn)), None) for r in resources}
    return {urn: now for urn, now in found.items() if now is not None}


def without(deployment: Mapping[str, Any], urns: Iterable[str]) -> dict[str, Any]:
    """The deployment without the resources at `urns` and without any reference to them."""
    gone = set(urns)
    kept = []
    for resource in deployment.get("resources") or []:
        if resource["urn"] in gone:
            continue
        resource = dict(resource)
        if resource.get("dependencies"):
            resource["dependencies"] = [d for d in resource["dependencies"] if d not in gone]
        if resource.get("propertyDependencies"):
            resource["propertyDependencies"] = {
                k: [d for d in v if d not in gone] for k, v in resource["propertyDependencies"].items()
            }
        if resource.get("deletedWith") in gone:
            del resource["deletedWith"]
        kept.append(resource)
    return {**deployment, "resources": kept}


def main() -> None:
    """Moves what the table says, for the stack named on the command line."""
    if len(sys.argv) < 2:
        raise SystemExit("usage: state_moves.py <stack> [--dry-run]")
    stack, dry_run = sys.argv[1], "--dry-run" in sys.argv[2:]
    exported = export(stack, who="state_moves")
    moves = moved(exported.get("deployment", {}).get("resources") or [])
    for urn, now in sorted(moves.items()):
        print(f"state_moves: {'would hand' if dry_run else 'handed'} {urn.rsplit('::', 1)[-1]} over to {now}")
    if not moves or dry_run:
        return
    exported["deployment"] = without(exported["deployment"], moves)
    import_state(stack, exported, who="state_moves")


if __name__ == "__main__":
    main()
