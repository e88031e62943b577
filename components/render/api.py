"""arbor's own API in the garden (group `arbor.dev`): CRDs with structural schemas, and the records.

Projects and Seeds are cluster-scoped, Shoots live in their project's namespace, as in Gardener, so
`kubectl get shoots -A` on the garden lists every shoot with its seed, version and last operation. Pure: every
function returns plain Kubernetes objects (dicts).
"""

from __future__ import annotations

from typing import Any

from components.naming import API_GROUP, API_VERSION, backup_entry
from components.plan.values import BackupValues, ProjectValues, SeedValues, ShootValues
from components.render import shoot_state

Object = dict[str, Any]
STRING: Object = {"type": "string"}
STRINGS: Object = {"type": "array", "items": STRING}
CONDITION: Object = {
    "type": "object",
    "required": ["type", "status"],
    "properties": {
        "type": STRING,
        "status": {"type": "string", "enum": ["True", "False", "Unknown", "Progressing"]},
        "reason": STRING,
        "message": STRING,
        "lastTransitionTime": {"type": "string", "format": "date-time"},
        "lastUpdateTime": {"type": "string", "format": "date-time"},
    },
}
NETWORKING: Object = {
    "type": "object",
    "properties": {"ipFamilies": STRINGS, "nodes": STRINGS, "pods": STRINGS, "services": STRINGS},
}
# A shoot's networking besides: its network plugin (seeds have none).
SHOOT_NETWORKING: Object = {"type": "object", "properties": {"type": STRING, **NETWORKING["properties"]}}


def _crd(kind: str, plural: str, scope: str, spec: Object, status: Object | None, columns: list[Object]) -> Object:
    """A CRD of arbor's group with one served, stored version, a structural schema and printer columns."""
    properties: Object = {"spec": spec}
    version: Object = {
        "name": API_VERSION,
        "served": True,
        "storage": True,
        "additionalPrinterColumns": [
            *columns,
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ],
    }
    if status is not None:
        properties["status"] = status
        version["subresources"] = {"status": {}}
    version["schema"] = {"openAPIV3Schema": {"type": "object", "required": ["spec"], "properties": properties}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{API_GROUP}"},
        "spec": {
            "group": API_GROUP,
            "scope": scope,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
            "versions": [version],
        },
    }


def project_crd() -> Object:
    """Project: a namespace in the garden and its members."""
    member = {
        "type": "object",
        "required": ["name", "kind", "role"],
        "properties": {"name": STRING, "kind": STRING, "role": {"type": "string", "enum": ["admin", "viewer"]}},
    }
    spec = {
        "type": "object",
        "required": ["namespace"],
        "properties": {"namespace": STRING, "members": {"type": "array", "items": member}},
    }
    return _crd("Project", "projects", "Cluster", spec, None,
                [{"name": "Namespace", "type": "string", "jsonPath": ".spec.namespace"}])  # fmt: skip


def seed_crd() -> Object:
    """Seed: a cluster that hosts shoot control planes."""
    spec = {
        "type": "object",
        "required": ["provider"],
        "properties": {
            "provider": {
                "type": "object",
                "required": ["type"],
                "properties": {"type": STRING, "region": STRING, "zones": STRINGS},
            },
            "networks": NETWORKING,
        },
    }
    return _crd("Seed", "seeds", "Cluster", spec, None, [
        {"name": "Provider", "type": "string", "jsonPath": ".spec.provider.type"},
        {"name": "Region", "type": "string", "jsonPath": ".spec.provider.region"},
    ])  # fmt: skip


def shoot_crd() -> Object:
    """Shoot: a cluster users get; its status is written from the real clusters (ShootStatus)."""
    worker = {
        "type": "object",
        "required": ["name", "minimum", "maximum"],
        "properties": {
            "name": STRING,
            "machine": {"type": "object", "properties": {"type": STRING, "image": {
                "type": "object", "properties": {"name": STRING, "version": STRING}}}},
            "minimum": {"type": "integer", "minimum": 0},
            "maximum": {"type": "integer", "minimum": 0},
            "zones": STRINGS,
            "controlPlane": {"type": "boolean"},
            "kubernetesVersion": STRING,
            "maxSurge": {"type": "integer", "minimum": 0},
            "maxUnavailable": {"type": "integer", "minimum": 0},
        },
    }  # fmt: skip
    spec = {
        "type": "object",
        "required": ["kubernetes", "networking"],
        "properties": {
            "seedName": STRING,
            "selfHosted": {"type": "boolean"},
            "kubernetes": {"type": "object", "required": ["version"], "properties": {"version": STRING}},
            "networking": SHOOT_NETWORKING,
            "provider": {"type": "object", "properties": {"workers": {"type": "array", "items": worker}}},
            "encryption": {"type": "object", "properties": {"resources": STRINGS}},
            "nodeAgent": {"type": "object", "properties": {"version": STRING}},
        },
    }
    status = {
        "type": "object",
        "properties": {
            "technicalID": STRING,
            "lastOperation": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": ["Create", "Reconcile", "Delete", "Migrate", "Restore"]},
                    "state": {"type": "string", "enum": ["Processing", "Succeeded", "Error", "Failed", "Pending"]},
                    "progress": {"type": "integer", "minimum": 0, "maximum": 100},
                    "lastUpdateTime": {"type": "string", "format": "date-time"},
                    "description": STRING,
                },
            },
            "conditions": {"type": "array", "items": CONDITION},
        },
    }
    return _crd("Shoot", "shoots", "Namespaced", spec, status, [
        {"name": "Seed", "type": "string", "jsonPath": ".spec.seedName"},
        {"name": "Version", "type": "string", "jsonPath": ".spec.kubernetes.version"},
        {"name": "Operation", "type": "string", "jsonPath": ".status.lastOperation.type"},
        {"name": "State", "type": "string", "jsonPath": ".status.lastOperation.state"},
        {"name": "Progress", "type": "integer", "jsonPath": ".status.lastOperation.progress"},
        {"name": "APIServer", "type": "string",
         "jsonPath": ".status.conditions[?(@.type=='APIServerAvailable')].status"},
    ])  # fmt: skip


def backup_bucket_crd() -> Object:
    """BackupBucket: a seed's bucket in an object store, where its shoots' backup entries are."""
    provider = {"type": "object", "required": ["type", "region"], "properties": {"type": STRING, "region": STRING}}
    spec = {
        "type": "object",
        "required": ["provider", "seedName"],
        "properties": {"provider": provider, "seedName": STRING},
    }
    return _crd("BackupBucket", "backupbuckets", "Cluster", spec, None, [
        {"name": "Provider", "type": "string", "jsonPath": ".spec.provider.type"},
        {"name": "Region", "type": "string", "jsonPath": ".spec.provider.region"},
        {"name": "Seed", "type": "string", "jsonPath": ".spec.seedName"},
    ])  # fmt: skip


def backup_entry_crd() -> Object:
    """BackupEntry: a shoot's prefix in its seed's bucket; its status names the latest full etcd snapshot."""
    spec = {
        "type": "object",
        "required": ["bucketName", "seedName"],
        "properties": {"bucketName": STRING, "seedName": STRING},
    }
    snapshot = {"type": "object", "properties": {"name": STRING, "time": {"type": "string", "format": "date-time"}}}
    status = {"type": "object", "properties": {"latestFullSnapshot": snapshot}}
    return _crd("BackupEntry", "backupentries", "Namespaced", spec, status, [
        {"name": "Bucket", "type": "string", "jsonPath": ".spec.bucketName"},
        {"name": "Seed", "type": "string", "jsonPath": ".spec.seedName"},
        {"name": "Latest full snapshot", "type": "date", "jsonPath": ".status.latestFullSnapshot.time"},
    ])  # fmt: skip


def shoot_state_crd() -> Object:
    """ShootState: where a shoot's state is in its bucket, and its generation, checksum, size and upload time.

    Never the content: that is sealed in the bucket (render/shoot_state.py), unlike Gardener's, which holds it.
    """
    where = {"bucketName": STRING, "object": STRING}
    spec = {"type": "object", "required": ["bucketName", "object"], "properties": where}
    status = {"type": "object", "properties": {
        "generation": {"type": "integer", "minimum": 1}, "checksum": STRING, "size": {"type": "integer", "minimum": 0},
        "lastUpload": {"type": "string", "format": "date-time"},
    }}  # fmt: skip
    return _crd("ShootState", "shootstates", "Namespaced", spec, status, [
        {"name": "Generation", "type": "integer", "jsonPath": ".status.generation"},
        {"name": "Size", "type": "integer", "jsonPath": ".status.size"},
        {"name": "Checksum", "type": "string", "jsonPath": ".status.checksum", "priority": 1},
        {"name": "Last upload", "type": "date", "jsonPath": ".status.lastUpload"},
    ])  # fmt: skip


def internal_secret_crd() -> Object:
    """InternalSecret: a Secret in a project namespace that project members cannot read (no project role grants it).

    Shaped like a core Secret (`data`, `type`, `immutable` at the top, no spec), as Gardener's InternalSecret.
    """
    crd = _crd("InternalSecret", "internalsecrets", "Namespaced", {"type": "object"}, None,
               [{"name": "Type", "type": "string", "jsonPath": ".type"}])  # fmt: skip
    crd["spec"]["versions"][0]["schema"] = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {
                "data": {"type": "object", "additionalProperties": {"type": "string", "format": "byte"}},
                "type": STRING,
                "immutable": {"type": "boolean"},
            },
        }
    }
    return crd


def crds() -> tuple[Object, ...]:
    """Every CRD of arbor's API."""
    return (
        project_crd(),
        seed_crd(),
        shoot_crd(),
        internal_secret_crd(),
        backup_bucket_crd(),
        backup_entry_crd(),
        shoot_state_crd(),
    )


def _record(kind: str, name: str, spec: Object, namespace: str | None = None) -> Object:
    """An object of arbor's API."""
    metadata: Object = {"name": name} | ({"namespace": namespace} if namespace else {})
    return {"apiVersion": f"{API_GROUP}/{API_VERSION}", "kind": kind, "metadata": metadata, "spec": spec}


def project_record(project: ProjectValues) -> Object:
    """The Project record of a project."""
    members = [{"name": m.name, "kind": m.kind, "role": m.role.value} for m in project.members]
    return _record("Project", project.name, {"namespace": project.namespace, "members": members})


def seed_record(seed: SeedValues) -> Object:
    """The Seed record of a seed."""
    provider = {"type": seed.cluster.provider.value, "region": seed.region, "zones": list(seed.zones)}
    networks = {"ipFamilies": list(seed.ip_families), **{k: list(v) for k, v in seed.networks.items()}}
    return _record("Seed", seed.name, {"provider": provider, "networks": networks})


def shoot_record(shoot: ShootValues) -> Object:
    """The Shoot record of a shoot, in its project's namespace."""
    net = shoot.networking
    workers = [
        {
            "name": p.name,
            "machine": {"type": p.machine_type, "image": {"name": p.image, "version": p.image_version}},
            "minimum": p.minimum,
            "maximum": p.maximum,
            "zones": list(p.zones),
            "controlPlane": p.control_plane,
            "kubernetesVersion": p.kubernetes_version,
            "maxSurge": p.max_surge,
            "maxUnavailable": p.max_unavailable,
        }
        for p in shoot.workers
    ]
    spec: Object = {
        "kubernetes": {"version": shoot.kubernetes_version},
        "networking": {"type": shoot.network_type, "ipFamilies": list(net.ip_families), "nodes": list(net.nodes),
                       "pods": list(net.pods), "services": list(net.services)},
        "provider": {"workers": workers},
        "encryption": {"resources": list(shoot.encryption.resources)},
        "nodeAgent": {"version": shoot.node_agent_version},
    }  # fmt: skip
    spec |= {"selfHosted": True} if shoot.self_hosted else {"seedName": shoot.seed}
    record = _record("Shoot", shoot.name, spec, namespace=shoot.project_namespace)
    if shoot.labels:  # an empty map is dropped by the API server, and would show as a change on every preview
        record["metadata"]["labels"] = dict(shoot.labels)
    return record


def backup_bucket_record(backup: BackupValues) -> Object:
    """The BackupBucket record of a seed's bucket, named as the bucket."""
    provider = {"type": backup.provider.value, "region": backup.region}
    return _record("BackupBucket", backup.bucket, {"provider": provider, "seedName": backup.seed})


def backup_entry_record(shoot: ShootValues, backup: BackupValues, uid: str) -> Object:
    """The BackupEntry record of a shoot (`<technical id>--<uid>`), owned by its Shoot record, as Gardener's."""
    spec = {"bucketName": backup.bucket, "seedName": backup.seed}
    record = _record("BackupEntry", backup_entry(shoot.technical_id, uid), spec, namespace=shoot.project_namespace)
    owner = {"apiVersion": f"{API_GROUP}/{API_VERSION}", "kind": "Shoot", "name": shoot.name, "uid": uid}
    record["metadata"]["ownerReferences"] = [owner]
    return record


def shoot_state_record(shoot: ShootValues, backup: BackupValues, uid: str) -> Object:
    """The ShootState record of a shoot (named as the shoot), owned by its Shoot record, as Gardener's."""
    spec = {"bucketName": backup.bucket, "object": shoot_state.object_key(backup_entry(shoot.technical_id, uid))}
    record = _record("ShootState", shoot.name, spec, namespace=shoot.project_namespace)
    owner = {"apiVersion": f"{API_GROUP}/{API_VERSION}", "kind": "Shoot", "name": shoot.name, "uid": uid}
    record["metadata"]["ownerReferences"] = [owner]
    return record
