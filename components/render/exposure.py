"""How a shoot's kube-apiserver is reached from outside its seed: a cloud load balancer and two DNS records.

Gardener's exposure before SNI: the `kube-apiserver` Service in the shoot's seed namespace is a LoadBalancer of
the seed's cloud (TCP passthrough; kube-apiserver terminates TLS), and the landscape's DNS zone records the
shoot's external domain `api.<shoot>.<project>.<domain>` (users, arbor) and internal domain
`api.<shoot>.<project>.internal.<domain>` (nodes, node-agent), both pointing at the load balancer. Pure.
"""

from __future__ import annotations

from typing import Any

from components.plan.values import DnsValues

Object = dict[str, Any]

# TCP passthrough in front of kube-apiserver: an AWS network load balancer across zones, a GCP
# backend-service-based passthrough network load balancer (what GKE needs for dual-stack Services too).
LOAD_BALANCER_ANNOTATIONS = {
    "aws": {
        "service.beta.kubernetes.io/aws-load-balancer-type": "nlb",
        "service.beta.kubernetes.io/aws-load-balancer-cross-zone-load-balancing-enabled": "true",
    },
    "gcp": {"cloud.google.com/l4-rbs": "enabled"},
}
# Seconds a resolver keeps a record: short, so a replaced load balancer is reached soon (Gardener's default, 120).
RECORD_TTL = 120


def load_balancer(service: Object, provider: str) -> Object:
    """kube-apiserver's Service as a LoadBalancer of the seed's cloud (`provider`), with that cloud's annotations."""
    metadata = {**service["metadata"], "annotations": dict(LOAD_BALANCER_ANNOTATIONS[provider])}
    return {**service, "metadata": metadata, "spec": {**service["spec"], "type": "LoadBalancer"}}


def apiserver_flags(dns: DnsValues | None) -> list[str]:
    """kube-apiserver's flags for its domains: the name clients are told to use (the external domain)."""
    return [f"--external-hostname={dns.external}"] if dns else []


def record_names(dns: DnsValues) -> dict[str, str]:
    """The shoot's records by role: `external` and `internal`, each a fully qualified name."""
    return {"external": dns.external, "internal": dns.internal}


def target(ingress: list[Object] | None) -> str:
    """The load balancer's address the records point at: its hostname (AWS) or IP (GCP); '' while it has none."""
    for entry in ingress or ():
        if entry.get("hostname") or entry.get("ip"):
            return str(entry.get("hostname") or entry["ip"])
    return ""


def seed_record_type(provider: str) -> str:
    """The record type a seed's load balancer needs, known before it exists: AWS gives a hostname, GCP an IPv4."""
    return "CNAME" if provider == "aws" else "A"
