"""The segment size that makes a segmented algorithm cheapest (paper 004 §3).

What it does: :func:`search_segment` minimises ``cost(s)`` over whole segment sizes 1 ≤ s ≤ m
the way Barchet-Steffenel & Mounié describe it: first every s = ⌊m / 2^i⌋, i = 0 … ⌊log2 m⌋
(one batch), then local hill climbing from the best of those (Kielmann et al.): try the
neighbours s ± d, move to a cheaper one, and halve d when neither is cheaper, down to d = 1;
then the same from each of the other power-of-two candidates that were within the climb's
reach of being better (the two neighbours of the best one), so that a minimum between two
candidates is not missed.  A segment count changes only at s = ⌈m / k⌉, so the climb also
snaps each point to the smallest s with the same segment count (a larger s with the same
count sends the same number of bigger segments, never cheaper when the transfer cost grows
with the size).

What it does not do: know the algorithm (``cost`` is any vectorised function of s, e.g. a
compiled algorithm's batch evaluator with P and m fixed), or search more than one parameter.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["search_segment", "candidates"]


def candidates(m: int) -> np.ndarray:
    """s = ⌊m / 2^i⌋ for i = 0 … ⌊log2 m⌋ (distinct, descending)."""
    m = int(m)
    if m < 1:
        return np.asarray([1])
    return np.unique(np.asarray([m >> i for i in range(m.bit_length())], dtype=np.int64))[::-1]


def _snap(s: int, m: int) -> int:
    """The smallest segment size with the same number of segments as ``s``."""
    k = -(-m // s)
    return -(-m // k)


def search_segment(cost: Callable[[np.ndarray], np.ndarray], m: int) -> tuple:
    """``(s, cost(s), evaluations)``: the segment size found, its cost, and how many sizes were
    priced."""
    m = int(m)
    if m <= 1:
        return 1, float(np.asarray(cost(np.asarray([1.0])))[0]), 1
    seen: dict = {}

    def price(ss) -> np.ndarray:
        ss = [int(x) for x in ss if 1 <= int(x) <= m]
        new = sorted({x for x in ss if x not in seen})
        if new:
            vals = np.asarray(cost(np.asarray(new, dtype=float)), dtype=float).reshape(-1)
            for x, v in zip(new, vals):
                seen[x] = v if math.isfinite(v) else math.inf
        return np.asarray([seen[x] for x in ss])

    cands = candidates(m)
    vals = price(cands)
    order = np.argsort(vals, kind="stable")
    best_i = int(order[0])
    starts = [int(cands[best_i])] + [int(cands[j]) for j in (best_i - 1, best_i + 1) if 0 <= j < len(cands)]
    best_s, best_v = int(cands[best_i]), float(vals[best_i])
    for start in starts:
        s = _snap(start, m)
        v = float(price([s])[0])
        d = max(1, s // 2)
        while True:
            nb = sorted({_snap(x, m) for x in (s - d, s + d) if 1 <= x <= m} - {s})
            pv = price(nb) if nb else np.asarray([])
            if len(pv) and float(pv.min()) < v:
                k = int(np.argmin(pv))
                s, v = nb[k], float(pv[k])
                continue
            if d == 1:
                break
            d //= 2
        if v < best_v or (v == best_v and s < best_s):
            best_s, best_v = s, v
    return best_s, best_v, len(seen)
