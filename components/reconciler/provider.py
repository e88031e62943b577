"""The base of arbor's dynamic providers."""

from __future__ import annotations

from pulumi.dynamic import ResourceProvider


class Provider(ResourceProvider):
    """A dynamic provider whose pickled class is kept in the state as it is, not encrypted.

    arbor's providers are pickled by reference to their module and hold no data, so the SDK's default (encrypt
    `__provider` always, in inputs and outputs) only costs bytes: about 170 per copy, two copies per resource. A
    provider that captured a secret would still be encrypted: the SDK checks what it serialized.
    """

    serialize_as_secret_always = False
