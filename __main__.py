"""arbor: read config -> check (spec, plan, previous update) -> Landscape component -> exports."""

import pulumi

from components import checks
from components.layers.landscape import Landscape
from components.outputs import previous_outputs
from components.providers.registry import provider_for
from components.registration import keep_innermost_frame

try:
    checked = checks.check(pulumi.Config("arbor").require_object("landscape"), pulumi.get_stack(), previous_outputs)
except checks.RefusalError as refused:
    # RunError ends the program with these lines and no traceback; nothing has been registered yet.
    raise pulumi.RunError(str(refused)) from None
keep_innermost_frame()
landscape = Landscape("arbor", checked.plan, provider_for)
# A rotation's preview says what it replaces and which components restart (the summary picks these lines up).
for message in checked.notices:
    pulumi.log.info(message)
pulumi.export("kubeconfigs", landscape.kubeconfigs())
pulumi.export("adminKubeconfigs", landscape.admin_kubeconfigs())
pulumi.export("endpoints", landscape.endpoints())
# What later updates are checked against, and the subnet plan as a table a reviewer reads.
for name, record in checks.records(checked.plan).items():
    pulumi.export(name, record)
pulumi.export("networkRanges", landscape.network_ranges())
pulumi.export("networkPlan", landscape.network_plan())
