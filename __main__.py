"""arbor: read config -> check (spec, plan, previous update) -> Landscape component (this stack's part) -> exports."""

import functools

import pulumi

from components import checks, stacks
from components.layers.landscape import Landscape
from components.outputs import previous_outputs, qualified, stack_outputs
from components.providers.registry import provider_for
from components.registration import keep_source_position_only, list_dependencies_once

config = pulumi.Config("arbor")
# This stack's outputs and another's (a seed stack's garden stack and sibling seed stacks), each read once.
previous, others = functools.cache(previous_outputs), functools.cache(stack_outputs)
try:
    shard = stacks.shard_of(config.get_object("shard"), pulumi.get_stack())
    raw = config.require_object("landscape") if shard.seed is None else stacks.document(shard)
    checked = checks.check(raw, shard, previous, others)
except checks.RefusalError as refused:
    # RunError ends the program with these lines and no traceback; nothing has been registered yet.
    raise pulumi.RunError(str(refused)) from None
keep_source_position_only()
list_dependencies_once()
garden_stack = qualified(shard.landscape) if shard.seed else None
# One provider per type: the local one keeps the object store its seeds' buckets share.
# A local object store, once made, stays until `make down` (it holds every local backup): the output says it exists.
keep_store = bool(previous().get("objectStore"))
landscape = Landscape(
    "arbor", checked.plan, functools.cache(provider_for), garden_stack=garden_stack, keep_object_store=keep_store
)
# A rotation's preview says what it replaces and which components restart (the summary picks these lines up).
for message in checked.notices:
    pulumi.log.info(message)
pulumi.export("kubeconfigs", landscape.kubeconfigs())
# Admin kubeconfigs are issued on request, as Gardener's `shoots/adminkubeconfig` (`make kubeconfig SHOOT=...`),
# and not kept in the state: the validity each shoot's are issued with.
pulumi.export("adminKubeconfigExpirationSeconds", landscape.admin_kubeconfig_expirations())
pulumi.export("endpoints", landscape.endpoints())
for name, value in landscape.store_outputs().items():
    pulumi.export(name, value)
# What later updates are checked against, and the subnet plan as a table a reviewer reads.
for name, record in checks.records(checked.plan).items():
    pulumi.export(name, record)
pulumi.export("networkRanges", landscape.network_ranges())
pulumi.export("networkPlan", landscape.network_plan())
# What ties the landscape's stacks (docs/shards.md): the garden stack's identity and how a seed stack reaches the
# garden, or the garden a seed stack converged against.
for name, record in stacks.identity(shard, previous(), others, landscape).items():
    pulumi.export(name, record)
