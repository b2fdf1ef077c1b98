"""Convert libtaulop parameter files into a tlop profile.

What it does: reads the parameter tables distributed with libtaulop (one file per channel,
``SHM.txt``, ``TCP.txt``, ``IB.txt``) and builds a profile with one profile channel per file —
``shm`` (transmission ``shm``), ``tcp`` (transmission ``tcp``), ``ib`` (transmission ``rdma``) —
and two tables per channel: ``o`` (overhead, over m) and ``L`` (transfer time, over m and τ).
``bind`` maps the model channel ``net`` to ``ib`` when an IB file exists, else to ``tcp``.

The file format (:func:`parse_taulop_text`)::

    #m   30                       number of message sizes (rows)
    #tau 8                        number of concurrency columns
    #m  o(m)  L(m,1) … L(m,8)     header (column names vary: lusitania writes L0(m,1), L1(m,1))
    1   5.59e-07  2.89e-07 …      one row per size m (bytes): m, o(m), L(m,1) … L(m,K), seconds

The parser does not trust the header's spelling: it takes the τ of each column from the
``(m, k)`` it names when it names all of them, otherwise τ = 1 … K; it checks the row count
against ``#m``, every row's width against ``#tau``, and that sizes increase.  Every problem is a
:class:`ProfileError` at ``file:line:col``.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from tlop.runtime.diagnostics import Diagnostic, Source, Span, TlopError

from tlop.runtime.errors import ProfileError
from tlop.runtime.profile import Profile, profile_from_dict, save_profile

__all__ = ["TaulopTable", "CHANNEL_FILES", "parse_taulop_text", "read_taulop_file",
           "convert_taulop", "convert_directory", "add_arguments", "run", "main"]

#: file stem -> (profile channel, transmission kind, default description)
CHANNEL_FILES = {
    "SHM": ("shm", "shm", "shared memory"),
    "TCP": ("tcp", "tcp", "TCP network"),
    "IB": ("ib", "rdma", "InfiniBand"),
}

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
    for stem, (ch, kind, desc) in CHANNEL_FILES.items():
        path = directory / f"{stem}.txt"
        if not path.is_file():
            continue
        t = read_taulop_file(path)
        used.append(path.name)
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
    meta.setdefault("description", f"tau-Lop parameters converted from libtaulop files {', '.join(used)}")
    data = {
        "tlop_profile": 1,
        "name": name,
        "metadata": meta,
        "interpolation": dict(interpolation or {}),
        "channels": channels,
        "bind": bind,
        "tables": {"o": o_tables, "L": l_tables},
        "scalars": {},
        "fits": {},
    }
    return profile_from_dict(data, source=f"{directory} (converted)")


#: the name ``tlop convert-taulop`` imports
convert_directory = convert_taulop


# ---------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The converter's options (shared with ``tlop convert-taulop``)."""
    parser.add_argument("directory", help="directory holding SHM.txt, TCP.txt and/or IB.txt")
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
    print(f"wrote {out}: profile '{profile.name}', channels {', '.join(profile.channels)}, "
          f"{len(L.m)} sizes, {len(L.tau)} tau columns, net -> {profile.bindings.get('net', '(none)')}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tlop.runtime.convert_taulop",
        description="Convert libtaulop parameter files (SHM.txt, TCP.txt, IB.txt) into a tlop profile.")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
