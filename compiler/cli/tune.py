"""``tlop tune``: per library, the algorithm the MPI library should run at each (P, m), with its
cost, the runner-up and the margin — the table printed is the file written.

What it does: for each collective asked (``--collective allreduce``, several, or ``all``) and
each library (``--library openmpi,mpich``), prices that library's own catalogue
(:mod:`tlop.decisions.catalogue`: the stdlib schedules of ``coll/<collective>`` that follow its
source) on ``--profile``, over ``--mapping``, in one model (``--model``, default the profile's),
searching the segment sizes and fan-outs the library takes (:mod:`tlop.decisions.selection`;
an Open MPI algorithm that calls the communicator's own collectives is priced with the calls
the written file makes Open MPI run — its rules for those collectives when they are tuned too,
else the fixed decisions: :mod:`tlop.decisions.composite`),
and prints one decision table per library: the algorithm a file makes it run, its predicted
cost, the runner-up, the margin, and the library's own default with the predicted gain over it.
Where the gain over a priced default is below the model's error the default is kept: the error
measured at that cell by a ``tlop validate`` run (``--error-from``, :mod:`tlop.decisions.model_error`:
the largest error of the model on the ratio of two algorithms of the collective measured there),
and ``--min-gain`` (a chosen factor) at the cells that run did not measure; where the
default is an algorithm tlop cannot price it is kept too (a file never overrides what was not
priced).  The files written (``--openmpi``: the classic coll_tuned dynamic rules;
``--openmpi-json``: Open MPI 6.0's JSON rules; ``--mpich``: MPICH's JSON selection; ``--nccl``: the
CSV of NVIDIA's example NCCL tuner plugin) name exactly the table's choices, with the mapping and
the profile in a comment.

``--library nccl`` (GPU collectives: allreduce, bcast, reduce, allgather, reduce_scatter) prices
NCCL's algorithm × protocol candidates (stdlib/nccl: NCCL's own model, src/graph/tuning.cc, with
the bandwidth of a postal GPU profile's paths, e.g. ``--profile lassen``) over ``--mapping``
(required: the GPUs per node).  NCCL's own choice is not priced — it comes from the bandwidths of
the topology graph NCCL builds at start-up, which no profile holds — and the example plugin cannot
keep it, so every row names the cheapest candidate.

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

LIBRARY_TITLES = {"openmpi": "Open MPI 5.0 coll/tuned", "mpich": "MPICH 4.x collective selection",
                  "nccl": "NCCL (its own model, src/graph/tuning.cc, on the profile's GPU paths)"}

#: what the NCCL table says about its default and channels (printed under its title)
NCCL_NOTE = ("NCCL's own choice is not priced (it comes from the topology graph NCCL builds at start-up) and the "
             "example tuner plugin cannot keep it: each row names the cheapest algorithm/protocol, on all the "
             "communicator's channels (the CSV asks for 64; NCCL caps it at its own count)")


def add_arguments(p) -> None:
    from tlop.decisions.catalogue import ALL_LIBRARIES, COLLECTIVES, LIBRARIES

    p.add_argument("items", nargs="+", metavar="NAME=RANGE",
                   help="the ranges to tune over: P=… (communicator sizes) and m=… (the per-rank buffer of the "
                        "MPI call, e.g. m=1B..4MiB:x4)")
    p.add_argument("--collective", action="append", required=True, metavar="NAME",
                   help=f"the collective(s) to tune: {', '.join(COLLECTIVES)}, or all (repeatable, or comma-separated)")
    p.add_argument("--library", default=",".join(LIBRARIES), metavar="LIB",
                   help=f"the libraries to decide for, comma-separated: {', '.join(ALL_LIBRARIES)} (default: "
                        f"{','.join(LIBRARIES)}; nccl needs a GPU profile such as lassen and --mapping)")
    p.add_argument("--profile", help="bundled profile name or profile JSON (default: metropolis)")
    p.add_argument("--mapping", metavar="MAPPING",
                   help="process mapping or layout (sequential(8), round_robin(8), a layout file); required when the "
                        "profile has a network channel")
    p.add_argument("--model", choices=("taulop", "loggp", "plogp"),
                   help="the model the schedules are priced in (default: the profile's first)")
    p.add_argument("--only", action="append", metavar="ALG", help="consider only this library algorithm (repeatable)")
    p.add_argument("--min-gain", type=float, default=1.1, metavar="X",
                   help="keep the library's default unless the best algorithm is predicted X times cheaper (default "
                        "1.1, a chosen factor; 1 always takes the cheapest); cells measured by --error-from use the "
                        "model's measured error there instead")
    p.add_argument("--error-from", metavar="DIR",
                   help="a tlop validate run (its --out directory or samples.jsonl) that measured two or more "
                        "algorithms of a collective at some (P, m): at those cells the default is kept unless the "
                        "predicted gain exceeds the model's measured error on such ratios")
    p.add_argument("--no-defaults", action="store_true",
                   help="do not price the libraries' built-in decisions (take the cheapest everywhere)")
    p.add_argument("--openmpi", metavar="FILE", help="write Open MPI's classic coll_tuned dynamic rules file")
    p.add_argument("--openmpi-json", metavar="FILE", help="write Open MPI 6.0's JSON rules file (rule_file_version 3)")
    p.add_argument("--mpich", metavar="FILE", help="write MPICH's JSON collective selection file")
    p.add_argument("--nccl", metavar="FILE", help="write the CSV of NVIDIA's example NCCL tuner plugin "
                                                   "(NCCL_TUNER_CONFIG_FILE)")
    p.add_argument("--nccl-channels", type=int, metavar="N",
                   help="the channels every row of --nccl asks for, 1..64 (default 64: every channel of the "
                        "communicator, as NCCL caps the count at its own for collectives; ncclAllGatherV does "
                        "not cap it, so give the communicator's count, NCCL_DEBUG=INFO prints it, if the "
                        "application calls ncclAllGatherV)")
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


def _libraries(text: str, allowed=None) -> list:
    from tlop.decisions.catalogue import LIBRARIES

    allowed = LIBRARIES if allowed is None else allowed
    libs = [x.strip() for x in text.split(",") if x.strip()]
    for lib in libs:
        if lib not in allowed:
            raise TlopError(f"--library {printable(lib)}: choose from {', '.join(allowed)}")
    return libs


def _check_nccl(args, profile) -> None:
    """NCCL's schedules need GPU paths and the GPUs per node: a clear error otherwise."""
    missing = [c for c in ("gpu_on_socket", "gpu_off_node") if not profile.has_scalar("beta_rend", c)]
    if missing:
        raise TlopError(f"--library nccl: profile {profile.name} has no GPU paths (beta_rend on "
                        f"{', '.join(missing)}); NCCL's algorithms are priced on a postal GPU profile such as "
                        f"the bundled lassen or summit")
    if not args.mapping:
        raise TlopError("--library nccl: give the GPUs per node with --mapping, e.g. --mapping 'sequential(4)' "
                        "(Lassen: 4 V100 per node; Summit: 6); NCCL's latencies and links depend on the nodes")


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


def tune(collectives, libraries, profile, mapping, model, Ps, ms, *, only=None, min_gain=1.1, defaults=True,
         error=None):
    """``{(library, collective): [Cell, …]}`` (see :mod:`tlop.decisions.selection`); ``error``, a
    :class:`tlop.decisions.model_error.ModelError`, sets the threshold at the cells it measured.
    NCCL's collectives are priced in NCCL's own model (stdlib/nccl, not model-neutral) over
    ``mapping``, without a default, and a collective NCCL does not have is left out for it."""
    from tlop.backends.binding import as_mapping
    from tlop.decisions.catalogue import catalogue
    from tlop.decisions.selection import Pricer, select

    from tlop.decisions.write import rules_of

    # one pricer per placement, shared by every collective and library: the schedules both
    # libraries run (and their compiled evaluators) are priced once
    pricers: dict = {}
    # the Open MPI rules decided so far, by collective: Open MPI's composites (allreduce
    # nonoverlapping, allgather linear, reduce_scatter(_block) …) call the communicator's own
    # collectives, which the written file decides where it has rules for them (coll/tuned's
    # dec_dynamic; tlop.decisions.composite) — so the collectives they call are decided first
    openmpi_rules: dict = {}

    def pricer_for(placement):
        if placement not in pricers:
            pricers[placement] = Pricer(profile, placement, model)
            pricers[placement].openmpi_rules = openmpi_rules
        return pricers[placement]

    called = ("bcast", "reduce", "gather", "scatter")
    order = sorted(collectives, key=lambda c: (c not in called, list(collectives).index(c)))
    out = {}
    for collective in order:
        error_at = None if error is None else (lambda P, m, c=collective: error.at(c, P, m))
        for library in libraries:
            if library == "nccl":
                if catalogue(collective, "nccl"):  # else NCCL has no such collective (run() says so)
                    if "nccl" not in pricers:
                        pricers["nccl"] = Pricer(profile, mapping, None)  # stdlib/nccl imports its own platform
                    out[(library, collective)] = select(library, collective, pricers["nccl"], Ps, ms, only=only,
                                                        min_gain=min_gain)
                continue
            if mapping is None:  # one node: each P its own sequential(P)
                cells = []
                for P in Ps:
                    one_node = as_mapping(f"sequential({P})")
                    cells += select(library, collective, pricer_for(one_node), [P], ms, only=only, min_gain=min_gain,
                                    default_of=_default_of(library, collective, one_node) if defaults else None,
                                    error_at=error_at)
            else:
                cells = select(library, collective, pricer_for(mapping), Ps, ms, only=only, min_gain=min_gain,
                               default_of=_default_of(library, collective, mapping) if defaults else None,
                               error_at=error_at)
            out[(library, collective)] = cells
            if library == "openmpi":
                openmpi_rules[collective] = rules_of({(library, collective): cells}, library)
    return {key: out[key] for c in collectives for key in [(lib, c) for lib in libraries] if key in out}


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


def _json(result, profile, mapping_text, model, error=None):
    out = {"profile": profile.name, "profile_path": str(getattr(profile, "path", "") or ""), "mapping": mapping_text,
           "model": model, "error_from": None if error is None else error.source, "tables": []}
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
                                   "measured_error": _measured(error, collective, c),
                                   "note": c.note})
        out["tables"].append(table)
    return out


def _measured(error, collective, cell):
    e = None if error is None else error.at(collective, cell.P, cell.m)
    return None if e is None else {"factor": e.factor, "pairs": e.pairs, "worst": list(e.worst)}


def setting(args, raw: dict, what: str, libraries=None):
    """What ``tlop tune`` and ``tlop audit`` share: ``(collectives, libraries, profile, model,
    mapping, its text, Ps, ms)`` from their options and the ranges ``raw`` (``{"P": …, "m": …}``);
    ``libraries``: those ``--library`` may name (default the MPI libraries)."""
    from tlop.api import load
    from tlop.cli.ranges import parse_range
    from tlop.runtime.profile import default_model, default_profile, load_profile

    collectives = _collectives(args.collective)
    libraries = _libraries(args.library, libraries)
    profile = default_profile() if args.profile is None else load_profile(args.profile)
    model = args.model or default_model(profile)
    if "nccl" in libraries:
        _check_nccl(args, profile)
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
    if args.nccl_channels is not None and not 1 <= args.nccl_channels <= 64:
        raise TlopError(f"--nccl-channels {args.nccl_channels}: NCCL has 1 to 64 channels (MAXCHANNELS)")
    error = None
    if args.error_from:
        from tlop.decisions.model_error import load_validation

        error = load_validation(args.error_from)
    from tlop.decisions.catalogue import ALL_LIBRARIES

    collectives, libraries, profile, model, mapping, mapping_text, Ps, ms = setting(args, raw, "tuning",
                                                                                    ALL_LIBRARIES)
    from tlop.runtime.measure.assemble import profile_environment_warnings

    import warnings

    for w in profile_environment_warnings(profile):    # a table tuned on doubtful timings says so
        warnings.warn(w, UserWarning, stacklevel=2)     # the CLI prints "tlop: warning: …"; tlop.tune() warns
    ms = [float(m) for m in ms]
    result = tune(collectives, libraries, profile, mapping, model, Ps, ms, only=args.only,
                  min_gain=args.min_gain, defaults=not args.no_defaults, error=error)
    from tlop.decisions.selection import segment_cap

    cap = segment_cap(model)

    if error is None:
        kept = f"below a predicted gain of {args.min_gain:g}x"
    else:
        measured = sum(1 for (_, collective), cells in result.items() for c in cells
                       if error.at(collective, c.P, c.m) is not None)
        total = sum(len(cells) for cells in result.values())
        kept = (f"below the model's error measured by {printable(error.source)} at {measured} of {total} cells "
                f"(the largest error on the ratio of two algorithms measured there; the run's own profile "
                f"priced them), elsewhere below a predicted gain of {args.min_gain:g}x")
    model_text = ("NCCL's own (stdlib/nccl)" if libraries == ["nccl"] else
                  f"{model}" + (" (NCCL: its own, stdlib/nccl)" if "nccl" in libraries else ""))
    header = (f"profile {profile.name}, model {model_text}, mapping {mapping_text}; the library's default is kept "
              f"{kept}" + (f"; segment sizes cutting m into more than {cap} segments are not searched" if cap else ""))
    if libraries == ["nccl"]:
        header = (f"profile {profile.name}, model {model_text}, mapping {mapping_text}; NCCL's three protocols "
                  f"searched per algorithm")
    if args.json == "-":
        json.dump(_json(result, profile, mapping_text, model_text, error), sys.stdout, indent=1)
        print()
    else:
        print(f"tlop tune: {header}")
        if "nccl" in libraries:
            lacking = [c for c in collectives if ("nccl", c) not in result]
            if lacking:
                print(f"NCCL has no {', '.join(lacking)}: not tuned for it")
        for (library, collective), cells in result.items():
            print(f"\n{collective} — {LIBRARY_TITLES[library]} (the file's rules):")
            if library == "nccl":
                print(NCCL_NOTE)
            print_table(["P", "m", "run", "cost", "runner-up", "cost", "margin", "default", "gain", "note"],
                        _rows(cells))
        if args.json:
            from tlop.runtime.atomic import open_text_atomic

            with open_text_atomic(args.json) as f:
                json.dump(_json(result, profile, mapping_text, model_text, error), f, indent=1)
            print(f"wrote {printable(args.json)} (decision tables, JSON)")
    from tlop.decisions.write import write_files

    for line in write_files(args, result, profile, mapping, mapping_text, model_text):
        print(line, file=sys.stderr if args.json == "-" else sys.stdout)
    return 0
