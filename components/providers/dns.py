"""DNS records of a shoot's API in the landscape's zone: Route 53 or Cloud DNS (`garden.dns.provider`).

The zone's provider may differ from the seed's (a GKE seed with names in Route 53); each record is the cloud's
own resource, with the stack's default provider of that cloud (its credentials from the environment).
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp

from components.kinds import DnsProviderType
from components.plan.values import DnsValues
from components.render.exposure import RECORD_TTL


def record(
    name: str, dns: DnsValues, fqdn: str, type_: str, address: pulumi.Input[str], opts: pulumi.ResourceOptions
) -> pulumi.CustomResource:
    """One record `fqdn` of `type_` pointing at `address` in the zone `dns` names."""
    if dns.provider == DnsProviderType.AWS_ROUTE53:
        return aws.route53.Record(
            name, zone_id=dns.zone, name=fqdn, type=type_, ttl=RECORD_TTL, records=[address], opts=opts
        )
    # Cloud DNS names and CNAME targets are absolute: a trailing dot.
    data = pulumi.Output.from_input(address).apply(lambda a: f"{a}." if type_ == "CNAME" else a)
    return gcp.dns.RecordSet(
        name, managed_zone=dns.zone, name=f"{fqdn}.", type=type_, ttl=RECORD_TTL, rrdatas=[data], opts=opts
    )
