"""Pulumi dynamic providers: the imperative parts no provider plugin does, each with drift detection in read()."""
