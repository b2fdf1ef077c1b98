"""Partitioners: the rectangles of an N × N matrix of blocks, from a layout and relative speeds.

What it does:

* :func:`column_partition` — the column-based 2D partition of Beaumont, Boudet, Rastello and
  Robert (the one paper 000 uses, §4.1 and Fig. 3, Fig. 10): processes sorted by speed are
  split into columns of consecutive processes; a column's width is proportional to the sum of
  its speeds and, inside it, each process's height to its own speed, so that every area is
  proportional to a speed.  The number of columns and the split minimise the sum of the
  half-perimeters (the communication volume of SUMMA), by dynamic programming over the sorted
  speeds (their result: an optimal column-based split groups consecutive sorted speeds).
* :func:`slab_partition` — the 1D partition for comparison: one column, each process a slab of
  full rows whose height is proportional to its speed.
* Integer blocks: boundaries are the exact fractional boundaries rounded, so each width and each
  height is within one block of proportional, and the rectangles tile the matrix exactly (every
  rectangle at least one block wide and high; N ≥ the number of columns and ≥ the processes of
  the tallest column).

Speeds are relative (any positive numbers); :func:`speeds_of` gives them from a layout —
``cores × per-core speed of the node type`` for a CPU process, a given figure for a GPU process.

What it does not do: measure speeds or read functional performance models (FuPerMod's speed
functions of the problem size); the speeds are constants per process.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from tlop.runtime.configs import ConfigError, Configuration, Partition

__all__ = ["column_partition", "slab_partition", "speeds_of", "best_columns"]


def _check(speeds, N: int) -> np.ndarray:
    s = np.asarray(speeds, dtype=float)
    if s.ndim != 1 or not len(s):
        raise ConfigError("speeds: expected one positive number per process")
    if not np.all(np.isfinite(s) & (s > 0)):
        raise ConfigError(f"speeds: every speed must be a positive number, got {s.tolist()}")
    if not (isinstance(N, (int, np.integer)) and N >= 1):
        raise ConfigError(f"N: expected a whole number of blocks >= 1, got {N!r}")
    return s / s.sum()


def best_columns(speeds: Sequence[float]) -> list:
    """The column split minimising Σ half-perimeters: a list of columns, each a list of process
    indices (by increasing speed), for normalised speeds (Beaumont et al.'s dynamic program)."""
    s = np.asarray(speeds, dtype=float)
    s = s / s.sum()
    order = np.argsort(s, kind="stable")
    v = s[order]
    P = len(v)
    prefix = np.concatenate([[0.0], np.cumsum(v)])
    best = np.full(P + 1, np.inf)
    best[0] = 0.0
    cut = np.zeros(P + 1, dtype=int)
    for j in range(1, P + 1):
        for i in range(j):
            # a column of processes i … j−1: width S, heights summing to 1 → (j − i)·S + 1
            c = best[i] + 1.0 + (j - i) * (prefix[j] - prefix[i])
            if c < best[j] - 1e-15:
                best[j], cut[j] = c, i
    cols, j = [], P
    while j > 0:
        i = cut[j]
        cols.append([int(k) for k in order[i:j]])
        j = i
    return cols[::-1]


def _split(total: int, weights, minimum: int = 1) -> np.ndarray:
    """Integer parts of ``total`` proportional to ``weights`` by rounding the cumulative
    boundaries, each at least ``minimum`` (ConfigError when ``total`` is too small)."""
    w = np.asarray(weights, dtype=float)
    n = len(w)
    if total < n * minimum:
        raise ConfigError(f"cannot give {n} parts of at least {minimum} block from {total} blocks")
    edges = np.rint(np.concatenate([[0.0], np.cumsum(w) / w.sum()]) * total).astype(np.int64)
    for k in range(1, n):  # push boundaries so every part has its minimum …
        edges[k] = max(edges[k], edges[k - 1] + minimum)
    edges[n] = total
    for k in range(n - 1, 0, -1):  # … and back from the end, which is fixed
        edges[k] = min(edges[k], edges[k + 1] - minimum)
    return np.diff(edges)


def _layout_rects(N: int, s: np.ndarray, cols: list) -> tuple:
    widths = _split(N, [s[c].sum() for c in cols])
    x = np.zeros(len(s), dtype=np.int64)
    y = np.zeros(len(s), dtype=np.int64)
    w = np.zeros(len(s), dtype=np.int64)
    h = np.zeros(len(s), dtype=np.int64)
    left = 0
    for col, width in zip(cols, widths):
        col = sorted(col)  # ranks in order down a column
        heights = _split(N, s[col])
        top = 0
        for p, height in zip(col, heights):
            x[p], y[p], w[p], h[p] = left, top, width, height
            top += height
        left += width
    return tuple(int(a) for a in x), tuple(int(a) for a in y), tuple(int(a) for a in w), tuple(int(a) for a in h)


def column_partition(speeds: Sequence[float], N: int, name: str = "", kernel: str = "") -> Partition:
    """Beaumont et al.'s column-based partition of an N × N matrix of blocks for these speeds."""
    s = _check(speeds, N)
    x, y, w, h = _layout_rects(N, s, best_columns(s))
    return Partition(N=int(N), x=x, y=y, w=w, h=h, name=name, kernel=kernel,
                     description="column-based partition (Beaumont et al.), areas proportional to the speeds",
                     source=f"<column partition {name}>")


def slab_partition(speeds: Sequence[float], N: int, name: str = "", kernel: str = "") -> Partition:
    """The 1D partition: full-width slabs of rows, heights proportional to the speeds."""
    s = _check(speeds, N)
    x, y, w, h = _layout_rects(N, s, [list(range(len(s)))])
    return Partition(N=int(N), x=x, y=y, w=w, h=h, name=name, kernel=kernel,
                     description="1D slabs of rows, heights proportional to the speeds",
                     source=f"<slab partition {name}>")


def speeds_of(cfg: Configuration, core_speed: Optional[dict] = None, gpu_speed: float = 1.0) -> np.ndarray:
    """Relative speeds of the processes of a layout: a CPU process ``cores × core_speed[node
    type]`` (1 for a type not listed), a GPU process ``gpu_speed``."""
    core_speed = core_speed or {}
    out = []
    for r in range(cfg.P):
        if cfg.kinds and cfg.kinds[r] == "gpu":
            out.append(float(gpu_speed))
            continue
        t = cfg.type_names[cfg.node_type[r]] if cfg.type_names else None
        out.append((cfg.cores[r] if cfg.cores else 1) * float(core_speed.get(t, 1.0)))
    return np.asarray(out)
