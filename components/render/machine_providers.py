"""What each provider adds to the worker machinery, pure: its MCM sidecar and its MachineClass provider spec.

Each provider (aws, gcp, local) has a `sidecar_<provider>(namespace)` with Gardener's upstream sidecar image (pinned
with MCM's in components/pins.py), and a `<provider>_machine_class(...)` that renders the class of one pool's zone
(components/render/machines.py names it and holds the envelope); nothing here imports Pulumi.

Machine images: a pool names an image and version (`ubuntu` `24.04`); the cloud needs an ID (an AMI on aws, an
image path on gcp), which the provider's cloud profile pins or looks up (components/plan/catalogue.py) and the
provider hands in resolved. The local provider simulates machines (kwok), so its spec only records the image.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from components.pins import MCM_PROVIDERS
from components.plan.network import NetworkPlan
from components.plan.nodes import POOL_LABEL
from components.plan.values import ZoneDeployment
from components.render.machine_pools import machine_class
from components.render.machines import ALL_VERBS, Object, Sidecar, sidecar_container

# The `provider` of each MachineClass, which picks the sidecar that serves it (the sidecars' own names).
AWS_CLASS_PROVIDER, GCP_CLASS_PROVIDER, LOCAL_CLASS_PROVIDER = "AWS", "GCP", "local"
AWS_VOLUME_TYPE = "gp3"
GCP_VOLUME_TYPE = "pd-balanced"
GCP_COMPUTE_SCOPE = "https://www.googleapis.com/auth/compute"


# --- sidecars --------------------------------------------------------------------------------------------


def sidecar_aws(namespace: str) -> Sidecar:
    """machine-controller-manager-provider-aws: creates EC2 instances."""
    return Sidecar("aws", sidecar_container("aws", MCM_PROVIDERS["aws"].ref, namespace))


def sidecar_gcp(namespace: str) -> Sidecar:
    """machine-controller-manager-provider-gcp: creates Compute Engine instances."""
    return Sidecar("gcp", sidecar_container("gcp", MCM_PROVIDERS["gcp"].ref, namespace))


def sidecar_local(namespace: str) -> Sidecar:
    """provider-local's sidecar: a machine is a pod (and Service) in the seed namespace, so it may manage those."""
    container = sidecar_container("local", MCM_PROVIDERS["local"].ref, namespace)
    rules = ({"apiGroups": [""], "resources": ["pods", "services"], "verbs": ALL_VERBS},)
    return Sidecar("local", container, seed_rules=rules)


# arbor's own sidecar for local (hack/machine-controller-kwok), run as a process where kwok simulates the Pod.
KWOK_SIDECAR = "machine-controller-manager-provider-kwok"

SIDECARS = {"aws": sidecar_aws, "gcp": sidecar_gcp, "local": sidecar_local}


# --- machine classes -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AwsMachineValues:
    """What an aws class needs beyond the pool: region, the zone's nodes subnet, and the nodes' group and profile."""

    technical_id: str
    region: str
    subnet_id: str
    security_group_id: str
    instance_profile: str
    ip_families: tuple[str, ...] = ("IPv4",)


def nodes_subnet(plan: NetworkPlan, zone: str) -> str:
    """The name of a zone's workers subnet in the network plan (`nodes-z<i>`, i among the shoot's zones)."""
    return plan.subnet("nodes", zone).name


def aws_machine_class(namespace: str, d: ZoneDeployment, v: AwsMachineValues, ami: str) -> Object:
    """The aws MachineClass of one zone, its machines started from `ami`."""
    return machine_class(namespace, d, AWS_CLASS_PROVIDER, aws_provider_spec(d, v, ami))


def aws_provider_spec(d: ZoneDeployment, v: AwsMachineValues, ami: str) -> Object:
    """An aws class's providerSpec: AMI, instance type, the zone's subnet, nodes group and profile, disk."""
    interface: Object = {"subnetID": v.subnet_id, "securityGroupIDs": [v.security_group_id]}
    if "IPv6" in v.ip_families:
        # One IPv6 address for the node and one prefix its pods take addresses from (as provider-aws does).
        interface |= {"ipv6AddressCount": 1, "ipv6PrefixCount": 1}
    spec: Object = {
        "ami": ami,
        "region": v.region,
        "machineType": d.machine_type,
        # Nodes route pod traffic of other nodes' ranges: the source/destination check would drop it.
        "srcAndDstChecksEnabled": False,
        "iam": {"name": v.instance_profile},
        "networkInterfaces": [interface],
        "tags": {f"kubernetes.io/cluster/{v.technical_id}": "1", "kubernetes.io/role/node": "1",
                 POOL_LABEL: d.pool},
        "blockDevices": [{"ebs": {"volumeSize": d.volume.size_gb, "volumeType": d.volume.type or AWS_VOLUME_TYPE,
                                  "encrypted": d.volume.encrypted, "deleteOnTermination": True}}],
        # IMDSv2 only; two hops so pods behind the node's network can still reach it.
        "instanceMetadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 2},
    }  # fmt: skip
    return spec


@dataclass(frozen=True)
class GcpMachineValues:
    """What a gcp class needs beyond the pool: region, the nodes subnetwork and the nodes' service account."""

    technical_id: str
    region: str
    subnetwork: str
    service_account: str
    ip_families: tuple[str, ...] = ("IPv4",)


def _gcp_label(value: str) -> str:
    """A GCE label value: lower case letters, digits, `-` and `_`, at most 63 characters."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in value.lower())[:63]


def gcp_machine_class(namespace: str, d: ZoneDeployment, v: GcpMachineValues, image: str) -> Object:
    """The gcp MachineClass of one zone, its boot disks made from `image`."""
    return machine_class(namespace, d, GCP_CLASS_PROVIDER, gcp_provider_spec(d, v, image))


def gcp_provider_spec(d: ZoneDeployment, v: GcpMachineValues, image: str) -> Object:
    """A gcp class's providerSpec: machine type, zone, image, nodes subnetwork, service account, tags."""
    labels = {"name": _gcp_label(v.technical_id), "worker_gardener_cloud_pool": _gcp_label(d.pool)}
    interface: Object = {"subnetwork": v.subnetwork, "disableExternalIP": True}
    if "IPv6" in v.ip_families:
        interface |= {"stackType": "IPV4_IPV6", "ipv6accessType": "EXTERNAL"}
    spec: Object = {
        "region": v.region,
        "zone": d.zone,
        "machineType": d.machine_type,
        # Nodes forward pod traffic: GCE drops packets of other addresses otherwise.
        "canIpForward": True,
        "deletionProtection": False,
        "description": f"Machine of shoot {v.technical_id} created by machine-controller-manager.",
        "disks": [{"boot": True, "autoDelete": True, "image": image, "sizeGb": d.volume.size_gb,
                   "type": d.volume.type or GCP_VOLUME_TYPE, "labels": labels}],
        "labels": labels,
        "metadata": [{"key": "block-project-ssh-keys", "value": "TRUE"}],
        "networkInterfaces": [interface],
        "serviceAccounts": [{"email": v.service_account, "scopes": [GCP_COMPUTE_SCOPE]}],
        # Firewall rules and routes select the shoot's nodes by these network tags.
        "tags": [v.technical_id, f"kubernetes-io-cluster-{v.technical_id}", "kubernetes-io-role-node"],
    }  # fmt: skip
    return spec


def local_machine_class(namespace: str, d: ZoneDeployment, networks: Sequence[Mapping[str, str | int]]) -> Object:
    """The local class of one zone: its image, its nodes' labels and, per family, the ranges they are addressed from.

    arbor's kwok sidecar reads the ranges (plan/network.py local_node_ranges).
    """
    spec = {"image": ":".join(d.image), "labels": dict(d.labels), "networks": [dict(n) for n in networks]}
    return machine_class(namespace, d, LOCAL_CLASS_PROVIDER, spec)


# --- checks before anything changes ----------------------------------------------------------------------

# The keys of the `cloudprovider` Secret each cloud's sidecar reads (Gardener's).
CREDENTIAL_KEYS = {"aws": ("accessKeyID", "secretAccessKey"), "gcp": ("serviceaccount.json",)}


def credentials_data(provider: str, raw: str, where: str) -> dict[str, str]:
    """The `cloudprovider` Secret's data from a shoot's credentials (a JSON object), or an error naming the fault."""
    try:
        given = json.loads(raw)
    except json.JSONDecodeError as err:
        raise ValueError(f"{where}: the credentials are not JSON: {err.msg}") from None
    if not isinstance(given, dict):
        raise ValueError(f"{where}: the credentials are not a JSON object")
    keys = CREDENTIAL_KEYS.get(provider, ())
    if missing := [k for k in keys if not given.get(k)]:
        raise ValueError(f"{where}: the {provider} credentials need {', '.join(missing)}")
    return {k: given[k] for k in keys}
