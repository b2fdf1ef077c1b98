"""``tlop tune``: the cheapest real library algorithm per (P, m), exported as files that Open MPI
and MPICH load.

What it does: takes the algorithms of the given files that are a real library algorithm of the
collective (:data:`tlop.runtime.tuning_files.LIBRARY_ALGORITHMS`; ``--only`` narrows them), prices
each at every point of the ``P`` and ``m`` ranges on ``--profile`` — searching the segment size
``s`` of a segmented algorithm with :func:`tlop.analysis.segsearch.search_segment` (004 §3) —,
picks the cheapest per point, prints the selection (P down, m across) and writes
``--openmpi FILE`` (coll_tuned dynamic rules) and ``--mpich FILE`` (JSON collective selection),
each with only the algorithms that library has (a point whose winner the library lacks gets the
cheapest algorithm it has).  Algorithms over a process mapping are priced on ``--mapping``
(default ``sequential(P)``: every rank on one node).

What it does not do: run MPI (the files are checked against real Open MPI and MPICH by the
tests), or tune parameters other than the segment size.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.text import printable

__all__ = ["add_arguments", "run", "select"]


def add_arguments(p) -> None:
    p.add_argument("items", nargs="+", metavar="FILE|NAME=RANGE",
                   help="modules whose algorithms compete (e.g. taulop/bcast plogp/bcast) and the ranges P=… m=…")
    p.add_argument("--collective", required=True, choices=("bcast", "allgather", "alltoall"))
    p.add_argument("--profile", help="bundled profile name or profile JSON (default: metropolis)")
    p.add_argument("--mapping", metavar="MAPPING", help="process mapping for schedules (default: sequential(P))")
    p.add_argument("--only", action="append", metavar="ALG", help="compare only this algorithm (repeatable)")
    p.add_argument("--openmpi", metavar="FILE", help="write an Open MPI coll_tuned dynamic rules file")
    p.add_argument("--mpich", metavar="FILE", help="write an MPICH JSON collective selection file")


def _module_key(name: str) -> str:
    from pathlib import Path

    from tlop.frontend.loader import resolve_path

    path = Path(resolve_path(name)).resolve()
    parts = path.with_suffix("").parts
    if "stdlib" in parts:
        i = len(parts) - 1 - parts[::-1].index("stdlib")
        return "/".join(parts[i + 1:])
    return path.stem


def _candidates(files, collective, only):
    from tlop.api import load
    from tlop.runtime.tuning_files import LIBRARY_ALGORITHMS

    table = LIBRARY_ALGORITHMS[collective]
    out = []
    for f in files:
        m = load(f)
        key = _module_key(f)
        for name in m.own_algorithms:
            full = f"{key}:{name}"
            if full in table and (not only or name in only or full in only):
                out.append((full, m[name]))
    if not out:
        known = ", ".join(table)
        raise TlopError(f"no algorithm of {', '.join(printable(f) for f in files)} is a library {collective} "
                        f"algorithm tlop knows; those are: {known}")
    return out


def _price(h, profile, P: int, m: float, mapping):
    """(cost, segment) of algorithm ``h`` at (P, m): the segment size searched when it has ``s``."""
    from tlop.apps.segsearch import search_segment

    names = [p.name for p in h.params]
    over = mapping if h.ir.over is not None else None
    if "s" in names:
        if m < 1:
            return math.inf, 0

        def cost(s):
            return np.asarray(h.evaluate(profile, mapping=over, invalid="nan", P=np.full(len(s), float(P)),
                                         m=np.full(len(s), float(m)), s=np.asarray(s, dtype=float)), dtype=float)
        s, v, _ = search_segment(lambda s: np.where(np.isnan(cost(s)), np.inf, cost(s)), int(m))
        return v, int(s)
    v = float(h.evaluate(profile, mapping=over, invalid="nan", P=float(P), m=float(m)))
    return (v if math.isfinite(v) else math.inf), 0


def select(candidates, collective, profile, Ps, ms, mapping_text=None):
    """``{(P, m): [(cost, key, segment), …] cheapest first}`` for every point."""
    from tlop.backends.binding import as_mapping
    from tlop.runtime.tuning_files import LIBRARY_ALGORITHMS

    table = LIBRARY_ALGORITHMS[collective]
    out = {}
    for P in Ps:
        mapping = as_mapping(mapping_text or f"sequential({P})")
        for m in ms:
            priced = []
            for key, h in candidates:
                if table[key].pow2 and P & (P - 1):
                    continue
                v, s = _price(h, profile, P, m, mapping)
                if math.isfinite(v):
                    priced.append((v, key, s))
            out[(P, m)] = sorted(priced)
    return out


def _rules(selection, library: str, collective: str):
    from tlop.runtime.tuning_files import LIBRARY_ALGORITHMS, Rule

    table = LIBRARY_ALGORITHMS[collective]
    rules = []
    for (P, m), priced in selection.items():
        have = [x for x in priced if getattr(table[x[1]], library) is not None]
        if have:
            v, key, s = have[0]
            rules.append(Rule(int(P), int(m), key, s))
    return rules


def run(args) -> int:
    from tlop.cli.ranges import parse_range
    from tlop.cli.table import print_table
    from tlop.runtime.profile import default_profile, load_profile
    from tlop.runtime.tuning_files import mpich_json, openmpi_rules
    from tlop.runtime.units import format_size, format_time

    items = list(args.items)
    files = [a for a in items if "=" not in a]
    raw = dict(a.split("=", 1) for a in items if "=" in a)
    for k in raw:
        if k not in ("P", "m"):
            raise TlopError(f"'{k}': tlop tune takes ranges of P and m only (the segment size is searched)")
    if "P" not in raw or "m" not in raw:
        raise TlopError("give the ranges to tune over, e.g. P=2..64:x2 m=1KiB..4MiB:x4")
    if not files:
        raise TlopError("give the modules whose algorithms compete, e.g. taulop/bcast")
    profile = default_profile() if args.profile is None else load_profile(args.profile)
    candidates = _candidates(files, args.collective, args.only)
    program = candidates[0][1].module.program
    Ps = [int(p) for p in parse_range("P", raw["P"], "int", program, 4096)]
    ms = [float(m) for m in parse_range("m", raw["m"], "bytes", program, 4096)]
    if any(P < 2 for P in Ps):
        raise TlopError("P: tuning needs communicators of at least 2 ranks")
    selection = select(candidates, args.collective, profile, Ps, ms, args.mapping)
    print(f"cheapest library {args.collective} algorithm on {profile.name} "
          f"({len(candidates)} candidates: {', '.join(k for k, _ in candidates)})")
    header = ["P \\ m"] + [format_size(m) for m in ms]
    rows = []
    for P in Ps:
        row = [str(P)]
        for m in ms:
            priced = selection[(P, m)]
            if not priced:
                row.append("-")
                continue
            v, key, s = priced[0]
            row.append(key.split(":")[1] + (f" s={format_size(s)}" if s else "") + f" {format_time(v)}")
        rows.append(row)
    print_table(header, rows)
    for lib, target, writer in (("openmpi", args.openmpi, openmpi_rules), ("mpich", args.mpich, mpich_json)):
        if not target:
            continue
        rules = _rules(selection, lib, args.collective)
        if not rules:
            print(f"tlop: warning: no candidate is an {lib} {args.collective} algorithm; {target} not written",
                  file=sys.stderr)
            continue
        from tlop.runtime.atomic import open_text_atomic

        text = writer(args.collective, rules)
        if lib == "mpich":
            from tlop.runtime.tuning_files import mpich_default_selection

            base = mpich_default_selection()
            if base is None:
                print(f"tlop: warning: MPICH's default selection was not found beside Python; {target} holds the "
                      f"{args.collective} rules only, and MPICH needs a file that covers every collective: merge "
                      f"them into your MPICH's selection", file=sys.stderr)
            else:
                text = writer(args.collective, rules, base)
        with open_text_atomic(target) as f:
            f.write(text)
        print(f"wrote {printable(target)} ({lib})")
    return 0
