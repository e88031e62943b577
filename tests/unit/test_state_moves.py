"""hack/state_moves.py: what an older arbor's resource kept that a newer one keeps is handed over, never deleted."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[2] / "hack"))
import preview_summary
import state_moves

P = "urn:pulumi:local::arbor::arbor:landscape:Landscape"
SHOOT = f"{P}$arbor:shoot:Shoot::arbor-shoot-dev-web"
SEED = f"{P}$arbor:seed:Seed::arbor-seed-local-1"
SECRET = "kubernetes:core/v1:Secret"
SERVICE = "kubernetes:core/v1:Service"
SECRET_SET = "the shoot's control-plane Secrets (`<shoot>-secrets`)"


def resource(type_: str, name: str, parent: str, **extra: Any) -> dict[str, Any]:
    """One resource of `pulumi stack export` (its URN's type chain shortened)."""
    return {"urn": f"{P}${type_}::{name}", "type": type_, "parent": parent, **extra}


def old_state() -> list[dict[str, Any]]:
    """A hosted shoot as an older arbor kept it: certificate and CA Secrets as Kubernetes provider resources."""
    certificate = resource("pulumi-python:dynamic/arbor:Certificate", "arbor-shoot-dev-web-pki-etcd-peer", SHOOT)
    peer = resource(SECRET, "arbor-shoot-dev-web-secret-etcd-peer", SHOOT, dependencies=[certificate["urn"]])
    signer = resource(SECRET, "arbor-shoot-dev-web-secret-ca-client-signer", SHOOT)
    etcd = resource(
        "pulumi-python:dynamic/arbor:ObjectSet",
        "arbor-shoot-dev-web-etcd",
        SHOOT,
        dependencies=[peer["urn"], certificate["urn"]],
        propertyDependencies={"spec": [peer["urn"], signer["urn"]]},
    )
    return [
        {"urn": SHOOT, "type": "arbor:shoot:Shoot", "parent": P},
        {"urn": SEED, "type": "arbor:seed:Seed", "parent": P},
        certificate,
        peer,
        signer,
        etcd,
        # The rest of the control plane's Secrets go to its SecretSet; a pool's user data stays a Secret of its own.
        resource(SECRET, "arbor-shoot-dev-web-secret-etcd-encryption-secret", SHOOT),
        resource(SECRET, "arbor-shoot-dev-web-secret-etcd-backup", SHOOT),
        resource(SECRET, "arbor-shoot-dev-web-workers-user-data-pool-a-z1", SHOOT),
        # A Secret of that name elsewhere is not a shoot credential.
        resource(SECRET, "arbor-seed-local-1-secret-ca", SEED),
    ]


def test_only_the_credential_secrets_of_shoots_are_handed_over() -> None:
    """GIVEN an older shoot's state WHEN the moves are read THEN the control plane's Secrets are handed over."""
    handed = {urn.rsplit("::", 1)[-1]: now for urn, now in state_moves.moved(old_state()).items()}
    assert handed.pop("arbor-shoot-dev-web-secret-etcd-peer") == "the certificate that issues it"
    rest = ["ca-client-signer", "etcd-encryption-secret", "etcd-backup"]
    assert handed == dict.fromkeys((f"arbor-shoot-dev-web-secret-{n}" for n in rest), SECRET_SET)


def test_the_state_without_them_keeps_every_other_resource_and_no_reference_to_them() -> None:
    """GIVEN the moves WHEN applied to the deployment THEN the rest stays, with no dependency on what left."""
    resources = old_state()
    handed = state_moves.moved(resources)
    after = state_moves.without({"manifest": {}, "resources": resources}, handed)["resources"]
    assert [r["urn"] for r in after] == [r["urn"] for r in resources if r["urn"] not in handed]
    etcd = next(r for r in after if r["urn"].endswith("-etcd"))
    assert etcd["dependencies"] == [resources[2]["urn"]] and etcd["propertyDependencies"] == {"spec": []}
    # Nothing left to move: the state is left as it is.
    assert state_moves.moved(after) == {}


def test_the_preview_shows_a_handed_over_secret_as_a_move_not_a_deletion() -> None:
    """GIVEN a preview that would delete a handed-over Secret WHEN summarised THEN it is a move, no deletion flagged."""
    steps = [{"op": "same", "urn": r["urn"], "newState": r} for r in old_state() if r["type"] != SECRET]
    gone = old_state()[3]
    steps.append({"op": "delete", "urn": gone["urn"], "oldState": gone})
    text = preview_summary.render({"steps": steps}, stack="local")
    assert "| shoot arbor-shoot-dev-web | 0 | 0 | 0 | 0 | 1 |" in text
    assert "**DELETE**" not in text and "replacement(s) or deletion(s)" not in text
    assert "- move `kubernetes:core/v1:Secret` arbor-shoot-dev-web-secret-etcd-peer (handed over to" in text


def test_each_object_of_a_shoots_system_components_is_handed_over_to_the_one_resource() -> None:
    """GIVEN an older shoot's system components, one resource each WHEN the moves are read THEN each is handed over."""
    objects = [
        resource("kubernetes:apps/v1:DaemonSet", "arbor-shoot-dev-web-system-daemonset-calico-node", SHOOT),
        resource(
            "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
            "arbor-shoot-dev-web-system-customresourcedefinition-ippools.crd.projectcalico.org",
            SHOOT,
        ),
    ]
    kept = [
        # The resource that keeps them now, and a seed's object of a similar name.
        resource("pulumi-python:dynamic/arbor:SystemComponents", "arbor-shoot-dev-web-system", SHOOT),
        resource("kubernetes:apps/v1:DaemonSet", "arbor-seed-local-1-system-daemonset-x", SEED),
    ]
    handed = state_moves.moved([*old_state()[:2], *objects, *kept])
    assert set(handed) == {o["urn"] for o in objects}
    assert set(handed.values()) == {"the shoot's system components (`<shoot>-system`)"}


def test_shoot_info_and_the_kubelet_binding_are_handed_over_to_the_system_components() -> None:
    """GIVEN an older shoot's `shoot-info` and kubelet binding WHEN the moves are read THEN both go to its system."""
    objects = [
        resource("kubernetes:core/v1:ConfigMap", "arbor-shoot-dev-web-shoot-info", SHOOT),
        resource(
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
            "arbor-shoot-dev-web-kube-apiserver-kubelet",
            SHOOT,
        ),
    ]
    kept = [
        # Of another name, or a seed's: not the shoot's.
        resource("kubernetes:core/v1:ConfigMap", "arbor-shoot-dev-web-shoot-info-extra", SHOOT),
        resource("kubernetes:core/v1:ConfigMap", "arbor-seed-local-1-shoot-info", SEED),
        resource("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "arbor-shoot-dev-web-join-x", SHOOT),
    ]
    handed = state_moves.moved([*old_state()[:2], *objects, *kept])
    assert set(handed) == {o["urn"] for o in objects}
    assert set(handed.values()) == {"the shoot's system components (`<shoot>-system`)"}


def test_the_extensions_rights_on_a_shoots_records_are_handed_over_to_their_object_set() -> None:
    """GIVEN an older shoot's extensions Role and RoleBinding WHEN the moves are read THEN both go to one ObjectSet."""
    rbac = "kubernetes:rbac.authorization.k8s.io/v1"
    objects = [
        resource(f"{rbac}:Role", "arbor-shoot-dev-web-extensions-role", SHOOT),
        resource(f"{rbac}:RoleBinding", "arbor-shoot-dev-web-extensions-rolebinding", SHOOT),
    ]
    # The seed's own rights (a ClusterRole and its binding, under the Seed) stay where they are.
    kept = [resource(f"{rbac}:ClusterRole", "arbor-seed-local-1-extensions-clusterrole", SEED)]
    handed = state_moves.moved([*old_state()[:2], *objects, *kept])
    assert set(handed) == {o["urn"] for o in objects}
    assert set(handed.values()) == {state_moves.EXTENSION_RIGHTS}


def test_the_object_sets_of_components_started_together_are_handed_over_to_their_groups() -> None:
    """GIVEN an older shoot's ObjectSet per component WHEN the moves are read THEN etcd's and the controllers' move."""
    sets = {
        n: resource(state_moves.OBJECT_SET, f"arbor-shoot-dev-web-{n}", SHOOT)
        for n in (
            "etcd-main",
            "etcd-events",
            "kube-controller-manager",
            "kube-scheduler",
            "kube-apiserver",
            "etcd",
            "grm-source",
        )
    }
    handed = {
        urn.rsplit("::", 1)[-1]: now for urn, now in state_moves.moved([*old_state()[:2], *sets.values()]).items()
    }
    assert handed == {
        "arbor-shoot-dev-web-etcd-main": "the shoot's etcd (`<shoot>-etcd`)",
        "arbor-shoot-dev-web-etcd-events": "the shoot's etcd (`<shoot>-etcd`)",
        "arbor-shoot-dev-web-kube-controller-manager": "its controllers (`<shoot>-controllers`)",
        "arbor-shoot-dev-web-kube-scheduler": "its controllers (`<shoot>-controllers`)",
    }


def test_a_hosted_control_planes_objects_are_handed_over_to_their_components_object_sets() -> None:
    """GIVEN an older control plane, a resource per object WHEN the moves are read THEN each goes to its component.

    A LoadBalancer Service stays (its status feeds DNS records), and so do objects of the same kinds that are not
    the control plane's (machine-controller-manager's, the seed's).
    """
    objects = [
        resource("kubernetes:apps/v1:StatefulSet", "arbor-shoot-dev-web-etcd-main", SHOOT),
        resource("kubernetes:apps/v1:Deployment", "arbor-shoot-dev-web-kube-apiserver", SHOOT),
        resource("kubernetes:core/v1:Service", "arbor-shoot-dev-web-etcd-events-client", SHOOT),
        resource(SERVICE, "arbor-shoot-dev-web-kube-apiserver", SHOOT, inputs={"spec": {"type": "ClusterIP"}}),
        resource("kubernetes:core/v1:ConfigMap", "arbor-shoot-dev-web-kube-scheduler-kubeconfig", SHOOT),
    ]
    kept = [
        resource("kubernetes:apps/v1:Deployment", "arbor-shoot-dev-web-workers-mcm-deployment", SHOOT),
        resource("kubernetes:core/v1:ConfigMap", "arbor-shoot-dev-web-workers-mcm-configmap", SHOOT),
        resource("kubernetes:apps/v1:Deployment", "arbor-seed-local-1-kube-apiserver", SEED),
    ]
    handed = state_moves.moved([*old_state()[:2], *objects, *kept])
    assert set(handed) == {o["urn"] for o in objects}
    balancer = resource(SERVICE, "arbor-shoot-dev-web-kube-apiserver", SHOOT, inputs={"spec": {"type": "LoadBalancer"}})
    assert state_moves.moved([*old_state()[:2], balancer]) == {}
    assert set(handed.values()) == {state_moves.COMPONENT_OBJECTS}


def test_a_local_self_hosted_shoots_mirror_pods_are_handed_over_to_their_nodes_object_set() -> None:
    """GIVEN an older self-hosted shoot's mirror pods, one resource each WHEN the moves are read THEN each is handed."""
    pods = [
        resource("kubernetes:core/v1:Pod", f"arbor-shoot-dev-web-{c}-cp-0", SHOOT)
        for c in ("etcd-main", "kube-apiserver")
    ]
    kept = resource("pulumi-python:dynamic/arbor:ObjectSet", "arbor-shoot-dev-web-static-pods-cp-0", SHOOT)
    handed = state_moves.moved([*old_state()[:2], *pods, kept])
    assert set(handed) == {p["urn"] for p in pods}


def test_a_self_hosted_shoots_user_data_secrets_are_handed_over_to_their_object_sets() -> None:
    """GIVEN an older self-hosted shoot's user-data Secrets WHEN the moves are read THEN each goes to its ObjectSet."""
    root = f"{P}$arbor:shoot:Shoot::arbor-shoot-ops-root"
    secrets = [resource(SECRET, f"arbor-shoot-ops-root-user-data-{pool}", root) for pool in ("cp", "pool-a")]
    # The ObjectSets that keep them now, and a Secret of the shoot that is not user data, stay.
    kept = [
        resource("pulumi-python:dynamic/arbor:ObjectSet", "arbor-shoot-ops-root-user-data-cp", root),
        resource(SECRET, "arbor-shoot-ops-root-bootstrap-token", root),
    ]
    shoot = resource("arbor:shoot:Shoot", "arbor-shoot-ops-root", P)
    handed = state_moves.moved([shoot, *secrets, *kept])
    assert handed == dict.fromkeys((s["urn"] for s in secrets), "its ObjectSet (`<shoot>-user-data-<pool>`)")


def test_machine_controller_managers_objects_are_handed_over_to_its_two_object_sets() -> None:
    """GIVEN an older shoot's MCM objects, one resource each WHEN the moves are read THEN each goes to its set.

    The cloud credentials and what waits for its finalizers stay where they are.
    """
    workers = f"{SHOOT}$arbor:shoot:Workers::arbor-shoot-dev-web-workers"
    kinds = ("apps/v1:Deployment", "core/v1:ConfigMap", "rbac.authorization.k8s.io/v1:RoleBinding")
    in_seed = [resource(f"kubernetes:{t}", f"arbor-shoot-dev-web-workers-mcm-{t.rsplit(':', 1)[1].lower()}", workers)
               for t in kinds]  # fmt: skip
    in_shoot = [
        resource(
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
            "arbor-shoot-dev-web-workers-mcm-shoot-clusterrole",
            workers,
        )
    ]
    kept = [
        resource("kubernetes:core/v1:Secret", "arbor-shoot-dev-web-workers-cloudprovider", workers),
        resource("pulumi-python:dynamic/arbor:MachinesReleased", "arbor-shoot-dev-web-workers-mcm-released", workers),
    ]
    parent = {"urn": workers, "type": "arbor:shoot:Workers", "parent": SHOOT}
    handed = state_moves.moved([*old_state()[:1], parent, *in_seed, *in_shoot, *kept])
    rights = "MCM's rights in the shoot (`<shoot>-workers-mcm-shoot`)"
    assert handed == {**dict.fromkeys((r["urn"] for r in in_seed), state_moves.MCM_SEED),
                      **dict.fromkeys((r["urn"] for r in in_shoot), rights)}  # fmt: skip


def test_the_resource_managers_identities_and_webhook_are_handed_over_to_their_object_sets() -> None:
    """GIVEN an older shoot's resource-manager objects WHEN the moves are read THEN each goes to its cluster's set."""
    rbac = "kubernetes:rbac.authorization.k8s.io/v1"
    objects = [
        resource(f"{rbac}:Role", "arbor-shoot-dev-web-grm-source-role", SHOOT),
        resource(f"{rbac}:RoleBinding", "arbor-shoot-dev-web-grm-target-rolebinding", SHOOT),
        resource("kubernetes:core/v1:ServiceAccount", "arbor-shoot-dev-web-grm-target-serviceaccount", SHOOT),
        resource(
            "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration",
            "arbor-shoot-dev-web-grm-webhook",
            SHOOT,
        ),
    ]
    # Its Deployment, configuration and generic kubeconfig (a cloud seed runs them) stay where they are.
    kept = [resource("kubernetes:apps/v1:Deployment", "arbor-shoot-dev-web-grm-deployment", SHOOT)]
    handed = state_moves.moved([*old_state()[:2], *objects, *kept])
    assert handed == dict.fromkeys((o["urn"] for o in objects), state_moves.GRM_OBJECTS)


def test_a_shoots_client_ca_in_the_garden_is_handed_over_to_its_object_set() -> None:
    """GIVEN an older shoot's InternalSecret `<shoot>.ca-client` WHEN the moves are read THEN only it is handed."""
    internal = resource("kubernetes:arbor.dev/v1alpha1:InternalSecret", "arbor-shoot-dev-web-ca-client", SHOOT)
    # The client CA itself (its credential) and the ObjectSet that keeps the InternalSecret now stay.
    kept = [
        resource("pulumi-python:dynamic/arbor:CertificateAuthority", "arbor-shoot-dev-web-pki-ca-client", SHOOT),
        resource("pulumi-python:dynamic/arbor:ObjectSet", "arbor-shoot-dev-web-ca-client", SHOOT),
    ]
    handed = state_moves.moved([*old_state()[:2], internal, *kept])
    assert handed == {internal["urn"]: "its resource (`<shoot>-ca-client`)"}


def test_a_zones_user_data_class_and_machine_deployment_are_handed_over_to_its_object_set() -> None:
    """GIVEN an older pool zone, a resource per object WHEN the moves are read THEN the three go to the zone's set."""
    workers = f"{SHOOT}$arbor:shoot:Workers::arbor-shoot-dev-web-workers"
    machine = "kubernetes:machine.sapcloud.io/v1alpha1"
    zone = [
        resource(SECRET, "arbor-shoot-dev-web-workers-user-data-pool-a-z1", workers),
        resource(f"{machine}:MachineClass", "arbor-shoot-dev-web-workers-class-pool-a-z1", workers),
        resource(f"{machine}:MachineDeployment", "arbor-shoot-dev-web-workers-deployment-pool-a-z2", workers),
    ]
    # MCM's own Deployment is MCM's move; the zone's ObjectSet is where they go.
    kept = resource("pulumi-python:dynamic/arbor:ObjectSet", "arbor-shoot-dev-web-workers-pool-a-z1", workers)
    parent = {"urn": workers, "type": "arbor:shoot:Workers", "parent": SHOOT}
    handed = state_moves.moved([*old_state()[:1], parent, *zone, kept])
    assert handed == dict.fromkeys((r["urn"] for r in zone), "its zone's ObjectSet (`<shoot>-workers-<pool>-z<n>`)")


def test_a_shoots_admin_kubeconfig_is_forgotten_not_deleted() -> None:
    """GIVEN an older shoot's AdminKubeconfig WHEN the moves are read THEN it leaves the state (issued on request)."""
    kept = resource("pulumi-python:dynamic/arbor:AdminKubeconfig", "garden-admin-kubeconfig", SEED)
    admin = resource("pulumi-python:dynamic/arbor:AdminKubeconfig", "arbor-shoot-dev-web-admin-kubeconfig", SHOOT)
    handed = state_moves.moved([*old_state()[:2], admin, kept])
    assert list(handed) == [admin["urn"]]
    assert "make kubeconfig" in handed[admin["urn"]]


def test_a_hosted_shoots_leaves_only_its_secrets_hold_are_handed_over_to_its_leaf_set() -> None:
    """GIVEN certificates kept by Secrets alone, a published one and a self-hosted one WHEN read THEN the first go."""
    certificate = "pulumi-python:dynamic/arbor:Certificate"
    hosted = [
        resource(certificate, f"arbor-shoot-dev-web-pki-{leaf}", SHOOT, inputs={"published": False, "secrets": {}})
        for leaf in ("etcd-peer", "kube-apiserver")
    ]
    published = resource(certificate, "arbor-shoot-dev-web-pki-arbor-client", SHOOT, inputs={"published": True})
    root = f"{P}$arbor:shoot:Shoot::arbor-shoot-ops-root"
    self_hosted = resource(certificate, "arbor-shoot-ops-root-pki-kube-apiserver", root, inputs={"commonName": "x"})
    shoots = [
        resource("arbor:shoot:Shoot", "arbor-shoot-dev-web", P),
        resource("arbor:shoot:Shoot", "arbor-shoot-ops-root", P),
    ]
    handed = state_moves.moved([*shoots, *hosted, published, self_hosted])
    assert set(handed) == {c["urn"] for c in hosted}
    assert set(handed.values()) == {"the shoot's leaves (`<shoot>-pki-leaves`)"}


def test_a_self_hosted_local_shoots_leaves_are_handed_over_to_its_leaf_set_and_a_cloud_ones_stay() -> None:
    """GIVEN self-hosted shoots' leaves, writing nothing, one beside a local cluster WHEN read THEN only those go.

    A leaf that writes its Secrets in a seed (a hosted shoot's published client) stays too, and so do the shoot's CAs
    and anything protected: a state move never drops data from the state.
    """
    certificate = "pulumi-python:dynamic/arbor:Certificate"
    local, cloud = (f"{P}$arbor:shoot:Shoot::arbor-shoot-{n}" for n in ("ops-root", "ops-edge"))
    shoots = [resource("arbor:shoot:Shoot", f"arbor-shoot-{n}", P) for n in ("ops-root", "ops-edge", "dev-web")]
    cluster = resource(state_moves.LOCAL_CLUSTER, "arbor-shoot-ops-root-cluster", local)
    leaves = [resource(certificate, f"arbor-shoot-ops-root-pki-{leaf}", local, inputs={"commonName": leaf})
              for leaf in ("etcd-peer", "kube-apiserver")]  # fmt: skip
    stays = [
        resource(certificate, "arbor-shoot-ops-edge-pki-kube-apiserver", cloud, inputs={"commonName": "x"}),
        # Its CAs: another type (whose name starts with the certificate's), and protected.
        resource(f"{certificate}Authority", "arbor-shoot-ops-root-pki-ca", local, inputs={"commonName": "x"}),
        resource(certificate, "arbor-shoot-ops-root-pki-protected", local, inputs={}, protect=True),
        resource(certificate, "arbor-shoot-dev-web-pki-arbor-client", SHOOT,
                 inputs={"published": True, "kubeconfig": "seed"}),
        resource(state_moves.LOCAL_CLUSTER, "arbor-shoot-dev-web-cluster", SHOOT),
    ]  # fmt: skip
    handed = state_moves.moved([*shoots, cluster, *leaves, *stays])
    assert set(handed) == {c["urn"] for c in leaves}


def test_node_agents_service_account_is_handed_over_to_its_token() -> None:
    """GIVEN an older shoot's node-agent ServiceAccount resource WHEN the moves are read THEN its token takes it.

    The AccessToken makes that account now, so the object stays in the shoot (its tokens stay valid) while the
    resource leaves the state; another ServiceAccount of the shoot (the garden's, say) stays.
    """
    account = resource("kubernetes:core/v1:ServiceAccount", "arbor-shoot-dev-web-node-agent-serviceaccount", SHOOT)
    other = resource("kubernetes:core/v1:ServiceAccount", "arbor-shoot-dev-web-garden-serviceaccount", SHOOT)
    token = resource("pulumi-python:dynamic/arbor:AccessToken", "arbor-shoot-dev-web-node-agent-token", SHOOT)
    handed = state_moves.moved([*old_state()[:2], account, other, token])
    assert handed == {account["urn"]: "its token (`<shoot>-node-agent-token`)"}
