"""``tlop best``: the cheapest of several algorithms at every point of a grid, with the margin.

What it does not do: write library files (``tlop tune``).
"""

from __future__ import annotations


from tlop.runtime.diagnostics import TlopError
from tlop.runtime.text import printable
from tlop.cli import format as fmt
from tlop.cli.table import matrix_layout
from tlop.cli.common import _assignments, _engine, _largest_point, _load, _paged, _plot_checked, _plot_wrote, _print_table, _print_table_chunks, _profile, _write_csv
from tlop.cli.cmd_sweep import _csv_cell, _evaluate_columns, _gather, _grid, _json_point, _label, _matrix_chunk, _per_rank_arguments, _table_rows, _transposed


def _best_candidates(args, prof, raw):
    """``(candidates, excluded)`` of ``tlop best``: the algorithms to compare — those named with
    ``--only``, else each FILE's own algorithms (every algorithm in its scope when it declares
    none, e.g. a file that only imports modules) — as ``(label, handle)``, and ``(label,
    reason)`` for each one left out."""
    modules = [(f, _load(f, args)) for f in args.files]
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
    from tlop.backends.renamed import rename_in_place

    # S, s: now seg (warned) — unless a candidate still declares the old name (a user's module)
    rename_in_place(raw, {p.name for _, m, n in picked for p in m[n].params}, ", ".join(args.files))
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
    if args.mapping is not None and any(h.ir.over is not None for _, h in candidates):
        # only candidates priced over the same mapping compete: a closed form that takes no
        # mapping prices every transfer on the channels its arguments name, not on --mapping's
        mapped = [(label, h) for label, h in candidates if h.ir.over is not None]
        excluded += [(label, "takes no process mapping (a closed form priced on the channels its arguments "
                             "name): left out of a comparison over --mapping")
                     for label, h in candidates if h.ir.over is None]
        candidates = mapped
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

    def vectors_of(h):
        return {p.name: per_rank[p.name] for p in h.params if p.name in per_rank}

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
                    runs[i] = _engine(args, h, prof, points=grid.size,
                                      point=_largest_point(h, axes, vectors_of(h)))
                used[0] = max(used[0], i)
                vectors = {p.name: per_rank[p.name] for p in h.params if p.name in per_rank}
                if ok.all():  # every point: no masked copies of the columns
                    costs[i] = _evaluate_columns(runs[i][1], h, {**own, **vectors}, ptypes)
                else:
                    costs[i, ok] = _evaluate_columns(runs[i][1], h, {**{k: v[ok] for k, v in own.items()}, **vectors},
                                                     ptypes)
            costs[np.isnan(costs)] = np.inf
            best = np.argmin(costs, axis=0)
            best_cost = costs[best, np.arange(n)]
            if len(candidates) == 2:
                second = costs.max(axis=0)  # the larger of two is the second cheapest
            else:
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

    def margin(best_cost, second, j) -> str:
        """How many times more the next best costs (``×2.28``), or ``-``."""
        return f"×{second[j] / best_cost[j]:.2f}" if np.isfinite(second[j]) and best_cost[j] > 0 else "-"

    detail = [2]  # what a matrix cell shows: 2 name, cost and margin; 1 name and margin; 0 the name

    def cell(best, best_cost, second, j) -> str:
        """A matrix cell: the cheapest, its cost and its margin (``binomial 6.614 µs ×2.28``), less
        when the terminal is too narrow for that (see ``detail``)."""
        if not np.isfinite(best_cost[j]):
            return "-"
        m = margin(best_cost, second, j)
        cost = f" {fmt.seconds(best_cost[j], args)}" if detail[0] == 2 else ""
        return f"{labels[best[j]]}{cost}" + ("" if m == "-" or detail[0] == 0 else f" {m}")

    def next_best(costs, best, j) -> str:
        """The name of the second cheapest algorithm at point ``j``, or ``-``."""
        if costs.shape[0] < 2:
            return "-"
        order = np.argsort(costs[:, j], kind="stable")
        k = order[1] if order[0] == best[j] else order[0]
        return labels[k] if np.isfinite(costs[k, j]) else "-"

    if getattr(args, "plot", None):
        from tlop.cli.plot_grid import selection_figure, write_figure

        fixed = ", ".join(f"{k}={label(k, axes[k][0])}" for k in names_ if len(axes[k]) == 1)
        title = f"cheapest algorithm on {prof.name}" + (f" ({fixed})" if fixed else "")
        swept1 = [k for k in names_ if len(axes[k]) > 1]
        if len(swept1) == 1:  # one swept parameter: every candidate's cost curve, the winner's thick
            from tlop.cli.plot_grid import best_curves_figure, plotted_axes

            plotted_axes(names_, grid.shape, "best")
            costs = np.concatenate([c[4] for c in chunks()], axis=1)
            write_figure(best_curves_figure(title, swept1[0], axes[swept1[0]], costs, labels, label), args.plot)
        else:
            won = _gather(chunks, grid, lambda c: np.where(np.isfinite(c[2]), c[1], -1), "best")
            write_figure(selection_figure(title, names_, axes, won.astype(int), labels, label), args.plot)

    if args.csv:
        from tlop.cli import csvfast

        cells = csvfast.AxisText(grid, lambda k, v: _csv_cell(ptypes, label, k, v))

        def blocks():
            start = 0
            for _, best, best_cost, _, costs in chunks():
                n = len(best)
                won = np.where(np.isfinite(best_cost), best, len(labels))
                yield csvfast.chunk(cells, start, n, [("label", won, labels + ["-"]), ("float", best_cost, "nan")]
                                    + [("float", c, "nan", best == i) for i, c in enumerate(costs)])
                start += n
        _write_csv(args.csv, names_ + ["best", "seconds"] + labels, blocks())
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

        from tlop.cli.common import _provenance

        emit_stream({"files": args.files, "profile": prof.name, **_provenance(prof, args), "algorithms": labels,
                     "parameters": names_},
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
        name_width = max(len(n) for n in labels + ["-"])
        for detail[0], extra in ((2, 16), (1, 6), (0, 0)):  # the most a terminal's width allows
            layout = matrix_layout(rk, ck, axes, label, name_width + extra, grid.size)
            if layout is not None:
                break
    # the height of the table is known before evaluating it: title, notes, fixed values, header, rows
    from tlop.cli.common import _markdown_export

    with _paged(args, _table_rows(grid, swept, layout) + 3 + len(excluded) + len(candidates)), \
            _markdown_export(args):
        if layout is not None:
            fixed = {k: axes[k][0] for k in names_ if k not in swept}

            def preamble2():
                preamble()
                if fixed:
                    print("  " + ", ".join(f"{k}={label(k, v)}" for k, v in fixed.items()))

            if layout == "transposed":
                table = _transposed(grid, rk, ck, label, lambda r, i: cell(r[1], r[2], r[3], i), chunks)
                preamble2()
                _print_table(*table)
                _cell_legend(len(candidates), detail[0])
                return 0
            header = [f"{rk} \\ {ck}"] + [label(ck, c) for c in axes[ck]]
            cols = len(axes[ck])

            def rows():
                for columns, best, best_cost, second, _ in chunks(_matrix_chunk(grid, rk, ck)):
                    yield [[label(rk, columns[rk][i])] + [cell(best, best_cost, second, j) for j in range(i, i + cols)]
                           for i in range(0, len(best), cols)]
            _print_table_chunks(header, rows, preamble2)
            _cell_legend(len(candidates), detail[0])
        else:  # one row per point (also a matrix too wide for the terminal either way round)
            header = names_ + ["best", "cost", "next best", "×"]

            def rows():
                for columns, best, best_cost, second, costs in chunks():
                    yield [[label(k, columns[k][j]) for k in names_]
                           + [winner(best, best_cost, j), fmt.seconds(best_cost[j], args) if np.isfinite(best_cost[j])
                              else "-", next_best(costs, best, j), margin(best_cost, second, j)]
                           for j in range(len(best))]
            _print_table_chunks(header, rows, preamble)
    return 0


def _cell_legend(candidates: int, detail: int) -> None:
    if candidates > 1 and detail:
        print("(each cell: the cheapest algorithm, " + ("its cost, " if detail == 2 else "")
              + "and × how many times more the next best costs)")
