"""The credentials of a shoot's control plane as data: what each one is, who issues it, who consumes it.

Pure: no Pulumi, no cryptography. `components/reconciler/pki.py` issues what this table describes, and the
control-plane renderer mounts the Secrets by the names below (keys `ca.crt`, `tls.crt`, `tls.key`; a CA keeps
`ca.key` in its Secret only where a component signs with it). Names, common names, key usages and validity follow
Gardener's secrets manager: CAs are valid for 10 years and only rotate on request; leaf certificates are valid for
90 days and are renewed when 80% of that has passed or fewer than 10 days remain.

Rotation is a config change: `credentials.rotation.<group>` is a counter per credential group; changing it
replaces the group's credentials and, through the issuer chain, every certificate they signed. `rotation_plan`
says which credentials that replaces and which components restart.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

# Secret names in the shoot's seed namespace; the control-plane renderer mounts them by these names.
CA = "ca"
CA_ETCD = "ca-etcd"
CA_FRONT_PROXY = "ca-front-proxy"
CA_CLIENT = "ca-client"
ETCD_SERVER = "etcd-server"
ETCD_PEER = "etcd-peer"
ETCD_CLIENT = "etcd-client"
KUBE_APISERVER = "kube-apiserver"
KUBE_APISERVER_KUBELET = "kube-apiserver-kubelet"
FRONT_PROXY_CLIENT = "front-proxy-client"
KUBE_CONTROLLER_MANAGER = "kube-controller-manager"
KUBE_SCHEDULER = "kube-scheduler"
MACHINE_CONTROLLER_MANAGER = "machine-controller-manager"
# gardener-resource-manager's webhook server, issued by the shoot's CA (upstream's config name).
RESOURCE_MANAGER_SERVER = "gardener-resource-manager-server"
SERVICE_ACCOUNT_KEY = "service-account-key"
BOOTSTRAP_TOKEN = "bootstrap-token"
# arbor's own client certificate at a shoot whose API it reaches by domain name (its Kubernetes provider there).
ARBOR_CLIENT = "arbor"
# The client CA with its key: only kube-controller-manager signs (kubelets' client certificates, which
# kube-apiserver checks against the client CA), so only it mounts the key; kube-apiserver gets `ca-client` without.
CA_CLIENT_SIGNER = f"{CA_CLIENT}-signer"  # signer(CA_CLIENT)

# Keys of those Secrets (Gardener's).
KEY_CA_CERT = "ca.crt"
KEY_CA_KEY = "ca.key"
KEY_CERT = "tls.crt"
KEY_KEY = "tls.key"
KEY_RSA_PRIVATE = "id_rsa"
KEY_RSA_PUBLIC = "id_rsa.pub"
KEY_TOKEN_ID = "token-id"
KEY_TOKEN_SECRET = "token-secret"

# Consumers: the control-plane workloads (controlplane.py names them so), and kubelet on every node.
ETCD_MAIN_COMPONENT = "etcd-main"
ETCD_EVENTS_COMPONENT = "etcd-events"
KUBE_APISERVER_COMPONENT = "kube-apiserver"
KCM_COMPONENT = "kube-controller-manager"
SCHEDULER_COMPONENT = "kube-scheduler"
MCM_COMPONENT = "machine-controller-manager"
GRM_COMPONENT = "gardener-resource-manager"
# kubelet trusts the cluster CA and the client CA: their rotation rolls every pool (the OSC hash's ca rotation).
KUBELET_COMPONENT = "kubelet"
ETCD_COMPONENTS = (ETCD_MAIN_COMPONENT, ETCD_EVENTS_COMPONENT)

LOOPBACK = "127.0.0.1"
# The user kube-apiserver is at kubelets; the shoot binds it to system:kubelet-api-admin.
KUBELET_CLIENT_USER = "system:kube-apiserver:kubelet"
# machine-controller-manager's user in the shoot (components/render/machines.py binds its rights there).
MCM_USER = "system:machine-controller-manager"
# arbor's user in such a shoot, as gardenlet's `gardener` user: in system:masters, it manages what arbor deploys.
ARBOR_USER = "arbor"
MASTERS_GROUP = "system:masters"
NODES_GROUP = "system:nodes"
NODE_USER_PREFIX = "system:node:"
CA_VALIDITY = timedelta(days=3650)
LEAF_VALIDITY = timedelta(days=90)
# Gardener's secrets manager renews a leaf certificate once 80% of its validity passed or fewer than 10 days remain.
LEAF_RENEW_AFTER_FRACTION = 0.8
LEAF_RENEW_BEFORE = timedelta(days=10)
RSA_KEY_BITS = 3072


class Kind(StrEnum):
    """What a credential is."""

    CA = "ca"
    CERT = "cert"
    RSA_KEY = "rsa-key"
    TOKEN = "token"


class Usage(StrEnum):
    """Extended key usages of a leaf certificate."""

    SERVER = "server"
    CLIENT = "client"


class Group(StrEnum):
    """Rotation groups: `credentials.rotation.<group>` of a shoot, each a counter."""

    CA = "ca"  # cluster CA and client CA, with every certificate they signed
    ETCD_CA = "etcdCA"
    FRONT_PROXY_CA = "frontProxyCA"
    SERVICE_ACCOUNT_KEY = "serviceAccountKey"
    BOOTSTRAP_TOKEN = "bootstrapToken"


@dataclass(frozen=True)
class Credential:
    """One credential of a shoot: its Secret name, kind, issuer, subject, SANs, usages, validity and consumers."""

    name: str
    kind: Kind
    group: Group
    issuer: str | None = None
    common_name: str = ""
    organizations: tuple[str, ...] = ()
    dns_names: tuple[str, ...] = ()
    ip_addresses: tuple[str, ...] = ()
    usages: tuple[Usage, ...] = ()
    validity: timedelta | None = None
    # Components that read this credential: a new one restarts them.
    consumers: tuple[str, ...] = ()
    # A CA whose key a component signs with (kube-controller-manager signs kubelets' CSRs with the client CA).
    key_in_secret: bool = False

    @property
    def validity_seconds(self) -> int:
        """The validity in whole seconds (0 for keys and tokens, which do not expire)."""
        return int(self.validity.total_seconds()) if self.validity else 0


def _service_names(service: str, namespace: str) -> tuple[str, ...]:
    """The DNS names a Service answers to from inside the seed."""
    return (service, f"{service}.{namespace}", f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local")


def kubernetes_service_ip(services: tuple[str, ...]) -> str | None:
    """The `kubernetes` Service's IP: the first address of the shoot's first services range, if there is one."""
    if not services:
        return None
    return str(ipaddress.ip_network(services[0])[1])


def apiserver_sans(namespace: str, services: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """DNS names and IPs of kube-apiserver: its Service in the seed and `kubernetes.default` in the shoot."""
    in_shoot = ("kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
    ip = kubernetes_service_ip(services)
    return _service_names("kube-apiserver", namespace) + in_shoot, (ip,) if ip else ()


def etcd_sans(namespace: str, kind: str) -> tuple[str, ...]:
    """DNS names of etcd main and events: their client Services, or their peer Services and pods (`kind`)."""
    names: tuple[str, ...] = ()
    for role in ("main", "events"):
        names += _service_names(f"etcd-{role}-{kind}", namespace)
        if kind == "peer":
            # Each member's own name under the headless peer Service (the StatefulSet's pods).
            names += (f"*.etcd-{role}-peer.{namespace}.svc", f"*.etcd-{role}-peer.{namespace}.svc.cluster.local")
    if kind == "client":
        # etcdctl in the pod (health checks, backups) talks to localhost.
        names += ("localhost",)
    return names


def _ca(
    name: str, group: Group, common_name: str, consumers: tuple[str, ...], key_in_secret: bool = False
) -> Credential:
    """A certificate authority, valid for 10 years."""
    return Credential(name, Kind.CA, group, common_name=common_name, validity=CA_VALIDITY, consumers=consumers,
                      key_in_secret=key_in_secret)  # fmt: skip


def _leaf(
    name: str,
    issuer: Credential,
    common_name: str,
    usages: tuple[Usage, ...],
    consumers: tuple[str, ...],
    dns_names: tuple[str, ...] = (),
    ip_addresses: tuple[str, ...] = (),
    organizations: tuple[str, ...] = (),
) -> Credential:
    """A certificate issued by `issuer`, in its rotation group, valid for 90 days."""
    return Credential(
        name,
        Kind.CERT,
        issuer.group,
        issuer=issuer.name,
        common_name=common_name,
        organizations=organizations,
        dns_names=dns_names,
        ip_addresses=ip_addresses,
        usages=usages,
        validity=LEAF_VALIDITY,
        consumers=consumers,
    )


def credentials(
    namespace: str,
    services: tuple[str, ...],
    node_ips: tuple[str, ...] = (),
    hosted: bool = True,
    domains: tuple[str, ...] = (),
    nodes: tuple[str, ...] = (),
    signers: bool | None = None,
) -> tuple[Credential, ...]:
    """Every credential of a shoot whose control plane runs in `namespace`, issuers before what they sign.

    `node_ips` are the control-plane nodes' addresses of a self-hosted shoot, where its kube-apiserver is reached;
    its static pods also reach each other on loopback, so the servers name 127.0.0.1 too. A `hosted` shoot's
    machine-controller-manager runs in the seed and reaches the shoot with a client certificate of its own, and its
    gardener-resource-manager serves its webhook with a certificate of the shoot's CA.
    `domains` are the shoot's API domain names (external, internal): kube-apiserver's certificate names them, and
    arbor reaches the API there with a client certificate of its own, a leaf renewed as the others. `nodes` are
    machines whose kubelet starts with a client certificate of its own (`system:node:<name>`): a self-hosted cloud
    shoot's first control-plane machine, where no API can sign a bootstrap request before kubelet runs it.
    `signers` (default: `hosted`): the CAs keep their keys in signer Secrets where the leaves are written.
    """
    api, kcm, sched = KUBE_APISERVER_COMPONENT, KCM_COMPONENT, SCHEDULER_COMPONENT
    # A hosted shoot's CAs keep their keys in the seed namespace (`<ca>-signer`, mounted by no component but
    # kube-controller-manager's client CA), as Gardener's secrets manager keeps a shoot's CAs, and a self-hosted local
    # shoot's in its machine directory: its leaves are issued from there, so no leaf keeps a copy of its CA's key.
    signed = hosted if signers is None else signers
    ca = _ca(CA, Group.CA, "kubernetes", (kcm, sched, KUBELET_COMPONENT), key_in_secret=signed)
    ca_client = _ca(CA_CLIENT, Group.CA, "kubernetes-client", (api, kcm, KUBELET_COMPONENT), key_in_secret=True)
    ca_etcd = _ca(CA_ETCD, Group.ETCD_CA, "etcd", (*ETCD_COMPONENTS, api), key_in_secret=signed)
    ca_front_proxy = _ca(CA_FRONT_PROXY, Group.FRONT_PROXY_CA, "front-proxy", (api,), key_in_secret=signed)
    api_dns, api_ips = apiserver_sans(namespace, services)
    api_dns += domains
    server, client, both = (Usage.SERVER,), (Usage.CLIENT,), (Usage.SERVER, Usage.CLIENT)
    return (
        ca, ca_client, ca_etcd, ca_front_proxy,
        _leaf(ETCD_SERVER, ca_etcd, "etcd-server", both, ETCD_COMPONENTS,
              dns_names=etcd_sans(namespace, "client"), ip_addresses=(LOOPBACK,)),
        _leaf(ETCD_PEER, ca_etcd, "etcd-peer", both, ETCD_COMPONENTS, dns_names=etcd_sans(namespace, "peer"),
              ip_addresses=(LOOPBACK,)),
        _leaf(ETCD_CLIENT, ca_etcd, "etcd-client", client, (api,)),
        _leaf(KUBE_APISERVER, ca, "kube-apiserver", server, (api,), dns_names=api_dns,
              ip_addresses=(*api_ips, LOOPBACK, *node_ips)),
        # Authorised at kubelets by a ClusterRoleBinding of this user to system:kubelet-api-admin, as Gardener does.
        _leaf(KUBE_APISERVER_KUBELET, ca_client, KUBELET_CLIENT_USER, client, (api,)),
        _leaf(FRONT_PROXY_CLIENT, ca_front_proxy, "front-proxy-client", client, (api,)),
        _leaf(KUBE_CONTROLLER_MANAGER, ca_client, "system:kube-controller-manager", client, (kcm,)),
        _leaf(KUBE_SCHEDULER, ca_client, "system:kube-scheduler", client, (sched,)),
        *((_leaf(MACHINE_CONTROLLER_MANAGER, ca_client, MCM_USER, client, (MCM_COMPONENT,)),) if hosted else ()),
        # Its webhook is called by kube-apiserver at its Service, or on loopback where a local shoot's API runs.
        *((_leaf(RESOURCE_MANAGER_SERVER, ca, GRM_COMPONENT, server, (GRM_COMPONENT,),
                 dns_names=_service_names(GRM_COMPONENT, namespace), ip_addresses=(LOOPBACK,)),) if hosted else ()),
        *((_leaf(ARBOR_CLIENT, ca_client, ARBOR_USER, client, (), organizations=(MASTERS_GROUP,)),)
          if domains else ()),
        *(_leaf(kubelet_credential(n), ca_client, f"{NODE_USER_PREFIX}{n}", client, (KUBELET_COMPONENT,),
                organizations=(NODES_GROUP,)) for n in nodes),
        Credential(SERVICE_ACCOUNT_KEY, Kind.RSA_KEY, Group.SERVICE_ACCOUNT_KEY, consumers=(api, kcm)),
        # kube-apiserver reads bootstrap tokens from kube-system at request time; only new nodes use a new one.
        Credential(BOOTSTRAP_TOKEN, Kind.TOKEN, Group.BOOTSTRAP_TOKEN),
    )  # fmt: skip


def kubelet_credential(node: str) -> str:
    """The name of the client certificate a node's kubelet starts with."""
    return f"kubelet-{node}"


def by_name(creds: tuple[Credential, ...]) -> dict[str, Credential]:
    """The credentials keyed by name."""
    return {c.name: c for c in creds}


def secret_keys(credential: Credential) -> tuple[str, ...]:
    """The keys of the credential's Secret in the seed namespace."""
    if credential.kind is Kind.CA:
        return (KEY_CA_CERT, KEY_CA_KEY) if credential.key_in_secret else (KEY_CA_CERT,)
    if credential.kind is Kind.CERT:
        return (KEY_CA_CERT, KEY_CERT, KEY_KEY)
    if credential.kind is Kind.RSA_KEY:
        return (KEY_RSA_PRIVATE, KEY_RSA_PUBLIC)
    return (KEY_TOKEN_ID, KEY_TOKEN_SECRET)


def signer(ca: str) -> str:
    """The Secret that holds a CA's key (and certificate) in the seed namespace."""
    return f"{ca}-signer"


def secrets_of(credential: Credential) -> dict[str, tuple[str, ...]]:
    """The credential's Secrets in the seed namespace and their keys.

    A CA whose key a component signs with is two Secrets: its certificate for everyone, and `<name>-signer` with
    the key for the signing component alone (kube-controller-manager's `ca-client-signer`).
    """
    keys = secret_keys(credential)
    if credential.kind is Kind.CA and credential.key_in_secret:
        return {credential.name: (KEY_CA_CERT,), signer(credential.name): keys}
    return {credential.name: keys}


def _dependents(creds: tuple[Credential, ...], replaced: set[str]) -> set[str]:
    """`replaced` and every credential issued, directly or not, by one of them."""
    out = set(replaced)
    for credential in creds:  # issuers come first, so one pass follows every chain
        if credential.issuer in out:
            out.add(credential.name)
    return out


def rotation_plan(
    old_counters: Mapping[str, int],
    new_counters: Mapping[str, int],
    creds: tuple[Credential, ...] | None = None,
) -> dict[str, list[str]]:
    """Credentials a change of rotation counters replaces (with what they signed), each with the components it restarts.

    A group missing from a mapping counts as 0, the default.
    """
    # Names, issuers and consumers do not depend on the namespace or ranges, only SANs do.
    creds = creds if creds is not None else credentials("shoot", ())
    changed = {g.value for g in Group if old_counters.get(g.value, 0) != new_counters.get(g.value, 0)}
    rotated = _dependents(creds, {c.name for c in creds if c.group.value in changed})
    return {c.name: sorted(c.consumers) for c in creds if c.name in rotated}


def restarts(plan: Mapping[str, list[str]]) -> list[str]:
    """Every component a rotation plan restarts, once each."""
    return sorted({component for components in plan.values() for component in components})


# How a rotation's plan starts where it is logged, so the preview summary finds it among the diagnostics.
ROTATION_PREFIX = "credential rotation of "


def rotation_message(shoot: str, old_counters: Mapping[str, int], new_counters: Mapping[str, int]) -> str | None:
    """What a change of a shoot's rotation counters replaces and restarts, as the preview says it; None if nothing."""
    plan = rotation_plan(old_counters, new_counters)
    if not plan:
        return None
    lines = [f"{ROTATION_PREFIX}{shoot}: restarts {', '.join(restarts(plan)) or 'nothing'}"]
    lines += [f"  {name} replaced; used by {', '.join(users) or 'no component'}" for name, users in plan.items()]
    return "\n".join(lines)


def leaf_renewal_due(not_before: float, not_after: float, now: float) -> bool:
    """Whether a leaf certificate is due (Gardener's rule: 80% of its validity passed, or fewer than 10 days left)."""
    validity = not_after - not_before
    renew_at = not_before + validity * LEAF_RENEW_AFTER_FRACTION
    return now >= renew_at or now >= not_after - LEAF_RENEW_BEFORE.total_seconds()
