"""Pure rendering of etcd's persistent storage: a cloud seed's StorageClass and an etcd's volume claim template.

The StorageClass is Gardener's `gardener.cloud-fast`, as its provider extensions deploy it on their seeds: SSD
disks of the cloud's CSI driver, bound where the pod is scheduled (WaitForFirstConsumer), expandable. arbor keeps
`reclaimPolicy: Retain`, so a deleted claim never deletes a shoot's data. The claim template, the pod's
securityContext and the data directory follow etcd-druid's StatefulSet.
"""

from __future__ import annotations

from typing import Any

from components import naming
from components.kinds import ProviderType
from components.plan.storage import STORAGE_CLASS
from components.plan.values import EtcdVolume

Object = dict[str, Any]
# Where etcd's volume is mounted, and the data directory in it (etcd-druid's): a directory of its own, which etcd
# creates with its own permissions, so a file system's root (lost+found) never sits among etcd's files.
MOUNT_PATH = "/var/etcd/data"
DATA_DIR = f"{MOUNT_PATH}/new.etcd"
# etcd-druid's non-root user; fsGroup makes the provisioned volume writable for it.
NON_ROOT = 65532
# Each cloud's CSI driver and disk parameters for the class.
PROVISIONERS: dict[ProviderType, tuple[str, dict[str, str]]] = {
    ProviderType.GCP: ("pd.csi.storage.gke.io", {"type": "pd-ssd"}),
    ProviderType.AWS: ("ebs.csi.aws.com", {"type": "gp3", "encrypted": "true", "csi.storage.k8s.io/fstype": "ext4"}),
}


def storage_classes(provider: ProviderType) -> list[Object]:
    """The StorageClass a seed on `provider` holds for etcd's volumes; none on local (etcd keeps emptyDir)."""
    if provider not in PROVISIONERS:
        return []
    provisioner, parameters = PROVISIONERS[provider]
    return [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": STORAGE_CLASS, "labels": {naming.label("purpose"): "etcd"}},
            "provisioner": provisioner,
            "parameters": dict(parameters),
            "reclaimPolicy": "Retain",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        }
    ]


def claim_templates(volume: EtcdVolume) -> Object:
    """The StatefulSet fields that give each etcd pod its volume, kept when the StatefulSet is deleted or scaled."""
    claim = {
        "metadata": {"name": volume.claim},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": volume.storage_class,
            "resources": {"requests": {"storage": volume.capacity}},
        },
    }
    retain = {"whenDeleted": "Retain", "whenScaled": "Retain"}
    return {"volumeClaimTemplates": [claim], "persistentVolumeClaimRetentionPolicy": retain}


def security_context() -> Object:
    """etcd-druid's pod securityContext: non-root, with the volume's group."""
    return {"runAsUser": NON_ROOT, "runAsGroup": NON_ROOT, "runAsNonRoot": True, "fsGroup": NON_ROOT}
