"""CSV text of a grid's chunks without per-point Python: what ``tlop sweep --csv`` and
``tlop best --csv`` write.

What it does: :class:`AxisText` formats each distinct value of each axis of a
:class:`tlop.cli.grid.Grid` once (an axis of up to :data:`TABLE_MAX` values as a table made on
first use, a longer one per chunk for the values that chunk holds) with the callers' own cell
function, quoted as the ``csv`` module would quote it; a chunk's axis cells are then a numpy
``take``.  :func:`numbers` writes floats as ``repr`` does (the same text as before, through
C-level ``map``), :func:`labels` picks a text per point from a small table, and :func:`block`
joins the chunk's columns into CSV lines (``str.join`` over ``zip``: no Python frame per
point).  The rows are exactly those ``csv.writer`` wrote (tests/test_cli_format.py's goldens).

What it does not do: evaluate (the callers' chunks do), open files (:func:`tlop.cli.common._write_csv`
writes the blocks), or format tables for the terminal (:mod:`tlop.cli.table`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["AxisText", "numbers", "labels", "block", "quote"]

#: axes of at most this many values are formatted whole, once; longer ones chunk by chunk
TABLE_MAX = 1 << 16
_SPECIAL = (",", '"', "\n")  # csv.writer with lineterminator "\n" quotes these


def quote(text: str) -> str:
    """``text`` as one CSV cell (``csv.writer``'s minimal quoting)."""
    if any(c in text for c in _SPECIAL):
        return '"' + text.replace('"', '""') + '"'
    return text


class AxisText:
    """The CSV cells of a grid's axis values, each distinct value formatted once."""

    def __init__(self, grid, cell):
        self.grid = grid
        self.cell = cell  # cell(name, value) -> str
        self._tables: dict = {}

    def _table(self, k):
        t = self._tables.get(k)
        if t is None:
            values = self.grid.axes[k]
            t = self._tables[k] = np.array([quote(self.cell(k, v)) for v in values], dtype=object)
        return t

    def columns(self, start: int, n: int) -> list:
        """The cells of every axis (a list of str per axis) for the ``n`` points from ``start``."""
        grid = self.grid
        if not grid.shape:
            return [[] for _ in grid.names]
        index = np.unravel_index(np.arange(start, start + n, dtype=np.int64), grid.shape)
        out = []
        for k, i in zip(grid.names, index):
            if len(grid.axes[k]) <= TABLE_MAX:
                out.append(self._table(k).take(i).tolist())
            else:  # a long axis: the distinct values of this chunk only
                u, inv = np.unique(i, return_inverse=True)
                values = grid.axes[k].take(u)
                texts = np.array([quote(self.cell(k, v)) for v in values], dtype=object)
                out.append(texts.take(inv.reshape(-1)).tolist())
        return out


def numbers(values) -> list:
    """``repr`` of each value as a Python float (what ``csv`` rows of ``repr(float(v))`` held)."""
    return list(map(repr, np.asarray(values, dtype=float).tolist()))


def labels(table: list, index) -> list:
    """``table[i]`` for each ``i`` of ``index`` (quoted cells)."""
    return np.array([quote(t) for t in table], dtype=object).take(np.asarray(index, dtype=np.int64)).tolist()


def block(columns: list) -> str:
    """CSV lines of the columns (lists of cells of equal length), each line ending in ``\\n``."""
    if not columns or not len(columns[0]):
        return ""
    return "\n".join(map(",".join, zip(*columns))) + "\n"
