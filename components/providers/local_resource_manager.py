"""A local hosted shoot's gardener-resource-manager: the real binary as a process arbor supervises.

A kwok seed runs no pods, so the server runs on this machine, as machine-controller-manager does on local, with
identities of its own rather than the clusters' admin kubeconfigs: a token of `gardener-resource-manager` in the
seed's shoot namespace (source) and one in the shoot's kube-system (target), each kept in an owner-only file its
kubeconfig reads and renewed by `up` (components/reconciler/access_token.py). Its webhook and health probes listen
on the spare ports of the shoot cluster's block (components/reconciler/ports.py), its metrics on a second loopback
address, so the webhook's URL lasts as long as the cluster.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from urllib.parse import urlparse

import pulumi

from components.bundles import ClusterAccess, ResourceManagerServing, SeedAccess, ServingSecret
from components.plan.values import ShootValues
from components.reconciler.access_token import DEFAULT_EXPIRATION_S, AccessToken
from components.reconciler.kube import certificate_authority, certificate_authority_file
from components.reconciler.local_process import LocalProcess
from components.reconciler.ports import spare_ports
from components.render import pki
from components.render import resource_manager as grm
from components.render.token_kubeconfig import token_file_kubeconfig

# Where the metrics server listens: another loopback address, at the webhook's port.
METRICS_ADDRESS = "127.0.0.2"


def _ports(endpoint: str) -> tuple[int, int]:
    """The webhook's and the health probes' ports: the spare ports after the shoot API's."""
    webhook, health = spare_ports(urlparse(endpoint).port or 0)
    return webhook, health


def _token_kubeconfig(endpoint: str, kubeconfig: str, token_file: str, name: str) -> str:
    """A kubeconfig of the cluster whose user reads the token file, trusting its CA where the cluster's names it.

    A local cluster's kubeconfig names kwokctl's CA file: the process reads it there, the state keeps the path.
    """
    ca_file = certificate_authority_file(kubeconfig)
    ca_pem = "" if ca_file else certificate_authority(kubeconfig)
    return token_file_kubeconfig(endpoint, ca_pem, token_file, name, grm.NAME, ca_file=ca_file)


def _kubeconfig(cluster: ClusterAccess, token_file: str, name: str) -> pulumi.Output[str]:
    """A kubeconfig of the cluster whose user reads the token file."""
    return pulumi.Output.all(cluster.endpoint, cluster.kubeconfig).apply(
        lambda got: _token_kubeconfig(got[0], got[1], token_file, name)
    )


def run_resource_manager(
    shoot: ShootValues,
    seed: SeedAccess,
    shoot_api: ClusterAccess,
    serving: ServingSecret,
    directory: str,
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource] = (),
) -> ResourceManagerServing:
    """Its tokens, kubeconfigs, configuration and certificate in `directory`, and the process."""
    prefix, namespace, host = f"{parent._name}-grm", shoot.seed_namespace, shoot.service_host or ""
    opts = pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on))

    def path(name: str) -> str:
        return os.path.join(directory, name)

    tokens = [
        AccessToken(f"{prefix}-{side}-token", kubeconfig=cluster.reach, namespace=ns, service_account=grm.NAME,
                    token_file=path(f"{side}-token"), expiration_s=DEFAULT_EXPIRATION_S, opts=opts)
        for side, cluster, ns in (("source", seed.cluster, namespace), ("target", shoot_api, grm.TARGET_NAMESPACES[0]))
    ]  # fmt: skip
    ports = shoot_api.endpoint.apply(_ports)
    config = ports.apply(
        lambda p: grm.config_text(
            namespace, host, path("source.kubeconfig"), path("target.kubeconfig"), directory,
            grm.Server("127.0.0.1", p[0], p[1], p[0], METRICS_ADDRESS),
        )
    )  # fmt: skip
    files: dict[str, pulumi.Input[str]] = {
        "config.yaml": config,
        "source.kubeconfig": _kubeconfig(seed.cluster, path("source-token"), "seed"),
        "target.kubeconfig": _kubeconfig(shoot_api, path("target-token"), "shoot"),
    }
    # Its certificate and key as its Secret in the seed namespace holds them, read there when it starts.
    held: dict[str, pulumi.Input[str]] = {"kubeconfig": seed.cluster.reach, "namespace": namespace,
                                          "secret": serving.secret}  # fmt: skip
    from_seed = {key: {**held, "key": key, "checksum": serving.checksum} for key in (pki.KEY_CERT, pki.KEY_KEY)}
    process = LocalProcess(
        f"{prefix}-process",
        program=grm.NAME,
        directory=directory,
        args=["--config={dir}/config.yaml"],
        files=files,
        secret_files=from_seed,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[*depends_on, *tokens]),
    )
    return ResourceManagerServing(url=ports.apply(lambda p: grm.local_url(p[0])), resources=[process])
