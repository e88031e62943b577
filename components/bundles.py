"""The hand-over bundles: plain data one tier gives the next, never the component that made it.

A provider hands a layer its cluster (`ClusterAccess`) and a shoot's network (`NetworkAccess`); the garden hands
the seeds and shoots `GardenAccess`, a seed hands its shoots `SeedAccess` (as pulumi-eks hands on its cluster
outputs). They live below every component, so layers sit side by side and depend on bundles, not on each other.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.kinds import ProviderType


@dataclass(frozen=True)
class Issuer:
    """A cluster's ServiceAccount token issuer, as a cloud's identity trusts it (workload identity)."""

    url: pulumi.Output[str]
    # What names the issuer to its cloud's identities: AWS roles' IAM OIDC provider (its ARN), a GCP workload
    # identity pool's provider (its name); None where none is made.
    provider: pulumi.Output[str] | None = None
    # The cloud `provider` is in: a bucket of another cloud makes its own trust of `url`.
    cloud: ProviderType | None = None
    # What must exist before its tokens are trusted: the documents a published issuer's cloud fetches.
    ready: Sequence[pulumi.Resource] = ()


def trusted_issuer(issuer: Issuer | None, user: str, *, named: bool = False) -> Issuer:
    """The seed's issuer that `user`'s identity trusts (`named`: by its IAM OIDC provider), which the plan promised."""
    if issuer is None or (named and issuer.provider is None):
        raise ValueError(f"{user} needs the seed's token issuer, which it has not")
    return issuer


@dataclass(frozen=True)
class ClusterAccess:
    """A cluster as the layers use it: its key, API endpoint, admin kubeconfig (secret) and a provider."""

    key: str
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    # Makes its Kubernetes provider, on first use (`provider`): a cluster only reconcilers reach keeps none.
    make_provider: Callable[[], k8s.Provider]
    # What must exist before objects are applied to the cluster (its nodes, say); empty when nothing.
    ready: Sequence[pulumi.Resource] = ()
    # The names of the nodes arbor made, by worker pool (local shoots; a cloud's machines name themselves).
    nodes_by_pool: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # Its identity, `<provider>:<name>` (naming.cluster_identifier): what a policy reads to tell local from cloud.
    identifier: str = ""
    # A reference to a kubeconfig file the cluster holds itself (a local cluster's), else None.
    kubeconfig_file: pulumi.Output[str] | None = None
    # Its ServiceAccount token issuer where a cloud can trust it (a seed arbor made on EKS), else None.
    issuer: Issuer | None = None

    @functools.cached_property
    def provider(self) -> k8s.Provider:
        """The cluster's Kubernetes provider, registered the first time a resource asks for it."""
        return self.make_provider()

    @property
    def reach(self) -> pulumi.Output[str]:
        """A reconciler's `kubeconfig` input: the cluster's own file where it has one (credentials held once)."""
        return self.kubeconfig_file if self.kubeconfig_file is not None else self.kubeconfig


@dataclass(frozen=True)
class NetworkAccess:
    """A shoot's network as the later steps use it: every range resolved, and what must exist first.

    `ranges` maps `nodes`, `pods` and `services` to their CIDRs in the order of the shoot's families, with the
    IPv6 ones the cloud assigned; `subnets` maps each planned subnet name to its ID (empty on local).
    """

    ranges: pulumi.Output[dict[str, list[str]]]
    subnets: pulumi.Output[dict[str, str]]
    ready: Sequence[pulumi.Resource] = ()
    # What machine classes point at besides subnets: the nodes' security group and instance profile (aws) or
    # service account (gcp), by MachineClass field name; None where machines need nothing of the cloud (local).
    nodes: pulumi.Output[dict[str, str]] | None = None
    # The VPC (aws) or network (gcp) ID; None on local.
    vpc: pulumi.Output[str] | None = None


@dataclass(frozen=True)
class ExposedControlPlane:
    """A self-hosted cloud shoot's control-plane machine: its ID, its API's balancer address, and what must exist."""

    machine: pulumi.Output[str]
    address: pulumi.Output[str]
    ready: Sequence[pulumi.Resource] = ()


@dataclass(frozen=True)
class MachineCredentials:
    """The cloud identity arbor made for a shoot's machines: the `cloudprovider` Secret's data (secret), its key."""

    data: pulumi.Output[dict[str, str]]
    # The key (and the rights it needs before MCM uses it): the Secret is applied after them.
    ready: Sequence[pulumi.Resource] = ()


@dataclass(frozen=True)
class BackupAccess:
    """A seed's backup bucket: its name, and the `etcd-backup` Secret's data (secret) of the identity that uses it."""

    bucket: str
    data: pulumi.Output[dict[str, str]]
    # The bucket, its settings and the identity's rights: a Secret applied after them is usable at once.
    ready: Sequence[pulumi.Resource] = ()
    # The seed's Secret of the bucket's credentials (`garden/bucket-<bucket>`), read by reference: its reference
    # without the entry's prefix, known once the Secret is written (by the identity itself, or seed.py's set).
    held: pulumi.Output[dict[str, Any]] | None = None


@dataclass(frozen=True)
class HeldSecret:
    """A Secret the seed holds of its own (`garden/bucket-<bucket>`): its seed, namespace and name."""

    kubeconfig: pulumi.Output[str]
    namespace: str
    name: str
    # The seed's identity (`<provider>:<name>`).
    cluster: str = ""
    # What must exist before it is written (the namespace).
    after: Sequence[pulumi.Resource] = ()

    def writes(self) -> dict[str, Any]:
        """Where a writer of its own puts it: its seed (`kubeconfig`, `cluster`), `namespace` and `name`."""
        return {"kubeconfig": self.kubeconfig, "namespace": self.namespace, "cluster": self.cluster, "name": self.name}

    def reference(self, writer: pulumi.Resource) -> pulumi.Output[dict[str, Any]]:
        """Where to read it, through the writer's URN: what reads it by this reference waits for the write."""
        return pulumi.Output.all(self.kubeconfig, writer.urn).apply(
            lambda got: {"kubeconfig": got[0], "namespace": self.namespace, "name": self.name}
        )


@dataclass(frozen=True)
class GardenAccess:
    """What the next layers need of the garden: its cluster, the API, and each project's namespace."""

    cluster: ClusterAccess
    api: list[pulumi.Resource]
    namespaces: dict[str, k8s.core.v1.Namespace]

    def project(self, name: str) -> list[pulumi.Resource]:
        """What a project's objects wait for: its namespace, made after the API, where this stack made it; else the API.

        One dependency, not one per CRD beside it: every dependency is a URN in the state, per resource.
        """
        return [self.namespaces[name]] if name in self.namespaces else list(self.api)


@dataclass(frozen=True)
class SeedAccess:
    """What the shoots need of their seed: its cluster, their namespaces in it, its machine CRDs and etcd storage."""

    name: str
    cluster: ClusterAccess
    namespaces: dict[str, k8s.core.v1.Namespace]
    machine_crds: Sequence[pulumi.Resource] = ()
    # The ManagedResource CRD gardener-resource-manager's always-on controllers watch.
    resource_crds: Sequence[pulumi.Resource] = ()
    # What etcd's persistent volumes need first: the seed's StorageClass (empty where etcd keeps emptyDir).
    etcd_storage: Sequence[pulumi.Resource] = ()
    # Where its shoots' etcd backups go (None: the seed has no backup bucket).
    backup: BackupAccess | None = None
    # The `etcd-backup` ServiceAccount of each shoot's namespace, where the bucket's role trusts its tokens.
    backup_accounts: Mapping[str, pulumi.Resource] = field(default_factory=dict)


@dataclass(frozen=True)
class ServingSecret:
    """A server's certificate as its Secret in the seed namespace holds it: the name, the CA, a checksum."""

    secret: str
    # The CA that issued it (what callers trust: a webhook's caBundle), and the checksum of the Secret's content.
    ca: pulumi.Output[str]
    checksum: pulumi.Output[str]


@dataclass(frozen=True)
class ResourceManagerServing:
    """Where a shoot's gardener-resource-manager serves its webhook (the URL kube-apiserver calls), and what runs it."""

    url: pulumi.Output[str]
    resources: Sequence[pulumi.Resource]
