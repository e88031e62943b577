"""The layer components (garden, seed, shoot) side by side, composed by the landscape; each gets bundles, not layers."""
