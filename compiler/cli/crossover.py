"""``tlop best … --crossover AXIS``: from which value of one parameter another algorithm wins.

What it does: evaluates the candidates of ``tlop best`` on the whole grid (the same candidates,
profile, engines and constraint handling), and for every combination of the other parameters
walks AXIS in the order given: it reports the winner at AXIS's first value and each later value
at which the winner changes (``three_step from n=8``).  This is the question of 003 §V — from
how many messages does copying through the CPU beat GPUDirect, per message size — asked of any
algorithms.  ``--plot FILE`` draws, for one other swept parameter, the first AXIS value at which
each algorithm other than the first winner takes over, against that parameter (log axes);
:func:`crossover_table` and :func:`build_figure` are the pieces tests call.

What it does not do: interpolate between grid values (a crossover is a grid value: give AXIS
the resolution you need), stream (the grid is held in memory; at most :data:`MAX_POINTS`
points), or write CSV/JSON (``tlop best --csv`` has every cost).
"""

from __future__ import annotations

from pathlib import Path

from tlop.runtime.diagnostics import TlopError

__all__ = ["run", "crossover_table", "first_wins", "build_figure", "MAX_POINTS"]

#: the largest grid --crossover evaluates (it holds every cost in memory)
MAX_POINTS = 2_000_000


def crossover_table(axes: dict, costs, labels: list, axis: str) -> list:
    """For each combination of the axes other than ``axis`` (in grid order): ``(values, first,
    changes)`` — the other parameters' values, the cheapest label at the first value of
    ``axis`` (None if nothing can be priced there) and a list of ``(value, label)`` where the
    cheapest changes.  ``costs`` has shape ``(len(labels),) + grid shape`` (inf: not priced)."""
    import itertools

    import numpy as np

    names = list(axes)
    k = names.index(axis)
    c = np.moveaxis(np.asarray(costs, dtype=float), k + 1, -1)
    others = [n for n in names if n != axis]
    best = np.argmin(c, axis=0)
    finite = np.isfinite(np.min(c, axis=0))
    along = axes[axis]
    out = []
    for idx in itertools.product(*(range(len(axes[n])) for n in others)):
        w = best[idx]
        ok = finite[idx]
        first = labels[w[0]] if ok[0] else None
        changes, prev = [], first
        for j in range(1, len(along)):
            cur = labels[w[j]] if ok[j] else None
            if cur != prev:
                changes.append((float(along[j]), cur))
                prev = cur
        out.append((tuple(float(axes[n][i]) for n, i in zip(others, idx)), first, changes))
    return out


def first_wins(rows: list, axis_first: float) -> dict:
    """label -> list of the first axis value at which it is the cheapest, one entry per row
    (None where it never is), for every label cheapest somewhere."""
    out: dict = {}
    for r, (_, first, changes) in enumerate(rows):
        seen = {}
        if first is not None:
            seen[first] = axis_first
        for v, lab in changes:
            if lab is not None and lab not in seen:
                seen[lab] = v
        for lab in seen:
            out.setdefault(lab, [None] * len(rows))
        for lab, v in seen.items():
            out[lab][r] = v
    return out


def build_figure(rows: list, axis_first: float, other: str, axis: str, title: str):
    """A matplotlib Figure: for each algorithm that is cheapest somewhere but not everywhere at
    the first ``axis`` value, the first ``axis`` value from which it is cheapest (y) against
    ``other`` (x, the rows' only value), log axes; the line has a gap where it never is.  Line
    ``gid`` is ``crossover-ALG``."""
    import math

    from matplotlib.figure import Figure

    xs = [values[0] for values, _, _ in rows]
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    drawn = 0
    for lab, ys in first_wins(rows, axis_first).items():
        if all(y == axis_first for y in ys):
            continue  # cheapest from the start everywhere: nothing crosses over
        ax.plot(xs, [math.nan if y is None else y for y in ys], marker="o", label=f"{lab} cheapest from",
                gid=f"crossover-{lab}")
        drawn += 1
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(other)
    ax.set_ylabel(f"smallest {axis} from which it is cheapest")
    ax.set_title(title + " (gap: never, on this grid)")
    if drawn:
        ax.legend()
    else:
        ax.text(0.5, 0.5, "no crossover on this grid", ha="center", transform=ax.transAxes)
    fig.tight_layout()
    return fig


def run(args) -> int:
    """The ``--crossover`` variant of ``tlop best`` (``args`` as ``tlop best`` parses them)."""
    import numpy as np

    from tlop.backends.binding import constraint_mask
    from tlop.cli.common import _assignments, _engine, _profile
    from tlop.cli.cmd_best import _best_candidates
    from tlop.cli.cmd_sweep import _evaluate_columns, _grid, _label
    from tlop.cli.plot_stages import check_target, have_matplotlib
    from tlop.cli.table import print_table

    axis = args.crossover
    raw = _assignments([a for a in list(args.files) + list(args.positional) if "=" in a])
    args.files = [a for a in args.files if "=" not in a]
    if args.plot:
        check_target(args.plot)
        if not have_matplotlib():
            raise TlopError("tlop best --plot needs matplotlib, which is not installed; install it with "
                            "pip install 'tlop[plot]'")
    if axis not in raw:
        raise TlopError(f"--crossover {axis}: give '{axis}' a range, e.g. {axis}=1..1000")
    prof = _profile(args)
    pairs, excluded = _best_candidates(args, prof, raw)
    if len(pairs) < 2:
        raise TlopError("--crossover compares at least two algorithms; "
                        + ("; ".join(f"{n} ({why})" for n, why in excluded) or "name them with --only"))
    labels = [lab for lab, _ in pairs]
    ptypes: dict = {}
    for _, h in pairs:
        for p in h.params:
            ptypes.setdefault(p.name, p.type)
    for k in raw:
        if k not in ptypes:
            raise TlopError(f"no candidate algorithm has a parameter '{k}'")
    grid = _grid(raw, ptypes, pairs[0][1].module.program, min(MAX_POINTS, getattr(args, "max_points", None)
                                                                 or MAX_POINTS))
    if len(grid.axes[axis]) < 2:
        raise TlopError(f"--crossover {axis}: '{axis}' has one value; give it a range, e.g. {axis}=1..1000")
    columns = next(grid.chunks(grid.size))[1] if grid.size else {}
    costs = np.full((len(pairs), grid.size), np.inf)
    engine = "interp"
    for i, (_, h) in enumerate(pairs):
        own = {k: v for k, v in columns.items() if any(p.name == k for p in h.params)}
        ok = np.broadcast_to(constraint_mask(h.ir, own), (grid.size,))
        if not ok.any():
            continue
        engine, runner = _engine(args, h, prof)
        costs[i, ok] = _evaluate_columns(runner, h, {k: v[ok] for k, v in own.items()}, ptypes)
    costs[np.isnan(costs)] = np.inf
    costs = costs.reshape((len(pairs),) + grid.shape)
    axes = {k: np.asarray(list(a), dtype=float) for k, a in grid.axes.items()}
    rows = crossover_table(axes, costs, labels, axis)
    label = _label(ptypes, pairs[0][1].module.program, args)
    others = [n for n in grid.names if n != axis]
    swept = [n for n in others if len(axes[n]) > 1]
    if getattr(args, "json", False) or getattr(args, "csv", None):
        return _write_data(args, axis, axes, rows, others, swept, labels, excluded, prof, engine)
    print(f"crossover in {axis} of {len(pairs)} algorithms of {', '.join(args.files)} on {prof.name} ({engine})")
    for n, why in excluded:
        print(f"  not compared: {n}: {why}")
    fixed = [n for n in others if n not in swept]
    if fixed:
        print("  " + ", ".join(f"{n}={label(n, axes[n][0])}" for n in fixed))
    first_v = label(axis, axes[axis][0])
    header = swept + [f"cheapest at {axis}={first_v}", "then"]
    table = []
    for values, first, changes in rows:
        cells = [label(n, v) for n, v in zip(others, values) if n in swept]
        then = ", ".join(f"{lab or '-'} from {axis}={label(axis, v)}" for v, lab in changes) or \
            f"(no change up to {axis}={label(axis, axes[axis][-1])})"
        table.append(cells + [first or "-", then])
    print_table(header, table)
    if args.plot:
        if len(swept) != 1:
            raise TlopError(f"--plot draws the crossover against one other swept parameter; "
                            f"{len(swept)} are swept ({', '.join(swept) or 'none'})")
        other = swept[0]
        k = others.index(other)
        fig = build_figure([((v[k],), f, c) for v, f, c in rows], float(axes[axis][0]), other, axis,
                           f"{', '.join(Path(f).stem for f in args.files)} on {prof.name}")
        fig.savefig(args.plot, format=Path(args.plot).suffix.lower()[1:],
                    metadata={"Date": None} if args.plot.lower().endswith(".svg") else {})
        print(f"wrote {args.plot}")
    return 0


def _write_data(args, axis, axes, rows, others, swept, labels, excluded, prof, engine) -> int:
    """``--json`` (to stdout) or ``--csv OUT``: each line of the crossover table as data — the
    values of the other swept parameters, the cheapest algorithm at the first value of ``axis``
    and every change (``from``: the first value of ``axis`` where ``best`` is cheapest)."""
    fixed = {n: float(axes[n][0]) for n in others if n not in swept}
    out_rows = []
    for values, first, changes in rows:
        at = {n: float(v) for n, v in zip(others, values) if n in swept}
        segments = [{"from": float(axes[axis][0]), "best": first}]
        segments += [{"from": float(v), "best": lab} for v, lab in changes]
        out_rows.append({"at": at, "segments": segments})
    if getattr(args, "json", False):
        from tlop.cli.jsonout import emit

        emit({"crossover": axis, "files": list(args.files), "profile": prof.name, "engine": engine,
              "algorithms": labels, "not_compared": [{"algorithm": n, "why": why} for n, why in excluded],
              "fixed": fixed, "rows": out_rows})
    if getattr(args, "csv", None):
        import csv
        import io
        import sys

        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(swept + [f"{axis}_from", "best"])
        for r in out_rows:
            for seg in r["segments"]:
                w.writerow([repr(r["at"][n]) for n in swept] + [repr(seg["from"]), seg["best"] or ""])
        if args.csv == "-":
            sys.stdout.write(buf.getvalue())
        else:
            with open(args.csv, "w", encoding="utf-8", newline="") as f:
                f.write(buf.getvalue())
            if not getattr(args, "json", False):
                print(f"wrote {args.csv}")
    return 0
