"""RSA private keys where arbor's own inputs hold them, kept as their two primes (pure).

A 3072-bit key's PKCS#1 PEM is about 2.4 KB of base64 that gzip cannot shrink much, and a hosted shoot's Secrets
or a self-hosted node's OSC hold several. Everything in such a key follows from its primes p and q (e = 65537), so
a packed value (render/packing.py), a certificate's CA key, a local cluster's PKI and a credential's own key output
(`fields_packed`, reconciler/pki.py) keep a key as a token of the two (about 520 characters), and `expanded` writes
the same PEM again where it is used.
A key is replaced only where writing it again gives back exactly the text it had (its line breaks and indentation
included, as in an OSC's YAML); any other key (another exponent, PKCS#8, an EC key) stays as it is.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

BEGIN, END = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"
# A PKCS#1 key, its lines joined by one separator: a newline, or (inside YAML text) newlines and an indentation.
KEY = re.compile(BEGIN + r"(?P<sep>\n+ *)(?:[A-Za-z0-9+/=]+(?P=sep))+" + END)
MARK = "<<rsa-key:"
TOKEN = re.compile(r"<<rsa-key:(?P<p>[A-Za-z0-9+/=]+):(?P<q>[A-Za-z0-9+/=]+):(?P<newlines>\d+):(?P<indent>\d+)>>")
EXPONENT = 65537
# A base64-encoded key (a Secret's `data`) begins with these 40 characters: the encoding of BEGIN's first 30.
B64_BEGIN = base64.b64encode(BEGIN[:30].encode()).decode()
B64_MARK = "<<b64:"


def _number(text: str) -> int:
    """An integer from its big-endian base64."""
    return int.from_bytes(base64.b64decode(text), "big")


def _text(number: int) -> str:
    """An integer as big-endian base64."""
    return base64.b64encode(number.to_bytes((number.bit_length() + 7) // 8, "big")).decode()


def _pem(p: int, q: int, sep: str) -> str:
    """The PKCS#1 PEM of the key with primes p and q, its lines joined by `sep`, as signing.key_pem writes it."""
    d = rsa.rsa_recover_private_exponent(EXPONENT, p, q)
    numbers = rsa.RSAPrivateNumbers(p, q, d, rsa.rsa_crt_dmp1(d, p), rsa.rsa_crt_dmq1(d, q), rsa.rsa_crt_iqmp(p, q),
                                    rsa.RSAPublicNumbers(EXPONENT, p * q))  # fmt: skip
    key = numbers.private_key(unsafe_skip_rsa_key_validation=True)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    ).decode()
    return pem.rstrip("\n").replace("\n", sep)


def _token(match: re.Match[str]) -> str:
    """A key's token, where its primes write exactly the same text again; else the key as it is."""
    block, sep = match.group(0), match.group("sep")
    try:
        pem = block.replace(sep, "\n") + "\n"
        key = serialization.load_pem_private_key(pem.encode(), None, unsafe_skip_rsa_key_validation=True)
        if not isinstance(key, rsa.RSAPrivateKey) or key.private_numbers().public_numbers.e != EXPONENT:
            return block
        numbers = key.private_numbers()
        if _pem(numbers.p, numbers.q, sep) != block:
            return block
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return block  # not a key this module can write again: kept as it is
    newlines, indent = len(sep.rstrip(" ")), len(sep) - len(sep.rstrip(" "))
    return f"{MARK}{_text(numbers.p)}:{_text(numbers.q)}:{newlines}:{indent}>>"


def compacted(text: str) -> str:
    """The text with each RSA private key that its primes give back exactly replaced by their token.

    A whole string that is a base64-encoded text with keys (a Secret's `data`) becomes `<<b64:` that text compacted.
    """
    if text.startswith(B64_BEGIN):
        try:
            decoded = base64.b64decode(text, validate=True).decode()
        except ValueError:  # not base64 of UTF-8 text after all (binascii.Error and UnicodeError are ValueErrors)
            return text
        if MARK in decoded or _b64(decoded) != text:
            return text  # a mark of its own, or an encoding `_b64` would not write again
        # Each token gives back its key's text exactly (`_token` checked), so nothing needs writing out to compare.
        inner = compacted(decoded)
        return f"{B64_MARK}{inner}>>" if MARK in inner else text
    return KEY.sub(_token, text) if BEGIN in text else text


def _key(match: re.Match[str]) -> str:
    """The key a token stands for, with the separator it had."""
    sep = "\n" * int(match.group("newlines")) + " " * int(match.group("indent"))
    return _pem(_number(match.group("p")), _number(match.group("q")), sep)


def expanded(text: str) -> str:
    """The text with each token written out as its key again (a `<<b64:` one base64-encoded again)."""
    if text.startswith(B64_MARK) and text.endswith(">>"):
        return _b64(expanded(text[len(B64_MARK) : -2]))
    return TOKEN.sub(_key, text) if MARK in text else text


def _b64(text: str) -> str:
    """Text base64-encoded, as a Secret's `data` holds it."""
    return base64.b64encode(text.encode()).decode()


def fields_packed(values: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """The values with each named field that is an RSA key its primes give back exactly kept as their token."""
    values = dict(values)
    for name in names:
        value = values.get(name)
        if isinstance(value, str) and MARK not in value and B64_MARK not in value:
            values[name] = compacted(value)
    return values


def fields_written_out(values: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """The values with each named field's token written out as its key again (`fields_packed` undone)."""
    values = dict(values)
    for name in names:
        value = values.get(name)
        if isinstance(value, str):
            values[name] = expanded(value)
    return values
