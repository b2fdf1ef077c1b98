"""Units of size and time literals (``64KiB``, ``1e6B``, ``2us``) and their parsing.

Used by the front end for literals in ``.tlop`` files and by the CLI for ``P=16 m=1MiB``
arguments.  Sizes are bytes, times are seconds.  Decimal prefixes are powers of 1000
(``KB``, ``MB``), binary prefixes powers of 1024 (``KiB``, ``MiB``).
"""

from __future__ import annotations

import re

__all__ = ["SIZE_UNITS", "TIME_UNITS", "unit_kind", "unit_factor", "split_quantity", "format_size",
           "format_time"]

SIZE_UNITS = {
    "B": 1.0,
    "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
    "KiB": 1024.0, "MiB": 1024.0 ** 2, "GiB": 1024.0 ** 3, "TiB": 1024.0 ** 4,
}
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}

_QUANTITY = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-zµ]*)\s*$")


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


def split_quantity(text: str):
    """``'1.5MiB'`` → ``(1.5, 'MiB')``; None when the text is not a number with a unit."""
    mt = _QUANTITY.match(text)
    if not mt:
        return None
    return float(mt.group(1)), mt.group(2)


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
