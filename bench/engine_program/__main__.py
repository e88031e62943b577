"""The bench's Pulumi program: `shoots` synthetic shoots of `resources` dynamic resources holding `bytes` each.

Config (bench/engine_scale.py sets it): arbor-bench:shoots, :first (the first shoot's index, so shards name their
shoots apart), :resources, :bytes, :layers (each resource waits for the one `layers` before it in its shoot, so a
shoot converges in that many waves, as a shoot's flow steps do).
"""

import pulumi
from blob import Blob, ShootOf

config = pulumi.Config("arbor-bench")
shoots, first = config.require_int("shoots"), config.get_int("first") or 0
resources, size, layers = config.require_int("resources"), config.require_int("bytes"), config.require_int("layers")

for index in range(first, first + shoots):
    shoot = ShootOf(f"shoot-{index}")
    made: list[Blob] = []
    for i in range(resources):
        after = [made[i - layers]] if i >= layers else []
        opts = pulumi.ResourceOptions(parent=shoot, depends_on=after)
        made.append(Blob(f"shoot-{index}-r{i}", seed=f"{index}/{i}", size=size, opts=opts))
