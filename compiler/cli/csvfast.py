"""CSV text of a grid's chunks without per-point Python: what ``tlop sweep --csv`` and
``tlop best --csv`` write.

What it does: :class:`AxisText` formats each distinct value of each axis of a
:class:`tlop.cli.grid.Grid` once (an axis of up to :data:`TABLE_MAX` values as a table made on
first use, a longer one per chunk for the values that chunk holds) with the callers' own cell
function, quoted as the ``csv`` module would quote it; a chunk's axis cells are then a numpy
``take``.  :func:`numbers` writes floats as ``repr`` does (the same text: native code for big
chunks, :mod:`tlop.backends.jit.floatrepr`, else C-level ``map`` of ``repr``), :func:`labels` picks a text per point from a small table, and :func:`block`
joins the chunk's columns into CSV lines (``str.join`` over ``zip``: no Python frame per
point); :func:`chunk` writes a big chunk's lines whole in native code instead (axis cells and
labels by index into their tables, numbers as ``repr``).  The rows are exactly those ``csv.writer`` wrote (tests/test_cli_format.py's goldens).

What it does not do: evaluate (the callers' chunks do), open files (:func:`tlop.cli.common._write_csv`
writes the blocks), or format tables for the terminal (:mod:`tlop.cli.table`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["AxisText", "numbers", "labels", "block", "chunk", "quote"]

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

    def indexed(self, start: int, n: int) -> list:
        """Per axis, ``(index, cells)`` for the ``n`` points from ``start``: the cell of point j
        is ``cells[index[j]]`` (the whole axis's cells, or a long axis's distinct values in this
        chunk)."""
        grid = self.grid
        if not grid.shape:
            return []
        index = np.unravel_index(np.arange(start, start + n, dtype=np.int64), grid.shape)
        out = []
        for k, i in zip(grid.names, index):
            if len(grid.axes[k]) <= TABLE_MAX:
                out.append((i, self._table(k)))
            else:
                u, inv = np.unique(i, return_inverse=True)
                values = grid.axes[k].take(u)
                out.append((inv.reshape(-1), [quote(self.cell(k, v)) for v in values]))
        return out

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


#: chunks of at least this many values are formatted by native code (:mod:`tlop.backends.jit.floatrepr`)
NATIVE_MIN = 4096


def numbers(values, nan: str = "nan") -> list:
    """``repr`` of each value as a Python float (what ``csv`` rows of ``repr(float(v))`` held),
    NaN written as ``nan``: by native code for big chunks (the same text), else ``repr``."""
    x = np.asarray(values, dtype=float)
    if x.size >= NATIVE_MIN:
        from tlop.backends.jit.floatrepr import repr_lines

        return repr_lines(x, nan)
    out = list(map(repr, x.tolist()))
    if nan != "nan" and np.isnan(x).any():
        out = [nan if t == "nan" else t for t in out]
    return out


def labels(table: list, index) -> list:
    """``table[i]`` for each ``i`` of ``index`` (quoted cells)."""
    return np.array([quote(t) for t in table], dtype=object).take(np.asarray(index, dtype=np.int64)).tolist()


def block(columns: list) -> str:
    """CSV lines of the columns (lists of cells of equal length), each line ending in ``\\n``."""
    if not columns or not len(columns[0]):
        return ""
    return "\n".join(map(",".join, zip(*columns))) + "\n"


def chunk(cells: AxisText, start: int, n: int, columns: list) -> str:
    """The CSV lines of ``n`` points from ``start``: the axes' cells, then ``columns``, each
    ``("float", values, nan)`` (:func:`numbers`; a fourth element, flags, marks the points
    whose value is the line's first number: its text is reused) or ``("label", index, texts)``
    (:func:`labels`).
    Big chunks are written whole by native code (:func:`tlop.backends.jit.floatrepr.csv_lines`:
    no Python per point), small ones by :func:`block`; the text is the same."""
    if n >= NATIVE_MIN and cells.grid.shape:
        from tlop.backends.jit.floatrepr import csv_lines

        spec = [("text", i, t) for i, t in cells.indexed(start, n)]
        for kind, data, extra, *same in columns:
            if kind == "float":
                spec.append(("float", data, extra) + tuple(same))
            else:
                spec.append(("text", data, [quote(t) for t in extra]))
        return csv_lines(spec, n)
    out = cells.columns(start, n)
    for kind, data, extra, *_ in columns:
        out.append(numbers(data, extra) if kind == "float" else labels(extra, data))
    return block(out)
