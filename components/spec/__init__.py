"""The landscape spec as a user writes it: pydantic models, field validation, and the CIDR rules Gardener applies."""
