"""A shoot's state key: generated once, copied to the garden, and read there by what seals and opens the state."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from components.reconciler import shoot_migration, shoot_state, state_key
from components.reconciler.kube import Kube
from tests.unit.test_ca_copy import Garden

WHERE = {"kubeconfig": "garden", "namespace": "garden-dev", "name": "web.shoot-state-key"}
PATH = "/apis/arbor.dev/v1alpha1/namespaces/garden-dev/internalsecrets/web.shoot-state-key"
PROVIDER = state_key.ShootStateKeyProvider()
NEWS = {"key": None, "copy": WHERE, "digest": None, "fingerprint": None}


@pytest.fixture
def garden(monkeypatch: pytest.MonkeyPatch) -> Garden:
    """The garden, serving InternalSecrets."""
    fake = Garden()
    monkeypatch.setattr(Kube, "from_kubeconfig", staticmethod(lambda _: fake))
    return fake


def copied(garden: Garden) -> str:
    """The key as the garden's InternalSecret holds it."""
    return base64.b64decode(garden.objects[PATH]["data"][state_key.DATA_KEY]).decode()


def made() -> tuple[dict[str, Any], dict[str, Any]]:
    """A key created and refreshed: its outputs and the inputs the next `check` makes."""
    outs = PROVIDER.create(dict(NEWS)).outs or {}
    read = PROVIDER.read("id", outs)
    assert read.outs is not None and read.inputs is not None
    return read.outs, PROVIDER.check(read.inputs, dict(NEWS)).inputs


def test_a_key_is_copied_to_the_garden_and_read_there_by_reference(garden: Garden) -> None:
    """GIVEN a new key WHEN made THEN the garden holds it, a reference reads it, and nothing changes after."""
    outs, news = made()
    assert len(base64.b64decode(outs["key"])) == 32 and copied(garden) == outs["key"]
    assert outs["digest"] == state_key.key_digest(outs["key"]) and news["digest"] == outs["digest"]
    assert news["key"] is None, "the key is never an input"
    assert state_key.resolve(state_key.reference(WHERE, outs["digest"])) == outs["key"]
    assert not PROVIDER.diff("id", outs, news).changes


@pytest.mark.parametrize("change", ["deleted", "edited"])
def test_a_copy_changed_in_the_garden_is_written_again_with_the_same_key(garden: Garden, change: str) -> None:
    """GIVEN a key WHEN its copy is deleted or edited THEN drift, and the update writes the same key again."""
    outs, _ = made()
    if change == "deleted":
        del garden.objects[PATH]
    else:
        garden.objects[PATH]["data"][state_key.DATA_KEY] = base64.b64encode(b"another").decode()
    read = PROVIDER.read("id", outs)
    assert read.outs is not None and read.inputs is not None
    assert read.outs["fingerprint"] == state_key.DRIFTED
    news = PROVIDER.check(read.inputs, dict(NEWS)).inputs
    # The digest stays known in the update's preview: what reads the key by reference shows no change.
    assert news["digest"] == outs["digest"]
    assert PROVIDER.diff("id", read.outs, news).changes
    updated = PROVIDER.update("id", read.outs, news).outs or {}
    assert updated["key"] == outs["key"] == copied(garden)


def test_an_older_arbors_key_gets_its_copy_and_keeps_its_value(garden: Garden) -> None:
    """GIVEN a key an older arbor made (no copy) WHEN updated THEN the same key is copied to the garden."""
    older = {"key": state_key.new_key()}
    assert (PROVIDER.read("id", older).outs or {}) == older
    news = PROVIDER.check({"key": None}, dict(NEWS)).inputs
    assert PROVIDER.diff("id", older, news).changes
    updated = PROVIDER.update("id", older, news).outs or {}
    assert updated["key"] == older["key"] == copied(garden)
    assert updated["digest"] == state_key.key_digest(older["key"])


def test_a_moved_copy_is_written_there_and_removed_where_it_was(garden: Garden) -> None:
    """GIVEN a key WHEN its copy's namespace changes THEN written there, gone from where it was."""
    outs, _ = made()
    elsewhere = {**NEWS, "copy": {**WHERE, "namespace": "garden-other"}}
    assert PROVIDER.diff("id", outs, elsewhere).changes
    PROVIDER.update("id", outs, elsewhere)
    assert PATH not in garden.objects and PATH.replace("garden-dev", "garden-other") in garden.objects


@pytest.mark.parametrize(
    ("held", "error"),
    [
        (None, "InternalSecret garden-dev/web.shoot-state-key holds no key"),
        ("another", "InternalSecret garden-dev/web.shoot-state-key holds another key"),
    ],
)
def test_a_reference_to_a_missing_or_other_key_is_refused_naming_the_secret(
    garden: Garden, held: str | None, error: str
) -> None:
    """GIVEN a reference WHEN the copy is gone or holds another key THEN the seal's error names it, never a key."""
    key = state_key.new_key()
    if held is not None:
        data = {state_key.DATA_KEY: base64.b64encode(held.encode()).decode()}
        garden.objects[PATH] = {**state_key.internal_secret(WHERE), "data": data}
    with pytest.raises(shoot_state.StateError, match=error) as raised:
        shoot_state.seal(b"x", shoot_state._key({"key": state_key.reference(WHERE, state_key.key_digest(key))}))
    assert key not in str(raised.value)


def test_a_key_given_whole_by_an_older_state_still_opens_the_state() -> None:
    """GIVEN the key itself (an older arbor's input) WHEN resolved THEN it is the key; its digest is the reference's."""
    key = state_key.new_key()
    assert state_key.resolve(key) == key
    assert state_key.key_digest(key) == state_key.key_digest(state_key.reference(WHERE, state_key.key_digest(key)))


def test_what_an_older_arbor_gave_the_key_updates_once_to_keep_the_reference_instead() -> None:
    """GIVEN a restore and a migration given the key itself WHEN given a reference THEN an update (the key goes)."""
    key = state_key.new_key()
    ref = state_key.reference(WHERE, state_key.key_digest(key))
    olds = {"seedNamespace": "shoot--dev--web", "object": "o", "seed": "local-1", "version": "1", "key": key}
    news = {**olds, "key": ref}
    assert shoot_state.MachineRestoreProvider().diff("id", olds, news).changes
    assert shoot_migration.ShootMigrationProvider().diff("id", olds, news).changes
    assert shoot_state.ShootStateProvider().diff("id", olds, news).changes
    assert not shoot_state.MachineRestoreProvider().diff("id", news, news).changes
    assert not shoot_migration.ShootMigrationProvider().diff("id", news, news).changes
    assert json.dumps(news).count(key) == 0


def test_delete_removes_the_copy(garden: Garden) -> None:
    """GIVEN a key WHEN deleted (the shoot is) THEN its copy in the garden is gone."""
    outs, _ = made()
    PROVIDER.delete("id", outs)
    assert PATH not in garden.objects
