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
           "format_size", "format_time", "TIME_SCALES"]

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


#: the time units output is scaled to, largest first (``us`` is accepted on input, ``µs`` printed)
TIME_SCALES = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))

#: significant digits of a printed time (full precision is the JSON and CSV output's job)
TIME_DIGITS = 4


def _sig(x: float, digits: int) -> str:
    """``x`` with ``digits`` significant digits, trailing zeros kept (``2.000``, ``677.3``), no
    exponent below 10^digits (``12346``), and no dangling decimal point."""
    if x == 0:
        return "0"
    if abs(x) >= 10 ** digits:
        return f"{x:.0f}"
    s = f"{x:#.{digits}g}"
    if "e" in s:  # tiny values in a forced unit: 1.234e-05
        return s
    return s[:-1] if s.endswith(".") else s


def format_time(t: float, unit: str | None = None, digits: int = TIME_DIGITS) -> str:
    """Seconds with an auto-scaled unit and ``digits`` significant digits: ``677.3 µs``,
    ``1.217 ms``, ``2.000 s``; ``unit`` (s, ms, us/µs, ns) forces one unit.  Zero is ``0 s``,
    non-finite values ``inf s`` / ``nan s``."""
    if t != t or t in (float("inf"), float("-inf")):
        return f"{t} s"
    if unit is not None:
        name = "µs" if unit == "us" else unit
        return f"{_sig(t / TIME_UNITS[name], digits)} {name}"
    a = abs(t)
    if a == 0:
        return "0 s"
    for name, f in TIME_SCALES:
        if a >= f * (1 - 0.5 * 10 ** -digits):  # 999.99996 µs rounds to 1.000 ms, not 1000 µs
            return f"{_sig(t / f, digits)} {name}"
    return f"{_sig(t / 1e-9, digits)} ns"
