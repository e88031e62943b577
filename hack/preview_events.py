"""Reads `pulumi preview --json` as the engine streams it (PULUMI_ENABLE_STREAMING_JSON_PREVIEW=true).

The streamed events are the only JSON that carries the policy pack's findings (the one-object digest of
`--json` leaves policy events out). `digest` rebuilds that one object from the events, so the summary and the
out/preview.json artifact keep their shape; `violations` lists what the policy pack reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# The SDK reports a policy it could not run (a value known only after `up`) as an advisory with this start.
NOT_CHECKED = "can't run policy "


@dataclass(frozen=True)
class Violation:
    """One policy finding: the policy, its level, the resource's name, and what to change."""

    policy: str
    level: str
    resource: str
    message: str

    @property
    def checked(self) -> bool:
        """False when the SDK could not run the policy on this resource during the preview."""
        return not self.message.startswith(NOT_CHECKED)


def parse(text: str) -> list[dict[str, Any]]:
    """The events of a streamed preview, one JSON object per line."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def is_stream(text: str) -> bool:
    """Whether the file is the event stream rather than the digest (one object with `steps`)."""
    first = text.lstrip().split("\n", 1)[0]
    try:
        return "sequence" in json.loads(first)
    except json.JSONDecodeError:
        return False


def _step(meta: dict[str, Any]) -> dict[str, Any]:
    """A digest step from a step event's metadata."""
    step = {"op": meta["op"], "urn": meta["urn"], "newState": meta.get("new"), "oldState": meta.get("old")}
    if meta.get("diffs"):
        step["diffReasons"] = meta["diffs"]
    if meta.get("keys"):
        step["replaceReasons"] = meta["keys"]
    return {k: v for k, v in step.items() if v is not None}


def digest(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The one-object preview (`steps`, `diagnostics`, `changeSummary`) the events add up to."""
    steps: list[dict[str, Any]] = []
    diagnostics: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    for event in events:
        if "resourcePreEvent" in event:
            steps.append(_step(event["resourcePreEvent"]["metadata"]))
        elif "diagnosticEvent" in event:
            d = event["diagnosticEvent"]
            if d.get("severity") != "debug" and not d.get("ephemeral"):
                message = str(d.get("prefix") or "") + str(d.get("message") or "")
                diagnostics.append({k: v for k, v in (("urn", d.get("urn")), ("message", message),
                                                      ("severity", d.get("severity"))) if v})  # fmt: skip
        elif "summaryEvent" in event:
            summary = event["summaryEvent"].get("resourceChanges") or {}
    return {"steps": steps, "diagnostics": diagnostics, "changeSummary": summary}


def violations(events: list[dict[str, Any]]) -> list[Violation]:
    """Every policy finding, without the policy's description (the first line of the engine's message)."""
    found = []
    for event in events:
        p = event.get("policyEvent")
        if p:
            lines = str(p.get("message") or "").strip().splitlines()
            message = " ".join(line.strip() for line in (lines[1:] if len(lines) > 1 else lines))
            urn = str(p.get("resourceUrn") or "")
            found.append(Violation(p["policyName"], p["enforcementLevel"], urn.rsplit("::", 1)[-1], message))
    return found
