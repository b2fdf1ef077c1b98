"""``tlop tune``: per library, the algorithm the MPI library should run at each (P, m), with its
cost, the runner-up and the margin — the table printed is the file written.

What it does: for each collective asked (``--collective allreduce``, several, or ``all``) and
each library (``--library openmpi,mpich``), prices that library's own catalogue
(:mod:`tlop.decisions.catalogue`: the stdlib schedules of ``coll/<collective>`` that follow its
source) on ``--profile``, over ``--mapping``, in one model (``--model``, default the profile's),
searching the segment sizes and fan-outs the library takes (:mod:`tlop.decisions.selection`),
and prints one decision table per library: the algorithm a file makes it run, its predicted
cost, the runner-up, the margin, and the library's own default with the predicted gain over it.
Where the gain over a priced default is below ``--min-gain`` the default is kept; where the
default is an algorithm tlop cannot price it is kept too (a file never overrides what was not
priced).  The files written (``--openmpi``: the classic coll_tuned dynamic rules;
``--openmpi-json``: Open MPI 6.0's JSON rules; ``--mpich``: MPICH's JSON selection) name exactly
the table's choices, with the mapping and the profile in a comment.

The mapping is required when the profile has a network channel (the cost of a schedule depends
on which ranks share a node); without a network channel the default is every rank on one node,
and the header says so.

What it does not do: run MPI (``tlop tune-check`` times a written file against the library's
default on real runs), or search parameters the library does not take.
"""

from __future__ import annotations

import json
import math
import sys

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.text import printable

__all__ = ["add_arguments", "run", "tune", "setting", "LIBRARY_TITLES"]

LIBRARY_TITLES = {"openmpi": "Open MPI 5.0 coll/tuned", "mpich": "MPICH 4.x collective selection"}


def add_arguments(p) -> None:
    from tlop.decisions.catalogue import COLLECTIVES, LIBRARIES

    p.add_argument("items", nargs="+", metavar="NAME=RANGE",
                   help="the ranges to tune over: P=… (communicator sizes) and m=… (the per-rank buffer of the "
                        "MPI call, e.g. m=1B..4MiB:x4)")
    p.add_argument("--collective", action="append", required=True, metavar="NAME",
                   help=f"the collective(s) to tune: {', '.join(COLLECTIVES)}, or all (repeatable, or comma-separated)")
    p.add_argument("--library", default=",".join(LIBRARIES), metavar="LIB",
                   help=f"the libraries to decide for, comma-separated (default: {','.join(LIBRARIES)})")
    p.add_argument("--profile", help="bundled profile name or profile JSON (default: metropolis)")
    p.add_argument("--mapping", metavar="MAPPING",
                   help="process mapping or layout (sequential(8), round_robin(8), a layout file); required when the "
                        "profile has a network channel")
    p.add_argument("--model", choices=("taulop", "loggp", "plogp"),
                   help="the model the schedules are priced in (default: the profile's first)")
    p.add_argument("--only", action="append", metavar="ALG", help="consider only this library algorithm (repeatable)")
    p.add_argument("--min-gain", type=float, default=1.1, metavar="X",
                   help="keep the library's default unless the best algorithm is predicted X times cheaper (default "
                        "1.1: below the error tlop validate measures for the model; 1 always takes the cheapest)")
    p.add_argument("--no-defaults", action="store_true",
                   help="do not price the libraries' built-in decisions (take the cheapest everywhere)")
    p.add_argument("--openmpi", metavar="FILE", help="write Open MPI's classic coll_tuned dynamic rules file")
    p.add_argument("--openmpi-json", metavar="FILE", help="write Open MPI 6.0's JSON rules file (rule_file_version 3)")
    p.add_argument("--mpich", metavar="FILE", help="write MPICH's JSON collective selection file")
    p.add_argument("--json", metavar="FILE", help="write the decision tables as JSON (- for stdout)")


def _collectives(values) -> list:
    from tlop.decisions.catalogue import COLLECTIVES

    out = []
    for v in values:
        for c in v.split(","):
            c = c.strip()
            if c == "all":
                out.extend(COLLECTIVES)
            elif c in COLLECTIVES:
                out.append(c)
            else:
                import difflib

                near = difflib.get_close_matches(c, COLLECTIVES, 1)
                raise TlopError(f"--collective {printable(c)}: not a collective tlop tunes"
                                + (f"; did you mean '{near[0]}'?" if near else "")
                                + f" (choose from {', '.join(COLLECTIVES)}, or all)")
    return list(dict.fromkeys(out))


def _libraries(text: str) -> list:
    from tlop.decisions.catalogue import LIBRARIES

    libs = [x.strip() for x in text.split(",") if x.strip()]
    for lib in libs:
        if lib not in LIBRARIES:
            raise TlopError(f"--library {printable(lib)}: choose from {', '.join(LIBRARIES)}")
    return libs


def _mapping(args, profile):
    """(mapping object or None, its text for headers) — required with a network channel."""
    from tlop.backends.binding import as_mapping

    if args.mapping:
        return as_mapping(args.mapping), args.mapping
    if profile.resolve_channel("net") is not None:
        raise TlopError(f"profile {profile.name} has a network channel: give the process mapping the library will "
                        f"run with, e.g. --mapping 'sequential(8)' (8 ranks per node) or a layout file; the best "
                        f"algorithm depends on which ranks share a node")
    return None, "sequential(P) (every rank on one node: the profile has no network channel)"


def _default_of(library: str, collective: str, mapping=None):
    """``(P, m) -> (name, params)``: the library's built-in decision (tlop.decisions.defaults),
    for ranks placed by ``mapping`` (MPICH's tree reads the node layout)."""
    from tlop.decisions.defaults import default_decision

    return lambda P, m: default_decision(library, collective, P, m, mapping=mapping)


def tune(collectives, libraries, profile, mapping, model, Ps, ms, *, only=None, min_gain=1.1, defaults=True):
    """``{(library, collective): [Cell, …]}`` (see :mod:`tlop.decisions.selection`)."""
    from tlop.backends.binding import as_mapping
    from tlop.decisions.selection import Pricer, select

    # one pricer per placement, shared by every collective and library: the schedules both
    # libraries run (and their compiled evaluators) are priced once
    pricers: dict = {}

    def pricer_for(placement):
        if placement not in pricers:
            pricers[placement] = Pricer(profile, placement, model)
        return pricers[placement]

    out = {}
    for collective in collectives:
        for library in libraries:
            if mapping is None:  # one node: each P its own sequential(P)
                cells = []
                for P in Ps:
                    one_node = as_mapping(f"sequential({P})")
                    cells += select(library, collective, pricer_for(one_node), [P], ms, only=only, min_gain=min_gain,
                                    default_of=_default_of(library, collective, one_node) if defaults else None)
            else:
                cells = select(library, collective, pricer_for(mapping), Ps, ms, only=only, min_gain=min_gain,
                               default_of=_default_of(library, collective, mapping) if defaults else None)
            out[(library, collective)] = cells
    return out


def _rows(cells):
    from tlop.runtime.units import format_size, format_time

    rows = []
    for c in cells:
        if c.chosen is None:
            rows.append([str(c.P), format_size(c.m), "-", "", "", "", "", "", "", "nothing priced"])
            continue
        r = c.runner_up
        d = c.default
        rows.append([
            str(c.P), format_size(c.m), c.chosen.label(),
            format_time(c.chosen.cost) if math.isfinite(c.chosen.cost) else "not priced",
            r.label() if r is not None else "-",
            format_time(r.cost) if r is not None else "",
            f"{c.margin:.2f}x" if math.isfinite(c.margin) else "",
            d.label() if d is not None else "",
            f"{c.gain:.2f}x" if not math.isnan(c.gain) else "",
            c.note,
        ])
    return rows


def _json(result, profile, mapping_text, model):
    out = {"profile": profile.name, "profile_path": str(getattr(profile, "path", "") or ""), "mapping": mapping_text,
           "model": model, "tables": []}
    for (library, collective), cells in result.items():
        table = {"library": library, "collective": collective, "cells": []}
        for c in cells:
            def p(x):
                return None if x is None else {"algorithm": x.algorithm.name, "id": x.algorithm.id,
                                               "params": x.params,
                                               "cost_s": x.cost if math.isfinite(x.cost) else None}
            table["cells"].append({"P": c.P, "m": c.m, "chosen": p(c.chosen), "best": p(c.best),
                                   "runner_up": p(c.runner_up),
                                   "margin": c.margin if math.isfinite(c.margin) else None,
                                   "default": p(c.default), "gain": None if math.isnan(c.gain) else c.gain,
                                   "note": c.note})
        out["tables"].append(table)
    return out


def setting(args, raw: dict, what: str):
    """What ``tlop tune`` and ``tlop audit`` share: ``(collectives, libraries, profile, model,
    mapping, its text, Ps, ms)`` from their options and the ranges ``raw`` (``{"P": …, "m": …}``)."""
    from tlop.api import load
    from tlop.cli.ranges import parse_range
    from tlop.runtime.profile import default_model, default_profile, load_profile

    collectives = _collectives(args.collective)
    libraries = _libraries(args.library)
    profile = default_profile() if args.profile is None else load_profile(args.profile)
    model = args.model or default_model(profile)
    mapping, mapping_text = _mapping(args, profile)
    program = load("coll/bcast", model=model).program
    Ps = [int(p) for p in parse_range("P", raw["P"], "int", program, 4096)]
    ms = [int(m) for m in parse_range("m", raw["m"], "bytes", program, 4096)]
    if any(P < 2 for P in Ps):
        raise TlopError(f"P: {what} needs communicators of at least 2 ranks")
    return collectives, libraries, profile, model, mapping, mapping_text, Ps, ms


def run(args) -> int:
    from tlop.cli.table import print_table

    raw = {}
    for a in args.items:
        if "=" not in a:
            raise TlopError(f"'{printable(a)}': tlop tune prices the libraries' own algorithms (stdlib coll/…); give "
                            f"only the ranges, e.g. P=2..64:x2 m=1KiB..4MiB:x4, and --collective")
        k, v = a.split("=", 1)
        if k not in ("P", "m"):
            raise TlopError(f"'{printable(k)}': tlop tune takes ranges of P and m only (segment sizes and fan-outs "
                            f"are searched)")
        raw[k] = v
    if "P" not in raw or "m" not in raw:
        raise TlopError("give the ranges to tune over, e.g. P=2..64:x2 m=1KiB..4MiB:x4")
    if not (args.min_gain >= 1.0) or not math.isfinite(args.min_gain):
        raise TlopError(f"--min-gain {args.min_gain}: expected a number >= 1")
    collectives, libraries, profile, model, mapping, mapping_text, Ps, ms = setting(args, raw, "tuning")
    ms = [float(m) for m in ms]
    result = tune(collectives, libraries, profile, mapping, model, Ps, ms, only=args.only,
                  min_gain=args.min_gain, defaults=not args.no_defaults)
    from tlop.decisions.selection import segment_cap

    cap = segment_cap(model)
    header = (f"profile {profile.name}, model {model}, mapping {mapping_text}; the library's default is kept "
              f"below a predicted gain of {args.min_gain:g}x" +
              (f"; segment sizes cutting m into more than {cap} segments are not searched" if cap else ""))
    if args.json == "-":
        json.dump(_json(result, profile, mapping_text, model), sys.stdout, indent=1)
        print()
    else:
        print(f"tlop tune: {header}")
        for (library, collective), cells in result.items():
            print(f"\n{collective} — {LIBRARY_TITLES[library]} (the file's rules):")
            print_table(["P", "m", "run", "cost", "runner-up", "cost", "margin", "default", "gain", "note"],
                        _rows(cells))
        if args.json:
            from tlop.runtime.atomic import open_text_atomic

            with open_text_atomic(args.json) as f:
                json.dump(_json(result, profile, mapping_text, model), f, indent=1)
            print(f"wrote {printable(args.json)} (decision tables, JSON)")
    from tlop.decisions.write import write_files

    for line in write_files(args, result, profile, mapping, mapping_text, model):
        print(line, file=sys.stderr if args.json == "-" else sys.stdout)
    return 0
