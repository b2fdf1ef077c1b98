"""Per-rank arguments: one value per process for a parameter declared ``counts: bytes[P]``.

What it does: turns what a user gives a per-rank parameter into a :class:`PerRankValues` — a
vector with one value per rank (element r is rank r's), or one value that every rank takes —
and checks it element by element.  Accepted forms:

* command line: ``counts=1KiB,2KiB,4KiB,8KiB`` (one value per rank, rank 0 first, each with the
  units a plain argument of the type takes), ``counts=1KiB`` (every rank the same), or
  ``counts=@sizes.json`` (a JSON file holding a list of such values, numbers or strings with
  units);
* Python: a list, a tuple or a 1-D numpy array (axis 0 is the rank), :func:`per_rank` of one of
  them, or a number (every rank the same).

The binder (:mod:`tlop.backends.binding`) checks each value as it checks a plain argument (not
NaN, integral for ``int``, the declared constraint or the implicit ``>= 0`` of sizes and times,
naming the offending rank) and the length against the process count.  An engine reads the values
through :meth:`PerRankValues.at`.

What it does not do: broadcast with the other arguments.  A per-rank argument is one vector for
a whole evaluation call: it takes no part in numpy broadcasting, a grid over ``P`` needs one value
for every rank (a number) rather than a vector, and a grid of vectors is one call per vector.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Optional

import numpy as np

from tlop.runtime.diagnostics import TlopError

__all__ = ["PerRankValues", "per_rank", "parse_per_rank_text"]


class PerRankValues:
    """The values of one per-rank argument: ``values`` (a 1-D float array, element r is rank r's)
    or ``fill`` (one value every rank takes).  ``ranks`` names the process-count parameter it
    was checked against (set by the binder)."""

    __slots__ = ("values", "fill", "ranks")

    def __init__(self, values=None, fill: Optional[float] = None, ranks: Optional[str] = None):
        if (values is None) == (fill is None):
            raise ValueError("PerRankValues takes values or fill")
        self.values = None if values is None else np.asarray(values, dtype=float)
        self.fill = None if fill is None else float(fill)
        self.ranks = ranks

    def __len__(self) -> int:
        if self.values is None:
            raise TypeError("one value for every rank has no length of its own")
        return len(self.values)

    def elements(self) -> np.ndarray:
        """Every value given (the one value of a fill)."""
        return self.values if self.values is not None else np.asarray([self.fill])

    def at(self, index, P):
        """The values of ranks ``index`` (a float or an array of them) when there are ``P``
        processes; None when some index is not a rank (the caller reports it)."""
        idx = np.asarray(index, dtype=float)
        n = np.asarray(P, dtype=float) if self.values is None else float(len(self.values))
        ok = np.isfinite(idx) & (np.floor(idx) == idx) & (idx >= 0) & (idx < n)
        if not np.all(ok):
            return None
        if self.values is None:
            out = np.full(np.broadcast_shapes(idx.shape, np.shape(n)), self.fill)
        else:
            out = self.values[idx.astype(np.int64)]
        return float(out) if out.ndim == 0 else out

    def first_bad_index(self, index, P) -> float:
        """The first element of ``index`` that is not a rank (for the caller's message)."""
        idx = np.asarray(index, dtype=float)
        n = np.asarray(P, dtype=float) if self.values is None else float(len(self.values))
        bad = ~(np.isfinite(idx) & (np.floor(idx) == idx) & (idx >= 0) & (idx < n))
        bad = np.broadcast_to(bad, np.broadcast_shapes(idx.shape, np.shape(n)))
        k = int(np.flatnonzero(bad.ravel())[0])
        return float(np.broadcast_to(idx, bad.shape).ravel()[k])

    def text(self, fmt_one, limit: int = 8) -> str:
        """``[1 KiB, 2 KiB, …, 8 KiB]`` (at most ``limit`` values shown) or the fill's text."""
        if self.values is None:
            return fmt_one(self.fill)
        vals = [fmt_one(float(v)) for v in self.values]
        if len(vals) > limit:
            vals = vals[: limit - 2] + ["…", vals[-1]]
        return "[" + ", ".join(vals) + "]"

    def __repr__(self) -> str:
        return f"per_rank({self.values.tolist() if self.values is not None else self.fill!r})"


def per_rank(values) -> PerRankValues:
    """One value per process, for a per-rank parameter (``counts=tlop.per_rank([1024, 2048])``):
    a list, a tuple or a 1-D array, element r being rank r's.  A plain list or array given to a
    per-rank parameter means the same; this makes the intent explicit."""
    if isinstance(values, PerRankValues):
        return values
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TlopError(f"per_rank: per-rank values are a list or a 1-D array of numbers, not "
                        f"{type(values).__name__}") from None
    if arr.ndim != 1:
        raise TlopError(f"per_rank: per-rank values are a list or a 1-D array (axis 0 is the rank), not an array "
                        f"of shape {arr.shape}")
    return PerRankValues(arr)


def parse_per_rank_text(name: str, text: str, parse_one) -> PerRankValues:
    """A command-line value of a per-rank parameter: ``1KiB,2KiB`` (one per rank), ``1KiB`` (the
    same for every rank) or ``@FILE`` (a JSON list of numbers or strings with units).
    ``parse_one(text)`` parses one value as a plain argument of the type (raising TlopError)."""
    if text.startswith("@"):
        items = _read_list(name, text)
    elif "," in text:
        items = text.split(",")
    else:
        return PerRankValues(fill=parse_one(text))
    values = []
    for r, item in enumerate(items):
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise TlopError(f"{name}={text}: the value of rank {r} is {json.dumps(item)[:40]}; expected a number or a "
                            f"string such as \"1KiB\"")
        if isinstance(item, str):
            try:
                v = parse_one(item.strip())
            except TlopError as e:
                raise TlopError(f"{name}={text}: rank {r}: {_after_colon(e.diagnostics[0].message)}") from None
        else:
            try:
                v = float(item)
            except OverflowError:
                v = math.inf
        if not math.isfinite(v):
            raise TlopError(f"{name}={text}: the value of rank {r} is not finite; expected a number or a "
                            f"string such as \"1KiB\"")
        values.append(v)
    if not values:
        raise TlopError(f"{name}={text}: no values; give one for each process")
    return PerRankValues(np.asarray(values, dtype=float))


def _after_colon(message: str) -> str:
    head, sep, rest = message.partition(": ")
    return rest if sep else message


def _read_list(name: str, text: str) -> list:
    path = Path(text[1:])
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as e:
        raise TlopError(f"{name}={text}: cannot open {path}: {e.strerror or e}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise TlopError(f"{name}={text}: {path} is not JSON ({e.msg} at line {e.lineno}, column {e.colno}); "
                        f"expected a list such as [1024, \"2KiB\", …], one value for each process") from None
    except (ValueError, RecursionError) as e:  # an integer of thousands of digits, nesting too deep
        raise TlopError(f"{name}={text}: {path} is not JSON ({str(e)[:80]}); "
                        f"expected a list such as [1024, \"2KiB\", …], one value for each process") from None
    if isinstance(data, dict) and name in data:
        data = data[name]
    if not isinstance(data, list):
        raise TlopError(f"{name}={text}: {path} holds a JSON {type(data).__name__}; expected a list such as "
                        f"[1024, \"2KiB\", …], one value for each process (or an object with the key \"{name}\")")
    return data
