"""arbor's policy pack: wiring only; the rules live in arbor_policies/, levels and settings in config.json.

Each policy's level and settings come from config.json; `--policy-pack-config <file>` overrides them for a run
(the same format). A rule reads its settings from the engine's configuration, config.json's values under it.
"""

from collections.abc import Mapping
from typing import Any

from arbor_policies.catalog import POLICIES, Policy, load_config, settings
from arbor_policies.rendered import expanded
from arbor_policies.resource import Resource
from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyPack,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

CONFIG = load_config()
# JSON schema types of settings, by Python type (bool before int: a bool is an int; any number may replace one).
JSON_TYPES = (
    (bool, "boolean"),
    (int, "number"),  # a setting of 8 may become 0.5
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def _schema(policy: Policy) -> PolicyConfigSchema | None:
    """The settings a config file may give the policy, with config.json's values as defaults."""
    given = settings(policy.name, CONFIG)
    if not given:
        return None
    types = {k: next(t for cls, t in JSON_TYPES if isinstance(v, cls)) for k, v in given.items()}
    return PolicyConfigSchema({k: {"type": types[k], "default": v} for k, v in given.items()})


def _config(policy: Policy, engine: Mapping[str, Any] | None) -> dict[str, Any]:
    """config.json's settings of the policy, overridden by what the engine passes (a --policy-pack-config file)."""
    return {**settings(policy.name, CONFIG), **{k: v for k, v in (engine or {}).items() if k != "enforcementLevel"}}


def _resource(resource_type: str, props: Mapping[str, Any], name: str, provider: Any, opts: Any) -> Resource:
    """The engine's view of a resource as the rules' plain value."""
    return Resource(
        type=resource_type,
        props=props,
        name=name,
        provider=provider.props if provider else {},
        protect=bool(getattr(opts, "protect", False)),
    )


def _validate_resource(policy: Policy) -> Any:
    """A resource policy's validate function reporting each message of the rule."""

    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        assert policy.rule
        r = _resource(args.resource_type, args.props, args.name, args.provider, args.opts)
        for each in expanded(r):
            for message in policy.rule(each, _config(policy, args.get_config())):
                report(message, None)

    return validate


def _stack_resource(p: PolicyResource) -> Resource:
    """A stack policy's resource as the rules' plain value."""
    return _resource(p.resource_type, p.props, p.name, p.provider, p.opts)


def _validate_stack(policy: Policy) -> Any:
    """A stack policy's validate function reporting each message of the rule."""

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        assert policy.stack_rule
        resources = [each for p in args.resources for each in expanded(_stack_resource(p))]
        for message in policy.stack_rule(resources, _config(policy, args.get_config())):
            report(message, None)

    return validate


def _level(policy: Policy) -> EnforcementLevel:
    """The policy's level in config.json."""
    return EnforcementLevel(str((CONFIG.get(policy.name) or {}).get("enforcementLevel", "mandatory")))


def _policy(policy: Policy) -> ResourceValidationPolicy | StackValidationPolicy:
    """The pulumi-policy policy of one catalog entry."""
    if policy.stack_rule:
        return StackValidationPolicy(
            name=policy.name,
            description=policy.description,
            enforcement_level=_level(policy),
            validate=_validate_stack(policy),
            config_schema=_schema(policy),
        )
    return ResourceValidationPolicy(
        name=policy.name,
        description=policy.description,
        enforcement_level=_level(policy),
        validate=_validate_resource(policy),
        config_schema=_schema(policy),
    )


PolicyPack(name="arbor", enforcement_level=EnforcementLevel.MANDATORY, policies=[_policy(p) for p in POLICIES])
