"""The grid of ``tlop sweep`` and ``tlop best``, walked in chunks of bounded size.

What it does: :class:`Grid` is the Cartesian product of the parameter axes of the command line
(one :class:`Axis` a parameter, in the order given, the last one varying fastest — the order of
``itertools.product``).  Its size is counted from the axes' lengths before anything is generated,
and refused above a limit (``--max-points``; :data:`DEFAULT_MAX_POINTS` unless given) with a
message that says how to raise it.  :meth:`Grid.chunks` yields the grid in slices of at most
:data:`CHUNK_POINTS` points as columns (one numpy array a parameter), so that evaluating and
printing a grid of any size needs memory for one chunk, not for the grid.  An arithmetic axis
(``0..1e9:+1``) is not stored at all: its values are computed from their indices.

What it does not do: parse ranges (:mod:`tlop.cli.ranges`), evaluate (the caller's ``run``) or
format rows (the subcommands).
"""

from __future__ import annotations

import math
from typing import Iterator, Sequence

import numpy as np

from tlop.runtime.diagnostics import TlopError

__all__ = ["Axis", "Grid", "CHUNK_POINTS", "DEFAULT_MAX_POINTS"]

#: points evaluated and written at a time (a few MB of columns and formatted rows)
CHUNK_POINTS = 1 << 14

#: the largest grid evaluated unless ``--max-points`` says otherwise (about a minute of work)
DEFAULT_MAX_POINTS = 10_000_000


class Axis:
    """The values of one parameter: an explicit array, or ``lo + i * inc`` for ``i < n``."""

    def __init__(self, values: Sequence[float] | None = None, *, lo: float = 0.0, inc: float = 1.0,
                 n: int = 0):
        self._values = None if values is None else np.asarray(values, dtype=float)
        self.lo, self.inc = float(lo), float(inc)
        self.n = len(self._values) if self._values is not None else int(n)

    def __len__(self) -> int:
        return self.n

    def take(self, index: np.ndarray) -> np.ndarray:
        """The values at these indices (the same floats as ``lo + i * inc`` in Python)."""
        if self._values is not None:
            return self._values[index]
        return self.lo + index.astype(float) * self.inc

    def __getitem__(self, i: int) -> float:
        return float(self.take(np.asarray([i]))[0])

    def __iter__(self):
        for start in range(0, self.n, CHUNK_POINTS):
            yield from self.take(np.arange(start, min(self.n, start + CHUNK_POINTS))).tolist()


class Grid:
    """The product of named axes; ``max_points`` bounds its size (checked before any chunk)."""

    def __init__(self, axes: dict, max_points: int = DEFAULT_MAX_POINTS):
        self.axes = dict(axes)
        self.names = list(self.axes)
        self.shape = tuple(len(a) for a in self.axes.values())
        self.size = math.prod(self.shape)
        if self.size > max_points:
            raise TlopError(f"the grid has {self.size:,} points; at most {max_points:,} "
                            f"(--max-points N evaluates more, in chunks of {CHUNK_POINTS:,} points)")

    def chunks(self, chunk: int = CHUNK_POINTS) -> Iterator[tuple[int, dict]]:
        """``(start, columns)`` for consecutive slices of at most ``chunk`` points."""
        for start in range(0, self.size, max(1, chunk)):
            flat = np.arange(start, min(self.size, start + max(1, chunk)), dtype=np.int64)
            index = np.unravel_index(flat, self.shape) if self.shape else ()
            yield start, {k: self.axes[k].take(i) for k, i in zip(self.names, index)}
