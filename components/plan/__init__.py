"""The plan: the spec turned into per-component values once, with every derived name, hash, range and node."""
