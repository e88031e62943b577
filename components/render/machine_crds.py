"""The machine CRDs machine-controller-manager works on (group `machine.sapcloud.io`), written by arbor; pure.

Machine, MachineSet, MachineDeployment and MachineClass mirror MCM's v1alpha1 types with structural schemas:
every field arbor or MCM writes is typed, so the API server validates it and prunes typos. Only a MachineClass's
`providerSpec` keeps unknown fields: it is the provider sidecar's own format (aws, gcp, local), opaque to MCM.
Deployments and sets have the scale subresource (a cluster-autoscaler scales them); all have status.
"""

from __future__ import annotations

from typing import Any

Object = dict[str, Any]
GROUP = "machine.sapcloud.io"
VERSION = "v1alpha1"

STRING: Object = {"type": "string"}
INTEGER: Object = {"type": "integer"}
TIME: Object = {"type": "string", "format": "date-time"}
STRING_MAP: Object = {"type": "object", "additionalProperties": STRING}
INT_OR_STRING: Object = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
SECRET_REF: Object = {
    "type": "object",
    "properties": {"name": STRING, "namespace": STRING},
    "x-kubernetes-map-type": "atomic",
}
CLASS_REF: Object = {"type": "object", "required": ["name"], "properties": {"apiGroup": STRING, "kind": STRING,
                                                                           "name": STRING}}  # fmt: skip
LABEL_SELECTOR: Object = {
    "type": "object",
    "properties": {
        "matchLabels": STRING_MAP,
        "matchExpressions": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["key", "operator"],
                "properties": {"key": STRING, "operator": STRING, "values": {"type": "array", "items": STRING}},
            },
        },
    },
    "x-kubernetes-map-type": "atomic",
}
CONDITION: Object = {
    "type": "object",
    "required": ["type", "status"],
    "properties": {
        "type": STRING,
        "status": STRING,
        "reason": STRING,
        "message": STRING,
        "lastHeartbeatTime": TIME,
        "lastTransitionTime": TIME,
        "lastUpdateTime": TIME,
    },
}
CONDITIONS: Object = {"type": "array", "items": CONDITION}
LAST_OPERATION: Object = {
    "type": "object",
    "properties": {
        "description": STRING,
        "errorCode": STRING,
        "lastUpdateTime": TIME,
        "state": STRING,
        "type": STRING,
    },
}
TAINT: Object = {
    "type": "object",
    "required": ["key", "effect"],
    "properties": {"key": STRING, "value": STRING, "effect": STRING, "timeAdded": TIME},
}
# What a machine's node gets: labels, annotations and taints (MCM keeps them on the node).
NODE_TEMPLATE: Object = {
    "type": "object",
    "properties": {
        "metadata": {"type": "object", "properties": {"labels": STRING_MAP, "annotations": STRING_MAP}},
        "spec": {
            "type": "object",
            "properties": {
                "taints": {"type": "array", "items": TAINT},
                "podCIDR": STRING,
                "podCIDRs": {"type": "array", "items": STRING},
                "providerID": STRING,
                "unschedulable": {"type": "boolean"},
            },
        },
    },
}
# Per-machine timeouts and health settings (MCM's MachineConfiguration, inlined into the machine spec).
MACHINE_CONFIGURATION: Object = {
    "creationTimeout": STRING,
    "drainTimeout": STRING,
    "healthTimeout": STRING,
    "inPlaceUpdateTimeout": STRING,
    "disableHealthTimeout": {"type": "boolean"},
    "maxEvictRetries": INTEGER,
    "nodeConditions": STRING,
}
MACHINE_SPEC: Object = {
    "type": "object",
    "properties": {"class": CLASS_REF, "providerID": STRING, "nodeTemplate": NODE_TEMPLATE, **MACHINE_CONFIGURATION},
}
MACHINE_TEMPLATE: Object = {
    "type": "object",
    "properties": {
        "metadata": {"type": "object", "properties": {"labels": STRING_MAP, "annotations": STRING_MAP}},
        "spec": MACHINE_SPEC,
    },
}
FAILED_MACHINES: Object = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"name": STRING, "providerID": STRING, "lastOperation": LAST_OPERATION,
                       "ownerRef": STRING},
    },
}  # fmt: skip
REPLICAS: Object = {"type": "integer", "minimum": 0}


def _column(name: str, path: str, kind: str = "string") -> Object:
    """A printer column."""
    return {"name": name, "type": kind, "jsonPath": path}


def _crd(kind: str, plural: str, short: str, schema: Object, columns: list[Object], scale: bool = False) -> Object:
    """A namespaced CRD of MCM's group: one served, stored version with status (and scale) subresources."""
    subresources: Object = {"status": {}}
    if scale:
        subresources["scale"] = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List",
                      "shortNames": [short]},
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": subresources,
                    "additionalPrinterColumns": [
                        *columns, _column("Age", ".metadata.creationTimestamp", "date")],
                }
            ],
        },
    }  # fmt: skip


def machine_class_crd() -> Object:
    """MachineClass: the provider spec of a pool's machines in one zone; fields at the top level, as MCM's."""
    node_template = {
        "type": "object",
        "required": ["capacity", "instanceType", "region", "zone"],
        "properties": {
            "capacity": {"type": "object", "additionalProperties": INT_OR_STRING},
            "instanceType": STRING,
            "region": STRING,
            "zone": STRING,
            "architecture": STRING,
        },
    }
    schema = {
        "type": "object",
        "required": ["providerSpec"],
        "properties": {
            "provider": STRING,
            # The provider's own format: the sidecar validates it, so the API server keeps it as given.
            "providerSpec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "credentialsSecretRef": SECRET_REF,
            "secretRef": SECRET_REF,
            "nodeTemplate": node_template,
        },
    }
    return _crd("MachineClass", "machineclasses", "mcc", schema, [_column("Provider", ".provider")])


def machine_crd() -> Object:
    """Machine: one VM (or local node) created from a class; MCM records its phase and node."""
    status = {
        "type": "object",
        "properties": {
            "node": STRING,
            "conditions": CONDITIONS,
            "currentStatus": {
                "type": "object",
                "properties": {
                    "phase": {"type": "string", "enum": [
                        "Pending", "Available", "Running", "Terminating", "Unknown", "Failed", "CrashLoopBackOff",
                        "InPlaceUpdating", "InPlaceUpdateSuccessful", "InPlaceUpdateFailed"]},
                    "lastUpdateTime": TIME,
                    "timeoutActive": {"type": "boolean"},
                    "preserveExpiryTime": TIME,
                },
            },
            "lastOperation": LAST_OPERATION,
            "lastKnownState": STRING,
        },
    }  # fmt: skip
    schema = {"type": "object", "properties": {"spec": MACHINE_SPEC, "status": status}}
    columns = [_column("Status", ".status.currentStatus.phase"), _column("Node", ".metadata.labels.node")]
    return _crd("Machine", "machines", "mc", schema, columns)


def _replica_status(*extra: str) -> Object:
    """The status of a set or deployment: replica counts, conditions and failed machines."""
    counts = {k: REPLICAS for k in ("replicas", "readyReplicas", "availableReplicas", *extra)}
    return {
        "type": "object",
        "properties": {
            **counts,
            "observedGeneration": INTEGER,
            "conditions": CONDITIONS,
            "failedMachines": FAILED_MACHINES,
        },
    }


def machine_set_crd() -> Object:
    """MachineSet: a number of machines of one template (what a deployment rolls between)."""
    spec = {
        "type": "object",
        "properties": {
            "replicas": REPLICAS,
            "selector": LABEL_SELECTOR,
            "minReadySeconds": INTEGER,
            "machineClass": CLASS_REF,
            "template": MACHINE_TEMPLATE,
        },
    }
    schema = {"type": "object", "properties": {"spec": spec, "status": _replica_status("fullyLabeledReplicas")}}
    columns = [
        _column("Desired", ".spec.replicas", "integer"),
        _column("Current", ".status.replicas", "integer"),
        _column("Ready", ".status.readyReplicas", "integer"),
    ]
    return _crd("MachineSet", "machinesets", "mcs", schema, columns, scale=True)


def machine_deployment_crd() -> Object:
    """MachineDeployment: a pool's machines in one zone, rolled to a new class by its strategy."""
    update: Object = {"type": "object", "properties": {"maxSurge": INT_OR_STRING, "maxUnavailable": INT_OR_STRING}}
    spec = {
        "type": "object",
        "required": ["template"],
        "properties": {
            "replicas": REPLICAS,
            "selector": LABEL_SELECTOR,
            "template": MACHINE_TEMPLATE,
            "strategy": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": ["Recreate", "RollingUpdate", "InPlaceUpdate"]},
                    "rollingUpdate": update,
                    "inPlaceUpdate": {"type": "object", "properties": {
                        **update["properties"], "orchestrationType": {"type": "string", "enum": ["Auto", "Manual"]}}},
                },
            },
            "minReadySeconds": INTEGER,
            "revisionHistoryLimit": INTEGER,
            "paused": {"type": "boolean"},
            "progressDeadlineSeconds": INTEGER,
            "autoPreserveFailedMachineMax": INTEGER,
        },
    }  # fmt: skip
    status = _replica_status("updatedReplicas", "unavailableReplicas")
    status["properties"]["collisionCount"] = INTEGER
    schema = {"type": "object", "properties": {"spec": spec, "status": status}}
    columns = [
        _column("Ready", ".status.readyReplicas", "integer"),
        _column("Desired", ".spec.replicas", "integer"),
        _column("Up-to-date", ".status.updatedReplicas", "integer"),
        _column("Available", ".status.availableReplicas", "integer"),
    ]
    return _crd("MachineDeployment", "machinedeployments", "mcd", schema, columns, scale=True)


def crds() -> tuple[Object, ...]:
    """The four machine CRDs, classes first (what the others reference)."""
    return (machine_class_crd(), machine_crd(), machine_set_crd(), machine_deployment_crd())
