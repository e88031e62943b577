"""arbor's policy rules as plain functions of resource types and properties, testable without the engine."""
