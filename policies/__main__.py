"""arbor's policy pack: wiring only; the rules live in arbor_policies/."""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from arbor_policies import network
from arbor_policies.kubernetes import load_balancer_on_local, missing_cluster_identifier
from pulumi_policy import (
    EnforcementLevel,
    PolicyPack,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)


def _no_load_balancer_on_local(args: ResourceValidationArgs, report: ReportViolation) -> None:
    provider = args.provider.props if args.provider else {}
    message = load_balancer_on_local(args.resource_type, args.props, provider)
    if message:
        report(message, None)


def _resource_rule(rule: Callable[[str, Mapping[str, Any]], str | None]) -> Callable[..., None]:
    """A policy's validate function reporting what a per-resource rule returns."""

    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        message = rule(args.resource_type, args.props)
        if message:
            report(message, None)

    return validate


def _stack_rule(rule: Callable[[Iterable[tuple[str, Mapping[str, Any]]]], list[str]]) -> Callable[..., None]:
    """A stack policy's validate function reporting each problem a rule over (type, props) pairs finds."""

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        for message in rule((r.resource_type, r.props) for r in args.resources):
            report(message, None)

    return validate


PolicyPack(
    name="arbor",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=[
        ResourceValidationPolicy(
            name="kubernetes-provider-cluster-identifier",
            description="Every Kubernetes provider sets cluster_identifier.",
            validate=_resource_rule(missing_cluster_identifier),
        ),
        ResourceValidationPolicy(
            name="local-no-load-balancer",
            description="No Service of type LoadBalancer on a local cluster.",
            validate=_no_load_balancer_on_local,
        ),
        StackValidationPolicy(
            name="no-overlap-across-shoots-of-a-seed",
            description="Shoots hosted on one seed have disjoint node, pod and service ranges.",
            validate=_stack_rule(network.overlapping_shoots),
        ),
        ResourceValidationPolicy(
            name="no-world-ingress",
            description="No ingress from 0.0.0.0/0 or ::/0 except health checks and load balancers.",
            validate=_resource_rule(network.world_ingress),
        ),
        ResourceValidationPolicy(
            name="ipv6-subnets-are-64",
            description="Every IPv6 subnet is a /64.",
            validate=_resource_rule(network.ipv6_subnet_not_64),
        ),
    ],
)
