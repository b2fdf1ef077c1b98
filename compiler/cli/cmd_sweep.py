"""``tlop sweep``: one algorithm over a grid of parameter values, streamed in chunks as a table,
CSV or JSON lines, with a plot.

Points where the algorithm's constraints or ``where`` condition fail are left out, as ``tlop
best`` and the API's ``invalid="nan"`` do: shown as ``-`` (empty in CSV, null in JSON) and
counted in a note on stderr; ``--invalid error`` stops at the first instead.
What it does not do: compare algorithms (``tlop best``).
"""

from __future__ import annotations


from tlop.runtime.diagnostics import TlopError
from tlop.cli import format as fmt
from tlop.cli.table import matrix_layout
from tlop.cli.common import _assignments, _csv_number, _engine, _largest_point, _load, _paged, _plot_checked, _plot_wrote, _print_table, _print_table_chunks, _profile, _write_csv


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
    # each combination of channels present, once: channels are small whole numbers, so a
    # combination is one integer code, and the codes present are a bincount away (no sort)
    nch = max(1, len(h.module.program.channels))
    code = np.zeros(n, dtype=np.int64)
    for k in keys:
        code = code * nch + np.asarray(channels[k], dtype=np.int64)
    present = np.flatnonzero(np.bincount(code))
    for c0 in present.tolist():
        combo, c = {}, c0
        for k in reversed(keys):
            c, ch = divmod(c, nch)
            combo[k] = float(ch)
        if len(present) == 1:  # one combination in the chunk: no selection
            sub = {k: combo.get(k, v) for k, v in columns.items()}
            return np.broadcast_to(np.asarray(run(h.bind(sub)), dtype=float), (n,)).copy()
        mask = code == c0
        sub = {k: (v[mask] if k not in combo else combo[k]) for k, v in columns.items()}
        values[mask] = np.broadcast_to(run(h.bind(sub)), (int(mask.sum()),))
    return values


def _admissible(run, h, columns: dict, per_rank: dict, ptypes: dict, skip: bool, skipped: list):
    """:func:`_evaluate_columns` at the points the algorithm's constraints admit, NaN at the
    others (counted in ``skipped[0]``); with ``skip`` False every point is evaluated, so the
    first excluded one raises its diagnostic."""
    import numpy as np

    from tlop.backends.binding import constraint_mask

    n = len(next(iter(columns.values()))) if columns else 1
    ok = np.broadcast_to(constraint_mask(h.ir, columns), (n,)) if skip else np.ones(n, dtype=bool)
    if ok.all():
        return _evaluate_columns(run, h, {**columns, **per_rank}, ptypes)
    values = np.full(n, np.nan)
    skipped[0] += int(n - np.count_nonzero(ok))
    if ok.any():
        values[ok] = _evaluate_columns(run, h, {**{k: np.asarray(v)[ok] for k, v in columns.items()}, **per_rank},
                                       ptypes)
    return values


def _cost(v, args) -> str:
    """A point's cost, ``-`` where its constraints left it out."""
    return "-" if v != v else fmt.seconds(v, args)


def _skipped_note(h, skipped: int, size: int) -> None:
    import sys

    if skipped:
        why = "its where condition or constraints" if h.ir.requires is not None else "its constraints"
        print(f"tlop: note: {skipped} of {size} points left out: {why} exclude them (shown as -); "
              f"--invalid error stops at the first instead", file=sys.stderr)


def _label(ptypes: dict, program, args=None):
    def label(k, v):
        return fmt.param_text(ptypes[k], v, program.channels, args)
    return label


def _csv_cells(names, ptypes, label, columns, j) -> list:
    return [_csv_cell(ptypes, label, k, columns[k][j]) for k in names]


def _csv_cell(ptypes, label, k, v) -> str:
    return label(k, v) if ptypes[k] == "channel" else _csv_number(v)


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


def _gather(chunks, grid, pick, command: str) -> "np.ndarray":
    """The values ``pick(chunk)`` of every chunk, in grid order, shaped as the grid (a picture)."""
    import numpy as np

    from tlop.cli.plot_grid import plotted_axes

    plotted_axes(grid.names, grid.shape, command)  # refuse before evaluating
    return np.concatenate([np.asarray(pick(c), dtype=float) for c in chunks()]).reshape(grid.shape)


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
    m = _load(args.file, args)
    h = m[args.algorithm]
    prof = _profile(args)
    raw = _assignments(args.assignments)
    ptypes = {p.name: p.type for p in h.params}
    from tlop.backends.renamed import rename_in_place

    rename_in_place(raw, ptypes, h.name)    # S, s: now seg (warned)
    for k in raw:
        if k not in ptypes:
            from tlop.runtime.suggest import hint

            raise TlopError(f"'{h.name}' has no parameter '{k}'{hint(k, ptypes) or ';'} parameters: {', '.join(ptypes)}")
    per_rank = _per_rank_arguments(raw, h.params, ptypes, m.program)
    from tlop.cli.common import _check_mapping_used

    _check_mapping_used(args, h, {k: v for k, v in raw.items() if k in ("P", "Q") and "," not in v and ".." not in v})
    grid = _grid(raw, ptypes, m.program, getattr(args, "max_points", None))
    names, axes = grid.names, grid.axes
    swept = [k for k, v in axes.items() if len(v) > 1]
    engine, run = _engine(args, h, prof, points=grid.size, point=_largest_point(h, axes, per_rank))
    label = _label(ptypes, m.program, args)

    skipped = [0]  # points the constraints exclude (the last pass over the grid)
    skip = getattr(args, "invalid", "skip") == "skip"

    def chunks(size=None):
        from tlop.cli.grid import CHUNK_POINTS

        skipped[0] = 0
        for start, columns in grid.chunks(size or CHUNK_POINTS):
            yield columns, _admissible(run, h, columns, per_rank, ptypes, skip, skipped)

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
        from tlop.cli import csvfast

        cells = csvfast.AxisText(grid, lambda k, v: _csv_cell(ptypes, label, k, v))

        def blocks():
            start = 0
            for _, values in chunks():
                # a point the constraints leave out: an empty cell, as in the table's '-'
                yield csvfast.chunk(cells, start, len(values), [("float", values, "")])
                start += len(values)
        _write_csv(args.csv, names + ["seconds"], blocks())
        _skipped_note(h, skipped[0], grid.size)
        return 0
    if args.json:
        from tlop.cli.jsonout import emit_stream

        from tlop.cli.common import _provenance

        emit_stream({"algorithm": h.name, "file": str(m.path), "profile": prof.name, "engine": engine,
                     **_provenance(prof, args, h if h.ir.over is not None else None),
                     "parameters": names}, "points",
                    ({**_json_point(names, ptypes, m.program, columns, j),
                      "seconds": float(val) if val == val else None}
                     for columns, values in chunks() for j, val in enumerate(values)))
        _skipped_note(h, skipped[0], grid.size)
        return 0
    layout = None
    if len(swept) == 2:
        rk, ck = swept
        layout = matrix_layout(rk, ck, axes, label, _cost_width(args), grid.size)
    # the height of the table is known before evaluating it: title, fixed values, header, rows
    from tlop.cli.common import _markdown_export

    with _paged(args, _table_rows(grid, swept, layout) + 3), _markdown_export(args):
        _print_sweep(args, h, prof, engine, grid, swept, layout, label, chunks)
    _skipped_note(h, skipped[0], grid.size)
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
            _print_table(*_transposed(grid, rk, ck, label, lambda r, i: _cost(r[1][i], args), chunks))
            return
        header = [f"{rk} \\ {ck}"] + [label(ck, c) for c in axes[ck]]
        cols = len(axes[ck])

        def rows():
            for columns, values in chunks(_matrix_chunk(grid, rk, ck)):
                yield [[label(rk, columns[rk][i])] + [_cost(v, args) for v in values[i:i + cols]]
                       for i in range(0, len(values), cols)]
        _print_table_chunks(header, rows)
    else:  # one row per point (also a matrix too wide for the terminal either way round)
        header = names + ["cost"]
        _print_table_chunks(header, lambda: ([[label(k, columns[k][j]) for k in names] + [_cost(val, args)]
                                              for j, val in enumerate(values)] for columns, values in chunks()))
