"""The snapshot step before a change that risks a shoot's data: a `command.local.Command` the preview lists.

Made with the shoot, it does nothing (there is nothing to lose yet). Whenever `risky` (what the risky step follows:
the minor version, the encryption configuration) changes, its update runs components/reconciler/etcd_snapshot.py's
`main()`, an update the preview shows; what risks data waits for it, and a snapshot that fails stops the update
before that step.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_command as command

from components.reconciler.etcd_snapshot import SNAPSHOT_COMMAND, SNAPSHOT_ENV

# What the risky step follows, in the step's environment: a change of it is the update that takes the snapshot.
RISKY_ENV = "ARBOR_RISKY"


def snapshot_step(
    name: str,
    request: pulumi.Output[dict[str, Any]],
    risky: Sequence[pulumi.Input[str]],
    opts: pulumi.ResourceOptions,
) -> command.local.Command:
    """`<name>-snapshot-before-change`: a full snapshot of what `request` names (secret: it may hold keys)."""
    step: pulumi.Output[str] = pulumi.Output.secret(request.apply(lambda r: json.dumps(r, sort_keys=True)))
    follows: pulumi.Output[str] = pulumi.Output.all(*risky).apply(lambda values: json.dumps(values))
    return command.local.Command(
        f"{name}-snapshot-before-change",
        create="true",
        update=SNAPSHOT_COMMAND,
        environment={SNAPSHOT_ENV: step, RISKY_ENV: follows},
        opts=opts,
    )
