"""Encryption at rest: the rendered configuration, the spec's rules, the changes allowed, keys and rewrites."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.checks import parse_landscape
from components.checks import previous as previous_update
from components.plan.planner import plan_landscape
from components.plan.values import EncryptionValues
from components.reconciler import encryption as keys_and_rewrite
from components.reconciler import kwokctl
from components.render import encryption
from components.render.encryption import Key
from components.spec.fields import SpecError
from tests.unit.spec_cases import base, changed

G = "landscape.garden.encryption"
ONE_KEY: list[Key] = [{"name": "key1", "provider": "aescbc", "secret": "c2VjcmV0LW9uZQ=="}]
PREPARED: list[Key] = [{"name": "key2", "provider": "aesgcm", "secret": "c2VjcmV0LXR3bw=="}, *ONE_KEY]


def counter() -> Callable[[], str]:
    """A key generator that numbers its keys, so that tests see which one is which."""
    made = iter(range(1, 100))
    return lambda: f"generated-{next(made)}"


# --- rendering


def test_config_golden(golden: Callable[[str, str], None]) -> None:
    """GIVEN configmaps and apps' deployments WHEN rendered with one key, then prepared THEN the goldens match."""
    golden("encryption-config.yaml", encryption.render_config(["configmaps", "deployments.apps"], ONE_KEY))
    golden("encryption-config-prepared.yaml", encryption.render_config(["configmaps"], PREPARED))


def test_first_key_encrypts_secrets_and_resources_and_reads_the_rest() -> None:
    """GIVEN a prepared rotation WHEN rendered THEN the new key writes the listed resources, plaintext the rest."""
    config = yaml.safe_load(encryption.render_config(["configmaps"], PREPARED))
    listed, rest = config["resources"]
    assert listed["resources"] == ["secrets", "configmaps"]
    assert [next(iter(p)) for p in listed["providers"]] == ["aesgcm", "aescbc", "identity"]
    assert rest["resources"] == ["*.*"]
    assert [next(iter(p)) for p in rest["providers"]] == ["identity", "aesgcm", "aescbc"]


def test_keys_of_one_provider_share_its_entry() -> None:
    """GIVEN two aescbc keys WHEN rendered THEN one aescbc entry lists both, the newest first, then identity."""
    both: list[Key] = [{"name": "key2", "provider": "aescbc", "secret": "eA=="}, *ONE_KEY]
    providers = yaml.safe_load(encryption.render_config([], both))["resources"][0]["providers"]
    assert providers == [
        {"aescbc": {"keys": [{"name": "key2", "secret": "eA=="}, {"name": "key1", "secret": "c2VjcmV0LW9uZQ=="}]}},
        {"identity": {}},
    ]


def test_secret_manifest_holds_the_config_under_its_key() -> None:
    """GIVEN a configuration WHEN made a Secret THEN it is etcd-encryption-secret with encryption-configuration.yaml."""
    secret = encryption.secret_manifest("text", "shoot--dev--web")
    assert secret["metadata"] == {"name": "etcd-encryption-secret", "namespace": "shoot--dev--web"}
    assert secret["stringData"] == {"encryption-configuration.yaml": "text"}


# --- spec


@pytest.mark.parametrize(
    ("case", "value", "lines"),
    [
        ("secrets", {"resources": ["secrets"]}, [f"{G}: 'secrets': always encrypted, leave it out"]),
        ("events", {"resources": ["events.events.k8s.io"]},
         [f"{G}: 'events.events.k8s.io': events cannot be encrypted"]),
        ("review", {"resources": ["tokenreviews.authentication.k8s.io"]},
         [f"{G}: 'tokenreviews.authentication.k8s.io': not stored in etcd"]),
        ("wildcard", {"resources": ["*.apps"]}, [f"{G}: '*.apps': wildcards are not allowed"]),
        ("upper case", {"resources": ["ConfigMaps"]}, [f"{G}: 'ConfigMaps' is not a lower-case <resource>[.<group>]"]),
        ("core group dot", {"resources": ["configmaps."]},
         [f"{G}: 'configmaps.' is not a lower-case <resource>[.<group>]"]),
        ("duplicate", {"resources": ["configmaps", "configmaps"]}, [f"{G}: duplicate 'configmaps'"]),
        ("provider", {"provider": "kms"}, [f"{G}.provider: 'kms' is not one of 'aescbc', 'aesgcm' or 'secretbox'"]),
        ("rotation", {"keyRotation": "start"}, [f"{G}.keyRotation: 'start' is not one of 'prepare' or 'complete'"]),
        ("unknown", {"keys": []}, [f"{G}.keys: unknown field; the fields here are keyRotation, provider, resources"]),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)  # fmt: skip
def test_invalid_garden_encryption(case: str, value: dict[str, Any], lines: list[str]) -> None:
    """GIVEN an invalid garden encryption WHEN parsed THEN exactly these lines are reported."""
    with pytest.raises(SpecError) as err:
        parse_landscape(changed("garden.encryption", value))
    assert err.value.lines == lines


def test_shoot_encryption_is_checked_the_same_way() -> None:
    """GIVEN a shoot encrypting secrets WHEN parsed THEN its path and reason are reported."""
    with pytest.raises(SpecError) as err:
        parse_landscape(changed("shoots[0].encryption", {"resources": ["secrets"], "provider": "secretbox"}))
    assert err.value.lines == ["landscape.shoots[0].encryption: 'secrets': always encrypted, leave it out"]


def test_plan_carries_the_encryption() -> None:
    """GIVEN a garden encrypting configmaps with aesgcm WHEN planned THEN its values say so; shoots get defaults."""
    plan = plan_landscape(
        parse_landscape(changed("garden.encryption", {"resources": ["configmaps"], "provider": "aesgcm"})), "s"
    )
    assert plan.garden.encryption == EncryptionValues(("configmaps",), "aesgcm", "complete")
    assert plan.shoots[0].encryption == EncryptionValues()
    assert plan_landscape(parse_landscape(base()), "s").garden.encryption is None


# --- changes against the previous update


def previous(resources: list[str], provider: str = "aescbc", rotation: str = "complete") -> dict[str, Any]:
    """The garden's `encryption` output of a previous update."""
    return {"garden": {"resources": resources, "provider": provider, "keyRotation": rotation}}


def garden(resources: list[str], provider: str = "aescbc", rotation: str = "complete") -> Any:
    """A plan whose garden encrypts as given."""
    spec = {"resources": resources, "provider": provider, "keyRotation": rotation}
    return plan_landscape(parse_landscape(changed("garden.encryption", spec)), "s")


@pytest.mark.parametrize(
    ("case", "before", "after", "lines"),
    [
        ("first time", {}, garden(["configmaps"]), []),
        ("add a resource", previous([]), garden(["configmaps"]), []),
        ("remove a resource", previous(["configmaps"]), garden([]), []),
        ("same in another order", previous(["a", "b"]), garden(["b", "a"]), []),
        ("resources and provider", previous([]), garden(["configmaps"], "aesgcm", "prepare"),
         [f"{G}: resources and provider change in one update; change one, run `up`, then the other"]),
        ("provider alone", previous([]), garden([], "secretbox"),
         [f"{G}.provider: aescbc -> secretbox only when a key rotation starts (keyRotation: prepare; its new key "
          "uses the new provider), then keyRotation: complete"]),
        ("provider with prepare", previous([]), garden([], "secretbox", "prepare"), []),
        ("provider while prepared", previous([], rotation="prepare"), garden([], "aesgcm", "prepare"),
         [f"{G}.provider: aescbc -> aesgcm only when a key rotation starts (keyRotation: prepare; its new key "
          "uses the new provider), then keyRotation: complete"]),
        ("resources with prepare", previous([]), garden(["configmaps"], rotation="prepare"),
         [f"{G}.resources: cannot change during a key rotation; set keyRotation: complete first"]),
        ("resources with complete", previous([], rotation="prepare"), garden(["configmaps"]),
         [f"{G}.resources: cannot change during a key rotation; set keyRotation: complete first"]),
        ("complete", previous(["configmaps"], rotation="prepare"), garden(["configmaps"]), []),
        ("removed", previous([]), plan_landscape(parse_landscape(base()), "s"),
         [f"{G}: cannot be removed once set, the objects in etcd are encrypted; keep it (with resources: [] it "
          "encrypts secrets only)"]),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)  # fmt: skip
def test_changes(case: str, before: dict[str, Any], after: Any, lines: list[str]) -> None:
    """GIVEN the previous update's output WHEN the new plan is checked THEN exactly these changes are refused."""
    assert previous_update.encryption_changes(after, before) == lines


def test_outputs_are_what_changes_are_checked_against() -> None:
    """GIVEN a plan WHEN its outputs are the previous ones THEN nothing is refused, and shoots are recorded too."""
    plan = garden(["configmaps"], "secretbox")
    outputs = previous_update.encryption_outputs(plan)
    assert outputs["garden"] == {"resources": ["configmaps"], "provider": "secretbox", "keyRotation": "complete"}
    assert "shoot/dev/web" in outputs
    assert previous_update.encryption_changes(plan, outputs) == []


# --- keys and rotation phases


def test_first_key() -> None:
    """GIVEN a new API server WHEN its keys are made THEN there is one, key1, for the provider."""
    assert keys_and_rewrite.first_keys("aesgcm", counter()) == [
        {"name": "key1", "provider": "aesgcm", "secret": "generated-1"}
    ]


def test_prepare_adds_a_key_in_front_and_complete_drops_the_old() -> None:
    """GIVEN one key WHEN prepared with a new provider, then completed THEN key2 writes, then key2 alone remains."""
    generate = counter()
    prepared = keys_and_rewrite.next_keys(ONE_KEY, "complete", "prepare", "aesgcm", generate)
    assert [(k["name"], k["provider"]) for k in prepared] == [("key2", "aesgcm"), ("key1", "aescbc")]
    completed = keys_and_rewrite.next_keys(prepared, "prepare", "complete", "aesgcm", generate)
    assert completed == prepared[:1]


@pytest.mark.parametrize(("old", "new"), [("complete", "complete"), ("prepare", "prepare")])
def test_no_phase_change_keeps_the_keys(old: str, new: str) -> None:
    """GIVEN keys WHEN the phase stays THEN they stay, and no key is generated."""
    assert keys_and_rewrite.next_keys(PREPARED, old, new, "aesgcm", counter()) == PREPARED


def test_a_provider_change_without_rotation_is_refused_by_the_keys_too() -> None:
    """GIVEN aescbc keys WHEN the provider changes without prepare THEN the keys refuse (nothing else checked it)."""
    with pytest.raises(ValueError, match="only with a key rotation"):
        keys_and_rewrite.next_keys(ONE_KEY, "complete", "complete", "aesgcm", counter())


# --- what is rewritten


@pytest.mark.parametrize(
    ("case", "olds", "news", "rewritten"),
    [
        ("first configuration", None, {"resources": ["configmaps"], "writeKey": "key1"}, ["secrets", "configmaps"]),
        ("added", {"resources": [], "writeKey": "key1"}, {"resources": ["configmaps"], "writeKey": "key1"},
         ["configmaps"]),
        ("removed", {"resources": ["configmaps"], "writeKey": "key1"}, {"resources": [], "writeKey": "key1"},
         ["configmaps"]),
        ("new write key", {"resources": ["a"], "writeKey": "key1"}, {"resources": ["a"], "writeKey": "key2"},
         ["secrets", "a"]),
        ("completed", {"resources": ["a"], "writeKey": "key2"}, {"resources": ["a"], "writeKey": "key2"}, []),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)  # fmt: skip
def test_to_rewrite(case: str, olds: dict[str, Any] | None, news: dict[str, Any], rewritten: list[str]) -> None:
    """GIVEN the previous and new rewrite inputs WHEN compared THEN exactly these resources are written again."""
    assert keys_and_rewrite.to_rewrite(olds, news) == rewritten


def test_config_hash_is_what_kube_apiserver_reports() -> None:
    """GIVEN a text WHEN hashed THEN it is the sha256 of its bytes (the metric's `hash` label without `sha256:`)."""
    assert keys_and_rewrite.config_hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_running_hash_is_read_from_the_metric_not_the_server_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN kube-apiserver's metrics WHEN the running configuration is read THEN its `hash` label, not the id's."""
    line = (
        'apiserver_encryption_config_controller_last_config_info{apiserver_id_hash="sha256:' + "a" * 64 + '",'
        'hash="sha256:' + "b" * 64 + '"} 1'
    )
    monkeypatch.setattr(keys_and_rewrite, "_metrics", lambda _kube: f"# HELP x\n{line}\nother 1\n")
    assert keys_and_rewrite.running_config_hash(None) == "b" * 64  # type: ignore[arg-type]
    monkeypatch.setattr(keys_and_rewrite, "_metrics", lambda _kube: "other 1\n")
    assert keys_and_rewrite.running_config_hash(None) is None  # type: ignore[arg-type]


# --- kube-apiserver flags of an existing local cluster


def test_flags_are_set_in_kwok_yaml_keeping_the_others(tmp_path: Path) -> None:
    """GIVEN a kwokctl cluster's kwok.yaml WHEN encryption flags are set THEN only arbor's flags change, patches too."""
    cluster = kwokctl.Cluster(name="c", workdir=str(tmp_path))
    cluster.dir.mkdir(parents=True)
    config = {
        "kind": "KwokctlConfiguration",
        "components": [{"name": "etcd", "args": ["--name=node0"]},
                       {"name": "kube-apiserver", "args": ["--secure-port=1", "--client-ca-file=/pki/ca.crt"]}],
        "componentsPatches": [{"name": "kube-apiserver", "extraArgs": [
            {"key": "encryption-provider-config", "value": "/old"}, {"key": "audit-log-path", "value": "/a"}]}],
    }  # fmt: skip
    (cluster.dir / "kwok.yaml").write_text(yaml.safe_dump_all([config, {"kind": "Stage"}]))
    flags = {"--encryption-provider-config": "/new", "--encryption-provider-config-automatic-reload": None,
             "--client-ca-file": "/bundle"}  # fmt: skip

    assert kwokctl.set_apiserver_flags(cluster, flags), "no kube-apiserver runs: it must (re)start"
    docs = list(yaml.safe_load_all((cluster.dir / "kwok.yaml").read_text()))
    assert docs[1] == {"kind": "Stage"}
    assert docs[0]["components"][0]["args"] == ["--name=node0"]
    assert docs[0]["components"][1]["args"] == [
        "--secure-port=1", "--encryption-provider-config=/new", "--client-ca-file=/bundle"
    ]  # fmt: skip
    assert docs[0]["componentsPatches"][0]["extraArgs"] == [{"key": "audit-log-path", "value": "/a"}]
