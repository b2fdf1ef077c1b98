"""The audit's heat map: default cost / best cost of the same library over a (P, m) grid.

What it does: :func:`ratio_figure` draws the cells of :func:`tlop.decisions.audit.audit` as a map
— P down (the first P at the top), m across, the colour the ratio on a logarithmic scale from 1
(the default is the best) up, grey where a cell has no ratio (the default is not priced) — and
marks each cell whose ratio is at least ``threshold`` (1.1 by default) with its ratio printed in
it.  Artists carry ids: ``audit-ratio`` (the mesh, its array the ratios row by row, NaN where
none), ``audit-mark`` (each mark's text).  It returns the matplotlib Figure; saving is
:func:`tlop.cli.plot_grid.write_figure`.

What it does not do: price, audit, or use pyplot or a display.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ratio_figure", "ratio_table"]


def ratio_table(cells):
    """``(Ps, ms, ratios)``: the grid's P and m, ascending, and the ratios (NaN where none), P rows."""
    Ps = sorted({c.P for c in cells})
    ms = sorted({c.m for c in cells})
    table = np.full((len(Ps), len(ms)), np.nan)
    for c in cells:
        if c.ratio is not None:
            table[Ps.index(c.P), ms.index(c.m)] = c.ratio
    return Ps, ms, table


def ratio_figure(cells, title: str = "", threshold: float = 1.1):
    """The heat map of the audit ``cells`` (see the module docstring)."""
    from matplotlib.colors import LogNorm
    from matplotlib.figure import Figure

    from tlop.runtime.units import format_size

    Ps, ms, table = ratio_table(cells)
    ny, nx = table.shape
    top = np.nanmax(table) if np.isfinite(table).any() else 1.0
    vmax = max(top, threshold * 1.01, 1.0 + 1e-9)
    fig = Figure(figsize=(max(5.0, min(14.0, 2.8 + 0.55 * nx)), max(2.8, min(10.0, 1.8 + 0.4 * ny))),
                 layout="constrained")
    ax = fig.subplots()
    ax.set_gid("audit-map")
    masked = np.ma.masked_invalid(table)
    cmap = __import__("matplotlib").colormaps["viridis"].with_extremes(bad="0.85")
    mesh = ax.pcolormesh(np.arange(nx + 1) - 0.5, np.arange(ny + 1) - 0.5, masked, cmap=cmap,
                         norm=LogNorm(vmin=1.0, vmax=vmax), edgecolors="white", linewidth=0.3)
    mesh.set_gid("audit-ratio")
    for i in range(ny):
        for j in range(nx):
            r = table[i, j]
            if math.isfinite(r) and r >= threshold:
                t = ax.text(j, i, f"{r:.2f}×", ha="center", va="center", fontsize=7, color="white",
                            fontweight="bold")
                t.set_gid("audit-mark")
    step = max(1, -(-nx // 12))
    ax.set_xticks(range(0, nx, step), [format_size(ms[k]) for k in range(0, nx, step)], fontsize=7, rotation=30)
    ax.set_yticks(range(ny), [str(P) for P in Ps], fontsize=7)
    ax.set_xlabel("m")
    ax.set_ylabel("P")
    ax.set_xlim(-0.5, nx - 0.5)
    ax.set_ylim(ny - 0.5, -0.5)  # P down
    ax.set_title(title or f"default / best (cells >= {threshold:g} marked)", fontsize=10)
    bar = fig.colorbar(mesh, ax=ax)
    bar.set_label("default cost / best cost")
    return fig
