"""arbor: read config -> validate spec -> plan -> Landscape component -> exports."""

import pulumi

from components.encryption import encryption_changes, encryption_outputs
from components.landscape import Landscape
from components.machine_providers import worker_problems
from components.nodeagent import user_data_problems
from components.outputs import previous_outputs
from components.pki import rotation_message
from components.plan import credential_outputs, network_changes, network_outputs, plan_landscape, unsupported
from components.providers.registry import provider_for
from components.spec import SpecError, parse_landscape

try:
    spec = parse_landscape(pulumi.Config("arbor").require_object("landscape"))
except SpecError as err:
    # RunError ends the program with these lines and no traceback; nothing has been registered yet.
    raise pulumi.RunError("invalid landscape:\n" + "\n".join(err.lines)) from None

plan = plan_landscape(spec, pulumi.get_stack())
if problems := unsupported(plan) + user_data_problems(plan.shoots) + worker_problems(plan.shoots):
    raise pulumi.RunError("landscape asks for what arbor does not run yet:\n" + "\n".join(problems))
deployed = previous_outputs()
refused = network_changes(plan, deployed.get("networks") or {})
refused += encryption_changes(plan, deployed.get("encryption") or {})
if refused:
    raise pulumi.RunError("refused change (compared with the stack's previous update):\n" + "\n".join(refused))
landscape = Landscape("arbor", plan, provider_for)
# A rotation's preview says what it replaces and which components restart (the summary picks these lines up).
rotated = deployed.get("credentials") or {}
for key, counters in credential_outputs(plan).items():
    if key in rotated and (message := rotation_message(key, rotated[key], counters)):
        pulumi.log.info(message)
pulumi.export("kubeconfigs", landscape.kubeconfigs())
pulumi.export("adminKubeconfigs", landscape.admin_kubeconfigs())
pulumi.export("endpoints", landscape.endpoints())
# What later updates are checked against, and the subnet plan as a table a reviewer reads.
pulumi.export("networks", network_outputs(plan))
pulumi.export("encryption", encryption_outputs(plan))
pulumi.export("credentials", credential_outputs(plan))
pulumi.export("networkRanges", landscape.network_ranges())
pulumi.export("networkPlan", landscape.network_plan())
