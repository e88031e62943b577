"""Extensions' rights on a real garden: a SubjectAccessReview matrix of two seeds and two projects, and requests.

The rights the plan computes for a two-seed landscape (tests/unit/spec_cases.py `two_seeds`, names prefixed so
they stay apart from the stack's own) are applied to the local stack's garden with the records they name; the
garden's RBAC authorizer answers every cell, and requests made with tokens issued to both installations agree.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from components.checks import parse_landscape
from components.plan.planner import plan_landscape
from components.plan.values import LandscapePlan
from components.reconciler.kube import Kube, KubeError
from components.render import api, extension_rights
from components.yaml_text import dump
from tests.integration.engine import Stack, kubectl, token_kubeconfig
from tests.unit.spec_cases import two_seeds

pytestmark = pytest.mark.integration
PREFIX = "mx"
GROUP = "arbor.dev"
SEED_A, SEED_B = f"{PREFIX}local-1", f"{PREFIX}local-2"
DEV, OPS = f"garden-{PREFIX}dev", f"garden-{PREFIX}ops"
A = ("seed-mxlocal-1", "extension-provider-local")
B = ("seed-mxlocal-2", "extension-provider-dns")
BUCKET = f"arbor-{PREFIX}local-1-backups"
ENTRY = f"shoot--{PREFIX}dev--web--u1"
VERBS_READ = ("get", "list", "watch")
BY_NAME = "fieldSelector=metadata.name"


def garden_objects(plan: LandscapePlan) -> list[dict[str, Any]]:
    """Namespaces, accounts, the rights of both seeds and their shoots, and the records they name."""
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in (DEV, OPS, A[0], B[0])
    ]
    objects += [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"namespace": ns, "name": name}}
                for ns, name in (A, B)]  # fmt: skip
    hosted = [s for s in plan.shoots if s.seed]
    for seed in plan.seeds:
        objects += [api.seed_record(seed), *extension_rights.seed_rights(seed)]
        objects += [api.backup_bucket_record(seed.backup)] if seed.backup else []
    for shoot in plan.shoots:
        objects.append(api.shoot_record(shoot))
    for shoot in hosted:
        objects += extension_rights.shoot_rights(shoot, ENTRY if shoot.name == "web" else None)
    web = next(s for s in hosted if s.name == "web")
    assert web.backup is not None
    entry = api.backup_entry_record(web, web.backup, "u1")
    del entry["metadata"]["ownerReferences"]  # the garbage collector would remove an entry of an unknown owner
    objects.append(entry)
    objects.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"namespace": DEV, "name": "cloud"},
                    "stringData": {"key": "value"}})  # fmt: skip
    objects.append({"apiVersion": f"{GROUP}/v1alpha1", "kind": "InternalSecret",
                    "metadata": {"namespace": DEV, "name": "web.ca-client"}, "data": {}})  # fmt: skip
    return objects


@pytest.fixture(scope="module")
def garden(local_stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The stack's garden kubeconfig and endpoint, holding the two-seed landscape's rights and records meanwhile."""
    outputs = local_stack.outputs()
    kubeconfig = outputs["kubeconfigs"]["garden"]
    tmp = tmp_path_factory.mktemp("rights")
    manifest = tmp / "objects.yaml"
    plan = plan_landscape(parse_landscape(two_seeds(PREFIX)), "local")
    # Documents, not one YAML list: kubectl applies a stream of objects.
    manifest.write_text("---\n".join(dump(o, sort_keys=False) for o in garden_objects(plan)))
    kubectl(kubeconfig, tmp, "apply", "--server-side", "-f", str(manifest))
    try:
        yield kubeconfig, outputs["endpoints"]["garden"]
    finally:
        kubectl(kubeconfig, tmp, "delete", "--ignore-not-found", "--wait=false", "-f", str(manifest))


def cell(resource: str, verb: str, name: str = "", namespace: str = "", group: str = GROUP) -> dict[str, str]:
    """A SubjectAccessReview's resource attributes."""
    attributes = {"group": group, "resource": resource.split("/")[0], "verb": verb, "name": name,
                  "namespace": namespace}  # fmt: skip
    if "/" in resource:
        attributes["subresource"] = resource.split("/")[1]
    return attributes


# (account, attributes, allowed): the account of seed A or B, and what upstream's SeedAuthorizer would answer.
MATRIX = [
    *[(A, cell("seeds", v, SEED_A), True) for v in (*VERBS_READ, "update", "patch")],
    (A, cell("seeds/status", "update", SEED_A), True),
    (A, cell("shoots", "get", "web", DEV), True),
    (A, cell("shoots/status", "patch", "web", DEV), True),
    (A, cell("shoots", "watch", "web", DEV), True),
    (A, cell("shoots", "update", "db", OPS), True),
    (A, cell("backupbuckets", "get", BUCKET), True),
    (A, cell("backupbuckets/status", "update", BUCKET), True),
    (A, cell("backupentries", "get", ENTRY, DEV), True),
    (A, cell("backupentries/status", "patch", ENTRY, DEV), True),
    (A, cell("seeds", "get", SEED_B), False),
    (A, cell("seeds", "list"), False),
    (A, cell("seeds", "delete", SEED_A), False),
    (A, cell("shoots", "get", "api", DEV), False),
    (A, cell("shoots", "list"), False),
    (A, cell("shoots", "list", namespace=DEV), False),
    (A, cell("shoots", "delete", "web", DEV), False),
    (A, cell("shoots", "create", namespace=DEV), False),
    (A, cell("shoots", "get", "root", OPS), False),
    (A, cell("backupentries", "list", namespace=DEV), False),
    (A, cell("backupentries", "delete", ENTRY, DEV), False),
    (A, cell("internalsecrets", "get", "web.ca-client", DEV), False),
    (A, cell("secrets", "get", "cloud", DEV, group=""), False),
    (A, cell("secrets", "list", group=""), False),
    (A, cell("projects", "get", f"{PREFIX}dev"), False),
    (A, cell("serviceaccounts/token", "create", A[1], A[0], group=""), False),
    (A, cell("configmaps", "get", "any", A[0], group=""), False),
    (B, cell("seeds", "get", SEED_B), True),
    (B, cell("seeds/status", "patch", SEED_B), True),
    (B, cell("shoots", "get", "api", DEV), True),
    (B, cell("shoots/status", "update", "api", DEV), True),
    (B, cell("seeds", "get", SEED_A), False),
    (B, cell("shoots", "get", "web", DEV), False),
    (B, cell("shoots", "get", "db", OPS), False),
    (B, cell("backupbuckets", "get", BUCKET), False),
    (B, cell("backupentries", "get", ENTRY, DEV), False),
    (B, cell("secrets", "get", "cloud", DEV, group=""), False),
]


def test_the_matrix_of_two_seeds_and_two_projects(garden: tuple[str, str]) -> None:
    """GIVEN both seeds' rights in the garden WHEN each cell is reviewed THEN allowed exactly as the seed owns it."""
    kube = Kube.from_kubeconfig(garden[0])
    wrong = []
    for (namespace, account), attributes, allowed in MATRIX:
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {
            "user": f"system:serviceaccount:{namespace}:{account}",
            "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
            "resourceAttributes": attributes}}  # fmt: skip
        status = kube.create("/apis/authorization.k8s.io/v1/subjectaccessreviews", review)["status"]
        if bool(status.get("allowed")) is not allowed:
            wrong.append((account, attributes, status))
    assert len(MATRIX) >= 30
    assert wrong == []


def as_account(garden: tuple[str, str], account: tuple[str, str]) -> Kube:
    """A client with a fresh token of the account from a real TokenRequest (10 minutes)."""
    admin = Kube.from_kubeconfig(garden[0])
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}}
    path = f"/api/v1/namespaces/{account[0]}/serviceaccounts/{account[1]}/token"
    token = admin.create(path, request)["status"]["token"]
    return Kube.from_kubeconfig(token_kubeconfig(garden[0], garden[1], token))


def status_of(kube: Kube, path: str) -> int:
    """The HTTP status of a GET."""
    try:
        kube.get(path)
        return 200
    except KubeError as err:
        return err.status


def test_requests_with_issued_tokens_agree(garden: tuple[str, str]) -> None:
    """GIVEN tokens issued to both installations WHEN they request records THEN their seed's only, else 403."""
    base = f"/apis/{GROUP}/v1alpha1"
    a, b = as_account(garden, A), as_account(garden, B)
    got = {
        ("a", "own seed"): status_of(a, f"{base}/seeds/{SEED_A}"),
        ("a", "other seed"): status_of(a, f"{base}/seeds/{SEED_B}"),
        ("a", "shoot on it"): status_of(a, f"{base}/namespaces/{DEV}/shoots/web"),
        ("a", "one shoot listed by name"): status_of(a, f"{base}/namespaces/{DEV}/shoots?{BY_NAME}=web"),
        ("a", "shoot elsewhere"): status_of(a, f"{base}/namespaces/{DEV}/shoots/api"),
        ("a", "entry"): status_of(a, f"{base}/namespaces/{DEV}/backupentries/{ENTRY}"),
        ("a", "all shoots"): status_of(a, f"{base}/shoots"),
        ("a", "project secrets"): status_of(a, f"/api/v1/namespaces/{DEV}/secrets"),
        ("a", "internal secret"): status_of(a, f"{base}/namespaces/{DEV}/internalsecrets/web.ca-client"),
        ("b", "own seed"): status_of(b, f"{base}/seeds/{SEED_B}"),
        ("b", "shoot on it"): status_of(b, f"{base}/namespaces/{DEV}/shoots/api"),
        ("b", "other seed's shoot"): status_of(b, f"{base}/namespaces/{DEV}/shoots/web"),
    }
    denied = {"other seed", "shoot elsewhere", "all shoots", "project secrets", "internal secret", "other seed's shoot"}
    assert got == {k: 403 if k[1] in denied else 200 for k in got}
    web = f"{base}/namespaces/{DEV}/shoots/web"
    a.merge_patch(web, {"metadata": {"annotations": {"test.arbor.dev/seen": "a"}}})
    with pytest.raises(KubeError) as refused:
        b.merge_patch(web, {"metadata": {"annotations": {"test.arbor.dev/seen": "b"}}})
    assert refused.value.status == 403
