"""arbor's policy pack: wiring only; the rules live in arbor_policies/."""

from arbor_policies.kubernetes import load_balancers_on_local, missing_cluster_identifier
from pulumi_policy import (
    EnforcementLevel,
    PolicyPack,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)


def _cluster_identifier(args: ResourceValidationArgs, report: ReportViolation) -> None:
    message = missing_cluster_identifier(args.resource_type, args.props)
    if message:
        report(message)


def _no_load_balancer_on_local(args: StackValidationArgs, report: ReportViolation) -> None:
    for urn, message in load_balancers_on_local((r.resource_type, r.urn, r.props) for r in args.resources):
        report(message, urn)


PolicyPack(
    name="arbor",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=[
        ResourceValidationPolicy(
            name="kubernetes-provider-cluster-identifier",
            description="Every Kubernetes provider sets cluster_identifier.",
            validate=_cluster_identifier,
        ),
        StackValidationPolicy(
            name="local-no-load-balancer",
            description="No Service of type LoadBalancer in a stack with local clusters.",
            validate=_no_load_balancer_on_local,
        ),
    ],
)
