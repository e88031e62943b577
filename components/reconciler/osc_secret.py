"""OperatingSystemConfig: the reconcile OSC of a worker pool, written as node-agent's Secret in the shoot.

The inputs carry one effective hash per unit and per file (components/render/osc.py), so the engine's own diff names
what a change touches (`unitHashes.kubelet.service`), and the output `restartPlan` says what node-agent will
restart, stop, write and delete on the pool's nodes. A changed `secretName` means the pool rolls. `read()`
compares the Secret in the cluster with the state: an edited or deleted Secret is drift, and `up` restores it.

The Secret's content is an input only, gzip-compressed (`pack`): the outputs keep its hashes (`secretHash` of the
object written, `oscHash` of its `osc.yaml`), which is all that diff and drift need, so the state holds the content
once, not twice, and small. `check()` derives its name and hashes from the content (the program sends the content
only), so they carry no dependency list of their own in the state.

A self-hosted local shoot's control-plane pool carries its static pods' credentials as Gardener's `secretRef` file
content: the state keeps the references (and their checksums), and the Secret written to the shoot holds each file
inline, read where the credentials wrote it (`secretsFrom`, the machine's directory: secret_places.py). The hash of
what was written (`writtenHash`) tells drift apart from the references' own hash.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import CheckResult, CreateResult, DiffResult, ReadResult, Resource, UpdateResult
from pulumi.runtime import rpc

from components import yaml_text
from components.plan.osc import restart_plan
from components.reconciler import unknowns
from components.reconciler.gather import lifted
from components.reconciler.kube import Kube, KubeError
from components.reconciler.provider import Provider
from components.reconciler.secret_places import Place, place_of
from components.render.packing import pack, unpacked

PROVIDER_VERSION = "1"
SECRETS = "/api/v1/namespaces/kube-system/secrets"
INPUTS = ("pool", "secretName", "unitHashes", "fileHashes", "stoppedUnits", "secretHash", "oscHash", "version")
# The hash of the `osc.yaml` written, where its file references were read in (else the content's own, `oscHash`).
WRITTEN = "writtenHash"
OSC_YAML = "osc.yaml"
# What check() derives from the Secret's content.
DERIVED = ("secretName", "secretHash", "oscHash")


def secret_hash(secret: dict[str, Any]) -> str:
    """The SHA-256 of the Secret object as written (canonical JSON)."""
    return hashlib.sha256(json.dumps(secret, sort_keys=True).encode()).hexdigest()


def osc_hash(osc_yaml: str) -> str:
    """The SHA-256 of an `osc.yaml`, as written or as the cluster has it."""
    return hashlib.sha256(osc_yaml.encode()).hexdigest()


def derived(secret: Any) -> dict[str, Any]:
    """The Secret's name and hashes, from its content (packed or whole); unknown while a preview does not know it."""
    if not unknowns.known(secret):
        return dict.fromkeys(DERIVED, rpc.UNKNOWN)
    whole = unpacked(secret)
    return {"secretName": whole["metadata"]["name"], "secretHash": secret_hash(whole),
            "oscHash": osc_hash(whole["stringData"]["osc.yaml"])}  # fmt: skip


def _outs(props: dict[str, Any], plan: dict[str, list[str]] | None, written: str | None) -> dict[str, Any]:
    """The state's outputs: the inputs without the Secret's content, the restart plan, the hash written."""
    outs = {**{k: v for k, v in props.items() if k != "secret"}, "restartPlan": plan}
    return outs | ({WRITTEN: written} if written and written != props.get("oscHash") else {})


def _plan(olds: dict[str, Any], news: dict[str, Any]) -> dict[str, list[str]]:
    """What node-agent does on the pool's nodes going from the old to the new hashes."""
    plan = restart_plan(
        olds.get("unitHashes") or {}, news["unitHashes"], olds.get("fileHashes") or {}, news["fileHashes"],
        news.get("stoppedUnits") or [],
    )  # fmt: skip
    return plan.to_object()


def _inline(ref: dict[str, str], place: Place | None) -> dict[str, Any]:
    """A `secretRef` file content read where it is: inline and plain, as the program writes a credential's file."""
    data = place.find(ref["name"]) if place is not None else None
    if data is None or ref["dataKey"] not in data:
        where = place.describe(ref["name"]) if place is not None else f"Secret {ref['name']} (no place given)"
        raise KubeError(f"the OSC's file content {where}, key {ref['dataKey']}, is missing")
    return {"inline": {"encoding": "", "data": base64.b64decode(data[ref["dataKey"]]).decode()}}


def resolved(secret: dict[str, Any], place: Place | None) -> dict[str, Any]:
    """The Secret with each file's `secretRef` content read in from `place` (as it is where it has none)."""
    config = yaml_text.load(secret["stringData"][OSC_YAML])
    spec = config.get("spec") if isinstance(config, dict) else None
    files = [f for f in (spec or {}).get("files") or [] if "secretRef" in (f.get("content") or {})]
    if not files:
        return secret
    for f in files:
        f["content"] = _inline(f["content"]["secretRef"], place)
    text = yaml_text.dump(config, sort_keys=False)
    metadata = {**secret["metadata"], "annotations": {**secret["metadata"].get("annotations", {}),
                                                      "checksum/data-script": osc_hash(text)}}  # fmt: skip
    return {**secret, "metadata": metadata, "stringData": {**secret["stringData"], OSC_YAML: text}}


def _write(props: dict[str, Any], old_name: str | None = None) -> str:
    """Creates or replaces the Secret; removes the previous one when the pool's key changed. The hash written."""
    kube = Kube.from_kubeconfig(props["kubeconfig"])
    place = place_of(props["secretsFrom"]) if props.get("secretsFrom") else None
    secret = resolved(dict(unpacked(props["secret"])), place)
    name = secret["metadata"]["name"]
    kube.create_or_replace(SECRETS, secret)
    if old_name and old_name != name:
        kube.delete(f"{SECRETS}/{old_name}")
    return osc_hash(secret["stringData"][OSC_YAML])


def _osc_yaml(cluster_secret: dict[str, Any]) -> str:
    """The `osc.yaml` of a Secret as the API returns it."""
    data = (cluster_secret.get("data") or {}).get("osc.yaml", "")
    return base64.b64decode(data).decode() if data else ""


class OperatingSystemConfigProvider(Provider):
    """Keeps a pool's OSC Secret in the shoot and plans what its nodes restart."""

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        """The inputs with the Secret's name and hashes, derived from its content.

        The name the program gives (the pool key, known without the content) stays while a preview does not know the
        content yet: whether the pool rolls is known then too.
        """
        found = derived(news.get("secret"))
        if news.get("secretName") and not unknowns.known(news.get("secret")):
            found.pop("secretName")
        return CheckResult(inputs={**news, **found}, failures=[])

    def create(self, props: dict[str, Any]) -> CreateResult:
        """First OSC of a pool: every unit starts on its nodes."""
        written = _write(props)
        return CreateResult(id_=props["secretName"], outs=_outs(props, _plan({}, props), written))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """A change of any input is an in-place update; the changed hash keys are what the preview shows."""
        changed = [k for k in INPUTS if olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=[], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Writes the new OSC; the restart plan is relative to what the nodes had."""
        written = _write(news, old_name=olds.get("secretName"))
        return UpdateResult(outs=_outs(news, _plan(olds, news), written))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """The Secret as the cluster has it: gone (or unreachable), edited (drift in `oscHash`) or as written."""
        kube = Kube.from_kubeconfig(props["kubeconfig"])
        actual = kube.find(f"{SECRETS}/{props['secretName']}")
        if actual is None:
            return ReadResult(id_="", outs={})
        found = osc_hash(_osc_yaml(actual))
        # As written (its references read in): the content's own hash stays; anything else is drift.
        kept = props.get("oscHash") if found == props.get(WRITTEN) else found
        outs = _outs(props, props.get("restartPlan"), props.get(WRITTEN))
        return ReadResult(id_=id_, outs={**outs, "oscHash": kept})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Removes the Secret."""
        Kube.from_kubeconfig(props["kubeconfig"]).delete(f"{SECRETS}/{props['secretName']}")


class OperatingSystemConfig(Resource, module="arbor", name="OperatingSystemConfig"):
    """The reconcile OSC of one worker pool in its shoot, with the restart plan of the last change."""

    # For type checkers only: the SDK resolves a resource class's annotations at every registration.
    if TYPE_CHECKING:
        restartPlan: pulumi.Output[dict[str, list[str]]]  # noqa: N815 - the output's name in the state

    def __init__(
        self,
        name: str,
        *,
        kubeconfig: pulumi.Input[str],
        pool: str,
        secret: pulumi.Input[dict[str, Any]],
        secret_name: str | None = None,
        unit_hashes: pulumi.Input[dict[str, str]],
        file_hashes: pulumi.Input[dict[str, str]],
        stopped_units: pulumi.Input[list[str]],
        secrets_from: Mapping[str, Any] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`secret_name`: the pool key the content names; `secrets_from`: where `secretRef` files are read."""
        props = {
            "kubeconfig": kubeconfig,
            "pool": pool,
            "secret": lifted(secret).apply(pack),
            **dict.fromkeys(DERIVED),  # by the provider's check()
            "secretName": secret_name,
            "unitHashes": unit_hashes,
            "fileHashes": file_hashes,
            "stoppedUnits": stopped_units,
            **({"secretsFrom": dict(secrets_from)} if secrets_from else {}),
            "version": PROVIDER_VERSION,
            "restartPlan": None,
        }
        super().__init__(OperatingSystemConfigProvider(), name, props, opts)
