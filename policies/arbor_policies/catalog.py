"""Every policy of the pack: its name, what it enforces, and the pure rule that checks it.

`__main__.py` turns each into a pulumi-policy policy; the unit tests run the same rules on fixtures. Enforcement
levels and settings live in `policies/config.json` (the file `--policy-pack-config` takes), one entry per policy.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbor_policies import access, cloud, kubernetes, landscape, network, rbac
from arbor_policies.rendered import expanded
from arbor_policies.resource import Resource

Rule = Callable[[Resource, Mapping[str, Any]], list[str]]
StackRule = Callable[[list[Resource], Mapping[str, Any]], list[str]]
CONFIG = Path(__file__).resolve().parent.parent / "config.json"
LEVELS = ("advisory", "mandatory", "disabled")


@dataclass(frozen=True)
class Policy:
    """One policy: a resource rule (each resource alone) or a stack rule (all resources at once)."""

    name: str
    description: str
    rule: Rule | None = None
    stack_rule: StackRule | None = None


def _each(fn: Callable[[str, Mapping[str, Any]], str | None]) -> Rule:
    """A rule of (type, props) returning one message or None, as a rule of a resource."""

    def rule(r: Resource, config: Mapping[str, Any]) -> list[str]:
        message = fn(r.type, r.props)
        return [message] if message else []

    return rule


def _local_load_balancer(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """`kubernetes.load_balancer_on_local` with the resource's provider."""
    message = kubernetes.load_balancer_on_local(r.type, r.props, r.provider)
    return [message] if message else []


def _overlaps(resources: list[Resource], config: Mapping[str, Any]) -> list[str]:
    """`network.overlapping_shoots` over every resource."""
    return network.overlapping_shoots((r.type, r.props) for r in resources)


POLICIES: tuple[Policy, ...] = (
    # Kubernetes providers and objects
    Policy("kubernetes-provider-cluster-identifier", "Every Kubernetes provider sets cluster_identifier.",
           _each(kubernetes.missing_cluster_identifier)),
    Policy("local-no-load-balancer", "No Service of type LoadBalancer on a local cluster.", _local_load_balancer),
    Policy("load-balancer-restricted", "LoadBalancer Services are internal or limit their source ranges.",
           kubernetes.load_balancer_restricted),
    Policy("no-privileged-containers", "No privileged container outside the allowed workloads.",
           kubernetes.privileged_containers),
    Policy("host-network-only-control-plane", "Only allowed pods (static control-plane pods) use hostNetwork.",
           kubernetes.host_network),
    Policy("containers-request-resources", "Every container requests cpu and memory.",
           kubernetes.resource_requests),
    Policy("images-pinned", "Every image names a version tag or digest, never latest.", kubernetes.images_pinned),
    Policy("images-from-allowed-registries", "Images come only from the allowed registries.",
           kubernetes.image_registries),
    Policy("etcd-persistent-on-cloud-seeds", "etcd on a cloud seed keeps its data on a persistent volume.",
           kubernetes.etcd_without_volume),
    Policy("namespaces-labelled-with-owner", "Every Namespace carries a label naming its owner.",
           kubernetes.namespace_labels),
    Policy("no-kube-apiserver-sidecars", "kube-apiserver pods run no sidecar container.",
           kubernetes.apiserver_sidecars),
    # RBAC
    Policy("no-cluster-admin-bindings", "cluster-admin is bound only to the allowed subjects.",
           rbac.cluster_admin_bindings),
    Policy("no-public-rbac-subjects", "No binding grants a role to anonymous, unauthenticated or all users.",
           rbac.public_subjects),
    Policy("no-wildcard-rbac-rules", "No role grants every resource of every API group.", rbac.wildcard_rules),
    # arbor's records and reconciler resources
    Policy("project-has-admin", "Every project has an admin member.", landscape.project_has_admin),
    Policy("kubernetes-version-supported", "Shoots, pools and clusters run a supported Kubernetes minor.",
           landscape.kubernetes_versions),
    Policy("shoot-owner-labels", "Every shoot carries the required labels (its owning team).",
           landscape.shoot_labels),
    Policy("admin-kubeconfig-lifetime", "Admin kubeconfigs expire within the allowed hours.",
           landscape.admin_kubeconfig_lifetime),
    Policy("certificate-lifetime", "Certificates and CAs live no longer than the allowed days.",
           landscape.certificate_lifetime),
    Policy("secrets-encrypted-at-rest", "Every API server arbor configures encrypts secrets at rest.",
           landscape.encryption_at_rest),
    Policy("data-bearing-resources-protected", "Keys, CAs and clusters are protected against deletion.",
           landscape.data_protected),
    # credentials
    Policy("extension-namespaces-without-borrowed-kubeconfigs",
           "No extension namespace holds a kubeconfig with the seed agent's or an admin's credentials.",
           access.extension_kubeconfigs),
    Policy("access-token-lifetime", "Every access token (garden access, node-agent) has a bounded lifetime.",
           access.access_token_lifetime),
    # networks
    Policy("no-overlap-across-shoots-of-a-seed",
           "Shoots hosted on one seed have disjoint node, pod and service ranges.", stack_rule=_overlaps),
    Policy("no-world-ingress", "No ingress from 0.0.0.0/0 or ::/0 except health checks and load balancers.",
           _each(network.world_ingress)),
    Policy("ipv6-subnets-are-64", "Every IPv6 subnet is a /64.", _each(network.ipv6_subnet_not_64)),
    # cloud machines and clusters
    Policy("aws-imdsv2-required", "AWS machines require IMDSv2 with a bounded hop limit.", cloud.aws_metadata_v2),
    Policy("aws-machine-disks-encrypted", "AWS machines' volumes are encrypted.", cloud.aws_disks_encrypted),
    Policy("gcp-machines-without-external-ip", "GCP machines have no external IP.", cloud.gcp_no_external_ip),
    Policy("gcp-project-ssh-keys-blocked", "GCP machines refuse project-wide SSH keys.",
           cloud.gcp_project_ssh_keys_blocked),
    Policy("eks-endpoint-restricted", "An EKS API endpoint on the internet limits its source ranges.",
           cloud.eks_public_endpoint),
    Policy("gke-deletion-protection", "GKE clusters keep deletion protection on.", cloud.gke_deletion_protection),
    Policy("backup-buckets-private-and-versioned",
           "Backup buckets are never public, keep old versions and are never force-destroyed; a bucket policy makes "
           "nothing public but an issuer's discovery documents.",
           cloud.backup_bucket_safety),
)  # fmt: skip


def load_config(path: Path = CONFIG) -> dict[str, dict[str, Any]]:
    """Each policy's entry of the config file: `enforcementLevel` and its settings."""
    data = json.loads(path.read_text())
    return {name: dict(entry) for name, entry in data.items()}


def settings(name: str, config: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """A policy's settings (its config entry without the enforcement level)."""
    entry = (config if config is not None else load_config()).get(name) or {}
    return {k: v for k, v in entry.items() if k != "enforcementLevel"}


def run(policy: Policy, resources: Iterable[Resource], config: Mapping[str, Any]) -> list[str]:
    """Every message of one policy over `resources`, as the engine would report them."""
    listed = [each for r in resources for each in expanded(r)]
    if policy.stack_rule:
        return policy.stack_rule(listed, config)
    assert policy.rule
    return [m for r in listed for m in policy.rule(r, config)]
