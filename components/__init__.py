"""arbor's components in tiers, each importing only those below it (docs/ARCHITECTURE.md)."""
