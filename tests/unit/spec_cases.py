"""Landscapes for the spec tests: a valid base and a way to change one field of it by path."""

from __future__ import annotations

import copy
from typing import Any

# The base pool's image in the cloud profiles, so the base placed on a cloud is offered it (aws by lookup).
CLOUD_PROFILES = {
    "aws": {
        "machineImages": [{"name": "gardenlinux", "versions": [{"version": "1877.0"}]}],
        "providerConfig": {"machineImages": [{"name": "gardenlinux", "versions": [
            {"version": "1877.0", "lookups": [{"owner": "123456789012", "name": "gardenlinux-aws-*-1877.0-*"}]}
        ]}]},
    },
    "gcp": {
        "machineImages": [{"name": "gardenlinux", "versions": [{"version": "1877.0"}]}],
        "providerConfig": {"machineImages": [{"name": "gardenlinux", "versions": [
            {"version": "1877.0", "image": "projects/example/global/images/gardenlinux-1877-0"}
        ]}]},
    },
}  # fmt: skip


def base() -> dict[str, Any]:
    """A valid landscape: a garden with two projects, one seed, two hosted shoots and a self-hosted one."""
    pool = {"name": "pool-a", "machine": {"type": "m5.large", "image": {"name": "gardenlinux", "version": "1877.0"}}}
    net = {"nodes": "10.250.0.0/16", "pods": "100.64.0.0/12", "services": "100.104.0.0/13"}
    return copy.deepcopy(
        {
            "garden": {
                "provider": "local",
                "projects": [
                    {"name": "dev", "members": [{"name": "alice@example.com", "role": "admin"}]},
                    {"name": "ops", "members": [{"name": "viewers", "kind": "Group", "role": "viewer"}]},
                ],
            },
            "seeds": [{"name": "local-1", "provider": "local", "zones": ["local-a", "local-b"]}],
            "shoots": [
                {
                    "name": "web",
                    "project": "dev",
                    "seed": "local-1",
                    "kubernetes": {"version": "1.34.4"},
                    "networking": {**net},
                    "workers": [{**pool, "minimum": 1, "maximum": 2, "zones": ["local-a"]}],
                },
                {
                    "name": "db",
                    "project": "ops",
                    "seed": "local-1",
                    "kubernetes": {"version": "1.33.6"},
                    "networking": {**net},
                    "workers": [{**pool, "minimum": 1, "maximum": 1}],
                },
                {
                    "name": "root",
                    "project": "ops",
                    "selfHosted": True,
                    "kubernetes": {"version": "1.34.4"},
                    "networking": {**net},
                    "workers": [{**pool, "name": "cp", "minimum": 1, "maximum": 1, "controlPlane": True}],
                },
            ],
            "cloudProfiles": CLOUD_PROFILES,
        }
    )


def dual_stack_seed(doc: dict[str, Any], provider: str = "local") -> dict[str, Any]:
    """`doc` with its seed on `provider` (`on_provider`) and dual-stack, so it hosts shoots of every family.

    A cloud assigns the seed's IPv6 ranges, so only a local seed names them.
    """
    v6 = provider == "local"
    on_provider(doc, provider)
    doc["seeds"][0]["networks"] = {
        "ipFamilies": ["IPv4", "IPv6"],
        "pods": ["10.0.0.0/12", "fd00:a::/48"] if v6 else "10.0.0.0/12",
        "services": ["10.16.0.0/16", "fd00:b::/108"] if v6 else "10.16.0.0/16",
    }
    return doc


def two_seeds(prefix: str = "") -> dict[str, Any]:
    """Base on aws with backups, a local second seed with shoot dev/api, an installation with garden access each.

    `prefix` goes before every seed's and project's name.
    """
    doc = on_provider(base(), "aws")
    doc["garden"]["dns"] = {"provider": "aws-route53", "zone": "Z0123456789", "domain": "gardener.example.com"}
    first = doc["seeds"][0]
    first["backup"] = {"provider": "aws", "bucket": f"arbor-{prefix}local-1-backups"}
    first["extensions"] = [
        {"name": "provider-local", "type": "provider-local", "gardenAccess": True},
        {"name": "metrics", "type": "metrics"},
    ]
    doc["seeds"].append(
        {"name": "local-2", "provider": "local", "zones": ["local-a"],
         "extensions": [{"name": "provider-dns", "type": "provider-dns", "gardenAccess": True}]}
    )  # fmt: skip
    api = copy.deepcopy({**doc["shoots"][0], "name": "api", "seed": "local-2"})
    api["workers"][0]["zones"] = ["local-a"]
    doc["shoots"].append(api)
    for item in [*doc["seeds"], *doc["garden"]["projects"]]:
        item["name"] = prefix + item["name"]
    for shoot in doc["shoots"]:
        shoot["project"] = prefix + shoot["project"]
        if "seed" in shoot:
            shoot["seed"] = prefix + shoot["seed"]
    return doc


def changed(path: str, value: Any) -> dict[str, Any]:
    """The base landscape with the value at `path` (dots and [index]) set, or removed when value is DELETE."""
    doc = base()
    parts = path.replace("[", ".").replace("]", "").split(".")
    target: Any = doc
    for part in parts[:-1]:
        target = target[int(part)] if part.isdigit() else target[part]
    last: Any = int(parts[-1]) if parts[-1].isdigit() else parts[-1]
    if value is DELETE:
        del target[last]
    else:
        target[last] = copy.deepcopy(value)
    return doc


DELETE = object()

# A cloud seed's region and zones, standing in for the base's local-a and local-b.
CLOUD_LOCATIONS = {
    "gcp": ("europe-west1", ["europe-west1-b", "europe-west1-c"]),
    "aws": ("eu-central-1", ["eu-central-1a", "eu-central-1b"]),
}


def on_provider(doc: dict[str, Any], provider: str) -> dict[str, Any]:
    """`doc` with seed 0 on `provider`: a cloud's region and zones, and shoots' pool zones renamed to match."""
    seed = doc["seeds"][0]
    seed["provider"] = provider
    if provider in CLOUD_LOCATIONS:
        seed["region"], zones = CLOUD_LOCATIONS[provider]
        renamed = dict(zip(seed["zones"], zones, strict=True))
        seed["zones"] = list(zones)
        for shoot in doc["shoots"]:
            for pool in shoot["workers"]:
                pool["zones"] = [renamed[z] for z in pool.get("zones", [])]
    return doc
