"""A shoot's API reached from outside: its load balancer's address recorded under its domains.

kube-apiserver's Service is a LoadBalancer of the seed's cloud (render/exposure.py); once the cloud wrote the
balancer's address into the Service's status, the external and internal domain records point at it. arbor
reaches the shoot at the external domain with its own client certificate (render/pki.py `ARBOR_CLIENT`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import pulumi

from components.concerns.objects import LoadBalancerService
from components.plan.values import ShootValues
from components.providers import dns as dns_records
from components.providers.kubeconfig import client_certificate_kubeconfig
from components.render import exposure


def _address(status: dict[str, Any] | None) -> str:
    """The load balancer's address in a Service's status; an error while the cloud has given it none."""
    address = exposure.target(((status or {}).get("loadBalancer") or {}).get("ingress"))
    if not address:
        raise ValueError("kube-apiserver's load balancer has no address in the Service's status")
    return address


def service_address(service: LoadBalancerService) -> pulumi.Output[str]:
    """The address of kube-apiserver's LoadBalancer Service, once its cloud wrote it into the status."""
    return service.status.apply(_address)


def api_records(
    name: str,
    shoot: ShootValues,
    address: pulumi.Output[str],
    parent: pulumi.Resource,
    after: Sequence[pulumi.Resource] = (),
) -> list[pulumi.CustomResource]:
    """The external and internal domain records of the shoot's API at its load balancer's `address`."""
    assert shoot.dns is not None, "only shoots with domain names are exposed"
    type_ = exposure.seed_record_type(shoot.networking.provider.value)
    opts = pulumi.ResourceOptions(parent=parent, depends_on=list(after))
    return [
        dns_records.record(f"{name}-dns-{role}", shoot.dns, fqdn, type_, address, opts)
        for role, fqdn in exposure.record_names(shoot.dns).items()
    ]


def arbor_kubeconfig(
    shoot: ShootValues, ca: pulumi.Input[str], cert: pulumi.Input[str], key: pulumi.Input[str]
) -> pulumi.Output[str]:
    """The kubeconfig arbor reaches the shoot with: its external domain, the cluster CA, its client certificate."""
    assert shoot.dns is not None, "only shoots with domain names are reached by name"
    server = f"https://{shoot.dns.external}"
    config = pulumi.Output.all(ca, cert, key).apply(
        lambda got: client_certificate_kubeconfig(shoot.technical_id, server, got[0], got[1], got[2])
    )
    return cast(pulumi.Output[str], pulumi.Output.secret(config))
