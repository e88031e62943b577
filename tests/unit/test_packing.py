"""render/packing.py and render/packed_keys.py: a packed value is the same value again, its RSA keys kept small."""

from __future__ import annotations

import base64
import functools
import gzip
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from hypothesis import given, settings
from hypothesis import strategies as st

from components.checks import parse_landscape
from components.plan.planner import plan_landscape
from components.reconciler.signing import key_pem, new_key
from components.render import controlplane, packed_keys, packing
from tests.unit.spec_cases import base


@functools.cache
def keys() -> tuple[str, ...]:
    """Three keys as arbor issues them (PKCS#1 PEM, Gardener's size): made once, they take a while."""
    return tuple(key_pem(new_key()) for _ in range(3))


def in_yaml(pem: str, indent: int, newlines: int = 2) -> str:
    """A key as an OSC's YAML holds it: a quoted scalar, its lines folded (blank lines) and indented."""
    sep = "\n" * newlines + " " * indent
    return "data: '" + pem.rstrip("\n").replace("\n", sep) + sep + "'"


TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


@settings(max_examples=60, deadline=None)
@given(
    picks=st.lists(st.integers(0, 2), min_size=1, max_size=3),
    indent=st.integers(0, 14),
    newlines=st.integers(1, 3),
    around=st.lists(TEXT, min_size=4, max_size=4),
)
def test_any_value_holding_keys_is_unpacked_to_exactly_itself(
    picks: list[int], indent: int, newlines: int, around: list[str]
) -> None:
    """GIVEN keys whole, in YAML text and among other strings WHEN packed and unpacked THEN the same value."""
    whole = [keys()[i] for i in picks]
    value = {
        "secrets": {f"k{n}": {"ca.key": pem, "ca.crt": around[0]} for n, pem in enumerate(whole)},
        "osc.yaml": around[1] + "".join(in_yaml(pem, indent, newlines) + around[2] for pem in whole),
        "list": [around[3], 3, None, True, whole[0]],
    }
    packed = packing.pack(value)
    assert packed.startswith(packing.PACKED_KEYS)
    assert packing.unpacked(packed) == value
    assert packing.pack(value) == packed  # the same value, the same text


@settings(max_examples=20, deadline=None)
@given(pick=st.integers(0, 2), rest=st.sampled_from(["", "\n", "trailing text"]))
def test_a_key_base64_encoded_as_a_secrets_data_is_kept_as_its_primes_too(pick: int, rest: str) -> None:
    """GIVEN a Secret's `data` holding a key base64-encoded WHEN packed THEN kept small and unpacked the same."""
    encoded = base64.b64encode((keys()[pick] + rest).encode()).decode()
    value = {"kind": "InternalSecret", "data": {"ca.key": encoded, "ca.crt": base64.b64encode(b"cert").decode()}}
    packed = packing.pack(value)
    assert packed.startswith(packing.PACKED_KEYS) and len(packed) * 3 < len(encoded)
    assert packing.unpacked(packed) == value


@pytest.mark.parametrize(
    "text",
    [
        packed_keys.B64_BEGIN + "!!not base64",
        packed_keys.B64_BEGIN + "AAAA",  # base64, but of no key
        base64.b64encode(b"-----BEGIN RSA PRIVATE KEY-----\xff\xfe").decode(),  # not text
        base64.b64encode(b"-----BEGIN RSA PRIVATE KEY-----\n<<rsa-key:AAAA:BBBB:1:0>>").decode(),  # a mark
    ],
    ids=["not-base64", "no-key", "not-text", "mark"],
)
def test_a_string_that_only_looks_like_an_encoded_key_is_kept_as_it_is(text: str) -> None:
    """GIVEN a string beginning like an encoded key but none WHEN packed THEN as it is, unpacked the same."""
    assert packed_keys.compacted(text) == text
    assert packing.unpacked(packing.pack({"data": text})) == {"data": text}


def test_an_encoded_key_beside_a_mark_of_its_own_is_kept_as_it_is() -> None:
    """GIVEN a Secret's `data` holding a key and text that looks like a token WHEN packed THEN unpacked the same."""
    encoded = base64.b64encode(f"{keys()[0]}{packed_keys.MARK}{'A' * 8}:{'B' * 8}:1:0>>".encode()).decode()
    assert packed_keys.compacted(encoded) == encoded
    assert packing.unpacked(packing.pack({"data": encoded})) == {"data": encoded}


def test_a_key_is_kept_in_a_fifth_of_its_pem() -> None:
    """GIVEN a Secret holding a key WHEN packed THEN its key takes about a fifth of what it took (primes only)."""
    value = {"ca-signer": {"ca.key": keys()[0]}}
    before = len(packing.PACKED + packing._compressed(packing.canonical_json(value)))
    assert len(packing.pack(value)) * 3 < before


VALUES = st.recursive(TEXT | st.integers() | st.none(), lambda c: st.lists(c) | st.dictionaries(TEXT, c))


@given(value=VALUES)
def test_a_value_without_keys_is_packed_against_the_dictionary_and_unpacked_to_itself(value: object) -> None:
    """GIVEN any value without a key WHEN packed THEN in the current format, the same text again, and the value back."""
    packed = packing.pack(value)
    assert packed.startswith(packing.PACKED)
    assert packing.pack(value) == packed
    assert packing.unpacked(packed) == value


def _gzipped(prefix: str, value: object) -> str:
    """A value as an older arbor packed it: gzip, no dictionary."""
    return prefix + base64.b64encode(gzip.compress(packing.canonical_json(value).encode(), mtime=0)).decode()


@given(value=VALUES)
def test_a_value_an_older_arbor_packed_is_read(value: object) -> None:
    """GIVEN a value an older arbor packed (gzip) WHEN unpacked THEN the value."""
    assert packing.unpacked(_gzipped(packing.GZIP, value)) == value


def test_a_key_an_older_arbor_packed_is_written_out() -> None:
    """GIVEN an older arbor's packed value with a key as its primes WHEN unpacked THEN the key's PEM again."""
    value = {"ca.key": keys()[0]}
    token = {"ca.key": packed_keys.compacted(keys()[0])}
    assert packing.unpacked(_gzipped(packing.GZIP_KEYS, token)) == value


def test_a_control_plane_packs_to_under_half_of_what_gzip_made_of_it() -> None:
    """GIVEN a hosted control plane the dictionary was not made from WHEN packed THEN under half of gzip's size."""
    plan = plan_landscape(parse_landscape(base()), "local")
    other = next(s for s in plan.shoots if s.name != "web" and not s.self_hosted)
    objects = [w.object for w in controlplane.control_plane(other)]
    assert len(packing.pack(objects)) * 2 < len(_gzipped(packing.GZIP, objects))


def test_an_edited_dictionary_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN the dictionary's text edited WHEN read THEN refused by name, never used to unpack something else."""
    text = (packing.DICTIONARY_DIR / f"{packing.DICTIONARY}.txt").read_bytes()
    (tmp_path / f"{packing.DICTIONARY}.txt").write_bytes(text.replace(b"kube-apiserver", b"kube-apiservex", 1))
    monkeypatch.setattr(packing, "DICTIONARY_DIR", tmp_path)
    packing.dictionary.cache_clear()
    try:
        with pytest.raises(ValueError, match="packing dictionary 1"):
            packing.pack({"a": 1})
    finally:
        packing.dictionary.cache_clear()


def test_a_value_packed_by_a_newer_arbor_is_refused_by_name() -> None:
    """GIVEN a value packed with a dictionary this arbor does not have WHEN unpacked THEN refused, saying so."""
    newer = packing.PACKED.replace(f"dict{packing.DICTIONARY}", f"dict{packing.DICTIONARY + 1}") + "AAAA"
    with pytest.raises(ValueError, match=f"dictionary {packing.DICTIONARY + 1}, which only a newer arbor has"):
        packing.unpacked(newer)


def test_the_dictionary_fills_the_window_deflate_reads() -> None:
    """GIVEN the current dictionary THEN as long as deflate's window: a longer one would be read only in part."""
    assert len(packing.dictionary(packing.DICTIONARY)) == packing.WINDOW


def _pkcs8() -> str:
    """An arbor key as PKCS#8 PEM (`PRIVATE KEY`)."""
    key = serialization.load_pem_private_key(keys()[0].encode(), None)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _ec() -> str:
    """An EC key in the PKCS#1-like traditional form (`EC PRIVATE KEY`)."""
    return (
        ec.generate_private_key(ec.SECP256R1())
        .private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
        )
        .decode()
    )


def _other_exponent() -> str:
    """An RSA key with exponent 3: its primes alone would not write it again."""
    return key_pem(rsa.generate_private_key(public_exponent=3, key_size=1024))


def _damaged() -> str:
    """A key whose body was edited: not a key that loads."""
    lines = keys()[0].splitlines()
    lines[5] = "A" * len(lines[5])
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("make", [_pkcs8, _ec, _other_exponent, _damaged], ids=["pkcs8", "ec", "exponent", "damaged"])
def test_a_key_its_primes_do_not_give_back_is_kept_as_it_is(make: Callable[[], str]) -> None:
    """GIVEN a key in another form, another exponent or damaged WHEN packed THEN kept whole, unpacked the same."""
    pem = make()
    assert packed_keys.compacted(pem) == pem
    value = {"key": pem, "arbor": keys()[1]}
    assert packing.unpacked(packing.pack(value)) == value


def test_a_value_that_holds_a_tokens_mark_is_packed_as_it_is() -> None:
    """GIVEN a value holding the token mark beside a key WHEN packed THEN nothing is replaced, unpacked the same."""
    value = {"note": f"{packed_keys.MARK}AAAA:BBBB:1:0>>", "key": keys()[0]}
    packed = packing.pack(value)
    assert packed.startswith(packing.PACKED)
    assert packing.unpacked(packed) == value


def test_an_older_arbor_does_not_take_a_packed_key_for_a_value_it_knows() -> None:
    """GIVEN a value with a key packed WHEN read by an arbor without keys' tokens THEN not a format it knows."""
    packed = packing.pack({"key": keys()[0]})
    assert not packed.startswith((packing.PACKED, packing.GZIP))
