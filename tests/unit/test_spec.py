"""The landscape spec: every invalid input is one exact line with its path; valid input parses."""

from __future__ import annotations

from typing import Any

import pytest

from components.checks import parse_landscape
from components.kinds import ProviderType
from components.spec.fields import SpecError
from components.spec.landscape import LandscapeSpec


def landscape(**overrides: Any) -> dict[str, Any]:
    """A valid landscape, with top-level fields replaced by `overrides`."""
    base: dict[str, Any] = {
        "garden": {"provider": "local", "cluster": {"nodes": 1}},
        "seeds": [{"name": "local-1", "provider": "local"}],
    }
    return {**base, **overrides}


INVALID: list[tuple[str, object, list[str]]] = [
    ("not an object", ["garden"], ["landscape: must be a mapping (key: value), not a list"]),
    ("garden missing", {"seeds": []}, ["landscape.garden: required field is missing"]),
    ("unknown top-level field", landscape(shoots_x=[]), ["landscape.shoots_x: unknown field; did you mean 'shoots'?"]),
    (
        "unknown provider",
        landscape(garden={"provider": "azure"}),
        ["landscape.garden.provider: 'azure' is not one of 'local', 'gcp' or 'aws'"],
    ),
    (
        "unknown stack layout",
        landscape(stacks="perShoot"),
        ["landscape.stacks: 'perShoot' is not one of 'one' or 'perSeed'"],
    ),
    (
        "negative nodes",
        landscape(garden={"cluster": {"nodes": -1}}),
        ["landscape.garden.cluster.nodes: must be at least 0, not -1"],
    ),
    (
        "too many nodes",
        landscape(garden={"cluster": {"nodes": 51}}),
        ["landscape.garden.cluster.nodes: must be at most 50, not 51"],
    ),
    (
        "nodes not a number",
        landscape(garden={"cluster": {"nodes": "two"}}),
        ["landscape.garden.cluster.nodes: must be a whole number, not 'two'"],
    ),
    (
        "unknown cluster field",
        landscape(garden={"cluster": {"size": 3}}),
        ["landscape.garden.cluster.size: unknown field; the fields here are kubeconfigSecret, nodes"],
    ),
    (
        "seed name upper case",
        landscape(seeds=[{"name": "Local", "provider": "local"}]),
        ["landscape.seeds[0].name: 'Local' is not a DNS-1123 label (lower-case letters, digits and '-')"],
    ),
    (
        "seed name ends with dash",
        landscape(seeds=[{"name": "local-", "provider": "local"}]),
        ["landscape.seeds[0].name: 'local-' is not a DNS-1123 label (lower-case letters, digits and '-')"],
    ),
    (
        "seed name too long",
        landscape(seeds=[{"name": "a" * 64, "provider": "local"}]),
        ["landscape.seeds[0].name: must have at most 63 characters, not 64"],
    ),
    (
        "seed without provider",
        landscape(seeds=[{"name": "local-1"}]),
        ["landscape.seeds[0].provider: required field is missing"],
    ),
    (
        "duplicate seed names",
        landscape(seeds=[{"name": "a", "provider": "local"}, {"name": "a", "provider": "local"}]),
        ["landscape.seeds[1].name: duplicate seed name 'a'"],
    ),
    (
        "several problems at once, each on its own line",
        {"garden": {"provider": "x"}, "seeds": [{"name": "B", "provider": "local"}, {"provider": "gcp"}]},
        [
            "landscape.garden.provider: 'x' is not one of 'local', 'gcp' or 'aws'",
            "landscape.seeds[0].name: 'B' is not a DNS-1123 label (lower-case letters, digits and '-')",
            "landscape.seeds[1].name: required field is missing",
            "landscape.seeds[1].region: required field is missing: the cloud region its clusters run in, e.g. "
            "europe-west1 or eu-central-1 (on local: local)",
            "landscape.seeds[1].zones: required field is missing: the region's zones its clusters use, e.g. "
            "[europe-west1-b, europe-west1-c] (on local: [local-a])",
        ],
    ),
]


@pytest.mark.parametrize(("case", "raw", "lines"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_landscape_reports_every_problem_with_its_path(case: str, raw: object, lines: list[str]) -> None:
    """GIVEN an invalid landscape WHEN it is parsed THEN exactly the expected lines are reported."""
    with pytest.raises(SpecError) as err:
        parse_landscape(raw)
    assert err.value.lines == lines


def test_valid_landscape_parses_with_defaults() -> None:
    """GIVEN a minimal landscape WHEN parsed THEN defaults fill the rest."""
    spec = parse_landscape({"garden": {}})
    assert spec == LandscapeSpec.model_validate({"garden": {"provider": "local", "cluster": {"nodes": 1}}})
    assert spec.garden.provider is ProviderType.LOCAL and spec.seeds == []


def test_local_stack_file_is_valid() -> None:
    """GIVEN the committed local stack WHEN its landscape is parsed THEN it has a garden and one seed."""
    import yaml

    with open("stacks/Pulumi.local.yaml") as f:
        raw = yaml.safe_load(f)["config"]["arbor:landscape"]
    spec = parse_landscape(raw)
    assert [s.name for s in spec.seeds] == ["local-1"]


def test_spec_is_immutable() -> None:
    """GIVEN a parsed spec WHEN a field is assigned THEN pydantic refuses (frozen models)."""
    spec = parse_landscape(landscape())
    with pytest.raises(ValueError, match="frozen"):
        spec.garden = spec.garden  # type: ignore[misc]


def test_the_readme_example_is_a_valid_landscape() -> None:
    """GIVEN the README's spec example WHEN parsed THEN it is valid: the documentation cannot drift from the spec."""
    from pathlib import Path

    import yaml

    from components.checks import parse_landscape

    text = (Path(__file__).parents[2] / "README.md").read_text()
    example = yaml.safe_load(text.split("```yaml", 1)[1].split("```", 1)[0])
    assert parse_landscape(example["config"]["arbor:landscape"]).shoots[0].name == "web"
