"""EntrySecret: a hosted shoot's `etcd-backup` Secret, written from its seed's bucket Secret and the entry's prefix.

Gardener's BackupEntry hands etcd-backup-restore the bucket's credentials in the shoot's seed namespace; the seed
holds them once, in `garden/bucket-<bucket>` (seed.py). This resource reads that Secret when it writes the shoot's
(`components/reconciler/entry_store.py`: the reference adds the entry's prefix and checks the whole against the
digest the program computed), so the state keeps the seed's key nowhere per shoot: the inputs hold the reference,
the outputs the digest of what was written. `read()` marks a Secret edited or deleted in the seed as drift (its
digest ""), and the next `up` writes it again.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.reconciler.credential_secrets import put_secret, read_secret
from components.reconciler.entry_store import StoreError, data_digest, entry_data, expected_digest
from components.reconciler.kube import Kube, secret_path, unless_unreachable
from components.reconciler.provider import Provider
from components.reconciler.secret_set import data_of
from components.reconciler.unknowns import known
from components.render import backup

PROVIDER_VERSION = "1"
DRIFTED = ""


def _write(props: dict[str, Any]) -> dict[str, Any]:
    """Writes the shoot's Secret from the seed's; the outputs, with the digest of what was written."""
    try:
        data = entry_data(props["source"])
    except StoreError as error:
        raise StoreError(f"writing {props['namespace']}/{backup.ETCD_BACKUP_SECRET}: {error}") from None
    put_secret(Kube.from_kubeconfig(props["kubeconfig"]), props["namespace"], backup.ETCD_BACKUP_SECRET, data_of(data))
    return {**props, "written": data_digest(data)}


class EntrySecretProvider(Provider):
    """Keeps a seed namespace's `etcd-backup` Secret written from the seed's bucket Secret."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Writes the Secret."""
        return CreateResult(id_=props["namespace"], outs=_write(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """An update when the data to write changed (its digest), the namespace or logic did, or the Secret drifted.

        A source a preview does not know yet (the seed's bucket being updated) may be other data: an update.
        """
        source = news.get("source")
        changed = not known(source) or olds.get("written") == DRIFTED
        changed = changed or expected_digest(olds["source"]) != expected_digest(news["source"])
        changed = changed or any(olds.get(k) != news.get(k) for k in ("namespace", "cluster", "version"))
        return DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Writes the Secret again; in another namespace, the one left where it was is deleted first."""
        if olds.get("namespace") != news["namespace"]:
            self.delete(_id, olds)
        return UpdateResult(outs=_write(news))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The Secret as the seed has it: edited or deleted there, drift."""
        data = read_secret(props, backup.ETCD_BACKUP_SECRET)
        written = props.get("written") if data is not None and data_digest(data) == props.get("written") else DRIFTED
        return ReadResult(id_=id_, outs={**props, "written": written})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Deletes the Secret (a seed that cannot be reached took it with it)."""
        with unless_unreachable():
            Kube.from_kubeconfig(props["kubeconfig"]).delete(secret_path(props["namespace"], backup.ETCD_BACKUP_SECRET))


class EntrySecret(Resource, module="arbor", name="EntrySecret"):
    """A hosted shoot's `etcd-backup` Secret in its seed namespace, from `source` (the seed's bucket Secret)."""

    def __init__(
        self,
        name: str,
        *,
        source: pulumi.Input[dict[str, Any]],
        kubeconfig: pulumi.Input[str],
        namespace: str,
        cluster: str,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`source`: a reference to the seed's bucket Secret with the entry's prefix and the expected digest."""
        props = {
            "source": pulumi.Output.secret(source), "kubeconfig": kubeconfig, "namespace": namespace,
            # The seed's identity (`<provider>:<name>`), shown in the preview and read by policies.
            "cluster": cluster, "version": PROVIDER_VERSION, "written": None,
        }  # fmt: skip
        super().__init__(EntrySecretProvider(), name, props, opts)
