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
import math
import os
import sys
import warnings
from typing import Sequence

from tlop.runtime.diagnostics import TlopError
from tlop.frontend.limits import deep
from tlop.runtime.text import printable
from tlop.runtime.units import format_size
from tlop.cli import format as fmt
from tlop.cli.jsonout import emit as _emit_json
from tlop.cli.table import LONG_TABLE, matrix_layout, print_table

__all__ = ["main"]


# ----------------------------------------------------------------------------- helpers

def _load(name):
    from tlop.api import load
    from tlop.frontend.limits import keep_alive

    module = load(name)
    keep_alive(module)  # freed by the process's exit, not object by object when the command returns
    return module


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


def _mapping(args, handle=None):
    """The process mapping of ``--mapping``, or the configuration of ``--config``, ``--layout``
    and ``--partition`` (:mod:`tlop.runtime.configs`); None when none is given.  With the
    algorithm's ``handle``, a configuration offering several partitions gives the one for that
    algorithm and the point's ``N`` (``args._point``, set by the commands at one point)."""
    from tlop.backends.binding import as_mapping
    from tlop.runtime.configs import configuration

    cfg = configuration(getattr(args, "config", None), getattr(args, "layout", None),
                        getattr(args, "partition", None))
    if cfg is None:
        return as_mapping(getattr(args, "mapping", None))
    if getattr(args, "mapping", None):
        raise TlopError("--mapping and --config/--layout both place the ranks; give one of them")
    if handle is not None:
        n = getattr(args, "_point", {}).get("N", "")
        cfg = cfg.select_partition(handle.name, int(n) if n.isdigit() else None)
    return cfg


def _point(args, handle, items) -> dict:
    """The ``NAME=VALUE`` arguments of one point; under a configuration (``--config``,
    ``--layout``) ``P`` defaults to its number of ranks.  Remembered for :func:`_mapping`."""
    point = _assignments(items)
    args._point = dict(point)
    if handle.ir.over is not None and "P" not in point and any(p.name == "P" for p in handle.params):
        from tlop.runtime.mapping import Layout

        mapping = _mapping(args, handle)
        if isinstance(mapping, Layout):
            point["P"] = str(mapping.P)
    if "N" in point and not any(p.name == "N" for p in handle.params) and _mapping(args, handle) is not None \
            and getattr(_mapping(args, handle), "partition", None) is not None:
        # N=… chose the configuration's partition of that size (a kernel reads N from it)
        point.pop("N")
    return point


def _engine(args, handle, profile, points: int = 2, mapping=None, config: bool = False):
    """An evaluate(env) callable for the chosen engine.  ``auto`` is the interpreter for a
    single point (``points == 1``: compiling, even from the on-disk cache, costs more than
    the one evaluation), for per-rank arguments (the JIT refuses them) and for schedules (their
    native code takes seconds to compile; counting is cheaper for a few points) except in a
    configuration sweep (``config``) of at least 16 evaluations in all, and the JIT otherwise;
    an algorithm the JIT refuses falls back to the interpreter under ``auto``.  ``--mapping`` is
    applied to algorithms over a process mapping (``mapping``, when given, instead: a
    configuration of ``tlop sweep --config M1..M16``)."""
    from tlop import ir
    from tlop.backends.binding import bind_mapping

    mapping = _mapping(args, handle) if mapping is None else mapping
    if mapping is not None:  # a configuration's HLogGP parameters (tlop.runtime.hloggp)
        from tlop.runtime.hloggp import for_mapping

        profile = for_mapping(profile, mapping, handle.module.program)
    engine = getattr(args, "engine", "auto")
    # the interpreter chosen by ``auto`` reduces schedule stages by counting (checked against the
    # oracle's sort by tests/test_schedule_count.py); ``--engine interp`` is the oracle itself
    schedules = "count" if engine == "auto" else "sort"
    auto = engine == "auto"
    schedule = handle.ir.over is not None or ir.has_schedule(handle.ir.body)
    # a schedule is compiled natively (seconds, once) only for a configuration sweep of at least
    # 16 evaluations (``points``: all of them, every configuration shares the compiled code);
    # otherwise counting in the interpreter is cheaper than compiling
    if auto and (points == 1 or (schedule and not (config and points >= 16))
                 or any(p.per_rank is not None for p in handle.params)):  # the JIT refuses per-rank
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

        try:
            ev = handle.compile(profile, mapping=mapping)
        except TlopError as err:
            from tlop.backends.jit import NotCompilable

            if not (auto and isinstance(err, NotCompilable)):
                raise
            ev = None  # ``auto`` chose the JIT and it refuses: the interpreter evaluates
        if ev is not None:
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
    return fmt.param_text(p.type, v)


# ----------------------------------------------------------------------------- subcommands

def _check_targets(items):
    """The files ``tlop check`` checks: each FILE (or stdlib module) as given, and every
    ``.tlop`` file under each DIR (sorted, hidden directories skipped)."""
    from pathlib import Path

    out = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*.tlop")
                           if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts))
            if not found:
                raise TlopError(f"{printable(item)}: no .tlop files under this directory")
            out.extend(str(f) for f in found)
        else:
            out.append(item)
    return out


def cmd_check(args) -> int:
    """Check every file (all of them, also after one fails); exit 1 when any has an error."""
    from tlop.cli.jsonout import diagnostics_json

    files = _check_targets(args.files)
    results, diagnostics, failed = [], [], 0
    for f in files:
        try:
            m = _load(f)
        except TlopError as err:
            failed += 1
            results.append({"file": f, "ok": False, "algorithms": []})
            diagnostics.extend(diagnostics_json(err))
            if not args.json:
                _print_error(err)
            continue
        results.append({"file": f, "ok": True, "algorithms": list(m.own_algorithms)})
        if not args.json:
            n = len(m.own_algorithms)
            print(f"{f}: ok ({n} algorithm{'s' if n != 1 else ''})")
    if args.json:
        _emit_json({"ok": not failed, "files": results, "diagnostics": diagnostics})
    elif len(files) > 1 and (failed or len(files) != len(args.files)):
        print(f"{len(files)} files checked: {len(files) - failed} ok, {failed} with errors")
    return 1 if failed else 0


def cmd_show(args) -> int:
    from tlop.backends.notation import format_latex, format_text

    if args.source or args.path:  # the module's text, or where it is (stdlib modules included)
        from tlop.frontend.loader import resolve_path

        path = resolve_path(args.file)
        if args.path:
            print(path)
        else:
            sys.stdout.write(path.read_text(encoding="utf-8"))
        return 0
    m = _load(args.file)
    names = [args.algorithm] if args.algorithm else m.own_algorithms
    if args.raw and args.profile:
        raise TlopError("--profile checks a simplified cost against the original; it does not combine with --raw")
    profile = _profile(args) if args.profile else None
    kind, mapping = _show_mapping(args)
    status = 0
    shown = []
    for i, name in enumerate(names):
        h = m[name]
        over = ""
        if (kind or mapping) and h.ir.over is not None:
            expr, notes, ok, over = _closed_form_shown(args, m.program, h.ir, profile, kind, mapping)
        else:
            expr, notes, ok = _shown_expression(args, m.program, h.ir, profile, mapping)
        status = status if ok else 1
        sig = ", ".join(_signature(p, m.program) for p in h.params)
        if h.ir.requires is not None:
            over = f"{over} where {format_text(h.ir.requires, m.program)}"
        if args.json:
            shown.append({"algorithm": name, "signature": f"{name}({sig}){over}", "doc": h.doc or None,
                          "text": format_text(expr, m.program), "latex": format_latex(expr, m.program),
                          "notes": list(notes), "ok": ok})
            continue
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
    if args.json:
        _emit_json({"file": str(m.path), "algorithms": shown})
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

    out = f"{p.name}: {p.type}" + (f"[{p.per_rank}]" if p.per_rank is not None else "")
    const = Interpreter(program, None)
    if p.constraint is not None and p.constraint_span is not None:  # not the implicit "size >= 0"
        op, bound = p.constraint
        out += f" {op} {_fmt_value(p.type, const.eval(bound, {}), program)}"
    if p.default is not None:
        out += f" = {_fmt_value(p.type, const.eval(p.default, {}), program)}"
    return out


def _fmt_value(ptype, v, program) -> str:
    return fmt.param_text(ptype, v, program.channels).replace(" ", "")


def cmd_eval(args) -> int:
    m = _load(args.file)
    h = m[args.algorithm]
    env = h.bind(_point(args, h, args.assignments), strings=True)
    prof = _profile(args)
    engine, run = _engine(args, h, prof, points=1)
    value = float(run(env))
    if math.isnan(value):
        raise TlopError(f"'{h.name}' evaluated to NaN for these arguments")
    shown = {p.name: env[p.name] for p in h.params}
    mapping = _mapping(args, h) if h.ir.over is not None else None
    if args.json:
        out = {
            "algorithm": h.name, "file": str(m.path), "profile": prof.name, "engine": engine,
            "arguments": {p.name: fmt.param_json(p.type, shown[p.name], m.program.channels) for p in h.params},
            "seconds": value,
        }
        if mapping is not None:
            out["mapping"] = str(mapping)
        _emit_json(out)
        return 0
    argtxt = ", ".join(f"{p.name}={fmt.param_text(p.type, shown[p.name], m.program.channels)}" for p in h.params)
    over = f" over {mapping}" if mapping is not None else ""
    print(f"{h.name}({argtxt}){over} on {prof.name}: {fmt.seconds(value, args)}")
    return 0


def _grid(raw: dict, ptypes: dict, program, max_points: int | None = None):
    """The grid of the ``NAME=RANGE`` arguments (:class:`tlop.cli.grid.Grid`), its size
    checked against ``--max-points`` before any point is generated."""
    from tlop.cli.grid import DEFAULT_MAX_POINTS, Grid
    from tlop.cli.ranges import parse_axis

    limit = DEFAULT_MAX_POINTS if max_points is None else max_points
    axes = {k: parse_axis(k, v, ptypes[k], program, limit) for k, v in raw.items()}
    return Grid(axes, limit)


def _per_rank_arguments(raw: dict, params, ptypes: dict, program) -> dict:
    """The per-rank arguments of ``raw`` (``counts=1KiB,2KiB,…``, ``counts=@sizes.json``, one
    value), taken out of it and parsed: one vector for every point of a grid, never an axis."""
    names = {p.name for p in params if p.per_rank is not None and p.name in raw}
    if not names:
        return {}
    from tlop.backends.binding import parse_cli_value
    from tlop.runtime.per_rank import parse_per_rank_text

    return {k: parse_per_rank_text(k, raw.pop(k), lambda t, k=k: parse_cli_value(t, ptypes[k], k, program))
            for k in sorted(names)}


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


def _label(ptypes: dict, program, args=None):
    def label(k, v):
        return fmt.param_text(ptypes[k], v, program.channels, args)
    return label


def _csv_cells(names, ptypes, label, columns, j) -> list:
    return [label(k, columns[k][j]) if ptypes[k] == "channel" else _csv_number(columns[k][j]) for k in names]


def _json_point(names, ptypes, program, columns, j) -> dict:
    return {k: fmt.param_json(ptypes[k], columns[k][j], program.channels) for k in names}


def _matrix_chunk(grid, rk, ck) -> int:
    """Points per chunk for a two-parameter table: whole rows of it (the grid is row-major)."""
    from tlop.cli.grid import CHUNK_POINTS

    cols = len(grid.axes[ck])
    return cols * max(1, CHUNK_POINTS // cols)


def _cost_width(args) -> int:
    """The width of a printed time, for fitting a matrix before evaluating it (``677.3 µs``;
    a forced unit can print more digits)."""
    return 8 if getattr(args, "unit", "auto") in (None, "auto") else 10


def _transposed(grid, rk, ck, label, cells, chunks):
    """(header, rows) of a two-parameter grid with ``ck`` down and ``rk`` across (a grid
    :func:`tlop.cli.table.matrix_layout` allows to be held); ``cells(result, i)`` is the text of
    point ``i`` of a chunk's ``result``."""
    table = {}
    for result in chunks():
        columns = result[0]
        for i in range(len(columns[rk])):
            table[(float(columns[rk][i]), float(columns[ck][i]))] = cells(result, i)
    header = [f"{ck} \\ {rk}"] + [label(rk, r) for r in grid.axes[rk]]
    rows = [[label(ck, c)] + [table[(float(r), float(c))] for r in grid.axes[rk]] for c in grid.axes[ck]]
    return header, rows


def _plot_checked(args, command: str) -> bool:
    """Whether ``--plot`` can be drawn: its suffix is a picture format (else a TlopError) and
    matplotlib is installed (else a one-line hint on stderr and False)."""
    if not getattr(args, "plot", None):
        return True
    from tlop.cli.plot_grid import PLOT_HINT, check_target
    from tlop.cli.plot_stages import have_matplotlib

    check_target(args.plot, command)
    if not have_matplotlib():
        _print_error(TlopError(PLOT_HINT.format(command=command)))
        return False
    return True


def _gather(chunks, grid, pick, command: str) -> "np.ndarray":
    """The values ``pick(chunk)`` of every chunk, in grid order, shaped as the grid (a picture)."""
    import numpy as np

    from tlop.cli.plot_grid import plotted_axes

    plotted_axes(grid.names, grid.shape, command)  # refuse before evaluating
    return np.concatenate([np.asarray(pick(c), dtype=float) for c in chunks()]).reshape(grid.shape)


def _plot_wrote(args) -> None:
    if getattr(args, "plot", None) and not args.json and args.csv != "-":
        print(f"wrote {printable(args.plot)}")


def cmd_sweep(args) -> int:
    if getattr(args, "config", None) or getattr(args, "layout", None):  # a sweep over configurations
        from tlop.cli import config_sweep

        return config_sweep.run(args)
    if not _plot_checked(args, "sweep"):
        return 2  # a missing optional dependency
    rc = _sweep(args)
    _plot_wrote(args)
    return rc


def _sweep(args) -> int:
    m = _load(args.file)
    h = m[args.algorithm]
    prof = _profile(args)
    raw = _assignments(args.assignments)
    ptypes = {p.name: p.type for p in h.params}
    for k in raw:
        if k not in ptypes:
            raise TlopError(f"'{h.name}' has no parameter '{k}'; parameters: {', '.join(ptypes)}")
    per_rank = _per_rank_arguments(raw, h.params, ptypes, m.program)
    grid = _grid(raw, ptypes, m.program, getattr(args, "max_points", None))
    names, axes = grid.names, grid.axes
    swept = [k for k, v in axes.items() if len(v) > 1]
    engine, run = _engine(args, h, prof)
    label = _label(ptypes, m.program, args)

    def chunks(size=None):
        from tlop.cli.grid import CHUNK_POINTS

        for start, columns in grid.chunks(size or CHUNK_POINTS):
            yield columns, _evaluate_columns(run, h, {**columns, **per_rank}, ptypes)

    if getattr(args, "distributed", False):  # the same chunks, evaluated by the MPI job's workers
        from tlop.cli.distributed import distributed_chunks

        chunks = distributed_chunks(args, grid)  # noqa: F811
    if getattr(args, "plot", None):
        from tlop.cli.plot_grid import sweep_figure, write_figure

        values = _gather(chunks, grid, lambda c: c[1], "sweep")
        fixed = ", ".join(f"{k}={label(k, axes[k][0])}" for k in names if len(axes[k]) == 1)
        title = f"{h.name} on {prof.name}" + (f" ({fixed})" if fixed else "")
        write_figure(sweep_figure(title, names, axes, values, label), args.plot)
    if args.csv:
        _write_csv(args.csv, names + ["seconds"],
                   ([_csv_cells(names, ptypes, label, columns, j) + [repr(float(val))]
                     for j, val in enumerate(values)] for columns, values in chunks()))
        return 0
    if args.json:
        from tlop.cli.jsonout import emit_stream

        emit_stream({"algorithm": h.name, "file": str(m.path), "profile": prof.name, "engine": engine,
                     "parameters": names}, "points",
                    ({**_json_point(names, ptypes, m.program, columns, j), "seconds": float(val)}
                     for columns, values in chunks() for j, val in enumerate(values)))
        return 0
    layout = None
    if len(swept) == 2:
        rk, ck = swept
        layout = matrix_layout(rk, ck, axes, label, _cost_width(args), grid.size)
    # the height of the table is known before evaluating it: title, fixed values, header, rows
    with _paged(args, _table_rows(grid, swept, layout) + 3):
        _print_sweep(args, h, prof, engine, grid, swept, layout, label, chunks)
    return 0


def _table_rows(grid, swept, layout) -> int:
    """The rows of the table of a grid in ``layout`` (known before it is evaluated)."""
    if layout == "matrix":
        return len(grid.axes[swept[0]])
    if layout == "transposed":
        return len(grid.axes[swept[1]])
    return grid.size


def _print_sweep(args, h, prof, engine, grid, swept, layout, label, chunks) -> None:
    """The table of ``tlop sweep``: a matrix, transposed, or one row per point."""
    names, axes = grid.names, grid.axes
    print(f"{h.name} on {prof.name} ({engine})")
    if layout is not None:
        rk, ck = swept
        fixed = {k: axes[k][0] for k in names if k not in swept}
        if fixed:
            print("  " + ", ".join(f"{k}={label(k, v)}" for k, v in fixed.items()))
        if layout == "transposed":
            _print_table(*_transposed(grid, rk, ck, label, lambda r, i: fmt.seconds(r[1][i], args), chunks))
            return
        header = [f"{rk} \\ {ck}"] + [label(ck, c) for c in axes[ck]]
        cols = len(axes[ck])

        def rows():
            for columns, values in chunks(_matrix_chunk(grid, rk, ck)):
                yield [[label(rk, columns[rk][i])] + [fmt.seconds(v, args) for v in values[i:i + cols]]
                       for i in range(0, len(values), cols)]
        _print_table_chunks(header, rows)
    else:  # one row per point (also a matrix too wide for the terminal either way round)
        header = names + ["cost"]
        _print_table_chunks(header, lambda: ([[label(k, columns[k][j]) for k in names] + [fmt.seconds(val, args)]
                                              for j, val in enumerate(values)] for columns, values in chunks()))


def _best_candidates(args, prof, raw):
    """``(candidates, excluded)`` of ``tlop best``: the algorithms to compare — those named with
    ``--only``, else each FILE's own algorithms (every algorithm in its scope when it declares
    none, e.g. a file that only imports modules) — as ``(label, handle)``, and ``(label,
    reason)`` for each one left out."""
    modules = [(f, _load(f)) for f in args.files]
    picked = []  # (file, module, name)
    if args.algorithms:
        for name in args.algorithms:
            owner = next(((f, m) for f, m in modules if name in m.program.algorithms), modules[0])
            picked.append((*owner, name))  # an unknown name: modules[0][name] says so
    else:
        for f, m in modules:
            names = m.own_algorithms or list(m.program.algorithms)
            picked.extend((f, m, n) for n in names)
    if not picked:
        raise TlopError(f"{', '.join(printable(f) for f in args.files)}: no algorithm to compare "
                        f"(the file{'s' if len(args.files) > 1 else ''} declare and import none)")
    counts: dict = {}
    for _, _, n in picked:
        counts[n] = counts.get(n, 0) + 1
    candidates, excluded = [], []
    for f, m, name in picked:
        h = m[name]
        label = f"{f}:{name}" if counts[name] > 1 else name
        missing = [p.name for p in h.params if p.default is None and p.name not in raw]
        if missing:
            excluded.append((label, f"needs {', '.join(missing)}, which the grid does not give"))
        elif not h.applies_to(prof):
            req = h.requirements()
            have_t, have_s = set(prof.table_names()), set(prof.scalar_names())
            lack = [t for t in sorted(req["tables"]) if t not in have_t
                    and f"{m.program.tables[t].model}.{t}" not in have_t]
            lack += [s for s in sorted(req["scalars"]) if s not in have_s
                     and f"{m.program.scalars[s].model}.{s}" not in have_s]
            excluded.append((label, f"profile '{prof.name}' lacks {', '.join(lack) or 'its tables'}"))
        elif h.ir.over is not None and args.mapping is None:
            excluded.append((label, "runs over a process mapping: give --mapping"))
        else:
            candidates.append((label, h))
    return candidates, excluded


def cmd_best(args) -> int:
    """Which algorithm is cheapest at each point of a grid (polyalgorithm selection)."""
    if getattr(args, "crossover", None):
        from tlop.cli import crossover

        return crossover.run(args)
    if not _plot_checked(args, "best"):
        return 2  # a missing optional dependency
    rc = _best(args)
    _plot_wrote(args)
    return rc


def _best(args) -> int:
    import numpy as np

    from tlop.backends.binding import constraint_mask

    raw = _assignments([a for a in list(args.files) + list(args.positional) if "=" in a])
    args.files = [a for a in args.files if "=" not in a]
    prof = _profile(args)
    pairs, excluded = _best_candidates(args, prof, raw)
    if not pairs:
        raise TlopError("no algorithm can be priced on this grid: "
                        + "; ".join(f"{n} ({why})" for n, why in excluded))
    labels = [label for label, _ in pairs]
    candidates = [h for _, h in pairs]
    ptypes: dict = {}
    for h in candidates:
        for p in h.params:
            if ptypes.setdefault(p.name, p.type) != p.type:
                raise TlopError(f"parameter '{p.name}' is {ptypes[p.name]} in one algorithm and {p.type} in another")
    for k in raw:
        if k not in ptypes:
            raise TlopError(f"no candidate algorithm has a parameter '{k}'")
    program = candidates[0].module.program
    per_rank = _per_rank_arguments(raw, [p for h in candidates for p in h.params], ptypes, program)
    grid = _grid(raw, ptypes, program, getattr(args, "max_points", None))
    names_, axes = grid.names, grid.axes
    runs: dict = {}    # candidate index -> (engine, run), compiled at its first admissible point
    used = [-1]        # the last candidate priced at some point (its engine is the one shown)
    refused = [0] * len(candidates)  # points each candidate's constraints exclude (this pass)

    def chunks(size=None):
        """(columns, best, best_cost, second, costs) for each chunk of the grid."""
        from tlop.cli.grid import CHUNK_POINTS

        refused[:] = [0] * len(candidates)
        for start, columns in grid.chunks(size or CHUNK_POINTS):
            n = len(next(iter(columns.values()))) if columns else 1
            costs = np.full((len(candidates), n), np.inf)
            for i, h in enumerate(candidates):
                own = {k: v for k, v in columns.items() if any(p.name == k for p in h.params)}
                ok = np.broadcast_to(constraint_mask(h.ir, own), (n,))
                refused[i] += int(n - np.count_nonzero(ok))
                if not ok.any():
                    continue
                if i not in runs:
                    runs[i] = _engine(args, h, prof)
                used[0] = max(used[0], i)
                vectors = {p.name: per_rank[p.name] for p in h.params if p.name in per_rank}
                costs[i, ok] = _evaluate_columns(runs[i][1], h, {**{k: v[ok] for k, v in own.items()}, **vectors},
                                                 ptypes)
            costs[np.isnan(costs)] = np.inf
            best = np.argmin(costs, axis=0)
            best_cost = costs[best, np.arange(n)]
            second = np.sort(costs, axis=0)[1] if len(candidates) > 1 else np.full(n, np.inf)
            yield columns, best, best_cost, second, costs

    def constraint_notes():
        """(label, reason) for the candidates the constraints exclude somewhere (after a pass)."""
        out = []
        for i, h in enumerate(candidates):
            if refused[i] == grid.size:
                cons = ", ".join(f"{p.name} {p.constraint[0]} …" for p in h.ir.params
                                 if p.constraint is not None and p.constraint_span is not None)
                if h.ir.requires is not None:
                    cons = ", ".join(x for x in (cons, "its where condition") if x)
                out.append((labels[i], f"its constraints ({cons or 'of its parameters'}) fail at every point"))
            elif refused[i]:
                out.append((labels[i], f"its constraints exclude it at {refused[i]} of {grid.size} points"))
        return out

    label = _label(ptypes, program, args)

    def winner(best, best_cost, j):
        return labels[best[j]] if np.isfinite(best_cost[j]) else "-"

    if getattr(args, "plot", None):
        from tlop.cli.plot_grid import selection_figure, write_figure

        won = _gather(chunks, grid, lambda c: np.where(np.isfinite(c[2]), c[1], -1), "best")
        fixed = ", ".join(f"{k}={label(k, axes[k][0])}" for k in names_ if len(axes[k]) == 1)
        title = f"cheapest algorithm on {prof.name}" + (f" ({fixed})" if fixed else "")
        write_figure(selection_figure(title, names_, axes, won.astype(int), labels, label), args.plot)

    if args.csv:
        _write_csv(args.csv, names_ + ["best", "seconds"] + labels,
                   ([_csv_cells(names_, ptypes, label, columns, j)
                     + [winner(best, best_cost, j), repr(float(best_cost[j]))] + [repr(float(c)) for c in costs[:, j]]
                     for j in range(len(best))] for columns, best, best_cost, second, costs in chunks()))
        return 0
    if args.json:
        from tlop.cli.jsonout import emit_stream

        def points():
            for columns, best, best_cost, _, costs in chunks():
                for j in range(len(best)):
                    yield {**_json_point(names_, ptypes, program, columns, j),
                           "best": winner(best, best_cost, j) if np.isfinite(best_cost[j]) else None,
                           "seconds": float(best_cost[j]),
                           "costs": {n: float(c) for n, c in zip(labels, costs[:, j])}}

        emit_stream({"files": args.files, "profile": prof.name, "algorithms": labels, "parameters": names_},
                    "points", points(),
                    lambda: {"engine": runs[used[0]][0] if used[0] >= 0 else "interp",
                             "excluded": [{"algorithm": n, "reason": why}
                                          for n, why in excluded + constraint_notes()]})
        return 0

    def preamble():
        engine = runs[used[0]][0] if used[0] >= 0 else "interp"
        print(f"cheapest of {len(candidates)} algorithms of {', '.join(args.files)} on {prof.name} ({engine})")
        for n, why in excluded + constraint_notes():
            print(f"  note: {n}: {why}" if "constraints exclude it at" in why else f"  not compared: {n}: {why}")

    swept = [k for k, v in axes.items() if len(v) > 1]
    layout = None
    if len(swept) == 2:
        rk, ck = swept
        layout = matrix_layout(rk, ck, axes, label, max(len(n) for n in labels + ["-"]), grid.size)
    # the height of the table is known before evaluating it: title, notes, fixed values, header, rows
    with _paged(args, _table_rows(grid, swept, layout) + 3 + len(excluded) + len(candidates)):
        if layout is not None:
            fixed = {k: axes[k][0] for k in names_ if k not in swept}

            def preamble2():
                preamble()
                if fixed:
                    print("  " + ", ".join(f"{k}={label(k, v)}" for k, v in fixed.items()))

            if layout == "transposed":
                table = _transposed(grid, rk, ck, label, lambda r, i: winner(r[1], r[2], i), chunks)
                preamble2()
                _print_table(*table)
                return 0
            header = [f"{rk} \\ {ck}"] + [label(ck, c) for c in axes[ck]]
            cols = len(axes[ck])

            def rows():
                for columns, best, best_cost, _, _ in chunks(_matrix_chunk(grid, rk, ck)):
                    yield [[label(rk, columns[rk][i])] + [winner(best, best_cost, j) for j in range(i, i + cols)]
                           for i in range(0, len(best), cols)]
            _print_table_chunks(header, rows, preamble2)
        else:  # one row per point (also a matrix too wide for the terminal either way round)
            header = names_ + ["best", "cost", "next best ×"]

            def rows():
                for columns, best, best_cost, second, _ in chunks():
                    yield [[label(k, columns[k][j]) for k in names_]
                           + [winner(best, best_cost, j), fmt.seconds(best_cost[j], args) if np.isfinite(best_cost[j])
                              else "-",
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


def _add_pager_option(p) -> None:
    p.add_argument("--no-pager", dest="pager", action="store_false",
                   help="never page a table taller than the terminal (pipes and files are never paged)")


def _paged(args, lines: int):
    """Standard output through the pager for a table of ``lines`` lines (:mod:`tlop.cli.pager`)."""
    from tlop.cli.pager import paged

    return paged(lines, getattr(args, "pager", True))


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
    nrows = 0
    for rows in itertools.chain([first, second], it):
        nrows += len(rows)
        for r in rows:
            for i, c in enumerate(r):
                if len(c) > widths[i]:
                    widths[i] = len(c)
    if preamble:
        preamble()
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths)))
    for rows in chunks():
        sys.stdout.write("".join("  ".join(str(c).rjust(w) for c, w in zip(r, widths)) + "\n" for r in rows))
    if nrows > LONG_TABLE:
        print(f"tlop: note: {nrows} rows; --csv OUT writes the grid as CSV (--csv - to standard output)",
              file=sys.stderr)


_csv_number = fmt.csv_number
_print_table = print_table


def cmd_profiles(args) -> int:
    from tlop.cli import profiles as profiles_cli
    from tlop.runtime.profile import bundled_profiles, default_profile, load_profile

    if args.name:
        return profiles_cli.show_profile(load_profile(args.name), args)
    default = default_profile().name
    if args.json:
        _emit_json({"default": default, "profiles": [profiles_cli.profile_json(load_profile(name), summary=True)
                                                     for name in sorted(bundled_profiles())]})
        return 0
    for name, path in sorted(bundled_profiles().items()):
        p = load_profile(name)
        md = p.metadata
        chans = ", ".join(f"{c} ({info.transmission})" for c, info in p.channels.items())
        mark = " (default)" if name == default else ""
        print(f"{name}{mark}")
        if md.get("machine"):
            print(f"  machine:  {md['machine']}")
        print(f"  channels: {chans}; bind: {', '.join(f'{k}={v}' for k, v in p.bindings.items()) or '-'}")
        print(f"  prices:   {profiles_cli.families_text(p)}")
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


def cmd_completion(args) -> int:
    from tlop.cli.completion import completion_script

    sys.stdout.write(completion_script(args.shell))
    return 0


def cmd_new(args) -> int:
    """``tlop new NAME``: a starter module with the commands to try on it."""
    from tlop.cli.starter import write_starter

    path = write_starter(args.name)
    print(f"wrote {printable(str(path))}; try: tlop check {printable(str(path))}")
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
    print("P = processes, m = message size\n")
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
                   fmt.number_text(P)]
            for m in sizes:
                given = {"P": f"{P:g}", "m": f"{m:g}", **fixed}
                env = h.bind({k: v for k, v in given.items() if any(p.name == k for p in h.params)},
                             strings=True)
                row.append(fmt.seconds(float(run(env)), args))
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
    _add_config_options(p)


def _add_config_options(p) -> None:
    """``--config``, ``--layout``, ``--partition``: a heterogeneous configuration (docs/configurations)."""
    p.add_argument("--config", metavar="NAME",
                   help="a configuration (layout and partitions): a bundled one (fig8, fig9, M1 … M16; "
                        "tlop configs lists them) or a configuration file")
    p.add_argument("--layout", metavar="FILE", help="a layout file: rank -> node, node type, kind, cores")
    p.add_argument("--partition", metavar="FILE|NAME",
                   help="a partition file (each rank's rectangle of blocks), or with --config the name of "
                        "one of its partitions")


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


#: subcommands whose arguments and runners live with their packages: name -> help
PACKAGE_COMMANDS = {
    "rules": "list the rewrite rules; --verify proves them with Z3",
    "explain": "print the derivation of an algorithm's simplified cost",
    "prove": "prove or refute an inequality under the model axioms",
    "measure": "measure a platform profile with MPI benchmarks",
    "grid-bcast": "grid-aware broadcast (paper 001): clustering, schedules, Monte-Carlo",
    "tune": "pick the cheapest library algorithm per (P, m) and write Open MPI / MPICH selection files",
    "validate": "run schedules for real with MPI and compare with their predictions (µ per cell, report)",
}
MPI_HINT = ("tlop measure needs mpi4py, which is not installed; install it with "
            "pip install 'tlop[mpi]' (or 'tlop[mpich]' to get an MPI library as well)")


#: every subcommand, in the order of ``tlop --help``
COMMANDS = ("check", "show", "eval", "sweep", "best", "profiles", "new", "completion", "demo", "convert-taulop", "partition") \
    + tuple(PACKAGE_COMMANDS)


def build_parser(chosen=None) -> argparse.ArgumentParser:
    """The argument parser; with ``chosen`` (a name of :data:`COMMANDS`) only that
    subcommand's parser is built (start-up: the others may import heavy modules)."""
    ap = argparse.ArgumentParser(prog="tlop", description="Compile and evaluate communication-cost models.")
    ap.add_argument("--version", action=_VersionAction)
    sub = _Subcommands(ap.add_subparsers(dest="command", metavar="COMMAND"), chosen)

    p = sub.add_parser("check", help="parse and check .tlop files (every .tlop file under a directory)")
    p.add_argument("files", nargs="+", metavar="FILE|DIR")
    p.add_argument("--json", action="store_true",
                   help="print the files and their diagnostics (file, line, column, end, severity, code, "
                        "message) as JSON")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("show", help="print an algorithm's cost expression in the papers' notation")
    p.add_argument("file", metavar="FILE")
    p.add_argument("algorithm", nargs="?", metavar="ALG")
    p.add_argument("--latex", action="store_true", help="print LaTeX")
    p.add_argument("--source", action="store_true", help="print the file's text (e.g. of a stdlib module)")
    p.add_argument("--path", action="store_true", help="print where the file is (e.g. a stdlib module's path)")
    p.add_argument("--json", action="store_true", help="print each algorithm's signature, cost (text and LaTeX) "
                                                       "and notes as JSON")
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
    p.add_argument("--json", action="store_true", help="print JSON (full-precision seconds)")
    fmt.add_unit_option(p)
    _add_profile_options(p)
    p.set_defaults(run=cmd_eval)

    p = sub.add_parser("sweep", help="evaluate an algorithm over a grid of points")
    p.add_argument("file", metavar="FILE")
    p.add_argument("algorithm", metavar="ALG")
    p.add_argument("assignments", nargs="*", metavar="NAME=RANGE",
                   help="e.g. P=2..256:x2 m=1KiB..4MiB:x4 Q=8 or c=shm,net")
    p.add_argument("--csv", metavar="OUT", help="write the grid as CSV ('-' for stdout)")
    _add_max_points(p)
    p.add_argument("--json", action="store_true", help="print the grid as JSON (full-precision seconds)")
    p.add_argument("--plot", metavar="FILE", help="also draw the cost over one or two swept parameters into FILE "
                                                  "(.svg, .png or .pdf; needs matplotlib)")
    p.add_argument("--distributed", action="store_true",
                   help="evaluate the grid on the workers of an MPI job: mpiexec -n N python -m mpi4py.futures "
                        "-m tlop.cli sweep … --distributed (same output as a serial sweep)")
    fmt.add_unit_option(p)
    _add_pager_option(p)
    _add_profile_options(p)
    p.set_defaults(run=cmd_sweep)

    p = sub.add_parser("best", help="which algorithm of one or more files is cheapest at each point of a grid")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("positional", nargs="*", metavar="NAME=RANGE", help="e.g. P=2..256:x2 m=1KiB..4MiB:x4 s=8KiB")
    p.add_argument("--only", dest="algorithms", action="append", metavar="ALG",
                   help="compare this algorithm (repeatable; it may come from an import); default: the algorithms "
                        "each FILE declares (all algorithms in its scope when it declares none)")
    p.add_argument("--csv", metavar="OUT", help="write every algorithm's cost per point as CSV ('-' for stdout)")
    _add_max_points(p)
    p.add_argument("--json", action="store_true",
                   help="print every algorithm's cost per point, and why each excluded one is excluded, as JSON")
    p.add_argument("--crossover", metavar="AXIS",
                   help="for each value of the other parameters, from which value of AXIS each algorithm "
                        "becomes the cheapest (e.g. the message count n from which 3-step beats GPUDirect)")
    p.add_argument("--plot", metavar="FILE", help="also draw a selection map (which algorithm is cheapest where, "
                                                  "over one or two swept parameters) into FILE (.svg, .png or .pdf); "
                                                  "with --crossover, the crossover value against the other swept "
                                                  "parameter")
    fmt.add_unit_option(p)
    _add_pager_option(p)
    _add_profile_options(p)
    p.set_defaults(run=cmd_best)

    p = sub.add_parser("profiles", help="list the bundled platform profiles; with NAME, show one in detail")
    p.add_argument("name", nargs="?", metavar="NAME",
                   help="a bundled profile name or a profile JSON: its channels, tables with their grids, scalars, "
                        "model families and provenance")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=cmd_profiles)

    p = sub.add_parser("new", help="write a starter .tlop file")
    p.add_argument("name", metavar="NAME", help="the file to write: NAME.tlop (never overwritten)")
    p.set_defaults(run=cmd_new)

    p = sub.add_parser("completion", help="print a shell completion script (bash or zsh)")
    p.add_argument("shell", choices=("bash", "zsh"))
    p.set_defaults(run=cmd_completion)

    p = sub.add_parser("demo", help="price several stdlib algorithms on the default profile")
    p.add_argument("-P", nargs="+", default=["2", "8", "32"], help="process counts (default: 2 8 32)")
    fmt.add_unit_option(p)
    _add_profile_options(p)
    p.set_defaults(run=cmd_demo)

    p = sub.add_parser("convert-taulop", help="convert libtaulop parameter files into a profile")
    if not isinstance(p, _Skipped):
        from tlop.runtime import convert_taulop

        convert_taulop.add_arguments(p)
        p.set_defaults(run=convert_taulop.run)

    p = sub.add_parser("partition", help="show, generate or draw a configuration's data partition")
    if not isinstance(p, _Skipped):
        from tlop.cli import partition_cmd

        partition_cmd.add_arguments(p)
        p.set_defaults(run=partition_cmd.run)

    _add_package_commands(sub)
    return ap


def _add_package_commands(sub):
    """The package subcommands (their modules are imported only when the parser is built for
    them, see :class:`_Subcommands`)."""
    for name, help_ in PACKAGE_COMMANDS.items():
        p = sub.add_parser(name, help=help_)
        if isinstance(p, _Skipped):
            continue
        if name == "tune":
            from tlop.cli import tune as tune_cli

            tune_cli.add_arguments(p)
            p.set_defaults(run=tune_cli.run)
            continue
        if name == "validate":
            from tlop.cli import validate as validate_cli

            validate_cli.add_arguments(p)
            p.set_defaults(run=validate_cli.run)
            continue
        if name == "measure":
            from tlop.runtime.measure import cli as measure_cli

            measure_cli.add_arguments(p)
            p.set_defaults(run=_run_measure)
            continue
        if name == "grid-bcast":
            from tlop.cli import gridbcast

            gridbcast.add_arguments(p)
            p.set_defaults(run=gridbcast.run)
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
        from tlop.cli.helptext import decorate

        return self.sub.add_parser(name, **decorate(name, kwargs))


def _run_measure(args) -> int:
    """``tlop measure``, or one line saying how to install mpi4py (exit status 2)."""
    try:
        import mpi4py  # noqa: F401  (the optional dependency: the 'mpi' extra)
    except ImportError:
        _print_error(TlopError(MPI_HINT))
        return 2
    from tlop.runtime.measure import cli as measure_cli

    return measure_cli.run(args)


class _VersionAction(argparse.Action):
    """``--version``: tlop's version and the parser that reads sources."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show the version and the parser in use, and exit"):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from tlop.frontend.parse import PARSER

        print(f"tlop {_version()}\n{PARSER}")
        parser.exit()


def _version() -> str:
    from tlop import __version__

    return __version__


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings (e.g. a table lookup outside the measured grid) as one line, no source dump
    (in colour on a terminal)."""
    from tlop.cli.colour import colour_diagnostics, wants_colour

    text = f"tlop: warning: {message}"
    print(colour_diagnostics(text) if wants_colour(sys.stderr) else text, file=sys.stderr)


def _print_error(err: TlopError) -> None:
    """A diagnostic on stderr, in colour on a terminal (not with NO_COLOR)."""
    from tlop.cli.colour import print_error

    print_error(err)


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # the program itself (not a caller's main([...])): it exits after the command
        from tlop.frontend.limits import keep_loaded_objects

        keep_loaded_objects()
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
        if getattr(args, "json", False):  # machine-readable failure: the diagnostics, on stdout
            from tlop.cli.jsonout import diagnostics_json

            _emit_json({"ok": False, "diagnostics": diagnostics_json(e)})
        else:
            _print_error(e)
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
        from tlop.runtime.diagnostics import Diagnostic

        where = f": {e.filename}" if getattr(e, "filename", None) else ""
        _print_error(TlopError(Diagnostic(f"{e.strerror or e}{where}", code="E060")))
        return 1


if __name__ == "__main__":
    sys.exit(main())
