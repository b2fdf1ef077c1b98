"""Out-of-grid warnings of a native evaluation, issued from its status words.

What it does: a batch loop records, for each table slot, the first point whose lookup fell
outside the measured grid under ``out_of_grid = "warn"`` and that lookup's ``m`` and ``tau``
(:func:`tlop.backends.jit.tables.status_words`).  :func:`warn_from_status` hands each such
lookup to the table's own grid check (``TableData._check_grid`` of
:mod:`tlop.runtime.profile`, the check the interpreter's lookup runs), so the warning has the
interpreter's text and is issued once per table and evaluation (a table that already warned
in this evaluation stays silent) — without evaluating anything again.

The text names the first out-of-grid lookup of the table *in the native code's order*: the
interpreter's first one when both evaluate the lookups in the same order (the stages of a
schedule, the terms of a sum); a closed form that reads the tables at other points may name
another point outside the grid.  Several tables warn in the order they first went out of the
grid (within a batch chunk; chunks in point order).

What it does not do: decide when an evaluation starts (``fresh`` asks for one, through
``Profile.new_evaluation``), or handle ``out_of_grid = "error"`` (an evaluation error: the
evaluator re-runs the interpreter for its message).
"""

from __future__ import annotations

import ctypes

import numpy as np

from tlop.backends.jit.tables import oog_word, status_words

__all__ = ["warn_from_status", "warn_from_address"]


def warn_from_status(layout, status, profile=None, fresh: bool = False) -> None:
    """Issue the out-of-grid warnings of the status words ``status`` (an ``int64`` array of
    :func:`status_words` words, or rows of them: one per chunk of a batch, in point order)
    for the tables of ``layout`` (:class:`tlop.backends.jit.tables.ProfileLayout`).
    ``fresh``: this is a new evaluation of ``profile`` (its tables warn again)."""
    n = len(layout.tables)
    rows = np.asarray(status, dtype=np.int64).reshape(-1, status_words(n))
    flags = rows[:, 2:2 + n]
    if not flags.any():
        return
    hits = []
    for slot in range(n):
        chunks = np.flatnonzero(flags[:, slot])
        if chunks.size:
            k = int(chunks[0])  # chunks run in point order: the first one holds the first point
            at = oog_word(n, slot)
            m, tau = rows[k, at:at + 2].view(np.float64)
            hits.append((k, int(rows[k, 2 + slot]), slot, float(m), float(tau)))
    if fresh and hasattr(profile, "new_evaluation"):
        profile.new_evaluation()
    for _, _, slot, m, tau in sorted(hits):  # in the order the tables went out of the grid
        data = layout.tables[slot].data
        data._check_grid(m, None if data.tau is None else tau)


def warn_from_address(layout, address: int, profile=None, fresh: bool = False) -> None:
    """:func:`warn_from_status` for the status words of one point at ``address`` (the native
    scalar wrapper's, valid during this call: :mod:`tlop.backends.jit.pywrap`); plain ctypes
    reads, no arrays: it runs on every out-of-grid call answered natively."""
    n = len(layout.tables)
    flags = (ctypes.c_int64 * n).from_address(address + 16)
    slots = sorted((flags[slot], slot) for slot in range(n) if flags[slot])
    if not slots:
        return
    if fresh and hasattr(profile, "new_evaluation"):
        profile.new_evaluation()
    for _, slot in slots:  # in the order the tables went out of the grid
        data = layout.tables[slot].data
        m, tau = (ctypes.c_double * 2).from_address(address + 8 * oog_word(n, slot))
        data._check_grid(m, None if data.tau is None else tau)
