"""A hosted shoot's state in its backup entry, wired: the ShootState record and the sealed upload that describes it.

The persisted secrets come from the shoot's PKI and encryption (CA and key pairs whole, private keys included: a
seed's Secrets carry only the certificates of most CAs); the machine state is read from the seed when the state
is uploaded (components/reconciler/shoot_state.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi

from components.bundles import ClusterAccess, SeedAccess
from components.concerns.gather import gathered
from components.concerns.objects import KubeObject, Record
from components.concerns.shoot_pki import ShootPki
from components.plan.values import ShootValues
from components.reconciler.shoot_state import ShootStateBackup, ShootStateKey
from components.render import api, controlplane, shoot_state


def persisted_secrets(
    credentials: ShootPki, encryption_config: pulumi.Output[str]
) -> pulumi.Output[dict[str, dict[str, str]]]:
    """The persisted secrets by name, each with its keys as its Secret names them; secret."""
    chosen: dict[str, pulumi.Output[dict[str, str]]] = {}
    for credential in shoot_state.persisted(c.credential for c in credentials.credentials.values()):
        issued = credentials[credential.name]
        public, private = shoot_state.PERSISTED_KEYS[credential.kind]
        assert issued.cert is not None  # a CA has its certificate, a key its public half
        chosen[credential.name] = gathered({public: issued.cert, private: issued.key}, secret=True)
    chosen[controlplane.ENCRYPTION_SECRET] = gathered({controlplane.ENCRYPTION_KEY: encryption_config}, secret=True)
    return gathered(chosen, secret=True)


def shoot_state_backup(
    name: str,
    values: ShootValues,
    record: Record,
    garden: ClusterAccess,
    seed: SeedAccess,
    secrets: pulumi.Output[dict[str, dict[str, str]]],
    backup_data: pulumi.Output[dict[str, str]],
    parent: pulumi.Resource,
    after: Sequence[pulumi.Resource],
) -> list[pulumi.Resource]:
    """The ShootState record (owned by the Shoot record) and its upload, once the control plane and machines are."""
    planned = values.backup
    assert planned is not None  # only a shoot on a seed with backups has an entry
    state = api.shoot_state_record(values, planned, "")
    metadata = record.metadata.apply(lambda m: api.shoot_state_record(values, planned, m["uid"])["metadata"])
    spec = record.metadata.apply(lambda m: api.shoot_state_record(values, planned, m["uid"])["spec"])
    in_garden = pulumi.ResourceOptions(parent=parent, provider=garden.provider, depends_on=[record])
    described = KubeObject(f"{name}-shoot-state-record", {**state, "metadata": metadata, "spec": spec}, in_garden)
    # Protected: the only key that opens the state in the bucket.
    key = ShootStateKey(f"{name}-shoot-state-key", pulumi.ResourceOptions(parent=parent, protect=True))
    upload = ShootStateBackup(
        f"{name}-shoot-state",
        shoot=values.name,
        namespace=values.project_namespace,
        seed_namespace=values.seed_namespace,
        secrets=secrets,
        backup_data=backup_data,
        object_key=spec.apply(lambda s: s["object"]),
        key=key.key,
        seed_kubeconfig=seed.cluster.reach,
        garden_kubeconfig=garden.reach,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[described, *after]),
    )
    return [described, key, upload]
