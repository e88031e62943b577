"""What stops a pool's machines before anything changes: user data over budget, no credentials."""

from __future__ import annotations

from components.plan.bootstrap import UserDataTooLargeError, check_user_data
from components.plan.values import LandscapePlan
from components.render.machine_providers import CREDENTIAL_KEYS


def user_data_problems(plan: LandscapePlan) -> list[str]:
    """Every pool whose user data is over its provider's budget, one line each (checked before any change)."""
    lines = []
    for i, shoot in enumerate(plan.shoots):
        for j, pool in enumerate(shoot.workers):
            data = shoot.user_data[pool.name]
            try:
                check_user_data(shoot.cluster.provider.value, data, f"landscape.shoots[{i}].workers[{j}]")
            except UserDataTooLargeError as err:
                lines.append(str(err))
    return lines


def worker_problems(plan: LandscapePlan) -> list[str]:
    """What stops a hosted cloud shoot's machines before anything changes: no credentials (images: catalogue.py)."""
    lines = []
    for i, shoot in enumerate(plan.shoots):
        provider = shoot.networking.provider.value
        if shoot.self_hosted or provider not in CREDENTIAL_KEYS:
            continue
        if not shoot.cloud_credentials_secret:
            lines.append(f"landscape.shoots[{i}].cloudCredentialsSecret: a shoot on {provider} needs the credentials "
                         "its machines are created with")  # fmt: skip
    return lines
