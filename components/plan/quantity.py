"""Kubernetes quantities by value: the canonical form Kubernetes prints, so `1024Mi` and `1Gi` are one value."""

from __future__ import annotations

import re
from fractions import Fraction

BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_QUANTITY = re.compile(r"([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?)", re.ASCII)


def canonical(quantity: str) -> str:
    """The quantity as Kubernetes' Quantity.String() prints it; anything else (a percentage) is returned as is.

    A binary suffix stays binary when the value is a whole number of at least 1024 (the largest power of 1024
    that divides it), else the value is decimal with the largest power of 1000 that keeps it whole.
    """
    match = _QUANTITY.fullmatch(quantity)
    if not match:
        return quantity
    number, suffix = Fraction(match[1]), match[2]
    if suffix in BINARY:
        value = number * 1024 ** BINARY[suffix]
        if value >= 1024 and value.denominator == 1:
            whole, power = int(value), 0
            while whole % 1024 == 0 and power < len(BINARY):
                whole, power = whole // 1024, power + 1
            return f"{whole}{next(s for s, p in BINARY.items() if p == power)}" if power else str(whole)
    else:
        value = number * Fraction(10) ** DECIMAL[suffix]
    if value == 0:
        return "0"
    exponent = -9
    # Kubernetes rounds up below nano; arbor's spec takes no such quantity, so nothing is lost here.
    mantissa = value * 10**9
    mantissa = mantissa.numerator // mantissa.denominator + (mantissa.denominator != 1)
    while mantissa and mantissa % 1000 == 0 and exponent < 18:
        mantissa, exponent = mantissa // 1000, exponent + 3
    return f"{mantissa}{next(s for s, e in DECIMAL.items() if e == exponent)}"
