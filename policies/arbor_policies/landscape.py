"""Rules about arbor's own resources: its records in the garden and the reconciler's dynamic resources.

The records (kinds of group arbor.dev) carry what a user asked for: projects with their members, shoots with
their versions and labels. The dynamic resources (`pulumi-python:dynamic/arbor:<Kind>`) carry what arbor
makes of it: certificate lifetimes, admin kubeconfig lifetimes, the clusters' encryption configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from arbor_policies.resource import Resource, containers, has, items, mapping, pod_spec

PROJECT = "kubernetes:arbor.dev/v1alpha1:Project"
SHOOT = "kubernetes:arbor.dev/v1alpha1:Shoot"
DYNAMIC = "pulumi-python:dynamic/arbor:"
ADMIN_KUBECONFIG = f"{DYNAMIC}AdminKubeconfig"
CERTIFICATE = f"{DYNAMIC}Certificate"
AUTHORITY = f"{DYNAMIC}CertificateAuthority"
# A shoot's control-plane leaves as one resource, each leaf's spec by name under `leaves`.
LEAF_SET = f"{DYNAMIC}LeafSet"
LOCAL_CLUSTER = f"{DYNAMIC}LocalCluster"
# What holds data that cannot be made again: keys and CAs (every credential of a shoot), the clusters whose etcd
# holds a landscape's objects, and backup buckets. A hosted etcd StatefulSet is not among them: its volume claims
# outlive it.
KEY_MATERIAL = (AUTHORITY, f"{DYNAMIC}ServiceAccountKey", f"{DYNAMIC}EncryptionKeys")
CLUSTERS = (LOCAL_CLUSTER, "gcp:container/cluster:Cluster", "aws:eks/cluster:Cluster")
# And the buckets that hold the shoots' etcd backups.
BUCKETS = ("gcp:storage/bucket:Bucket", "aws:s3/bucket:Bucket")
ENCRYPTION_FLAG = "--encryption-provider-config="
DAY = 86400


def project_has_admin(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """Every project has an admin member, who can manage its shoots and answer for them."""
    if r.type != PROJECT:
        return []
    members = [mapping(m) for m in items(mapping(r.props.get("spec")).get("members"))]
    if any(m.get("role") == "admin" for m in members):
        return []
    return [f"project {r.metadata.get('name')} has no admin: give one member (or group) role admin"]


def _minor(version: Any) -> str:
    """`1.34.4` or `v1.34.4` -> `1.34`."""
    return ".".join(str(version).removeprefix("v").split(".")[:2])


def kubernetes_versions(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """Shoots, their worker pools and local clusters run a minor in `supportedMinors`."""
    supported = [str(m) for m in items(config.get("supportedMinors"))]
    if r.type == SHOOT:
        spec = mapping(r.props.get("spec"))
        found = [("control plane", mapping(spec.get("kubernetes")).get("version"))]
        for pool in (mapping(p) for p in items(mapping(spec.get("provider")).get("workers"))):
            if pool.get("kubernetesVersion"):
                found.append((f"pool {pool.get('name')}", pool.get("kubernetesVersion")))
        what = f"shoot {r.metadata.get('namespace')}/{r.metadata.get('name')}"
    elif r.type == LOCAL_CLUSTER:
        found, what = [("API server", r.props.get("kubernetesVersion"))], f"cluster {r.props.get('clusterName')}"
    else:
        return []
    return [
        f"{what} {part} runs Kubernetes {version}, whose minor is not supported here: upgrade to one of "
        f"{', '.join(supported)}"
        for part, version in found
        if version and supported and _minor(version) not in supported
    ]


def shoot_labels(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """Every shoot carries the labels in `required` (e.g. the team that owns it, for costs and on-call)."""
    if r.type != SHOOT:
        return []
    labels = mapping(r.metadata.get("labels"))
    missing = [str(k) for k in items(config.get("required")) if not labels.get(str(k))]
    if not missing:
        return []
    return [
        f"shoot {r.metadata.get('namespace')}/{r.metadata.get('name')} has no label {', '.join(missing)}: set "
        f"landscape.shoots[].labels.{missing[0]}"
    ]


def admin_kubeconfig_lifetime(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """Admin kubeconfigs expire within `maxHours`: a leaked one is useless soon."""
    if r.type != ADMIN_KUBECONFIG:
        return []
    seconds = r.props.get("expirationSeconds")
    limit = float(config.get("maxHours") or 0)
    if not isinstance(seconds, int | float) or not limit or seconds <= limit * 3600:
        return []
    return [
        f"admin kubeconfig {r.name} is valid for {seconds / 3600:g}h, longer than {limit:g}h: lower the shoot's "
        f"adminKubeconfig.expiration to {limit:g}h or less"
    ]


def certificate_lifetime(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """Certificates live at most `maxCertificateDays`, CAs at most `maxAuthorityDays`, so rotation is practised.

    A LeafSet's leaves are certificates each.
    """
    if r.type == LEAF_SET:
        leaves = mapping(r.props.get("leaves"))
        return [m for name, leaf in sorted(leaves.items())
                for m in _lifetime(f"{r.name}/{name}", mapping(leaf), "maxCertificateDays", config)]  # fmt: skip
    key = {CERTIFICATE: "maxCertificateDays", AUTHORITY: "maxAuthorityDays"}.get(r.type)
    return [] if key is None else _lifetime(r.name, r.props, key, config)


def _lifetime(name: str, props: Mapping[str, Any], key: str, config: Mapping[str, Any]) -> list[str]:
    """The violation of one certificate or CA (`key`: its limit's name) whose validity is longer than allowed."""
    seconds = props.get("validitySeconds")
    if not config.get(key) or not isinstance(seconds, int | float):
        return []
    limit = float(config[key])
    if seconds <= limit * DAY:
        return []
    what = "certificate authority" if key == "maxAuthorityDays" else "certificate"
    common_name = props.get("commonName")
    return [
        f"{what} {name}{f' ({common_name})' if common_name else ''} is valid for {seconds / DAY:g} days, longer "
        f"than {limit:g}: "
        "shorten its validity in components/render/pki.py, or raise this policy's "
        f"`{key}` if the organisation accepts it"
    ]


def _apiserver_flags(spec: Mapping[str, Any]) -> list[list[str]] | None:
    """The command and args of each kube-apiserver container of a pod spec; None when it has none."""
    found = [
        [str(a) for a in items(c.get("command")) + items(c.get("args"))]
        for c in containers(spec)
        if c.get("name") == "kube-apiserver"
    ]
    return found or None


def encryption_at_rest(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """Every API server arbor configures encrypts secrets at rest: a local cluster in `clusters`, a kube-apiserver."""
    if r.type == LOCAL_CLUSTER:
        patterns = [str(p) for p in items(config.get("clusters"))]
        if any(fnmatchcase(r.name, p) for p in patterns) and not has(r.props, "encryptionConfig"):
            return [
                f"cluster {r.props.get('clusterName')} ({r.name}) runs without encryption at rest: give it an "
                "encryption configuration (landscape.garden.encryption for the garden)"
            ]
        return []
    spec = pod_spec(r)
    flags = _apiserver_flags(spec) if spec is not None else None
    if not flags or all(any(a.startswith(ENCRYPTION_FLAG) for a in f) for f in flags):
        return []
    return [
        f"{r.label()} runs kube-apiserver without {ENCRYPTION_FLAG.rstrip('=')}: mount the shoot's encryption "
        "configuration and pass the flag (components/render/controlplane.py)"
    ]


def data_protected(r: Resource, config: Mapping[str, Any]) -> list[str]:
    """What holds data that cannot be made again (keys, CAs, clusters, backups) is `protect`ed against deletion."""
    if r.protect or r.type not in (*KEY_MATERIAL, *CLUSTERS, *BUCKETS):
        return []
    return [
        f"{r.label()} is not protected: deleting it loses data that cannot be made again; register it with "
        "protect=True (the deletion confirmation lifts it)"
    ]
