"""Tables on the terminal: right-aligned columns, and grids that fit its width.

What it does: prints a table; decides, before evaluating, whether a grid of two swept parameters
fits the terminal as a matrix (rows × columns), transposed, or neither (the command then prints
one row per point, which always fits); notes that a long table is better as ``--csv``.
What it does not do: format the numbers (:mod:`tlop.cli.format`) or write CSV.
"""

from __future__ import annotations

import shutil
import sys

__all__ = ["print_table", "table_width", "terminal_width", "matrix_layout", "LONG_TABLE"]

#: rows of a printed table above which a note suggests --csv
LONG_TABLE = 200


def terminal_width():
    """The width of the terminal standard output goes to (``COLUMNS`` when set), or None when it
    is not a terminal (a file or a pipe takes a table of any width)."""
    try:
        if not sys.stdout.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    return shutil.get_terminal_size(fallback=(100, 24)).columns


def table_width(header, rows) -> int:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    return sum(widths) + 2 * (len(widths) - 1)


def format_table(header, rows) -> str:
    """The aligned table :func:`print_table` prints, as text (no trailing newline)."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    return "\n".join("  ".join(str(c).rjust(w) for c, w in zip(r, widths)) for r in [header] + rows)


def markdown_table(header, rows) -> str:
    """The table in GitHub Markdown (hyperfine's ``--export-markdown``): a header row, a rule with
    the first column left-aligned and the others right-aligned, one row per line; ``|`` escaped."""
    def cell(c):
        return str(c).replace("|", "\\|")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join(":---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def print_table(header, rows) -> None:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(str(c).rjust(w) for c, w in zip(r, widths)))
    if len(rows) > LONG_TABLE:
        print(f"tlop: note: {len(rows)} rows; --csv OUT writes the grid as CSV (--csv - to standard output)",
              file=sys.stderr)


#: the most points of a matrix printed transposed (it is held in memory to be turned round)
MAX_TRANSPOSED_POINTS = 200_000


def matrix_layout(rk, ck, axes, label, cell_width: int, points: int, width=None):
    """How a grid of two swept parameters fits the terminal: ``"matrix"`` (``rk`` down, ``ck``
    across), ``"transposed"``, or None (one row per point), from the widths of the labels and an
    estimate of the cells' (``cell_width``) — decided before anything is evaluated."""
    width = terminal_width() if width is None else width
    if width is None:
        return "matrix"

    def fits(down, across) -> bool:
        if 3 * len(axes[across]) > width:  # certainly too wide: do not measure every label
            return False
        first = max([len(f"{down} \\ {across}")] + [len(label(down, v)) for v in _sample(axes[down])])
        total = first + sum(2 + max(cell_width, len(label(across, v))) for v in axes[across])
        return total <= width

    if fits(rk, ck):
        return "matrix"
    if points <= MAX_TRANSPOSED_POINTS and fits(ck, rk):
        return "transposed"
    return None


def _sample(axis, most: int = 2000):
    """The values of an axis, or its first and last ``most // 2`` when it is longer."""
    n = len(axis)
    if n <= most:
        return list(axis)
    return [axis[i] for i in range(most // 2)] + [axis[i] for i in range(n - most // 2, n)]
