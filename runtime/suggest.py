"""'Did you mean' for names typed on the command line or in the Python API: stdlib modules,
algorithms, parameters, units.

What it does: picks the candidates nearest to a misspelt name with the language's own test
(:func:`close`, the rule of ``tlop.frontend.elaborate._close``: one edit apart, or equal ignoring
case; kept here because tlop.runtime must not import the front end), then, for longer names,
difflib's similarity; sizes also match their binary/decimal twin (``mb`` →
``MB``, ``MiB``).
What it does not do: index large sets of names (the elaborator keeps its own index for the
globals of a program) or decide what a message says around the hint.
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["close", "nearest", "hint", "unit_hint"]


def close(a: str, b: str) -> bool:
    """The language's 'did you mean' test: same letters up to one edit, or equal ignoring case."""
    if a == b:
        return False
    if a.lower() == b.lower():
        return True
    if abs(len(a) - len(b)) > 1 or max(len(a), len(b)) < 2:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return a[i + 1:] == b[i + 1:] or a[i:] == b[i + 1:] or a[i + 1:] == b[i:]


def nearest(name: str, candidates: Iterable[str], n: int = 3) -> list:
    """Up to ``n`` candidates close to ``name``, the closest first; [] when none is."""
    from difflib import get_close_matches

    cands = [c for c in dict.fromkeys(candidates) if c != name]
    out = [c for c in cands if close(name, c)]
    out.sort(key=lambda c: (c.lower() != name.lower(), c))
    if len(name) >= 4:
        out += [c for c in get_close_matches(name, cands, n=n, cutoff=0.8) if c not in out]
    return out[:n]


def hint(name: str, candidates: Iterable[str], n: int = 3) -> str:
    """``"; did you mean 'x'?"`` (or ``'x' or 'y'``), or ``""`` when nothing is close."""
    near = nearest(name, candidates, n)
    if not near:
        return ""
    return "; did you mean " + " or ".join(f"'{c}'" for c in near) + "?"


def unit_hint(unit: str) -> str:
    """The hint for an unknown unit: the units of the language close to it (``mb``: ``MB`` or
    ``MiB``; ``sec``: ``s``)."""
    from tlop.runtime.units import SIZE_UNITS, TIME_UNITS

    units = list(SIZE_UNITS) + list(TIME_UNITS)
    key = unit.lower().replace("i", "")
    twins = [u for u in SIZE_UNITS if u.lower().replace("i", "") == key and u != unit]
    if unit.lower() in ("sec", "secs", "second", "seconds"):
        twins.append("s")
    if unit.lower() in ("usec", "usecs", "microseconds"):
        twins.append("us")
    near = list(dict.fromkeys(twins))[:3] or nearest(unit, units)
    return ("; did you mean " + " or ".join(f"'{c}'" for c in near) + "?") if near else ""
