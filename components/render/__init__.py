"""Pure renderers: plan values in, Kubernetes objects and node configuration (plain data) out; no Pulumi."""
