"""LocalCluster: a real local Kubernetes cluster (kwokctl, binary runtime) as a Pulumi dynamic resource.

`read()` checks the cluster for real (/readyz over TLS), so `pulumi refresh` records a stopped cluster as
`running: false` (and a deleted one as gone), and the next `pulumi up` starts or recreates it. The kubeconfig
is a secret output. Inputs that name the cluster or its Kubernetes version replace it; the preview says so.

Two optional inputs shape kube-apiserver without replacing anything: `encryptionConfig` (an EncryptionConfiguration,
secret; or where a hosted shoot's seed namespace or a self-hosted shoot's machine directory holds it, with its digest:
`file_in_seed`, `file_in_directory`, read there when the file is written) and `extraClientCas` (PEM CAs trusted for
client certificates besides kwokctl's own). A new content only rewrites the file, which kube-apiserver reloads by
itself; adding or removing one restarts the cluster with the new flags, its etcd data kept. So does `servesIssuer`
(a seed's): its API server publishes its ServiceAccount issuer's keys, which the local object store trusts.
`read()` reports the files as they are, as hashes (the inputs hold the contents): an edited file is drift `up` repairs.

Two more make a shoot's cluster the shoot's own (components/reconciler/shoot_cluster.py), both used only when the
cluster is made: `pki` (the shoot's CA and service-account key, which it serves and signs tokens with: secret, or
where its seed namespace or machine directory holds them, read there when the cluster is made) and
`restore` (secret: the `etcd-backup` data of the shoot's entry, whose newest full snapshot a new cluster starts
from, and which takes a final snapshot before it is deleted). Neither changes an existing cluster; `restoredFrom`
names the snapshot it started from.

The engine stores the provider pickled by reference to this module (the provider process imports it from
the project root): moving or renaming the module or class needs a shim left behind, or existing resources
can no longer be read or deleted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, UpdateResult

from components.naming import short_hash
from components.reconciler import kwokctl, shoot_cluster, unknowns
from components.reconciler.credential_secrets import secret_keys
from components.reconciler.files import write_file
from components.reconciler.gather import lifted
from components.reconciler.kube import KubeError
from components.reconciler.provider import Provider
from components.reconciler.secret_places import DIRECTORY
from components.render import packed_keys

# Bump when the provider logic changes, so that every LocalCluster shows a diff and is reconciled again.
PROVIDER_VERSION = "3"
# Inputs that identify a different cluster: a change replaces it (kwokctl cannot rename or upgrade in place).
REPLACE_ON = ("clusterName", "workdir", "kubernetesVersion")
BOOTSTRAP_TOKEN_FLAG = "--enable-bootstrap-token-auth"
# Where a cluster that serves its issuer publishes its keys: its own API (the discovery document names them).
JWKS_FLAG, JWKS_PATH = "--service-account-jwks-uri", "/openid/v1/jwks"
# Flags given to a new cluster's first start (the others need files that exist only after `kwokctl create`).
CREATE_FLAGS = (*kwokctl.ENCRYPTION_FLAGS, BOOTSTRAP_TOKEN_FLAG, JWKS_FLAG)
# Inputs that change in place: files kube-apiserver reads, and the logic version.
UPDATE_ON = ("encryptionConfig", "extraClientCas", "servesIssuer", "version")
# The outputs keep the files as hashes after this mark: an older state kept their contents.
DIGEST = "sha256:"


def _cluster(props: dict[str, Any]) -> kwokctl.Cluster:
    """The kwokctl cluster the properties describe."""
    return kwokctl.Cluster(name=props["clusterName"], workdir=props["workdir"])


def _apiserver_flags(props: dict[str, Any], cluster: kwokctl.Cluster) -> dict[str, str | None]:
    """The kube-apiserver flags the inputs ask for; None removes a flag."""
    encrypted = props.get("encryptionConfig") is not None
    bundle = cluster.client_ca_file if props.get("extraClientCas") else cluster.own_ca_file
    server = kwokctl.endpoint(cluster) if cluster.exists() else kwokctl.SERVER
    return {
        # A seed's token issuer, as an object store trusting its tokens fetches it (workload identity).
        JWKS_FLAG: server + JWKS_PATH if props.get("servesIssuer") else None,
        kwokctl.ENCRYPTION_FLAGS[0]: str(cluster.encryption_file) if encrypted else None,
        kwokctl.ENCRYPTION_FLAGS[1]: "true" if encrypted else None,
        kwokctl.CLIENT_CA_FLAG: str(bundle),
        # Machines join with bootstrap tokens (MCM writes one per machine); kwokctl leaves this authenticator off.
        BOOTSTRAP_TOKEN_FLAG: "true",
    }


def file_in_seed(kubeconfig: str, namespace: str, secret: str, key: str, sha256: str) -> dict[str, str]:
    """A file's input naming where a seed holds it (a Secret's key), not holding it; `sha256` is its content's."""
    return {shoot_cluster.PKI_SEED: kubeconfig, shoot_cluster.PKI_NAMESPACE: namespace, "secret": secret, "key": key,
            "digest": DIGEST + sha256[:16]}  # fmt: skip


def file_in_directory(directory: str, secret: str, key: str, sha256: str) -> dict[str, str]:
    """A file's input naming where a self-hosted shoot's machine directory holds it (secret_places.py)."""
    return {DIRECTORY: directory, "secret": secret, "key": key, "digest": DIGEST + sha256[:16]}


def _content(source: str | dict[str, str] | None) -> str | None:
    """A file's content: the input's text, or read where a `file_in_seed` or `file_in_directory` says."""
    if not isinstance(source, dict):
        return source
    try:
        return secret_keys(shoot_cluster.held_at(source), source["secret"], [source["key"]])[source["key"]]
    except KubeError as error:
        raise kwokctl.KwokError(f"the encryption configuration: {error}") from None


def _write_files(props: dict[str, Any], cluster: kwokctl.Cluster) -> None:
    """Writes (or removes) the encryption configuration and the client CA bundle the inputs ask for."""
    write_file(cluster.encryption_file, props.get("encryptionConfig"))
    extra = props.get("extraClientCas")
    if cluster.own_ca_file.is_file():
        write_file(cluster.client_ca_file, kwokctl.client_ca_bundle(cluster, extra) if extra else None)


def digest(content: Any) -> Any:
    """A file's content as the outputs keep it: its SHA-256 (64 bits: an edit tells); None, or a digest, as it is."""
    if isinstance(content, dict) and "digest" in content:
        return content["digest"]  # a `file_in_seed` or `file_in_directory`
    if not isinstance(content, str) or content.startswith(DIGEST):
        return content
    return DIGEST + short_hash(content, length=16)


def _outputs(props: dict[str, Any], cluster: kwokctl.Cluster) -> dict[str, Any]:
    """Inputs plus what the running cluster tells: endpoint, kubeconfig, running, the files as they are."""
    encryption = cluster.encryption_file
    return {
        **{k: props[k] for k in ("clusterName", "workdir", "kubernetesVersion", "version")},
        **({"servesIssuer": True} if props.get("servesIssuer") else {}),
        "encryptionConfig": digest(encryption.read_text() if encryption.is_file() else None),
        "extraClientCas": digest(kwokctl.extra_client_cas(cluster)),
        "endpoint": kwokctl.endpoint(cluster),
        "kubeconfig": kwokctl.kubeconfig(cluster),
        "running": True,
        "restoredFrom": shoot_cluster.restored_from(cluster),
        # Kept for delete, which gets the outputs only: its final snapshot goes into this entry.
        "restore": props.get("restore"),
    }


def _ensure_running(props: dict[str, Any]) -> dict[str, Any]:
    """Brings the cluster up whatever state it is in (absent, stopped, half-created) and returns outputs."""
    props = {**props, "encryptionConfig": _content(props.get("encryptionConfig"))}
    cluster = _cluster(props)
    wanted = props["kubernetesVersion"]
    have = kwokctl.server_version()
    if have != wanted:
        raise kwokctl.KwokError(f"kube-apiserver on PATH is {have}, the stack wants {wanted}: run `make tools`")
    # A component that exited (kube-controller-manager losing its lease while the API server restarts, say) is
    # started again like a stopped cluster: `kwokctl start` starts what is not running and keeps what is.
    if not kwokctl.ready(cluster) or kwokctl.stopped_components(cluster):
        if cluster.exists():
            try:
                kwokctl.start(cluster)
            except kwokctl.KwokError:
                # A cluster whose files a crash left half-written cannot start: make it again.
                kwokctl.delete(cluster)
        if not cluster.exists():
            # A lost cluster comes back as it was: the shoot's PKI, and etcd from the entry's newest snapshot.
            if props.get("pki"):
                shoot_cluster.write_pki(cluster, props["pki"])
            shoot_cluster.plan_restore(cluster, props.get("restore"))
            # The configuration exists before the first start, so nothing is ever stored unencrypted.
            _write_files(props, cluster)
            flags = _apiserver_flags(props, cluster)
            kwokctl.create(cluster, {f: v for f, v in flags.items() if v and f in CREATE_FLAGS})
        kwokctl.wait_ready(cluster)
    if shoot_cluster.pending(cluster):
        shoot_cluster.restore(cluster, props["restore"])
    _write_files(props, cluster)
    if kwokctl.set_apiserver_flags(cluster, _apiserver_flags(props, cluster)):
        kwokctl.restart(cluster)
    return _outputs(props, cluster)


def _refuse_decryption_loss(olds: dict[str, Any], news: dict[str, Any]) -> None:
    """Dropping the encryption configuration would leave etcd's encrypted objects unreadable: refuse it."""
    if olds.get("encryptionConfig") is not None and news.get("encryptionConfig") is None:
        raise kwokctl.KwokError(
            f"cluster '{news['clusterName']}': removing the encryption configuration would make the encrypted "
            "objects in etcd unreadable; keep it (it always encrypts secrets)"
        )


class LocalClusterProvider(Provider):
    """CRUD of a kwokctl cluster; clients and processes are made inside each method (nothing captured)."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        """Creates the cluster, or adopts it when a crashed run already made it."""
        return CreateResult(id_=props["clusterName"], outs=_ensure_running(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """Replaces on a new identity; updates when the logic version changed or refresh found it stopped."""
        replaces = [k for k in REPLACE_ON if olds.get(k) != news.get(k)]
        stopped = olds.get("running") is False
        # Another entry to restore from is a migration (or a new bucket key): a cluster the source let go is made
        # again from it. A state recorded before the input existed, or a preview not knowing it yet, is no change.
        moved = bool(unknowns.changed(olds, news, ("restore",)))
        # A file a preview does not know yet (its keys or CAs change in the same run) is compared by the `up`.
        edited = any(unknowns.known(news.get(k)) and digest(olds.get(k)) != digest(news.get(k)) for k in UPDATE_ON)
        changed = bool(replaces) or stopped or moved or edited
        return DiffResult(changes=changed, replaces=replaces, delete_before_replace=True)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Starts a stopped cluster (or recreates a lost one), writes its files and flags; the pki stays."""
        _refuse_decryption_loss(olds, news)
        return UpdateResult(outs=_ensure_running(news))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The cluster as it really is: gone (empty id), stopped (`running: false`) or running."""
        cluster = _cluster(props)
        if not cluster.exists():
            return ReadResult(id_="", outs={})
        # A restore a killed run left pending reads as stopped too: `up` finishes it.
        if not kwokctl.ready(cluster) or kwokctl.stopped_components(cluster) or shoot_cluster.pending(cluster):
            return ReadResult(id_=id_, outs={**props, "running": False})
        return ReadResult(id_=id_, outs=_outputs(props, cluster))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Stops every process of the cluster and removes its files, after a final snapshot where it has an entry."""
        cluster = _cluster(props)
        if props.get("restore"):
            shoot_cluster.final_snapshot(cluster, props["restore"])
        kwokctl.delete(cluster)


def _compact_keys(pki: dict[str, Any]) -> dict[str, Any]:
    """The PKI with each key as its primes (a seed reference, a hosted shoot's, holds none)."""
    return {k: packed_keys.compacted(v) if isinstance(v, str) else v for k, v in pki.items()}


class LocalCluster(Resource, module="arbor", name="LocalCluster"):
    """A local Kubernetes cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        endpoint: pulumi.Output[str]
        kubeconfig: pulumi.Output[str]
        running: pulumi.Output[bool]

    def __init__(
        self,
        name: str,
        cluster_name: str,
        workdir: str,
        kubernetes_version: str,
        opts: pulumi.ResourceOptions | None = None,
        encryption_config: pulumi.Input[str | dict[str, str]] | None = None,
        extra_client_cas: pulumi.Input[str] | None = None,
        pki: pulumi.Input[dict[str, str]] | None = None,
        restore: pulumi.Input[dict[str, str]] | None = None,
        serves_issuer: bool = False,
    ) -> None:
        props = {
            "clusterName": cluster_name,
            "workdir": workdir,
            "kubernetesVersion": kubernetes_version,
            "encryptionConfig": encryption_config,
            "extraClientCas": extra_client_cas,
            # Its keys kept as their primes (render/packed_keys.py), written out when the cluster is made.
            "pki": None if pki is None else lifted(pki).apply(_compact_keys),
            "restore": restore,
            # Only a seed's: adding it restarts an existing cluster once, its data kept.
            **({"servesIssuer": True} if serves_issuer else {}),
            "version": PROVIDER_VERSION,
            "endpoint": None,
            "kubeconfig": None,
            "running": None,
            "restoredFrom": None,
        }
        opts = pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(additional_secret_outputs=["kubeconfig", "encryptionConfig", "pki", "restore"])
        )
        super().__init__(LocalClusterProvider(), name, props, opts)
