"""``tlop sweep … --config M1..M16``: a sweep over configurations (layouts with their partitions).

What it does: :func:`config_names` expands ``--config`` into configurations — a bundled name or a
file, a comma-separated list of them, and ranges of numbered bundled names (``M1..M16``,
``M1..M4,fig8``); :func:`run` evaluates the algorithm for each configuration and each point of
the other arguments, one row per (configuration, point): ``N=128,256`` picks, per configuration,
its partition of that size (as ``tlop eval … N=128`` does, for an algorithm without a parameter
``N``), and ``P`` defaults to the configuration's ranks.  The output is a table, ``--csv OUT``
(``config, P, N, …, seconds``) or ``--json``.  The paper's HLogGP comparator is the same command
with the kernel's HLogGP algorithm (``summa_hloggp``, ``wave2d_hloggp``).

What it does not do: draw (``--plot``) or distribute the evaluation (``--distributed``); it
evaluates with the engine ``tlop eval`` would choose for a sweep (:func:`tlop.cli.common._engine`).
"""

from __future__ import annotations

import re
from pathlib import Path

from tlop.runtime.diagnostics import TlopError

__all__ = ["config_names", "run"]

_RANGE = re.compile(r"([A-Za-z_\-]*)(\d+)\.\.([A-Za-z_\-]*)(\d+)\Z")
#: most configurations one sweep takes
MAX_CONFIGS = 10_000


def config_names(spec: str) -> list:
    """The configurations of ``--config SPEC``: ``M10``, ``a.json``, ``M1,M3,fig8``, ``M1..M16``."""
    if Path(spec).is_file():
        return [spec]
    out = []
    for item in spec.split(","):
        item = item.strip()
        if not item:
            raise TlopError(f"--config {spec}: an empty name in the list")
        m = _RANGE.match(item)
        if m and not Path(item).is_file():
            a, i, b, j = m.group(1), int(m.group(2)), m.group(3) or m.group(1), int(m.group(4))
            if a != b:
                raise TlopError(f"--config {item}: a range runs over one name with numbers, e.g. M1..M16")
            if j < i:
                raise TlopError(f"--config {item}: the range is empty ({i} > {j})")
            if j - i >= MAX_CONFIGS:
                raise TlopError(f"--config {item}: {j - i + 1:,} configurations; at most {MAX_CONFIGS:,}")
            out += [f"{a}{k}" for k in range(i, j + 1)]
        else:
            out.append(item)
    return out


def run(args) -> int:
    from tlop.cli import format as fmt
    from tlop.cli.common import _assignments, _engine, _load, _print_table, _profile, _write_csv
    from tlop.cli.cmd_sweep import _csv_cells, _evaluate_columns, _grid, _json_point, _label
    from tlop.runtime.configs import ConfigError, configuration

    if getattr(args, "plot", None) or getattr(args, "distributed", False):
        raise TlopError("a sweep over configurations prints rows (or --csv, --json); --plot and --distributed "
                        "take a sweep without --config/--layout")
    m = _load(args.file, args)
    h = m[args.algorithm]
    if h.ir.over is None:
        raise TlopError(f"'{h.name}' is not evaluated over a process mapping; --config/--layout give it nothing")
    prof = _profile(args)
    raw = _assignments(args.assignments)
    ptypes = {p.name: p.type for p in h.params}
    selector = "N" in raw and "N" not in ptypes  # N=… picks each configuration's partition of that size
    sizes = [None]
    if selector:
        from tlop.cli.ranges import parse_axis

        sizes = [int(v) for v in parse_axis("N", raw.pop("N"), "int", m.program, 10_000)]
    for k in raw:
        if k not in ptypes:
            raise TlopError(f"'{h.name}' has no parameter '{k}'; parameters: {', '.join(ptypes)}")
    names = config_names(args.config) if args.config else [None]
    label = _label(ptypes, m.program, args)
    own_P = "P" in ptypes and "P" not in raw
    swept = [k for k in raw]
    header = ["config"] + (["P"] if own_P else []) + (["N"] if selector else []) + swept

    def rows():
        """(config label, P, N, columns, values) per configuration and size."""
        for name in names:
            base = configuration(name, args.layout, args.partition)
            for N in sizes:
                cfg = base.select_partition(h.name, N)
                part = getattr(cfg, "partition", None)
                if selector and (part is None or part.N != N):
                    have = ", ".join(f"{n} (N={p.N})" for n, p in base.partitions) or "none"
                    raise ConfigError(f"{cfg.name or name}: no partition of N={N} for {h.name} (partitions: {have})")
                point = dict(raw)
                if own_P:
                    point["P"] = str(cfg.P)
                grid = _grid(point, ptypes, m.program, getattr(args, "max_points", None))
                # every configuration shares one compiled object: count all the evaluations
                _, evaluate = _engine(args, h, prof, points=grid.size * len(names) * len(sizes), mapping=cfg,
                                          config=True)
                for _, columns in grid.chunks():
                    values = _evaluate_columns(evaluate, h, columns, ptypes)
                    yield (cfg.name or name or cfg.source), cfg, N, columns, values

    def prefix(cfg_label, cfg, N):
        return [cfg_label] + ([str(cfg.P)] if own_P else []) + ([str(N)] if selector else [])

    if args.csv:
        def csv_rows():
            for cfg_label, cfg, N, columns, values in rows():
                yield [prefix(cfg_label, cfg, N) + _csv_cells(swept, ptypes, label, columns, j)
                       + [repr(float(val))] for j, val in enumerate(values)]
        _write_csv(args.csv, header + ["seconds"], csv_rows())
        return 0
    if args.json:
        from tlop.cli.jsonout import emit_stream

        emit_stream({"algorithm": h.name, "file": str(m.path), "profile": prof.name,
                     "configurations": names if names != [None] else [str(args.layout)]}, "points",
                    ({"config": cfg_label, "P": cfg.P, **({"N": N} if selector else {}),
                      **_json_point(swept, ptypes, m.program, columns, j), "seconds": float(val)}
                     for cfg_label, cfg, N, columns, values in rows() for j, val in enumerate(values)))
        return 0
    table = [prefix(cfg_label, cfg, N) + [label(k, columns[k][j]) for k in swept] + [fmt.seconds(val, args)]
             for cfg_label, cfg, N, columns, values in rows() for j, val in enumerate(values)]
    print(f"{h.name} on {prof.name}, {len(names)} configuration{'s' if len(names) != 1 else ''}")
    _print_table(header + ["cost"], table)
    return 0
