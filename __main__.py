"""arbor: read config -> validate spec -> plan -> Landscape component -> exports."""

import pulumi

from components.landscape import Landscape
from components.plan import plan_landscape, unsupported
from components.providers.contract import InfrastructureProvider
from components.providers.local import LocalProvider, LocalSettings
from components.spec import ProviderType, SpecError, parse_landscape


def providers(kind: ProviderType) -> InfrastructureProvider:
    """The infrastructure provider of a layer; gcp and aws arrive with the layers issue."""
    if kind is ProviderType.LOCAL:
        return LocalProvider(LocalSettings.from_environment())
    raise pulumi.RunError(f"provider '{kind.value}' is not implemented yet")


try:
    spec = parse_landscape(pulumi.Config("arbor").require_object("landscape"))
except SpecError as err:
    # RunError ends the program with these lines and no traceback; nothing has been registered yet.
    raise pulumi.RunError("invalid landscape:\n" + "\n".join(err.lines)) from None

plan = plan_landscape(spec, pulumi.get_stack())
if problems := unsupported(plan):
    raise pulumi.RunError("landscape asks for what arbor does not run yet:\n" + "\n".join(problems))
landscape = Landscape("arbor", plan, providers)
pulumi.export("kubeconfigs", landscape.kubeconfigs())
pulumi.export("endpoints", landscape.endpoints())
