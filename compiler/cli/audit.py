"""``tlop audit``: the MPI libraries' built-in decisions priced against their own best algorithm.

What it does: for each collective and library asked, prices what the library runs by default at
every (P, m) of the grid — Open MPI 5.0's fixed decision functions, MPICH's compiled-in selection
tree (:mod:`tlop.decisions.defaults`, where they come from is in ``docs/decisions.rst``) — and
the cheapest algorithm of the same library's catalogue with its best parameters
(:func:`tlop.decisions.audit.audit`, priced by the schedules of ``coll/<collective>`` over the
mapping, in one model), and prints the cells where the default costs at least ``--threshold``
(1.1) times the best, with the gain a file written by ``tlop tune`` would bring there (the same
as the ratio wherever it reaches ``--min-gain``); a summary per table; ``--json``; ``--plot FILE``
draws the heat map of the ratio (:func:`tlop.cli.plot_audit.ratio_figure`, one panel per table
written as FILE with the library and collective in its name when there are several).

What it does not do: write tuning files (``tlop tune``) or run MPI.
"""

from __future__ import annotations

import json
import math
import sys

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.text import printable

__all__ = ["add_arguments", "run", "audit_tables"]


def add_arguments(p) -> None:
    from tlop.decisions.catalogue import COLLECTIVES, LIBRARIES

    p.add_argument("items", nargs="+", metavar="NAME=RANGE", help="the grid: P=… and m=… (the MPI call's per-rank "
                                                                   "buffer), e.g. P=2..64:x2 m=1B..4MiB:x4")
    p.add_argument("--collective", action="append", required=True, metavar="NAME",
                   help=f"{', '.join(COLLECTIVES)}, or all (repeatable, or comma-separated)")
    p.add_argument("--library", default=",".join(LIBRARIES), metavar="LIB",
                   help=f"comma-separated (default: {','.join(LIBRARIES)})")
    p.add_argument("--profile", help="bundled profile name or profile JSON (default: metropolis)")
    p.add_argument("--mapping", metavar="MAPPING", help="process mapping or layout; required when the profile has "
                                                        "a network channel (e.g. 4x8, sequential(8))")
    p.add_argument("--model", choices=("taulop", "loggp", "plogp"), help="the model (default: the profile's first)")
    p.add_argument("--threshold", type=float, default=1.1, metavar="X",
                   help="flag the cells where the default costs at least X times the best (default 1.1)")
    p.add_argument("--min-gain", type=float, default=1.1, metavar="X",
                   help="the gain below which tlop tune keeps the default (default 1.1, as tune's)")
    p.add_argument("--all-cells", action="store_true", help="print every cell, not only the flagged ones")
    p.add_argument("--json", metavar="FILE", help="write the audit as JSON (- for stdout)")
    p.add_argument("--plot", metavar="FILE", help="draw the heat map of default / best (.svg, .png, .pdf)")


def audit_tables(collectives, libraries, profile, mapping, model, Ps, ms) -> dict:
    """``{(library, collective): [tlop.decisions.audit.Cell]}``."""
    import numpy as np

    from tlop.backends.binding import as_mapping
    from tlop.decisions.audit import audit
    from tlop.decisions.selection import Pricer

    pricers: dict = {}  # one per placement, shared by every collective and library
    out = {}
    for collective in collectives:
        for library in libraries:
            cells = []
            for P in Ps:
                placement = mapping if mapping is not None else as_mapping(f"sequential({P})")
                if placement not in pricers:
                    pricers[placement] = Pricer(profile, placement, model)
                pricer = pricers[placement]

                def price(alg, params, P_, ms_, pricer=pricer):
                    return pricer.price(alg, P_, np.asarray(ms_, dtype=float), dict(params))

                cells += audit(library, collective, [P], ms, price, vectorized=True,
                               decide_kwargs={"mapping": mapping} if library == "mpich" else None)
            out[(library, collective)] = cells
    return out


def run(args) -> int:
    from tlop.cli.table import print_table
    from tlop.cli.tune import LIBRARY_TITLES, setting
    from tlop.decisions.audit import as_json
    from tlop.runtime.units import format_size, format_time

    raw = {}
    for a in args.items:
        k, eq, v = a.partition("=")
        if not eq or k not in ("P", "m"):
            raise TlopError(f"'{printable(a)}': tlop audit takes the ranges P=… and m=… only")
        raw[k] = v
    if set(raw) != {"P", "m"}:
        raise TlopError("give the grid to audit, e.g. P=2..64:x2 m=1B..4MiB:x4")
    for name in ("threshold", "min_gain"):
        v = getattr(args, name)
        if not (v >= 1.0 and math.isfinite(v)):
            raise TlopError(f"--{name.replace('_', '-')} {v}: expected a number >= 1")
    if args.plot:
        from tlop.cli.plot_stages import check_target, have_matplotlib

        check_target(args.plot)
        if not have_matplotlib():
            raise TlopError("--plot needs matplotlib: pip install 'tlop[plot]'")
    collectives, libraries, profile, model, mapping, mapping_text, Ps, ms = setting(args, raw, "the audit")
    tables = audit_tables(collectives, libraries, profile, mapping, model, Ps, ms)
    doc = {"profile": profile.name, "mapping": mapping_text, "model": model, "threshold": args.threshold,
           "tables": [{"library": lib, "collective": coll, "cells": as_json(cells, args.threshold)}
                      for (lib, coll), cells in tables.items()]}
    quiet = args.json == "-"
    say = (lambda *a: print(*a, file=sys.stderr)) if quiet else print
    say(f"tlop audit: the libraries' defaults against their best algorithm; profile {profile.name}, model {model}, "
        f"mapping {mapping_text}; flagged: default >= {args.threshold:g}x the best")
    for (lib, coll), cells in tables.items():
        ratios = [c.ratio for c in cells if c.ratio is not None]
        flagged = [c for c in cells if c.flagged(args.threshold)]
        unpriced = sum(c.ratio is None for c in cells)
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else math.nan
        say(f"\n{coll} — {LIBRARY_TITLES[lib]}: {len(flagged)} of {len(cells)} cells flagged"
            + (f", worst {max(ratios):.2f}x, geometric mean {geo:.3f}x" if ratios else "")
            + (f"; {unpriced} cells whose default tlop cannot price" if unpriced else ""))
        shown = cells if args.all_cells else flagged
        if not shown or quiet:
            continue
        rows = []
        for c in shown:
            r = c.ratio
            rows.append([str(c.P), format_size(c.m), c.default.name + _params(c.default.params),
                         format_time(c.default_cost) if c.default_cost is not None else "not priced",
                         "-" if c.best is None else c.best.name + _params(c.best_params),
                         format_time(c.best_cost) if c.best_cost is not None else "",
                         f"{r:.2f}x" if r is not None else "",
                         (f"{r:.2f}x" if r >= args.min_gain else "1.00x (kept)") if r is not None else "",
                         c.note])
        print_table(["P", "m", "default", "cost", "best", "cost", "ratio", "file gain", "note"], rows)
    if args.json:
        if quiet:
            json.dump(doc, sys.stdout, indent=1)
            print()
        else:
            from tlop.runtime.atomic import open_text_atomic

            with open_text_atomic(args.json) as f:
                json.dump(doc, f, indent=1)
            say(f"wrote {printable(args.json)}")
    if args.plot:
        _plot(args.plot, tables, args.threshold, say, profile.name, mapping_text)
    return 0


def _params(params: dict) -> str:
    from tlop.runtime.units import format_size

    shown = [f"{k}={format_size(v)}" if k == "seg" else f"{k}={v}" for k, v in sorted(params.items())
             if v not in (0, None) or k == "k"]
    return f" ({', '.join(shown)})" if shown else ""


def _plot(target, tables, threshold, say, profile_name, mapping_text):
    from pathlib import Path

    from tlop.cli.plot_audit import ratio_figure
    from tlop.cli.plot_grid import write_figure
    from tlop.cli.tune import LIBRARY_TITLES

    base = Path(target)
    for (lib, coll), cells in tables.items():
        path = base if len(tables) == 1 else base.with_name(f"{base.stem}-{lib}-{coll}{base.suffix}")
        fig = ratio_figure(cells, f"{coll}, {LIBRARY_TITLES[lib]}: default / best\n{profile_name}, {mapping_text}",
                           threshold)
        write_figure(fig, str(path))
        say(f"wrote {printable(str(path))}")
