"""The infrastructure provider of each provider type, as the program and the tests use them."""

from __future__ import annotations

from components.kinds import ProviderType
from components.providers.aws import AwsProvider
from components.providers.contract import InfrastructureProvider
from components.providers.gcp import GcpProvider
from components.providers.local import LocalProvider, LocalSettings


def provider_for(kind: ProviderType) -> InfrastructureProvider:
    """The provider for a layer; local reads its settings from hack/env.sh's environment only when used."""
    if kind is ProviderType.LOCAL:
        return LocalProvider(LocalSettings.from_environment())
    if kind is ProviderType.GCP:
        return GcpProvider()
    return AwsProvider()
