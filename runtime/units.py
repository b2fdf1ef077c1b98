"""Units of size and time literals (``64KiB``, ``1e6B``, ``2us``) and their parsing.

Used by the front end for literals in ``.tlop`` files and by the CLI for ``P=16 m=1MiB``
arguments.  Sizes are bytes, times are seconds.  Decimal prefixes are powers of 1000
(``KB``, ``MB``), binary prefixes powers of 1024 (``KiB``, ``MiB``).  Command-line values may
also carry a compound unit for a rate: ``gamma=0.2ns/B``, ``bw=10GB/s``
(:func:`unit_dimension`).
"""

from __future__ import annotations

import re

__all__ = ["SIZE_UNITS", "TIME_UNITS", "unit_kind", "unit_factor", "unit_dimension", "split_quantity",
           "format_size", "format_time"]

SIZE_UNITS = {
    "B": 1.0,
    "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
    "KiB": 1024.0, "MiB": 1024.0 ** 2, "GiB": 1024.0 ** 3, "TiB": 1024.0 ** 4,
}
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}

_QUANTITY = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-zµ][A-Za-zµ0-9^*/·-]*)?\s*$")
_UNIT_FACTOR = re.compile(r"([A-Za-zµ]+)(?:\^(-?\d+))?")


def unit_kind(unit: str):
    """'bytes', 'time', or None for an unknown unit ('' is a plain number: 'number')."""
    if unit == "":
        return "number"
    if unit in SIZE_UNITS:
        return "bytes"
    if unit in TIME_UNITS:
        return "time"
    return None


def unit_factor(unit: str) -> float:
    return SIZE_UNITS.get(unit) or TIME_UNITS.get(unit) or 1.0


def unit_dimension(unit: str):
    """``(factor, time exponent, bytes exponent)`` of a simple or compound unit: ``'us'`` →
    ``(1e-6, 1, 0)``, ``'ns/B'`` → ``(1e-9, 1, -1)``, ``'GB/s'`` → ``(1e9, -1, 1)``,
    ``'B^2'`` → ``(1.0, 0, 2)``; ``''`` is a plain number; None for an unknown unit."""
    factor, t, b = 1.0, 0, 0
    pos, sign = 0, 1
    while pos < len(unit):
        m = _UNIT_FACTOR.match(unit, pos)
        if not m:
            return None
        k = sign * int(m.group(2) or 1)
        name = m.group(1)
        if name in SIZE_UNITS:
            factor *= SIZE_UNITS[name] ** k
            b += k
        elif name in TIME_UNITS:
            factor *= TIME_UNITS[name] ** k
            t += k
        else:
            return None
        pos = m.end()
        if pos < len(unit):
            if unit[pos] not in "*/·":
                return None
            sign = -1 if unit[pos] == "/" else 1
            pos += 1
            if pos == len(unit):
                return None
    return factor, t, b


def split_quantity(text: str):
    """``'1.5MiB'`` → ``(1.5, 'MiB')``; None when the text is not a number with a unit."""
    mt = _QUANTITY.match(text)
    if not mt:
        return None
    return float(mt.group(1)), mt.group(2) or ""


def format_size(b: float) -> str:
    """A byte count the way a person writes it: 1MiB, 64KiB, 3000B."""
    if not b < 2 ** 60:
        return f"{b:g}B"
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        f = SIZE_UNITS[unit]
        if b >= f and b % f == 0:
            return f"{int(b // f)}{unit}"
    if float(b).is_integer():
        return f"{int(b)}B"
    return f"{b:g}B"


def format_time(t: float) -> str:
    """Seconds with an engineering unit: 12.345 us."""
    a = abs(t)
    if a == 0 or a != a:
        return f"{t:g} s"
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if a >= f:
            return f"{t / f:.6g} {unit}"
    return f"{t:.6g} s"
