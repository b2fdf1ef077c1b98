"""Convert libtaulop parameter files into a tlop profile.

What it does: reads the parameter tables distributed with libtaulop (one file per channel,
``SHM.txt``, ``TCP.txt``, ``IB.txt``) and builds a profile with one profile channel per file —
``shm`` (transmission ``shm``), ``tcp`` (transmission ``tcp``), ``ib`` (transmission ``rdma``) —
and two tables per channel: ``o`` (overhead, over m) and ``L`` (transfer time, over m and τ).
``bind`` maps the model channel ``net`` to ``ib`` when an IB file exists, else to ``tcp``.
When the directory also holds ``gamma.txt`` (the cost γ(m) of one reduction operation on m
bytes, one column per MPI operation; :func:`parse_gamma_text`), the profile gets one table
``gamma_<op>`` per column and ``gamma``, libtaulop's default operation (the third column, SUM),
all over m and not indexed by channel (``"*"``).

The file format (:func:`parse_taulop_text`)::

    #m   30                       number of message sizes (rows)
    #tau 8                        number of concurrency columns
    #m  o(m)  L(m,1) … L(m,8)     header (column names vary: lusitania writes L0(m,1), L1(m,1))
    1   5.59e-07  2.89e-07 …      one row per size m (bytes): m, o(m), L(m,1) … L(m,K), seconds

The parser does not trust the header's spelling: it takes the τ of each column from the
``(m, k)`` it names when it names all of them, otherwise τ = 1 … K; it checks the row count
against ``#m``, every row's width against ``#tau``, and that sizes increase.  Every problem is a
:class:`ProfileError` at ``file:line:col``.

The gamma file (libtaulop ``src/taulop_params.cpp:123-206``)::

    #m       30                   number of sizes (rows)
    #max_ops 18                   number of operation columns K (lusitania writes #tau_op:)
    #size MAX_I MIN_I SUM_I …     header: one name per operation (required: it names the tables)
    4   1.873e-07 1.889e-07 …     one row per size: m, γ_1(m) … γ_K(m), seconds

libtaulop matches the rows to the channel grid (the sizes of its channel 0, ``SHM.txt``) *by
row index* and checks the sizes only from the fifth row on, so metropolis' first row, measured
at 4 B, is its γ at 1 B.  :func:`gamma_on_grid` does the same: rows 1–4 may name other sizes
(the profile keeps the grid's, and the converter says so in ``metadata.notes``), later rows
must name the grid's size, and the row count must be the grid's.  The operation names are the
header's, lower-cased (``SUM_I`` → table ``gamma_sum_i``).

What it does not do: reinterpret the numbers (they are copied as measured, noise, protocol
jumps and zeros included) or decide the interpolation rules (the profile default applies).

Command line::

    python -m tlop.runtime.convert_taulop DIR --name NAME --out FILE [--machine …] [--description …]
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from tlop.runtime.diagnostics import Diagnostic, Source, Span, TlopError

from tlop.runtime.errors import ProfileError
from tlop.runtime.profile import Profile, profile_from_dict, save_profile
from tlop.runtime.profile_schema import ANY_CHANNEL as ANY

__all__ = ["TaulopTable", "GammaTable", "CHANNEL_FILES", "GAMMA_FILE", "GAMMA_DEFAULT_COLUMN",
           "parse_taulop_text", "read_taulop_file", "parse_gamma_text", "read_gamma_file",
           "gamma_on_grid", "convert_taulop", "convert_directory", "add_arguments", "run", "main"]

#: file stem -> (profile channel, transmission kind, default description)
CHANNEL_FILES = {
    "SHM": ("shm", "shm", "shared memory"),
    "TCP": ("tcp", "tcp", "TCP network"),
    "IB": ("ib", "rdma", "InfiniBand"),
}

#: the reduction-cost file
GAMMA_FILE = "gamma.txt"
#: libtaulop's default operation is ``gamma[3]``, the third operation column (SUM)
GAMMA_DEFAULT_COLUMN = 3
#: libtaulop does not check the sizes of the first rows of gamma.txt (``s_idx < 4``)
GAMMA_UNCHECKED_ROWS = 4

_GAMMA_COUNT = re.compile(r"#\s*([A-Za-z_][A-Za-z0-9_]*):?\s+(\S+)\s*\Z")
_OP_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")
_TAU_COLUMN = re.compile(r"\(\s*m\s*,\s*([0-9]+(?:\.[0-9]*)?)\s*\)")
_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True)
class TaulopTable:
    """One libtaulop parameter file: sizes ``m``, concurrencies ``tau``, overheads ``o[i]`` and
    transfer times ``L[i][j]`` (at ``m[i]``, ``tau[j]``)."""
    source: str
    m: tuple
    tau: tuple
    o: tuple
    L: tuple


class _Reader:
    def __init__(self, text: str, source: str):
        self.src = Source(source, text)

    def fail(self, line: int, message: str, col: int = 1, end_col: Optional[int] = None):
        text = self.src.line(line)
        end = end_col if end_col is not None else max(col, len(text.rstrip()))
        raise ProfileError(Diagnostic(message, Span(self.src, line, col, line, end)))


def _directive(stripped: str):
    """``#m 30`` / ``#tau 8`` -> ("m", "30"); anything else -> None."""
    toks = stripped[1:].split()
    if len(toks) == 2 and toks[0] in ("m", "tau"):
        return toks[0], toks[1]
    return None


def parse_taulop_text(text: str, source: str) -> TaulopTable:
    """Parse one libtaulop parameter file; ``source`` names it in error messages."""
    r = _Reader(text, source)
    counts: dict = {}
    count_lines: dict = {}
    header = None
    rows = []  # (line number, [floats])
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            d = _directive(stripped)
            if d is not None:
                key, value = d
                if key in counts:
                    r.fail(lineno, f"'#{key}' given twice (first on line {count_lines[key]})")
                if not value.isdigit() or int(value) < 1:
                    col = line.index(value) + 1
                    r.fail(lineno, f"'#{key}' needs a positive whole number, got '{value}'", col, col + len(value) - 1)
                counts[key], count_lines[key] = int(value), lineno
            elif header is None and not rows:
                header = (lineno, stripped)
            continue
        if "m" not in counts or "tau" not in counts:
            missing = " and ".join(f"'#{k} N'" for k in ("m", "tau") if k not in counts)
            r.fail(lineno, f"data row before the {missing} line")
        toks = list(_TOKEN.finditer(line))
        want = 2 + counts["tau"]
        if len(toks) != want:
            r.fail(lineno, f"expected {want} numbers (m, o(m), L(m,1) … L(m,{counts['tau']})), got {len(toks)}")
        values = []
        for t in toks:
            try:
                x = float(t.group())
            except ValueError:
                x = None
            if x is None or not math.isfinite(x):
                r.fail(lineno, f"expected a number, got '{t.group()}'", t.start() + 1, t.end())
            values.append(x)
        if values[0] < 0:
            r.fail(lineno, f"message size must be >= 0, got {toks[0].group()}", toks[0].start() + 1, toks[0].end())
        if rows and values[0] <= rows[-1][1][0]:
            r.fail(lineno, f"message sizes must increase: {toks[0].group()} after {rows[-1][1][0]:g} "
                           f"(line {rows[-1][0]})", toks[0].start() + 1, toks[0].end())
        rows.append((lineno, values))
    if "m" not in counts or "tau" not in counts:
        missing = " and ".join(f"'#{k} N'" for k in ("m", "tau") if k not in counts)
        r.fail(1, f"not a libtaulop parameter file: no {missing} line")
    if len(rows) != counts["m"]:
        r.fail(count_lines["m"], f"'#m {counts['m']}' but the file has {len(rows)} data rows")
    tau = _tau_columns(r, header, counts["tau"])
    return TaulopTable(
        source=source,
        m=tuple(v[0] for _, v in rows),
        tau=tau,
        o=tuple(v[1] for _, v in rows),
        L=tuple(tuple(v[2:]) for _, v in rows),
    )


def _tau_columns(r: _Reader, header, k: int) -> tuple:
    """τ of each L column: from the header's ``(m, k)`` names when present, else 1 … K."""
    default = tuple(float(j) for j in range(1, k + 1))
    if header is None:
        return default
    lineno, text = header
    named = [float(x) for x in _TAU_COLUMN.findall(text)]
    # the o(m) column names no τ, so every match is an L column
    if not named:
        return default
    if len(named) != k:
        r.fail(lineno, f"the header names {len(named)} L(m, tau) columns but '#tau {k}' says {k}")
    for a, b in zip(named, named[1:]):
        if b <= a:
            r.fail(lineno, f"the header's tau columns must increase: {b:g} after {a:g}")
    if named[0] < 1:
        r.fail(lineno, f"the header's tau columns must be >= 1, got {named[0]:g}")
    return tuple(named)


def read_taulop_file(path) -> TaulopTable:
    """Read and parse one libtaulop parameter file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ProfileError(f"{path}: not a libtaulop parameter file: not UTF-8 text") from None
    except OSError as err:
        raise ProfileError(f"{path}: cannot read: {err.strerror or err}") from None
    return parse_taulop_text(text, str(path))


@dataclass(frozen=True)
class GammaTable:
    """One libtaulop ``gamma.txt``: operation names ``ops`` (lower-cased header names), the
    sizes ``m`` as written, ``values[i][k]`` (γ of operation ``k`` at row ``i``) and the line of
    each row (``lines``, for messages about the grid)."""
    source: str
    ops: tuple
    m: tuple
    values: tuple
    lines: tuple
    #: (column, end column) of each row's size, and the text, for messages about the grid
    size_cols: tuple = field(default=(), repr=False, compare=False)
    text: str = field(default="", repr=False, compare=False)
    count_line: int = field(default=1, repr=False, compare=False)

    @property
    def default_op(self) -> str:
        """libtaulop's default operation: the third column."""
        return self.ops[GAMMA_DEFAULT_COLUMN - 1]


def _tokens_with_cols(line: str):
    return [(t.group(), t.start() + 1, t.end()) for t in _TOKEN.finditer(line)]


def parse_gamma_text(text: str, source: str) -> GammaTable:
    """Parse a libtaulop ``gamma.txt``; ``source`` names it in error messages.

    Checked: the two count lines (``#m N``, then ``#NAME K`` with any NAME, a colon allowed
    after it), a header naming K operations (identifiers once lower-cased, each once), at least
    three operations (libtaulop's default is the third), K + 1 finite numbers per row, sizes
    >= 0 and increasing, γ >= 0, and N rows."""
    r = _Reader(text, source)
    counts = []          # [(key, value, line)] of the first two '#' lines
    header = None        # (line, [(name, col, end)])
    rows = []            # (line, [floats], size token)
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if len(counts) < 2:
                mt = _GAMMA_COUNT.match(stripped)
                what = "'#m N' (number of sizes)" if not counts else "'#max_ops K' (number of operations)"
                if mt is None:
                    r.fail(lineno, f"expected {what} on this line of a libtaulop gamma file")
                key, value = mt.group(1), mt.group(2)
                if not counts and key != "m":
                    r.fail(lineno, f"expected {what} first, got '#{key}'")
                if not value.isdigit() or int(value) < 1:
                    col = line.index(value, line.index(key) + len(key)) + 1
                    r.fail(lineno, f"'#{key}' needs a positive whole number, got '{value}'",
                           col, col + len(value) - 1)
                counts.append((key, int(value), lineno))
                if len(counts) == 2 and int(value) < GAMMA_DEFAULT_COLUMN:
                    col = line.index(value, line.index(key) + len(key)) + 1
                    r.fail(lineno, f"libtaulop's default reduction operation is the third column (SUM), "
                                   f"so a gamma file needs at least {GAMMA_DEFAULT_COLUMN} operations, "
                                   f"got '#{key} {value}'", col, col + len(value) - 1)
            elif header is None and not rows:
                header = (lineno, _tokens_with_cols(line))
            continue
        if len(counts) < 2:
            r.fail(lineno, "data row before the '#m N' and '#max_ops K' lines")
        if header is None:
            r.fail(lineno, "data row before the header naming the operations "
                           "(e.g. '#size MAX MIN SUM …'); the header names the profile's gamma tables")
        k = counts[1][1]
        toks = _tokens_with_cols(line)
        if len(toks) != k + 1:
            r.fail(lineno, f"expected {k + 1} numbers (m and one gamma per operation), got {len(toks)}")
        values = []
        for tok, col, end in toks:
            try:
                x = float(tok)
            except ValueError:
                x = None
            if x is None or not math.isfinite(x):
                r.fail(lineno, f"expected a number, got '{tok}'", col, end)
            values.append(x)
        size, size_col, size_end = toks[0]
        if values[0] < 0:
            r.fail(lineno, f"message size must be >= 0, got {size}", size_col, size_end)
        if rows and values[0] <= rows[-1][1][0]:
            r.fail(lineno, f"message sizes must increase: {size} after {rows[-1][1][0]:g} "
                           f"(line {rows[-1][0]})", size_col, size_end)
        for (tok, col, end), x in zip(toks[1:], values[1:]):
            if x < 0:
                r.fail(lineno, f"a reduction time cannot be negative, got {tok}", col, end)
        rows.append((lineno, values, (size_col, size_end)))
    if len(counts) < 2:
        r.fail(1, "not a libtaulop gamma file: no '#m N' and '#max_ops K' lines")
    if header is None:
        r.fail(counts[1][2], "no header naming the operations (e.g. '#size MAX MIN SUM …') "
                             "after this line")
    ops = _gamma_ops(r, header, counts[1])
    n, n_line = counts[0][1], counts[0][2]
    if len(rows) != n:
        r.fail(n_line, f"'#m {n}' but the file has {len(rows)} data rows")
    return GammaTable(source=source, ops=ops, m=tuple(v[0] for _, v, _ in rows),
                      values=tuple(tuple(v[1:]) for _, v, _ in rows), lines=tuple(ln for ln, _, _ in rows),
                      size_cols=tuple(c for _, _, c in rows), text=text, count_line=n_line)


def _gamma_ops(r: _Reader, header, count) -> tuple:
    """The operation names of the header ``#size NAME1 … NAMEK``: lower-cased identifiers."""
    lineno, toks = header
    key, k, _ = count
    first = toks[0][0].lstrip("#")
    names = toks[1:] if first else toks[2:]  # '#size MAX …' or '# size MAX …'
    if len(names) != k:
        r.fail(lineno, f"the header names {len(names)} operations but '#{key} {k}' says {k}")
    seen = {}
    out = []
    for tok, col, end in names:
        name = tok.lower()
        if not _OP_NAME.match(name):
            r.fail(lineno, f"operation name '{tok}' is not an identifier (letters, digits, _)", col, end)
        if name in seen:
            r.fail(lineno, f"operation '{tok}' named twice (first at column {seen[name]})", col, end)
        seen[name] = col
        out.append(name)
    return tuple(out)


def read_gamma_file(path) -> GammaTable:
    """Read and parse a libtaulop gamma file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ProfileError(f"{path}: not a libtaulop gamma file: not UTF-8 text") from None
    except OSError as err:
        raise ProfileError(f"{path}: cannot read: {err.strerror or err}") from None
    return parse_gamma_text(text, str(path))


def gamma_on_grid(gamma: GammaTable, grid: Sequence[float], grid_source: str):
    """Match gamma rows to the channel grid by row index, as libtaulop does.

    Returns the rows whose size differs from the grid's among the first
    :data:`GAMMA_UNCHECKED_ROWS` (``[(row index, gamma size, grid size)]``; libtaulop uses
    them at the grid's size).  A different row count, or a later row naming another size, is
    a :class:`ProfileError` at the gamma file's line."""
    r = _Reader(gamma.text, gamma.source)
    if len(gamma.m) != len(grid):
        r.fail(gamma.count_line,
               f"{len(gamma.m)} sizes, but the channel grid of {grid_source} has {len(grid)}; "
               f"libtaulop matches gamma rows to that grid by row index")
    moved = []
    for i, (size, want) in enumerate(zip(gamma.m, grid)):
        if size == want:
            continue
        if i < GAMMA_UNCHECKED_ROWS:
            moved.append((i, size, want))
            continue
        col, end = gamma.size_cols[i]
        r.fail(gamma.lines[i], f"size {size:g} in row {i + 1}, but the channel grid of {grid_source} has {want:g} "
                     f"there (libtaulop matches gamma rows to that grid by row index and checks the "
                     f"sizes from row {GAMMA_UNCHECKED_ROWS + 1} on)", col, end)
    return moved


def _fmt_size(x: float) -> str:
    return f"{_number(x)} B"


def _number(x: float):
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else x


def convert_taulop(directory, name: Optional[str] = None, metadata: Optional[dict] = None,
                   descriptions: Optional[dict] = None, interpolation: Optional[dict] = None) -> Profile:
    """Build a profile from the libtaulop files in ``directory``.

    ``name`` defaults to the directory's name; ``metadata`` becomes the profile's metadata
    (a default description is filled in when absent); ``descriptions`` overrides channel
    descriptions (profile channel -> text); ``interpolation`` sets interpolation rules."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ProfileError(f"{directory}: not a directory of libtaulop parameter files")
    name = name or directory.resolve().name
    descriptions = descriptions or {}
    channels, o_tables, l_tables, used = {}, {}, {}, []
    grid_source = None
    for stem, (ch, kind, desc) in CHANNEL_FILES.items():
        path = directory / f"{stem}.txt"
        if not path.is_file():
            continue
        t = read_taulop_file(path)
        used.append(path.name)
        if grid_source is None:  # libtaulop's channel 0: its grid is every table's
            grid_source = (path.name, t.m)
        channels[ch] = {"transmission": kind, "description": descriptions.get(ch, desc)}
        m = [_number(x) for x in t.m]
        o_tables[ch] = {"m": m, "values": list(t.o)}
        l_tables[ch] = {"m": m, "tau": [_number(x) for x in t.tau], "values": [list(row) for row in t.L]}
    if not channels:
        raise ProfileError(f"{directory}: no libtaulop parameter files here "
                           f"(expected any of {', '.join(s + '.txt' for s in CHANNEL_FILES)})")
    unknown = [c for c in descriptions if c not in channels]
    if unknown:
        raise ProfileError(f"channel description for '{unknown[0]}', which {directory} has no file for")
    bind = {"net": "ib"} if "ib" in channels else ({"net": "tcp"} if "tcp" in channels else {})
    meta = dict(metadata or {})
    tables = {"o": o_tables, "L": l_tables}
    gamma_path = directory / GAMMA_FILE
    if gamma_path.is_file():
        grid_file, grid = grid_source
        gamma = read_gamma_file(gamma_path)
        moved = gamma_on_grid(gamma, grid, grid_file)
        used.append(GAMMA_FILE)
        m = [_number(x) for x in grid]
        default = gamma.ops.index(gamma.default_op)
        tables["gamma"] = {ANY: {"m": m, "values": [row[default] for row in gamma.values]}}
        for k, op in enumerate(gamma.ops):
            tables[f"gamma_{op}"] = {ANY: {"m": m, "values": [row[k] for row in gamma.values]}}
        note = (f"gamma is libtaulop's default reduction operation, the third column of {GAMMA_FILE} "
                f"({gamma.default_op}); gamma_<op> holds each column, read on the grid of {grid_file}.")
        if moved:
            note += " " + "; ".join(f"{GAMMA_FILE} row {i + 1}, measured at {_fmt_size(a)}, is used at "
                                    f"{_fmt_size(b)}" for i, a, b in moved)
            note += (f" (libtaulop matches gamma rows to the grid by row index and checks sizes "
                     f"from row {GAMMA_UNCHECKED_ROWS + 1} on).")
        meta["notes"] = f"{meta['notes']} {note}" if meta.get("notes") else note
    meta.setdefault("description", f"tau-Lop parameters converted from libtaulop files {', '.join(used)}")
    data = {
        "tlop_profile": 1,
        "name": name,
        "metadata": meta,
        "interpolation": dict(interpolation or {}),
        "channels": channels,
        "bind": bind,
        "tables": tables,
        "scalars": {},
        "fits": {},
    }
    return profile_from_dict(data, source=f"{directory} (converted)")


#: the name ``tlop convert-taulop`` imports
convert_directory = convert_taulop


# ---------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The converter's options (shared with ``tlop convert-taulop``)."""
    parser.add_argument("directory", help="directory holding SHM.txt, TCP.txt and/or IB.txt, "
                                          "and optionally gamma.txt")
    parser.add_argument("--name", help="profile name (default: the directory's name)")
    parser.add_argument("--out", help="output file (default: NAME.json)")
    for key in ("machine", "description", "source", "method", "notes"):
        parser.add_argument(f"--{key}", help=f"metadata.{key}")


def run(args: argparse.Namespace) -> int:
    """Convert as ``args`` say; print a one-line summary; errors go to stderr as tlop errors."""
    try:
        meta = {k: getattr(args, k) for k in ("machine", "description", "source", "method", "notes")
                if getattr(args, k, None)}
        profile = convert_taulop(args.directory, args.name, meta)
        out = Path(args.out or f"{profile.name}.json")
        save_profile(profile, out)
    except TlopError as err:
        print(str(err), file=sys.stderr)
        return 1
    L = profile.table("L", next(iter(profile.channels)))
    ops = profile.reduce_ops()
    gamma = f", {len(ops)} reduction operations (gamma = {ops[GAMMA_DEFAULT_COLUMN - 1]})" if ops else ""
    print(f"wrote {out}: profile '{profile.name}', channels {', '.join(profile.channels)}, "
          f"{len(L.m)} sizes, {len(L.tau)} tau columns, net -> {profile.bindings.get('net', '(none)')}{gamma}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tlop.runtime.convert_taulop",
        description="Convert libtaulop parameter files (SHM.txt, TCP.txt, IB.txt) into a tlop profile.")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
