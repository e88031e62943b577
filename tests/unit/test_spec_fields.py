"""Every refusal of a field in the user's words: YAML types, field names as written, no secret shown, sound names.

Each case is one mistake and the exact lines it gets (issue 14, part 1): messages without pydantic's internals
(class names, `[key]`, tuples), a hint to quote what YAML read as a number, the nearest field for an unknown one;
fields that were accepted and then ignored or mangled (backup, extensions, a cloud's missing region, empty or pasted
secret keys, values that become labels); and names derived from names (components/checks/names.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from components.checks import parse_landscape
from components.spec.fields import SpecError
from tests.unit.spec_cases import CLOUD_LOCATIONS, base, changed, on_provider

# Credentials pasted where a secret config key's name belongs: no line may show them.
KUBECONFIG = "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: s3cr3t-t0ken-value\n"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def with_extra(path: str, key: str, value: Any) -> dict[str, Any]:
    """The base landscape with one more field `key` in the object at `path` (the top level when empty)."""
    doc = base()
    target: Any = doc
    for part in path.replace("[", ".").replace("]", "").split(".") if path else []:
        target = target[int(part)] if part.isdigit() else target[part]
    target[key] = value
    return doc


def two_shoots(first: tuple[str, str], second: tuple[str, str]) -> dict[str, Any]:
    """The base landscape with two shoots, each `(project, name)`, and just their projects."""
    doc = base()
    doc["garden"]["projects"] = [{"name": p} for p in dict.fromkeys([first[0], second[0]])]
    shoot = doc["shoots"][0]
    doc["shoots"] = [
        {**shoot, "project": first[0], "name": first[1]},
        {**shoot, "project": second[0], "name": second[1]},
    ]
    return doc


def cloud_seed(provider: str, **fields: Any) -> dict[str, Any]:
    """The base landscape with a second seed on `provider` with `fields`."""
    doc = base()
    doc["seeds"].append({"name": "cloud", "provider": provider, **fields})
    return doc


CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    (
        "seed not a mapping",
        changed("seeds[0]", "x"),
        [
            "landscape.seeds[0]: must be a mapping (key: value), not 'x'",
        ],
    ),
    (
        "pool a list",
        changed("shoots[0].workers[0]", ["a"]),
        [
            "landscape.shoots[0].workers[0]: must be a mapping (key: value), not a list",
        ],
    ),
    (
        "garden empty",
        changed("garden", None),
        [
            "landscape.garden: must be a mapping (key: value), not empty (null)",
        ],
    ),
    (
        "ipFamilies a string",
        changed("shoots[0].networking.ipFamilies", "IPv4"),
        [
            "landscape.shoots[0].networking.ipFamilies: must be a list, not 'IPv4'",
        ],
    ),
    (
        "node mask key",
        changed("shoots[0].networking.nodeMaskSizes", {"IPv5": 24}),
        [
            "landscape.shoots[0].networking.nodeMaskSizes.IPv5: 'IPv5' is not one of 'IPv4' or 'IPv6'",
        ],
    ),
    (
        "version a float",
        changed("shoots[0].kubernetes.version", 1.30),
        [
            (
                "landscape.shoots[0].kubernetes.version: must be a string, but YAML reads an unquoted "
                '1.3 as a number: write the value in quotes, e.g. version: "1.3" (unquoted, trailing '
                "zeros are lost: 1.30 reads as 1.3)"
            ),
        ],
    ),
    (
        "worker version an int",
        changed("shoots[0].workers[0].kubernetesVersion", 1),
        [
            (
                "landscape.shoots[0].workers[0].kubernetesVersion: must be a string, but YAML reads an "
                'unquoted 1 as a number: write the value in quotes, e.g. kubernetesVersion: "1"'
            ),
        ],
    ),
    (
        "shoot name a number",
        changed("shoots[0].name", 123),
        [
            (
                "landscape.shoots[0].name: must be a string, but YAML reads an unquoted 123 as a number: "
                'write the value in quotes, e.g. name: "123"'
            ),
        ],
    ),
    (
        "region read as false",
        changed("seeds[0].region", False),
        [
            (
                "landscape.seeds[0].region: must be a string, but YAML reads an unquoted false (and yes, "
                "no, on, off) as true or false: write the value in quotes"
            ),
        ],
    ),
    (
        "unknown top-level field",
        with_extra("", "shots", []),
        [
            "landscape.shots: unknown field; did you mean 'shoots'?",
        ],
    ),
    (
        "unknown pool field",
        with_extra("shoots[0].workers[0]", "kubernetesversion", "1.34.4"),
        [
            ("landscape.shoots[0].workers[0].kubernetesversion: unknown field; did you mean 'kubernetesVersion'?"),
        ],
    ),
    (
        "unknown shoot field",
        with_extra("shoots[0]", "selfhosted", True),
        [
            "landscape.shoots[0].selfhosted: unknown field; did you mean 'selfHosted'?",
        ],
    ),
    (
        "unknown field, nothing near",
        with_extra("seeds[0]", "replicas", 3),
        [
            (
                "landscape.seeds[0].replicas: unknown field; the fields here are backup, cluster, "
                "extensions, name, networks, provider, region, zones"
            ),
        ],
    ),
    (
        "flag not true or false",
        changed("shoots[0].selfHosted", "maybe"),
        [
            "landscape.shoots[0].selfHosted: must be true or false, not 'maybe'",
        ],
    ),
    (
        "count with a fraction",
        changed("shoots[0].workers[0].minimum", 1.5),
        [
            "landscape.shoots[0].workers[0].minimum: must be a whole number, not 1.5",
        ],
    ),
    (
        "long value not shown",
        changed("shoots[0].kubernetes.version", "1" * 50),
        [
            (
                "landscape.shoots[0].kubernetes.version: a value of 50 characters is not a version "
                "<major>.<minor>.<patch>"
            ),
        ],
    ),
    (
        "token-like value not shown",
        changed("seeds[0].name", "eyJhbGciOiJIUzI1NiJ9"),
        [
            (
                "landscape.seeds[0].name: a value that looks like a credential (not shown) is not a "
                "DNS-1123 label (lower-case letters, digits and '-')"
            ),
        ],
    ),
    (
        "enum value with a line break",
        changed("garden.provider", "local\n"),
        [
            ("landscape.garden.provider: a value with a line break is not one of 'local', 'gcp' or 'aws'"),
        ],
    ),
    (
        "backup bucket not a name",
        changed("seeds[0].backup", {"provider": "gcp", "bucket": "Backups_1"}),
        [
            (
                "landscape.seeds[0].backup.bucket: 'Backups_1' is not a bucket name (3 to 63 lower-case letters, "
                "digits and '-', starting and ending with a letter or digit)"
            ),
        ],
    ),
    (
        "backup bucket reserved",
        changed("seeds[0].backup", {"provider": "aws", "bucket": "my-google-backups"}),
        [
            (
                "landscape.seeds[0].backup.bucket: 'my-google-backups' is a bucket name the object stores "
                "reserve (e.g. 'goog…', 'xn--…')"
            ),
        ],
    ),
    (
        "extensions",
        changed("seeds[0].extensions", ["dns"]),
        [
            "landscape.seeds[0].extensions[0]: must be a mapping (key: value), not 'dns'",
        ],
    ),
    (
        "gcp seed without region or zones",
        cloud_seed("gcp"),
        [
            (
                "landscape.seeds[1].region: required field is missing: the cloud region its clusters run "
                "in, e.g. europe-west1 or eu-central-1 (on local: local)"
            ),
            (
                "landscape.seeds[1].zones: required field is missing: the region's zones its clusters "
                "use, e.g. [europe-west1-b, europe-west1-c] (on local: [local-a])"
            ),
        ],
    ),
    (
        "aws garden without region",
        changed("garden", {**base()["garden"], "provider": "aws", "zones": ["eu-central-1a"]}),
        [
            (
                "landscape.garden.region: required field is missing: the cloud region its clusters run "
                "in, e.g. europe-west1 or eu-central-1 (on local: local)"
            ),
        ],
    ),
    (
        "gcp zone of another region",
        cloud_seed("gcp", region="europe-west1", zones=["us-east1-b"]),
        [
            (
                "landscape.seeds[1].zones: zone 'us-east1-b' is not a zone of region 'europe-west1' (on "
                "gcp, e.g. europe-west1-b in europe-west1)"
            ),
        ],
    ),
    (
        "aws zone that is the region",
        cloud_seed("aws", region="eu-central-1", zones=["eu-central-1"]),
        [
            (
                "landscape.seeds[1].zones: zone 'eu-central-1' is not a zone of region 'eu-central-1' "
                "(on aws, e.g. eu-central-1a in eu-central-1)"
            ),
        ],
    ),
    (
        "kubeconfig secret empty",
        changed("seeds[0].cluster", {"kubeconfigSecret": ""}),
        [
            (
                "landscape.seeds[0].cluster.kubeconfigSecret: is empty: name the secret config key, or "
                "leave the field out"
            ),
        ],
    ),
    (
        "kubeconfig pasted",
        changed("seeds[0].cluster", {"kubeconfigSecret": KUBECONFIG}),
        [
            (
                "landscape.seeds[0].cluster.kubeconfigSecret: looks like a kubeconfig or credential (not "
                "shown): give the name of the secret config key that holds it, not its content (set with "
                "pulumi config set --secret arbor:<key>)"
            ),
        ],
    ),
    (
        "key with namespace",
        changed("seeds[0].cluster", {"kubeconfigSecret": "arbor:seedKubeconfig"}),
        [
            ("landscape.seeds[0].cluster.kubeconfigSecret: give the key's name without the 'arbor:' namespace"),
        ],
    ),
    (
        "key with a space",
        changed("seeds[0].cluster", {"kubeconfigSecret": "seed kubeconfig"}),
        [
            (
                "landscape.seeds[0].cluster.kubeconfigSecret: is not the name of a config key (letters, "
                "digits, '-', '_' and '.', at most 63 characters; the value is not shown)"
            ),
        ],
    ),
    (
        "service account JSON pasted",
        changed("shoots[0].cloudCredentialsSecret", '{"type": "service_account"}'),
        [
            (
                "landscape.shoots[0].cloudCredentialsSecret: looks like a kubeconfig or credential (not "
                "shown): give the name of the secret config key that holds it, not its content (set with "
                "pulumi config set --secret arbor:<key>)"
            ),
        ],
    ),
    (
        "aws secret key pasted",
        changed("shoots[0].cloudCredentialsSecret", AWS_SECRET),
        [
            (
                "landscape.shoots[0].cloudCredentialsSecret: looks like a kubeconfig or credential (not "
                "shown): give the name of the secret config key that holds it, not its content (set with "
                "pulumi config set --secret arbor:<key>)"
            ),
        ],
    ),
    (
        "zone empty",
        changed("seeds[0].zones", ["local-a", ""]),
        [
            "landscape.seeds[0].zones[1]: must not be empty",
        ],
    ),
    (
        "zone with a space",
        changed("seeds[0].zones", ["local a"]),
        [
            (
                "landscape.seeds[0].zones[0]: 'local a' cannot be the value of label "
                "topology.kubernetes.io/zone: at most 63 letters, digits, '-', '_' and '.', starting and "
                "ending with a letter or digit"
            ),
        ],
    ),
    (
        "machine type too long",
        changed("shoots[1].workers[0].machine", {"type": "t" * 64, "image": {"name": "i", "version": "1"}}),
        [
            (
                "landscape.shoots[1].workers[0].machine.type: a value of 64 characters cannot be the "
                "value of label node.kubernetes.io/instance-type: at most 63 letters, digits, '-', '_' "
                "and '.', starting and ending with a letter or digit"
            ),
        ],
    ),
    (
        "image version with a space",
        changed("shoots[1].workers[0].machine", {"type": "t", "image": {"name": "i", "version": "1 beta"}}),
        [
            (
                "landscape.shoots[1].workers[0].machine.image.version: '1 beta' cannot be the value of "
                "label operatingSystemVersion: at most 63 letters, digits, '-', '_' and '.', starting "
                "and ending with a letter or digit"
            ),
        ],
    ),
    (
        "registry mirror without host",
        changed("shoots[0].workers[0].cri", {"registryMirrors": {"": "https://m"}}),
        [
            (
                "landscape.shoots[0].workers[0].cri: registryMirrors: '': 'https://m' must map a "
                "registry host to an https URL"
            ),
        ],
    ),
    (
        "project name over 10",
        changed("garden.projects[0].name", "development"),
        [
            "landscape.shoots[0].project: project 'dev' is not defined in landscape.garden.projects",
            (
                "landscape.garden.projects[0].name: 'development' has 11 characters, more than 10 "
                "(Gardener's limit for project names, which name namespaces and technical IDs): shorten "
                "it"
            ),
        ],
    ),
    (
        "project name with --",
        changed("garden.projects[0].name", "d--v"),
        [
            "landscape.shoots[0].project: project 'dev' is not defined in landscape.garden.projects",
            (
                "landscape.garden.projects[0].name: 'd--v' has '--', which separates the parts of "
                "technical IDs (shoot--<project>--<shoot>): use single hyphens"
            ),
        ],
    ),
    (
        "shoot name with --",
        changed("shoots[0].name", "w--b"),
        [
            (
                "landscape.shoots[0].name: 'w--b' has '--', which separates the parts of technical IDs "
                "(shoot--<project>--<shoot>): use single hyphens"
            ),
        ],
    ),
    (
        "project and shoot over 21",
        changed("shoots[0].name", "s" * 19),
        [
            (
                "landscape.shoots[0].name: project 'dev' and shoot 'sssssssssssssssssss' have 22 "
                "characters together, more than 21 (Gardener's limit, so the technical ID fits every "
                "name and label made from it): shorten one"
            ),
        ],
    ),
    (
        "resource names collide",
        two_shoots(("a-b", "c"), ("a", "b-c")),
        [
            (
                "landscape.shoots[1].name: 'b-c' in project 'a' gives resource and cluster name "
                "'shoot-a-b-c', the same as shoots[0] ('c' in project 'a-b'); rename one"
            ),
        ],
    ),
    (
        "namespaces collide",
        two_shoots(("dev", "a--b"), ("dev--a", "b")),
        [
            (
                "landscape.garden.projects[1].name: 'dev--a' has '--', which separates the parts of "
                "technical IDs (shoot--<project>--<shoot>): use single hyphens"
            ),
            (
                "landscape.shoots[0].name: 'a--b' has '--', which separates the parts of technical IDs "
                "(shoot--<project>--<shoot>): use single hyphens"
            ),
            (
                "landscape.shoots[1].name: 'b' in project 'dev--a' gives namespace 'shoot--dev--a--b', "
                "the same as shoots[0] ('a--b' in project 'dev'); rename one"
            ),
        ],
    ),
    (
        "seed reference empty",
        changed("shoots[0].seed", ""),
        [
            "landscape.shoots[0].seed: must not be empty",
        ],
    ),
    (
        "project reference empty",
        changed("shoots[0].project", ""),
        [
            "landscape.shoots[0].project: must not be empty",
        ],
    ),
    (
        "unknown kubeReserved",
        changed("shoots[0].workers[0].kubelet", {"kubeReserved": {"cpus": "100m"}}),
        [
            (
                "landscape.shoots[0].workers[0].kubelet.kubeReserved: 'cpus' is not one of kubelet's "
                "settings here; did you mean 'cpu'?"
            ),
        ],
    ),
    (
        "kubeReserved not a quantity",
        changed("shoots[0].workers[0].kubelet", {"kubeReserved": {"memory": "1 GB"}}),
        [
            (
                "landscape.shoots[0].workers[0].kubelet.kubeReserved: memory: '1 GB' is not a quantity "
                "like 100m, 1Gi or 1000"
            ),
        ],
    ),
    (
        "unknown eviction signal",
        changed("shoots[0].workers[0].kubelet", {"evictionHard": {"disk.available": "10%"}}),
        [
            (
                "landscape.shoots[0].workers[0].kubelet.evictionHard: 'disk.available' is not one of "
                "kubelet's settings here; did you mean 'nodefs.available'?"
            ),
        ],
    ),
    (
        "sysctl value with a line break",
        changed("shoots[0].workers[0].sysctls", {"vm.swappiness": "1\nkernel.panic = 0"}),
        [
            (
                "landscape.shoots[0].workers[0].sysctls: vm.swappiness: a value with a line break is not "
                "a one-line value of at most 256 characters"
            ),
        ],
    ),
    (
        "sysctl name",
        changed("shoots[0].workers[0].sysctls", {"swappiness": "1"}),
        [
            (
                "landscape.shoots[0].workers[0].sysctls: 'swappiness' is not a kernel parameter name "
                "like net.core.somaxconn"
            ),
        ],
    ),
    (
        "mirror host a path",
        changed("shoots[0].workers[0].cri", {"registryMirrors": {"..": "https://m"}}),
        [
            (
                "landscape.shoots[0].workers[0].cri: registryMirrors: '..': 'https://m' must map a "
                "registry host to an https URL"
            ),
        ],
    ),
    (
        "mirror URL with a quote",
        changed("shoots[0].workers[0].cri", {"registryMirrors": {"docker.io": 'https://m"x'}}),
        [
            (
                "landscape.shoots[0].workers[0].cri: registryMirrors: 'docker.io': 'https://m\"x' must "
                "map a registry host to an https URL"
            ),
        ],
    ),
    (
        "zone read as a number",
        changed("seeds[0].zones", ["local-a", 1.5]),
        [
            (
                "landscape.seeds[0].zones[1]: must be a string, but YAML reads an unquoted 1.5 as a "
                'number: write the value in quotes, e.g. - "1.5" (unquoted, trailing zeros are lost: '
                "1.30 reads as 1.3)"
            ),
        ],
    ),
    (
        "number too long to show",
        changed("shoots[0].name", 10**50),
        [
            (
                "landscape.shoots[0].name: must be a string, but YAML reads an unquoted number as a "
                "number: write the value in quotes"
            ),
        ],
    ),
    (
        "region with a space",
        changed("seeds[0].region", "europe west1"),
        [
            (
                "landscape.seeds[0].region: 'europe west1' is not a region name (lower-case letters, "
                "digits and '-', e.g. europe-west1 or eu-central-1)"
            ),
        ],
    ),
]


@pytest.mark.parametrize(("case", "raw", "lines"), CASES, ids=[c[0] for c in CASES])
def test_each_mistake_gets_its_exact_lines(case: str, raw: dict[str, Any], lines: list[str]) -> None:
    """GIVEN a landscape with one mistake WHEN parsed THEN exactly its lines are reported."""
    with pytest.raises(SpecError) as refused:
        parse_landscape(raw)
    assert refused.value.lines == lines


@pytest.mark.parametrize(("case", "raw", "lines"), CASES, ids=[c[0] for c in CASES])
def test_no_line_shows_a_secret_a_line_break_or_an_internal_name(
    case: str, raw: dict[str, Any], lines: list[str]
) -> None:
    """GIVEN any refused case WHEN its lines are read THEN none has a pasted secret, a newline or pydantic's words."""
    with pytest.raises(SpecError) as refused:
        parse_landscape(raw)
    for line in refused.value.lines:
        assert "\n" not in line and "s3cr3t" not in line and AWS_SECRET[:8] not in line
        assert not any(word in line for word in ("[key]", "tuple", "instance of", "Spec", "input should"))


VALID: list[tuple[str, dict[str, Any]]] = [
    ("gcp seed with its region and zones", on_provider(base(), "gcp")),
    ("aws seed with its region and zones", on_provider(base(), "aws")),
    ("local seed with a region of its own", changed("seeds[0].region", "home")),
    (
        "image version with a build suffix",
        changed("shoots[1].workers[0].machine.image", {"name": "i", "version": "1.2+b3"}),
    ),
    ("project of 10 characters and shoot of 11", two_shoots(("p" * 10, "s" * 11), ("dev", "web"))),
    ("empty extensions", changed("seeds[0].extensions", [])),
]


@pytest.mark.parametrize(("case", "raw"), VALID, ids=[c[0] for c in VALID])
def test_valid_fields_pass(case: str, raw: dict[str, Any]) -> None:
    """GIVEN fields that are right WHEN parsed THEN the landscape is accepted."""
    assert parse_landscape(raw).seeds


def test_a_cloud_seed_keeps_the_region_and_zones_it_names() -> None:
    """GIVEN a gcp seed with region and zones WHEN parsed THEN they are its own, never `local`."""
    seed = parse_landscape(on_provider(base(), "gcp")).seeds[0]
    assert (seed.region, seed.zones) == (CLOUD_LOCATIONS["gcp"][0], CLOUD_LOCATIONS["gcp"][1])


def _string_paths(node: Any, path: str = "") -> list[str]:
    """The path of every string in a landscape document, in `changed`'s notation."""
    if isinstance(node, dict):
        return [p for key, value in node.items() for p in _string_paths(value, f"{path}.{key}" if path else key)]
    if isinstance(node, list):
        return [p for i, value in enumerate(node) for p in _string_paths(value, f"{path}[{i}]")]
    return [path] if isinstance(node, str) else []


@pytest.mark.parametrize("path", _string_paths(base()))
@pytest.mark.parametrize("pasted", [KUBECONFIG, AWS_SECRET, "x" * 300])
def test_a_credential_pasted_into_any_string_field_is_never_shown(path: str, pasted: str) -> None:
    """GIVEN a kubeconfig, a key or a long value in any string field WHEN refused THEN no line shows it."""
    try:
        parse_landscape(changed(path, pasted))
    except SpecError as refused:
        assert refused.lines
        for line in refused.lines:
            assert "\n" not in line and "s3cr3t" not in line and AWS_SECRET[:8] not in line and "x" * 41 not in line
