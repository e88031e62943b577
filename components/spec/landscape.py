"""The landscape spec: pydantic models of the config key `arbor:landscape` (garden, seeds, shoots), and `parse_fields`.

`parse_fields` checks every field before anything is registered and reports every problem at once, one line
each, as `<path>: <reason>` (for example `landscape.seeds[0].name: 'Local' is not a DNS-1123 label (lower-case
letters, digits and '-')`). The field rules are in components/spec/fields.py and the shoot models in
components/spec/shoot.py. Checks across fields and objects (references, unique names, derived name lengths,
version skew, CIDR overlaps) are in components/checks and run only on input whose fields are valid, so one
mistake is reported once. No Pulumi import here.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, ValidationError, model_validator

from components.kinds import (
    LOCAL_CLUSTER_MAX_NODES,
    DnsProviderType,
    IPFamily,
    MemberKind,
    ProviderType,
    Role,
    StackLayout,
)
from components.spec import cidrs
from components.spec.catalogue import CloudProfiles
from components.spec.extensions import Extensions
from components.spec.fields import (
    DNS_LABEL,
    BucketName,
    DnsLabel,
    DnsSubdomain,
    Model,
    Ranges,
    Region,
    SecretKey,
    SpecError,
    Zones,
    error_lines,
    plain_networks,
    shown,
    unique,
    yaml_kind,
)
from components.spec.shoot import EncryptionSpec, ShootSpec


class ClusterSpec(Model):
    """A layer's cluster: created by arbor (`nodes`), or an existing one (`kubeconfigSecret`)."""

    nodes: int = Field(
        1, ge=0, le=LOCAL_CLUSTER_MAX_NODES, description="Nodes of a created cluster (kwok nodes on local)."
    )
    kubeconfig_secret: SecretKey | None = Field(
        None,
        alias="kubeconfigSecret",
        description="Name of a secret config key of this stack that holds the kubeconfig of an existing cluster.",
    )

    @property
    def existing(self) -> bool:
        """Whether the cluster exists already and arbor only connects to it."""
        return self.kubeconfig_secret is not None


# A token issuer's URL as clouds fetch it: https, a host, an optional port and path (no query, no fragment).
ISSUER_URL = re.compile(r"https://[A-Za-z0-9][-A-Za-z0-9.]{0,252}(:[0-9]{1,5})?(/[-A-Za-z0-9._~%/]{0,400})?", re.ASCII)
# An IAM OIDC provider's ARN: its name is the issuer's URL without `https://`.
OIDC_PROVIDER_ARN = re.compile(r"arn:aws(-[a-z]+){0,2}:iam::[0-9]{12}:oidc-provider/(.+)", re.ASCII)


def _issuer_url(value: str) -> str:
    """An issuer's https URL, as its tokens' `iss` claim says it; no trailing slash (clouds compare it exactly)."""
    if value.endswith("/"):
        raise ValueError("ends in '/': write it as its tokens' `iss` claim says it, without the trailing slash")
    if not ISSUER_URL.fullmatch(value):
        raise ValueError(f"{shown(value)} is not an https URL (https://<host>[:<port>][/<path>], no query)")
    return value


class IssuerSpec(Model):
    """An existing seed's ServiceAccount token issuer, which its clouds trust instead of keys (workload identity)."""

    url: Annotated[str, AfterValidator(_issuer_url)] = Field(
        description="The cluster's `--service-account-issuer`: an https URL whose discovery document and keys anyone "
        "may read (EKS: its OIDC issuer URL; GKE: https://container.googleapis.com/v1/projects/<project>/locations/"
        "<location>/clusters/<name>; local: its API server's URL, which serves them)."
    )
    oidc_provider: str | None = Field(
        None,
        alias="oidcProvider",
        description="aws: the ARN of the account's IAM OIDC provider for this issuer, where one exists (an account "
        "holds one per issuer); absent: arbor makes it.",
    )

    @model_validator(mode="after")
    def _provider_names_url(self) -> IssuerSpec:
        """The named IAM OIDC provider is the issuer's: its ARN ends in the URL without `https://`."""
        if self.oidc_provider is None:
            return self
        found = OIDC_PROVIDER_ARN.fullmatch(self.oidc_provider)
        if found is None:
            raise ValueError(
                f"oidcProvider: {shown(self.oidc_provider)} is not an IAM OIDC provider's ARN, "
                "e.g. arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-central-1.amazonaws.com/id/EXAMPLE"
            )
        if found.group(2) != self.url.removeprefix("https://"):
            name = self.url.removeprefix("https://")
            raise ValueError(
                f"oidcProvider: names another issuer's provider; {self.url}'s ends in oidc-provider/{name}"
            )
        return self


class SeedClusterSpec(ClusterSpec):
    """A seed's cluster; an existing one may name its token issuer, so its clouds trust its tokens, not keys."""

    issuer: IssuerSpec | None = Field(
        None,
        description="With kubeconfigSecret: the cluster's ServiceAccount token issuer, which its bucket's and its "
        "shoots' machines' identities trust (workload identity), so no key is made. Absent: keys (docs/backups.md).",
    )

    @model_validator(mode="after")
    def _issuer_of_existing(self) -> SeedClusterSpec:
        """A seed arbor makes publishes its own issuer; only an existing one's is given."""
        if self.issuer is not None and self.kubeconfig_secret is None:
            raise ValueError("issuer: only an existing cluster's (kubeconfigSecret) is given; arbor knows its own")
        return self


class Member(Model):
    """A project member."""

    name: str = Field(min_length=1)
    kind: MemberKind = MemberKind.USER
    role: Role


class ProjectSpec(Model):
    """A project: a namespace `garden-<name>` in the garden, its members and their roles."""

    name: DnsLabel
    members: list[Member] = Field(default_factory=list)


REGION = "The cloud region its clusters run in, e.g. europe-west1 or eu-central-1 (on local: local)."
ZONES = "The region's zones its clusters use, e.g. [europe-west1-b, europe-west1-c] (on local: [local-a])."


def local_location(data: Any) -> Any:
    """A local cluster's region and zones where none are given; a cloud's must be given (no silent `local`)."""
    if isinstance(data, dict) and data.get("provider") not in (ProviderType.GCP, ProviderType.AWS):
        return {"region": "local", "zones": ["local-a"], **data}
    return data


class DnsSpec(Model):
    """The zone the shoots' API records are written in: `api.<shoot>.<project>[.internal].<domain>`."""

    provider: DnsProviderType = Field(description="aws-route53 (Route 53) or google-clouddns (Cloud DNS).")
    zone: str = Field(
        min_length=1, description="The hosted zone's ID (Route 53) or the managed zone's name (Cloud DNS)."
    )
    domain: DnsSubdomain = Field(description="The zone's domain the shoots' names are under, e.g. example.com.")


class GardenSpec(Model):
    """The garden: the API where projects, seeds and shoots are recorded."""

    provider: ProviderType = ProviderType.LOCAL
    region: Region = Field(description=REGION)
    zones: Zones = Field(min_length=1, description=ZONES)
    cluster: ClusterSpec = ClusterSpec()
    projects: list[ProjectSpec] = Field(default_factory=list)
    encryption: EncryptionSpec | None = Field(
        None, description="Encryption at rest of the garden's own API server (local gardens; off when absent)."
    )
    dns: DnsSpec | None = Field(
        None, description="Where shoots' API domain names are recorded (shoots on cloud seeds or machines need it)."
    )

    @model_validator(mode="before")
    @classmethod
    def _location(cls, data: Any) -> Any:
        """A local garden runs in region `local`, zone `local-a`, unless it says otherwise."""
        return local_location(data)


class SeedNetworks(Model):
    """The seed cluster's own ranges; shoots hosted on the seed must not overlap them."""

    ip_families: tuple[IPFamily, ...] = Field((IPFamily.IPV4,), alias="ipFamilies")
    nodes: Ranges = ()
    pods: Ranges
    services: Ranges

    def networks(self) -> cidrs.Networks:
        """The families and ranges as plain values for the CIDR rules."""
        return plain_networks(self.ip_families, nodes=self.nodes, pods=self.pods, services=self.services)


class BackupSpec(Model):
    """Where the seed keeps its shoots' etcd backups and state: a bucket arbor makes in an object store."""

    provider: ProviderType = Field(description="The object store's provider: gcp (Cloud Storage) or aws (S3).")
    region: Region | None = Field(None, description="The bucket's region (default: the seed's).")
    bucket: BucketName | None = Field(
        None, description="The bucket's name, unique in its object store (default: arbor-<seed>-<hash>)."
    )


class SeedSpec(Model):
    """A seed: a cluster that hosts shoot control planes."""

    name: DnsLabel
    provider: ProviderType
    region: Region = Field(description=REGION)
    zones: Zones = Field(min_length=1, description=ZONES)
    cluster: SeedClusterSpec = SeedClusterSpec()
    networks: SeedNetworks = SeedNetworks(pods=("10.0.0.0/12",), services=("10.16.0.0/16",))
    backup: BackupSpec | None = None
    extensions: Extensions = Field(
        default_factory=list, description="Extension installations on the seed (docs/extensions.md)."
    )

    @model_validator(mode="before")
    @classmethod
    def _location(cls, data: Any) -> Any:
        """A local seed runs in region `local`, zone `local-a`, unless it says otherwise."""
        return local_location(data)


def _shoot_key(value: str) -> str:
    """A shoot named as `<project>/<name>`, both DNS-1123 labels."""
    project, _, name = value.partition("/")
    if not (DNS_LABEL.fullmatch(project) and DNS_LABEL.fullmatch(name)):
        raise ValueError(f"'{value}' is not a shoot as <project>/<name> (for example dev/web)")
    return value


class DeletionConfirmation(Model):
    """What an update may delete, as Gardener's `confirmation.gardener.cloud/deletion` annotation confirms it.

    A shoot, or a seed that hosts shoots, removed from the spec is deleted with its clusters and data only when it
    is named here; the checks refuse a name still in the spec (components/checks/previous.py).
    """

    shoots: Annotated[list[Annotated[str, AfterValidator(_shoot_key)]], AfterValidator(unique)] = Field(
        default_factory=list, description="Removed shoots to delete, as <project>/<name>."
    )
    seeds: Annotated[list[DnsLabel], AfterValidator(unique)] = Field(
        default_factory=list, description="Removed seeds to delete, with the control planes they hosted."
    )


class LandscapeSpec(Model):
    """A whole landscape: one garden, its seeds and its shoots."""

    garden: GardenSpec
    seeds: list[SeedSpec] = Field(default_factory=list)
    shoots: list[ShootSpec] = Field(default_factory=list)
    confirm_deletion: DeletionConfirmation = Field(default_factory=DeletionConfirmation, alias="confirmDeletion")
    stacks: StackLayout = Field(
        default=StackLayout.ONE,
        description="one: the whole landscape in this stack; perSeed: this stack keeps the garden (and self-hosted "
        "shoots) and each seed with its shoots gets a stack `<this stack>.<seed>` (docs/shards.md).",
    )
    cloud_profiles: CloudProfiles = Field(
        default_factory=dict,
        alias="cloudProfiles",
        description="Per provider, Gardener's CloudProfile: Kubernetes versions and machine images offered "
        "(extending arbor's, components/spec/cloudprofiles.yaml).",
    )


def parse_fields(raw: object) -> LandscapeSpec:
    """Validates every field of the raw config object; raises SpecError with every problem found.

    The checks across fields and objects run on the result (components/checks: `parse_landscape` does both).
    """
    if not isinstance(raw, dict):
        raise SpecError([f"landscape: must be a mapping (key: value), not {yaml_kind(raw)}"])
    try:
        spec = LandscapeSpec.model_validate(raw)
    except ValidationError as err:
        raise SpecError(error_lines(err, LandscapeSpec)) from None
    return spec
