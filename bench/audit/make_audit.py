"""The audit of the MPI libraries' defaults on the bundled τ-Lop profiles over a 4 × 8 layout.

For each profile (metropolis, lusitania, ciemat): ``tlop audit`` over P = 2 … 32 (×2; 32 ranks is
4 nodes of 8 with ``sequential(8)``), m = 1 B … 4 MiB (×4), every collective and both libraries;
writes ``<profile>.md`` (per table: how many cells the default costs >= 1.1× the library's best,
the worst and the geometric mean of the ratio, and the flagged cells) here; with ``--json`` also
``<profile>.json`` (every cell; not committed: 0.75 MB each).
The heat maps are not committed (generated pictures stay out of git): ``tlop audit … --plot
audit.svg`` draws them.

Run: ``python bench/audit/make_audit.py [--json] [profile …]``.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GRID_P = [2, 4, 8, 16, 32]
GRID_M = [4 ** k for k in range(0, 12)]  # 1 B … 4 MiB
MAPPING = "sequential(8)"


def main() -> int:
    import tlop
    from tlop.backends.binding import as_mapping
    from tlop.cli.audit import audit_tables
    from tlop.cli.tune import LIBRARY_TITLES
    from tlop.decisions.audit import as_json
    from tlop.decisions.catalogue import COLLECTIVES
    from tlop.decisions.defaults import SOURCES
    from tlop.runtime.units import format_size, format_time

    names = [a for a in sys.argv[1:] if a != "--json"]
    for name in names or ["metropolis", "lusitania", "ciemat"]:
        profile = tlop.load_profile(name)
        t0 = time.perf_counter()
        tables = audit_tables(list(COLLECTIVES), ["openmpi", "mpich"], profile, as_mapping(MAPPING), "taulop",
                              GRID_P, GRID_M)
        took = time.perf_counter() - t0
        lines = [f"# Audit of the libraries' defaults on {name}", "",
                 f"`tlop audit` over P = {GRID_P[0]} … {GRID_P[-1]}, m = 1 B … 4 MiB (×4), mapping `{MAPPING}` "
                 f"(P = 32 is 4 nodes × 8 ranks), model τ-Lop; {took:.0f} s on a loaded 2-core machine.",
                 f"Defaults: Open MPI — {SOURCES()['openmpi']}; MPICH — {SOURCES()['mpich']}.", "",
                 "| collective | library | cells flagged (≥ 1.1×) | not priced | worst | geometric mean |",
                 "|---|---|---|---|---|---|"]
        detail = []
        for (lib, coll), cells in tables.items():
            ratios = [c.ratio for c in cells if c.ratio is not None]
            flagged = [c for c in cells if c.flagged(1.1)]
            geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else math.nan
            lines.append(f"| {coll} | {lib} | {len(flagged)} / {len(cells)} | {sum(c.ratio is None for c in cells)} | "
                         f"{max(ratios):.2f}× | {geo:.3f}× |" if ratios else
                         f"| {coll} | {lib} | 0 / {len(cells)} | {len(cells)} | — | — |")
            if flagged:
                detail += ["", f"## {coll}, {LIBRARY_TITLES[lib]}", "", "| P | m | default | cost | best | cost | ratio |",
                           "|---|---|---|---|---|---|---|"]
                for c in flagged:
                    detail.append(f"| {c.P} | {format_size(c.m)} | {c.default.name} | {format_time(c.default_cost)} | "
                                  f"{c.best.name} {c.best_params or ''} | {format_time(c.best_cost)} | {c.ratio:.2f}× |")
        (HERE / f"{name}.md").write_text("\n".join(lines + detail) + "\n")
        if "--json" in sys.argv[1:]:
            (HERE / f"{name}.json").write_text(json.dumps(
                {"profile": name, "mapping": MAPPING, "tables": [{"library": lib, "collective": coll,
                                                                  "cells": as_json(cells)}
                                                                 for (lib, coll), cells in tables.items()]}, indent=1))
        print(f"{name}: {took:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
