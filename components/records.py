"""Registers objects of arbor's API (components/api.py renders them) as Pulumi resources."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s


def record(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> k8s.apiextensions.CustomResource:
    """A Project, Seed or Shoot record in the garden."""
    return k8s.apiextensions.CustomResource(
        name, api_version=obj["apiVersion"], kind=obj["kind"], metadata=obj["metadata"], spec=obj["spec"], opts=opts
    )
