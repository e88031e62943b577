"""What stops a pool's machines before anything changes: user data over budget, contradicting credentials."""

from __future__ import annotations

from components.kinds import CloudCredentials
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
    """Machine credentials that contradict each other or a provider without a cloud (images: catalogue.py)."""
    lines = []
    for i, shoot in enumerate(plan.shoots):
        at, provider = f"landscape.shoots[{i}]", shoot.networking.provider.value
        mode, key = shoot.cloud_credentials, shoot.cloud_credentials_secret
        if provider not in CREDENTIAL_KEYS:
            if mode is not None:
                lines.append(f"{at}.cloudCredentials: {provider} machines need no cloud credentials; remove the field")
        elif mode is CloudCredentials.MANAGED and key:
            lines.append(
                f"{at}.cloudCredentialsSecret: arbor creates this shoot's credentials (cloudCredentials: "
                "managed); remove cloudCredentialsSecret, or set cloudCredentials: secret to use it"
            )
        elif mode is CloudCredentials.SECRET and not key:
            lines.append(
                f"{at}.cloudCredentials: 'secret' needs cloudCredentialsSecret, the secret config key "
                "holding the credentials; or set 'managed' and arbor creates them"
            )
    return lines
