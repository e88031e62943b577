"""arbor's policy pack: wiring only; the rules live in arbor_policies/."""

from arbor_policies.kubernetes import load_balancer_on_local, missing_cluster_identifier
from pulumi_policy import (
    EnforcementLevel,
    PolicyPack,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)


def _cluster_identifier(args: ResourceValidationArgs, report: ReportViolation) -> None:
    message = missing_cluster_identifier(args.resource_type, args.props)
    if message:
        report(message)


def _no_load_balancer_on_local(args: ResourceValidationArgs, report: ReportViolation) -> None:
    provider = args.provider.props if args.provider else {}
    message = load_balancer_on_local(args.resource_type, args.props, provider)
    if message:
        report(message)


PolicyPack(
    name="arbor",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=[
        ResourceValidationPolicy(
            name="kubernetes-provider-cluster-identifier",
            description="Every Kubernetes provider sets cluster_identifier.",
            validate=_cluster_identifier,
        ),
        ResourceValidationPolicy(
            name="local-no-load-balancer",
            description="No Service of type LoadBalancer on a local cluster.",
            validate=_no_load_balancer_on_local,
        ),
    ],
)
