"""The ``tlop`` command.

``main(argv=None)`` parses arguments, runs one subcommand, prints to stdout, and returns the exit
status: 0 on success, 1 for a user error (printed as a diagnostic on stderr, never a traceback),
2 for bad command-line usage (or a missing optional dependency), 130 when interrupted.

Start-up: nothing heavy is imported at module level (numpy, the front end, the JIT, Z3 and
the rules and measure CLIs are imported by the subcommands that use them), and only the
chosen subcommand's argument parser is built.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
import os
import sys
import warnings
from typing import Sequence

from tlop.runtime.diagnostics import TlopError
from tlop.frontend.limits import deep
from tlop.runtime.text import printable
from tlop.runtime.units import format_size, format_time

__all__ = ["main"]


# ----------------------------------------------------------------------------- helpers

def _load(name):
    from tlop.api import load

    return load(name)


def _profile(args):
    from tlop.runtime.profile import default_profile, load_profile

    spec = getattr(args, "profile", None)
    prof = default_profile() if spec is None else load_profile(spec)   # --profile "" is an error
    binds = getattr(args, "bind", None) or []
    if binds:
        mapping = {}
        for b in binds:
            if "=" not in b:
                raise TlopError(f"--bind {b}: expected MODEL_CHANNEL=PROFILE_CHANNEL, e.g. net=tcp")
            k, v = b.split("=", 1)
            mapping[k.strip()] = v.strip()
        prof = prof.with_bindings(mapping)
    if getattr(args, "reduce_op", None):
        prof = prof.with_reduce_op(args.reduce_op)
    if getattr(args, "libtaulop_compat", False):
        prof = prof.with_libtaulop_compat()
    if getattr(args, "out_of_grid", None):
        prof = prof.with_interpolation(out_of_grid=args.out_of_grid)
    return prof


def _assignments(items: Sequence[str]) -> dict:
    out = {}
    for it in items:
        if "=" not in it:
            raise TlopError(f"'{it}': arguments are NAME=VALUE, e.g. P=16 m=1MiB")
        k, v = it.split("=", 1)
        if k.strip() in out:
            raise TlopError(f"'{k.strip()}' is given twice ({k.strip()}={out[k.strip()]} and {it})")
        out[k.strip()] = v.strip()
    return out


def _mapping(args):
    """The process mapping of ``--mapping`` (None when not given)."""
    from tlop.backends.binding import as_mapping

    return as_mapping(getattr(args, "mapping", None))


def _engine(args, handle, profile, points: int = 2):
    """An evaluate(env) callable for the chosen engine.  ``auto`` is the interpreter for a
    single point (``points == 1``: compiling, even from the on-disk cache, costs more than
    the one evaluation) and for algorithms the JIT does not compile (schedules), and the JIT
    otherwise.  ``--mapping`` is applied to algorithms over a process mapping."""
    from tlop import ir
    from tlop.backends.binding import bind_mapping

    mapping = _mapping(args)
    engine = getattr(args, "engine", "auto")
    # the interpreter chosen by ``auto`` reduces schedule stages by counting (checked against the
    # oracle's sort by tests/test_schedule_count.py); ``--engine interp`` is the oracle itself
    schedules = "count" if engine == "auto" else "sort"
    if engine == "auto" and (points == 1 or handle.ir.over is not None or ir.has_schedule(handle.ir.body)):
        engine = "interp"
    if engine in ("auto", "jit"):
        try:
            from tlop.backends import jit  # noqa: F401
        except ImportError:
            if engine == "jit":
                raise TlopError("the JIT engine is not available in this installation (llvmlite missing?)")
            engine = "interp"
        else:
            engine = "jit"
    if engine == "jit":
        import numpy as np

        ev = handle.compile(profile)
        return "jit", lambda env: ev.batch(**env) if any(np.ndim(v) for v in env.values()) else ev(**env)
    from tlop.backends.interp import Interpreter

    from tlop.backends.nonfinite import check_finite

    interp = Interpreter(handle.module.program, profile, mapping, schedules)

    def run(env):
        bound = bind_mapping(handle.ir, env, mapping)
        return check_finite(interp.eval(handle.ir.body, bound), handle.name, handle.module.program,
                            profile, handle.ir.body, bound, mapping=mapping)

    return "interp", run


def _fmt_arg(p, v) -> str:
    if p.type == "bytes":
        return format_size(float(v))
    if p.type == "time":
        return format_time(float(v))
    return f"{v:g}" if isinstance(v, float) else str(v)


# ----------------------------------------------------------------------------- subcommands

def cmd_check(args) -> int:
    for f in args.files:
        m = _load(f)
        n = len(m.own_algorithms)
        print(f"{f}: ok ({n} algorithm{'s' if n != 1 else ''})")
    return 0


def cmd_show(args) -> int:
    from tlop.backends.notation import format_latex, format_text

    m = _load(args.file)
    names = [args.algorithm] if args.algorithm else m.own_algorithms
    if args.raw and args.profile:
        raise TlopError("--profile checks a simplified cost against the original; it does not combine with --raw")
    profile = _profile(args) if args.profile else None
    kind, mapping = _show_mapping(args)
    status = 0
    for i, name in enumerate(names):
        h = m[name]
        over = ""
        if (kind or mapping) and h.ir.over is not None:
            expr, notes, ok, over = _closed_form_shown(args, m.program, h.ir, profile, kind, mapping)
        else:
            expr, notes, ok = _shown_expression(args, m.program, h.ir, profile, mapping)
        status = status if ok else 1
        sig = ", ".join(_signature(p, m.program) for p in h.params)
        if i:
            print()
        if h.doc:
            for line in h.doc.splitlines():
                print(f"/// {line}")
        if args.latex:
            print(f"{name}({sig}){over} = {format_latex(expr, m.program)}")
        else:
            print(f"{name}({sig}){over} =")
            print(f"    {format_text(expr, m.program)}")
        for note in notes:
            print(f"    [{note}]")
    return status


def _show_mapping(args):
    """``(kind, mapping)`` of ``show --mapping``: a kind alone (``sequential``, ``round_robin``:
    symbolic Q) or a concrete mapping (``sequential(8)``: its kind and Q)."""
    text = getattr(args, "mapping", None)
    if text is None:
        return None, None
    from tlop.analysis.closedform import parse_kind

    kind = parse_kind(text)
    if kind is not None:
        return kind, None
    mp = _mapping(args)
    return (mp.kind if mp.kind in ("sequential", "round_robin") else None), mp


def _closed_form_shown(args, program, alg, profile, kind, mapping):
    """``(expression, notes, ok, signature suffix)`` of ``show --mapping`` for an algorithm over a
    process mapping: its closed form (tlop.analysis.closedform) when the schedule has one — with
    Q symbolic, or the mapping's Q substituted —, else the schedule and why there is none."""
    from tlop import ir
    from tlop.analysis.closedform import conditions_for_q, derive, expand_transmissions, substitute_q

    q = getattr(mapping, "Q", None) if mapping is not None else None
    label = str(mapping) if mapping is not None else f"{kind}(Q)"
    d = derive(program, alg, kind) if kind is not None else None
    remaining, failed = conditions_for_q(d, q) if (d is not None and d.ok and q is not None) else (None, [])
    if d is None or not d.ok or args.raw or failed:
        why = d.reason if d is not None else f"{mapping} is not a sequential or round-robin mapping"
        if failed:
            why = f"the derived form needs {', '.join(failed)}"
        notes = [] if args.raw else [f"no closed form for {label}: {why}; the schedule is evaluated by enumeration"]
        return alg.body, notes, True, f" over {label}"
    expr = d.expr if q is None else substitute_q(program, alg, d, q)
    if mapping is None:
        label = f"{kind}({d.q})"
    conds = ", ".join(d.condition_text if q is None else remaining)
    notes = [f"closed form of the schedule ({'; '.join(d.patterns)}), valid when {conds}; "
             f"otherwise the schedule is evaluated by enumeration"]
    ok = True
    if profile is not None:
        try:
            low = expand_transmissions(program, expr, profile)
        except TlopError as err:
            notes.append(f"transfer level on {profile.name}: {err.diagnostics[0].message if err.diagnostics else err}")
        else:
            from tlop.backends.notation import format_text

            nets = [f"{c} via {profile.transmission_kind(profile.resolve_channel(c))}" for c in program.channels
                    if profile.resolve_channel(c) is not None and len(program.variants(ir.SEND_TRANSMISSION,
                                                                                          program.channel_index(c))) > 1]
            via = f" ({', '.join(nets)})" if nets else ""
            notes.append(f"transfer level on {profile.name}{via}: {format_text(low, program)}")
        if mapping is not None:
            from tlop.analysis.agreement import check_on_profile

            guarded = ir.Cond(d.conditions, d.expr, alg.body) if q is None else \
                substitute_q(program, alg, d, q, guarded=True)
            check = check_on_profile(program, alg, guarded, profile, mapping=mapping)
            notes.append(check.render().replace("agrees on", "agrees with enumeration on"))
            ok = check.ok or not check.points
    return expr, notes, ok, f" over {label}"


def _shown_expression(args, program, alg, profile=None, mapping=None):
    """``(expression, notes, ok)`` for ``show``: the expression simplified (all model families
    unless --no), validated with Z3 under --verify (falling back to the original on failure), or
    --raw; the notes say which model assumptions it rests on and, with a profile, whether it
    agrees with the original on that profile's tables (``ok`` False when it does not)."""
    if args.raw:
        return alg.body, [], True
    from tlop.analysis.rules.catalogue import assumptions_text, table_assumptions
    from tlop.analysis.simplify import DEFAULT_FAMILIES

    families = DEFAULT_FAMILIES - set(args.no)
    if args.verify:
        from tlop.analysis.prove import simplify_validated

        v = simplify_validated(program, alg, families=families)
        if v.fell_back:
            return v.expr, [f"translation validation failed ({v.outcome.status}); showing the original"], True
        if v.outcome.mode == "unchanged":
            return v.expr, ["validated: unchanged"], True
        expr, used = v.expr, v.outcome.assumptions
        notes = [f"validated: {v.outcome.mode}, {assumptions_text(used)}"]
    else:
        from tlop.analysis.simplify import PassManager, context_for

        res = PassManager(context_for(program, alg, families=families)).run(alg.body)
        if res.expr == alg.body:
            return res.expr, [], True
        expr, used = res.expr, res.assumptions
        notes = [f"simplified, {assumptions_text(used)}"]
    if profile is None:
        return expr, notes, True
    from tlop.analysis.agreement import check_on_profile

    check = check_on_profile(program, alg, expr, profile, mapping=mapping)
    notes.append(check.render())
    if not check.ok and check.points:
        rest = table_assumptions(used)
        if rest:
            flags = " ".join(f"--no {n}" for n in rest if n in ("linearity", "A1"))
            notes.append(f"the rewrite assumes {', '.join(rest)}"
                         + (f"; {flags} gives a form that does not" if flags else ""))
    return expr, notes, check.ok


def _signature(p, program) -> str:
    """``P: int >= 1`` / ``c: channel = shm`` for a parameter."""
    from tlop.backends.interp import Interpreter

    out = f"{p.name}: {p.type}"
    const = Interpreter(program, None)
    if p.constraint is not None and p.constraint_span is not None:  # not the implicit "size >= 0"
        op, bound = p.constraint
        out += f" {op} {_fmt_value(p.type, const.eval(bound, {}), program)}"
    if p.default is not None:
        out += f" = {_fmt_value(p.type, const.eval(p.default, {}), program)}"
    return out


def _fmt_value(ptype, v, program) -> str:
    if ptype == "channel":
        return program.channels[int(v)]
    if ptype == "bytes":
        return format_size(float(v))
    if ptype == "time":
        return format_time(float(v)).replace(" ", "")
    return f"{float(v):g}"


def cmd_eval(args) -> int:
    m = _load(args.file)
    h = m[args.algorithm]
    env = h.bind(_assignments(args.assignments), strings=True)
    prof = _profile(args)
    engine, run = _engine(args, h, prof, points=1)
    value = float(run(env))
    if math.isnan(value):
        raise TlopError(f"'{h.name}' evaluated to NaN for these arguments")
    shown = {p.name: env[p.name] for p in h.params}
    mapping = _mapping(args) if h.ir.over is not None else None
    if args.json:
        out = {
            "algorithm": h.name, "file": str(m.path), "profile": prof.name, "engine": engine,
            "arguments": {k: (m.program.channels[int(v)] if p.type == "channel" else v)
                          for (k, v), p in zip(shown.items(), h.params)},
            "seconds": value,
        }
        if mapping is not None:
            out["mapping"] = str(mapping)
        print(json.dumps(out, indent=2))
        return 0
    argtxt = ", ".join(
        f"{p.name}={m.program.channels[int(shown[p.name])] if p.type == 'channel' else _fmt_arg(p, shown[p.name])}"
        for p in h.params)
    over = f" over {mapping}" if mapping is not None else ""
    print(f"{h.name}({argtxt}){over} on {prof.name}: {value!r} s  ({format_time(value)})")
    return 0


def _grid(raw: dict, ptypes: dict, program, max_points: int | None = None):
    """The grid of the ``NAME=RANGE`` arguments (:class:`tlop.cli.grid.Grid`), its size
    checked against ``--max-points`` before any point is generated."""
    from tlop.cli.grid import DEFAULT_MAX_POINTS, Grid
    from tlop.cli.ranges import parse_axis

    limit = DEFAULT_MAX_POINTS if max_points is None else max_points
    axes = {k: parse_axis(k, v, ptypes[k], program, limit) for k, v in raw.items()}
    return Grid(axes, limit)


def _evaluate_columns(run, h, columns: dict, ptypes: dict) -> "np.ndarray":
    """The cost at every grid point; channel arguments are scalars, so each combination of
    channels is evaluated on its own."""
    import numpy as np

    n = len(next(iter(columns.values()))) if columns else 1
    channels = {k: v for k, v in columns.items() if ptypes[k] == "channel"}
    if not channels:
        return np.broadcast_to(np.asarray(run(h.bind(columns)), dtype=float), (n,)).copy()
    values = np.empty(n)
    keys = list(channels)
    for combo in {tuple(float(channels[k][i]) for k in keys) for i in range(n)}:
        mask = np.all([channels[k] == c for k, c in zip(keys, combo)], axis=0)
        sub = {k: (v[mask] if k not in channels else combo[keys.index(k)]) for k, v in columns.items()}
        values[mask] = np.broadcast_to(run(h.bind(sub)), (int(mask.sum()),))
    return values


def _label(ptypes: dict, program):
    def label(k, v):
        if ptypes[k] == "channel":
            return program.channels[int(v)]
        return format_size(v) if ptypes[k] == "bytes" else f"{v:g}"
    return label


def _csv_cells(names, ptypes, label, columns, j) -> list:
    return [label(k, columns[k][j]) if ptypes[k] == "channel" else _csv_number(columns[k][j]) for k in names]


def _matrix_chunk(grid, rk, ck) -> int:
    """Points per chunk for a two-parameter table: whole rows of it (the grid is row-major)."""
    from tlop.cli.grid import CHUNK_POINTS

    cols = len(grid.axes[ck])
    return cols * max(1, CHUNK_POINTS // cols)


def cmd_sweep(args) -> int:
    m = _load(args.file)
    h = m[args.algorithm]
    prof = _profile(args)
    raw = _assignments(args.assignments)
    ptypes = {p.name: p.type for p in h.params}
    for k in raw:
        if k not in ptypes:
            raise TlopError(f"'{h.name}' has no parameter '{k}'; parameters: {', '.join(ptypes)}")
    grid = _grid(raw, ptypes, m.program, getattr(args, "max_points", None))
    names, axes = grid.names, grid.axes
    swept = [k for k, v in axes.items() if len(v) > 1]
    engine, run = _engine(args, h, prof)
    label = _label(ptypes, m.program)

    def chunks(size=None):
        from tlop.cli.grid import CHUNK_POINTS

        for start, columns in grid.chunks(size or CHUNK_POINTS):
            yield columns, _evaluate_columns(run, h, columns, ptypes)

    if args.csv:
        _write_csv(args.csv, names + ["seconds"],
                   ([_csv_cells(names, ptypes, label, columns, j) + [repr(float(val))]
                     for j, val in enumerate(values)] for columns, values in chunks()))
        return 0
    print(f"{h.name} on {prof.name} ({engine}), seconds")
    if len(swept) == 2:
        rk, ck = swept
        fixed = {k: axes[k][0] for k in names if k not in swept}
        if fixed:
            print("  " + ", ".join(f"{k}={label(k, v)}" for k, v in fixed.items()))
        header = [f"{rk} \\ {ck}"] + [label(ck, c) for c in axes[ck]]
        cols = len(axes[ck])

        def rows():
            for columns, values in chunks(_matrix_chunk(grid, rk, ck)):
                yield [[label(rk, columns[rk][i])] + [f"{v:.4e}" for v in values[i:i + cols]]
                       for i in range(0, len(values), cols)]
        _print_table_chunks(header, rows)
    else:
        header = names + ["seconds"]
        _print_table_chunks(header, lambda: ([[label(k, columns[k][j]) for k in names] + [f"{val:.6e}"]
                                              for j, val in enumerate(values)] for columns, values in chunks()))
    return 0


def cmd_best(args) -> int:
    """Which algorithm of a file is cheapest at each point of a grid (polyalgorithm selection)."""
    import numpy as np

    from tlop.backends.binding import constraint_mask

    m = _load(args.file)
    prof = _profile(args)
    raw = _assignments(args.assignments)
    names = args.algorithms or m.own_algorithms  # a file groups the algorithms of one operation
    candidates, skipped = [], []
    for name in names:
        h = m[name]
        missing = [p.name for p in h.params if p.default is None and p.name not in raw]
        if missing:
            skipped.append(f"{name} (needs {', '.join(missing)})")
        elif not h.applies_to(prof):
            skipped.append(f"{name} (profile '{prof.name}' lacks its tables)")
        elif h.ir.over is not None and args.mapping is None:
            skipped.append(f"{name} (runs over a process mapping: give --mapping)")
        else:
            candidates.append(h)
    if not candidates:
        raise TlopError("no algorithm can be priced on this grid: " + "; ".join(skipped))
    ptypes: dict = {}
    for h in candidates:
        for p in h.params:
            if ptypes.setdefault(p.name, p.type) != p.type:
                raise TlopError(f"parameter '{p.name}' is {ptypes[p.name]} in one algorithm and {p.type} in another")
    for k in raw:
        if k not in ptypes:
            raise TlopError(f"no candidate algorithm has a parameter '{k}'")
    grid = _grid(raw, ptypes, m.program, getattr(args, "max_points", None))
    names_, axes = grid.names, grid.axes
    runs: dict = {}    # candidate index -> (engine, run), compiled at its first admissible point
    used = [-1]        # the last candidate priced at some point (its engine is the one shown)

    def chunks(size=None):
        """(columns, best, best_cost, second, costs) for each chunk of the grid."""
        from tlop.cli.grid import CHUNK_POINTS

        for start, columns in grid.chunks(size or CHUNK_POINTS):
            n = len(next(iter(columns.values()))) if columns else 1
            costs = np.full((len(candidates), n), np.inf)
            for i, h in enumerate(candidates):
                own = {k: v for k, v in columns.items() if any(p.name == k for p in h.params)}
                ok = np.broadcast_to(constraint_mask(h.ir, own), (n,))
                if not ok.any():
                    continue
                if i not in runs:
                    runs[i] = _engine(args, h, prof)
                used[0] = max(used[0], i)
                costs[i, ok] = _evaluate_columns(runs[i][1], h, {k: v[ok] for k, v in own.items()}, ptypes)
            costs[np.isnan(costs)] = np.inf
            best = np.argmin(costs, axis=0)
            best_cost = costs[best, np.arange(n)]
            second = np.sort(costs, axis=0)[1] if len(candidates) > 1 else np.full(n, np.inf)
            yield columns, best, best_cost, second, costs

    label = _label(ptypes, m.program)

    def winner(best, best_cost, j):
        return candidates[best[j]].name if np.isfinite(best_cost[j]) else "-"

    if args.csv:
        _write_csv(args.csv, names_ + ["best", "seconds"] + [h.name for h in candidates],
                   ([_csv_cells(names_, ptypes, label, columns, j)
                     + [winner(best, best_cost, j), repr(float(best_cost[j]))] + [repr(float(c)) for c in costs[:, j]]
                     for j in range(len(best))] for columns, best, best_cost, second, costs in chunks()))
        return 0

    def preamble():
        engine = runs[used[0]][0] if used[0] >= 0 else "interp"
        print(f"cheapest of {len(candidates)} algorithms of {args.file} on {prof.name} ({engine})")
        if skipped:
            print("  not priced: " + "; ".join(skipped))

    swept = [k for k, v in axes.items() if len(v) > 1]
    if len(swept) == 2:
        rk, ck = swept
        fixed = {k: axes[k][0] for k in names_ if k not in swept}
        header = [f"{rk} \\ {ck}"] + [label(ck, c) for c in axes[ck]]
        cols = len(axes[ck])

        def preamble2():
            preamble()
            if fixed:
                print("  " + ", ".join(f"{k}={label(k, v)}" for k, v in fixed.items()))

        def rows():
            for columns, best, best_cost, _, _ in chunks(_matrix_chunk(grid, rk, ck)):
                yield [[label(rk, columns[rk][i])] + [winner(best, best_cost, j) for j in range(i, i + cols)]
                       for i in range(0, len(best), cols)]
        _print_table_chunks(header, rows, preamble2)
    else:
        header = names_ + ["best", "seconds", "next best ×"]

        def rows():
            for columns, best, best_cost, second, _ in chunks():
                yield [[label(k, columns[k][j]) for k in names_]
                       + [winner(best, best_cost, j), f"{best_cost[j]:.4e}",
                          f"{second[j] / best_cost[j]:.2f}" if np.isfinite(second[j]) and best_cost[j] > 0 else "-"]
                       for j in range(len(best))]
        _print_table_chunks(header, rows, preamble)
    return 0


def _write_csv(target: str, header: list, chunks) -> None:
    """Write rows (an iterable of lists of rows, one list a chunk) as CSV to the file ``target``
    (atomically: a temporary file written chunk by chunk, then a rename), or to standard output
    for ``-``.  Memory holds one chunk's rows at a time."""
    n = 0

    def write(f):
        nonlocal n
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for rows in chunks:
            w.writerows(rows)
            n += len(rows)

    if target == "-":
        write(sys.stdout)
        return
    from tlop.runtime.atomic import open_text_atomic

    try:  # all or nothing: a failure leaves the previous file as it was
        with open_text_atomic(target) as f:
            write(f)
    except OSError as err:
        raise TlopError(f"{printable(target)}: cannot write the CSV: {err.strerror or err}") from None
    print(f"wrote {n} rows to {printable(target)}")


def _print_table_chunks(header, chunks, preamble=None) -> None:
    """Print an aligned table whose rows come from ``chunks()`` (a fresh iterator of lists of
    rows at each call).  A table of one chunk is kept and printed; a longer one is produced
    twice — once to measure the columns, once to print — so memory holds one chunk."""
    it = chunks()
    first = next(it, [])
    second = next(it, None)
    if second is None:
        if preamble:
            preamble()
        _print_table(header, first)
        return
    widths = [len(str(h)) for h in header]
    for rows in itertools.chain([first, second], it):
        for r in rows:
            for i, c in enumerate(r):
                if len(c) > widths[i]:
                    widths[i] = len(c)
    if preamble:
        preamble()
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths)))
    for rows in chunks():
        sys.stdout.write("".join("  ".join(str(c).rjust(w) for c, w in zip(r, widths)) + "\n" for r in rows))


def _csv_number(v) -> str:
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)


def _print_table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(str(c).rjust(w) for c, w in zip(r, widths)))


def cmd_profiles(args) -> int:
    from tlop.runtime.profile import bundled_profiles, default_profile, load_profile

    default = default_profile().name
    for name, path in sorted(bundled_profiles().items()):
        p = load_profile(name)
        md = p.metadata
        chans = ", ".join(f"{c} ({info.transmission})" for c, info in p.channels.items())
        mark = " (default)" if name == default else ""
        print(f"{name}{mark}")
        if md.get("machine"):
            print(f"  machine:  {md['machine']}")
        print(f"  channels: {chans}; bind: {', '.join(f'{k}={v}' for k, v in p.bindings.items()) or '-'}")
        ops = p.reduce_ops()
        tables = [t for t in p.table_names() if t[len("gamma_"):] not in ops or not t.startswith("gamma_")]
        print(f"  tables:   {', '.join(tables)}")
        if ops:
            print(f"  reduce:   gamma_OP for OP in {', '.join(ops)} (--reduce-op OP)")
        if md.get("source"):
            print(f"  source:   {md['source']}")
        if md.get("date"):
            print(f"  date:     {md['date']}")
    return 0


DEMO = [
    ("taulop/bcast", "binomial_bcast", {"c": "shm"}),
    ("taulop/bcast", "linear_bcast", {"c": "shm"}),
    ("taulop/bcast", "binomial_bcast", {"c": "net"}),
    ("taulop/allgather", "ring_allgather_node", {}),
    ("taulop/allgather", "ring_allgather_seq", {"Q": "8"}),
    ("taulop/allgather", "ring_allgather_rr", {"Q": "8"}),
    ("taulop/scatter", "binomial_scatter", {"S": "8KiB"}),
    ("taulop/allgather", "rd_allgather", {"S": "8KiB"}),
]


def _demo_processes(text: str) -> float:
    """One ``-P`` value of ``tlop demo``: a whole number of processes."""
    try:
        p = float(text)
    except ValueError:
        p = math.nan
    if not (math.isfinite(p) and p.is_integer() and 2 <= p <= 1 << 20):
        raise TlopError(f"-P {printable(text)}: a process count must be a whole number from 2 to {1 << 20}")
    return p


def cmd_demo(args) -> int:
    """Price a handful of stdlib algorithms on the default profile, side by side."""
    from tlop.api import load

    prof = _profile(args)
    sizes = [1024.0, 65536.0, 1048576.0]
    procs = [_demo_processes(p) for p in args.P]
    print(f"tlop demo: stdlib algorithms on profile '{prof.name}' "
          f"({prof.metadata.get('machine', 'no machine description')})")
    print("cost in microseconds; P = processes, m = message size\n")
    header = ["algorithm", "P"] + [format_size(m) for m in sizes]
    rows = []
    for file, name, fixed in DEMO:
        h = load(file)[name]
        _, run = _engine(args, h, prof)
        for P in procs:
            if any(p.name == "Q" for p in h.params) and P % 8:
                continue  # the mapping algorithms need whole nodes of 8 cores
            if name == "ring_allgather_node" and P > 8:
                continue  # one node of metropolis has 8 cores
            row = [f"{file}:{name}" + (f" ({', '.join(f'{k}={v}' for k, v in fixed.items())})" if fixed else ""),
                   f"{P:g}"]
            for m in sizes:
                given = {"P": f"{P:g}", "m": f"{m:g}", **fixed}
                env = h.bind({k: v for k, v in given.items() if any(p.name == k for p in h.params)},
                             strings=True)
                row.append(f"{float(run(env)) * 1e6:.2f}")
            rows.append(row)
    _print_table(header, rows)
    return 0


# ----------------------------------------------------------------------------- parser

def _add_profile_options(p):
    p.add_argument("--profile", help="bundled profile name or path to a profile JSON (default: metropolis)")
    p.add_argument("--bind", action="append", metavar="CH=PCH",
                   help="bind a model channel to a profile channel, e.g. --bind net=tcp")
    p.add_argument("--out-of-grid", choices=("allow", "warn", "error"),
                   help="what a table lookup outside the measured grid does")
    p.add_argument("--reduce-op", metavar="OP",
                   help="the reduction operation whose cost the table gamma holds, e.g. max "
                        "(the profile's gamma_OP table; default: as stored, libtaulop's SUM)")
    p.add_argument("--libtaulop-compat", action="store_true",
                   help="read the tables as libtaulop does: tau beyond the largest column clamps, sizes "
                        "past the grid are charged in whole largest-size chunks, numbers rounded to float32")
    p.add_argument("--engine", choices=("auto", "jit", "interp"), default="auto",
                   help="evaluation engine (default: the interpreter for one point and for schedules, the JIT "
                        "for grids)")
    p.add_argument("--mapping", metavar="MAPPING",
                   help="process mapping for algorithms over one: sequential(Q), round_robin(Q), "
                        "sequential(nodes=M), round_robin(nodes=M), or a layout file (.json, .csv)")


#: subcommands whose arguments and runners live with their packages: name -> help
PACKAGE_COMMANDS = {
    "rules": "list the rewrite rules; --verify proves them with Z3",
    "explain": "print the derivation of an algorithm's simplified cost",
    "prove": "prove or refute an inequality under the model axioms",
    "measure": "measure a platform profile with MPI benchmarks",
}
MPI_HINT = ("tlop measure needs mpi4py, which is not installed; install it with "
            "pip install 'tlop[mpi]' (or 'tlop[mpich]' to get an MPI library as well)")


#: every subcommand, in the order of ``tlop --help``
COMMANDS = ("check", "show", "eval", "sweep", "best", "profiles", "demo", "convert-taulop") + tuple(PACKAGE_COMMANDS)


def _positive_count(text: str) -> int:
    try:
        n = int(float(text)) if text.strip().lower() not in ("inf", "nan") else 0
    except (ValueError, OverflowError):
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of points, not '{printable(text)}'")
    return n


def _add_max_points(p) -> None:
    p.add_argument("--max-points", type=_positive_count, metavar="N",
                   help="evaluate grids of up to N points (default 10,000,000); any grid is evaluated and "
                        "written in chunks, in bounded memory")


def build_parser(chosen=None) -> argparse.ArgumentParser:
    """The argument parser; with ``chosen`` (a name of :data:`COMMANDS`) only that
    subcommand's parser is built (start-up: the others may import heavy modules)."""
    ap = argparse.ArgumentParser(prog="tlop", description="Compile and evaluate communication-cost models.")
    ap.add_argument("--version", action="version", version=f"tlop {_version()}")
    sub = _Subcommands(ap.add_subparsers(dest="command", metavar="COMMAND"), chosen)

    p = sub.add_parser("check", help="parse and check .tlop files")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("show", help="print an algorithm's cost expression in the papers' notation")
    p.add_argument("file", metavar="FILE")
    p.add_argument("algorithm", nargs="?", metavar="ALG")
    p.add_argument("--latex", action="store_true", help="print LaTeX")
    p.add_argument("--raw", action="store_true", help="print the expression as written, not simplified")
    p.add_argument("--verify", action="store_true",
                   help="prove the simplified expression equal to the original with Z3 (translation validation)")
    p.add_argument("--no", action="append", default=[], choices=("linearity", "A1", "A2", "A3"),
                   help="do not simplify with this model assumption (repeatable), e.g. --no A1")
    p.add_argument("--profile", help="also check that the simplified and the original cost agree on this "
                                     "profile's tables (its message sizes and τ values); bundled name or path")
    p.add_argument("--bind", action="append", metavar="CH=PCH",
                   help="with --profile: bind a model channel to a profile channel, e.g. --bind net=tcp")
    p.add_argument("--mapping", metavar="MAPPING",
                   help="for algorithms over a process mapping: print the schedule's closed form for "
                        "'sequential' or 'round_robin' (Q ranks per node, symbolic) or a concrete mapping "
                        "such as sequential(8); with --profile, also its transfer-level form and its agreement "
                        "with enumeration (concrete mapping)")
    p.set_defaults(run=cmd_show)

    p = sub.add_parser("eval", help="evaluate an algorithm at one point")
    p.add_argument("file", metavar="FILE")
    p.add_argument("algorithm", metavar="ALG")
    p.add_argument("assignments", nargs="*", metavar="NAME=VALUE")
    p.add_argument("--json", action="store_true", help="print JSON")
    _add_profile_options(p)
    p.set_defaults(run=cmd_eval)

    p = sub.add_parser("sweep", help="evaluate an algorithm over a grid of points")
    p.add_argument("file", metavar="FILE")
    p.add_argument("algorithm", metavar="ALG")
    p.add_argument("assignments", nargs="*", metavar="NAME=RANGE",
                   help="e.g. P=2..256:x2 m=1KiB..4MiB:x4 Q=8 or c=shm,net")
    p.add_argument("--csv", metavar="OUT", help="write the grid as CSV ('-' for stdout)")
    _add_max_points(p)
    _add_profile_options(p)
    p.set_defaults(run=cmd_sweep)

    p = sub.add_parser("best", help="which algorithm of a file is cheapest at each point of a grid")
    p.add_argument("file", metavar="FILE")
    p.add_argument("assignments", nargs="*", metavar="NAME=RANGE", help="e.g. P=2..256:x2 m=1KiB..4MiB:x4 s=8KiB")
    p.add_argument("--only", dest="algorithms", action="append", metavar="ALG",
                   help="compare this algorithm (repeatable; it may come from an import); default: the algorithms "
                        "FILE itself declares")
    p.add_argument("--csv", metavar="OUT", help="write every algorithm's cost per point as CSV ('-' for stdout)")
    _add_max_points(p)
    _add_profile_options(p)
    p.set_defaults(run=cmd_best)

    p = sub.add_parser("profiles", help="list the bundled platform profiles and their provenance")
    p.set_defaults(run=cmd_profiles)

    p = sub.add_parser("demo", help="price several stdlib algorithms on the default profile")
    p.add_argument("-P", nargs="+", default=["2", "8", "32"], help="process counts (default: 2 8 32)")
    _add_profile_options(p)
    p.set_defaults(run=cmd_demo)

    p = sub.add_parser("convert-taulop", help="convert libtaulop parameter files into a profile")
    if not isinstance(p, _Skipped):
        from tlop.runtime import convert_taulop

        convert_taulop.add_arguments(p)
        p.set_defaults(run=convert_taulop.run)

    _add_package_commands(sub)
    return ap


def _add_package_commands(sub):
    """The package subcommands (their modules are imported only when the parser is built for
    them, see :class:`_Subcommands`)."""
    for name, help_ in PACKAGE_COMMANDS.items():
        p = sub.add_parser(name, help=help_)
        if isinstance(p, _Skipped):
            continue
        if name == "measure":
            from tlop.runtime.measure import cli as measure_cli

            measure_cli.add_arguments(p)
            p.set_defaults(run=_run_measure)
            continue
        from tlop.cli import rules as rules_cli

        if name == "rules":
            rules_cli.add_rules_arguments(p)
            p.set_defaults(run=rules_cli.run_rules)
        elif name == "explain":
            rules_cli.add_explain_arguments(p)
            p.set_defaults(run=lambda a: rules_cli.run_explain(a, _load))
        else:
            rules_cli.add_prove_arguments(p)
            p.set_defaults(run=lambda a: rules_cli.run_prove(a, _load))


class _Skipped:
    """Stands for the parser of a subcommand that was not chosen: accepts and ignores every
    call made to define it."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: self


class _Subcommands:
    """``add_subparsers()`` that builds only the chosen subcommand's parser (all of them when
    ``chosen`` is None: ``tlop --help``, or a command line naming no known command, so that
    argparse lists the choices)."""

    def __init__(self, sub, chosen):
        self.sub, self.chosen = sub, chosen

    def add_parser(self, name, **kwargs):
        if self.chosen is not None and name != self.chosen:
            return _Skipped()
        return self.sub.add_parser(name, **kwargs)


def _run_measure(args) -> int:
    """``tlop measure``, or one line saying how to install mpi4py (exit status 2)."""
    try:
        import mpi4py  # noqa: F401  (the optional dependency: the 'mpi' extra)
    except ImportError:
        print(f"tlop: error: {MPI_HINT}", file=sys.stderr)
        return 2
    from tlop.runtime.measure import cli as measure_cli

    return measure_cli.run(args)


def _version() -> str:
    from tlop import __version__

    return __version__


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings (e.g. a table lookup outside the measured grid) as one line, no source dump."""
    print(f"tlop: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in argv if not a.startswith("-")), None)  # top-level options take no value
    parser = build_parser(first if first in COMMANDS else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse exits on usage errors and --help
        return int(e.code or 0)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        with deep(), warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return int(args.run(args) or 0)
    except TlopError as e:
        print(e.render(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tlop: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of our output went away (tlop ... | head)
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (so the exit flush does not complain)
        except OSError:
            pass
        return 0
    except OSError as e:  # a file the user named cannot be read or written
        where = f": {e.filename}" if getattr(e, "filename", None) else ""
        print(f"tlop: error: {e.strerror or e}{where}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
