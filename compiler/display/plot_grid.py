"""``tlop sweep --plot FILE`` and ``tlop best --plot FILE``: a grid as a picture (matplotlib).

What it does: :func:`sweep_figure` draws the cost of one algorithm over a grid with one or two
swept parameters as lines — the x axis is the message size ``m`` when it is swept (else the
last swept parameter), one line per value of the other swept parameter, each line labelled
``P=4`` in the legend; axes are logarithmic where the values span more than two decades, and
the x axis also where its values are geometric (``P=2..64:x2``: a constant ratio).
:func:`selection_figure` draws which algorithm is cheapest at each point of a grid with one or
two swept parameters as a map: one cell per point, coloured by the winning algorithm (a fixed
colour per candidate, in the order compared), ``m`` across and the other parameter down, with a
legend of every algorithm that wins somewhere (and "none" for points no candidate prices).
:func:`best_curves_figure` draws a grid of one swept parameter instead as every candidate's cost
curve, the winner's stretch of each drawn thick (``winner-K``) over the thin full curve
(``cost-K``), so that the picture shows by how much the winner wins.  They all
take plain arrays (the caller evaluates), so that Python users and tests can build figures
without the command line.  Artists carry ids (``gid``) that the SVG output keeps: ``series-K``
(a line), ``selection`` (the cell map).  :func:`write_figure` saves a figure (the format from
the file's suffix: .svg, .png or .pdf) without a date, so that the same grid gives the same file.

What it does not do: evaluate anything, use pyplot or a display, or get imported at start-up
(matplotlib is the optional extra ``tlop[plot]``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tlop.runtime.diagnostics import TlopError

__all__ = ["sweep_figure", "selection_figure", "best_curves_figure", "write_figure", "check_target", "plotted_axes", "time_unit",
           "PLOT_HINT", "FORMATS", "MAX_PLOT_POINTS", "MAX_SERIES", "COLOURS", "NONE_COLOUR"]

PLOT_HINT = ("tlop {command} --plot needs matplotlib, which is not installed; install it with "
             "pip install 'tlop[plot]'")
FORMATS = (".svg", ".png", ".pdf")
#: the most grid points one picture draws
MAX_PLOT_POINTS = 250_000
#: the most lines of a sweep picture
MAX_SERIES = 24
#: algorithm colours of a selection map, in the order the candidates are compared
COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
           "tab:olive", "tab:cyan", "gold", "navy", "lime", "maroon", "teal", "coral", "slategray")
#: the colour of a point no algorithm prices
NONE_COLOUR = "0.85"

_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def check_target(path: str, command: str) -> None:
    """Refuse a file name whose suffix is not a picture format, before anything is evaluated."""
    if Path(path).suffix.lower() not in FORMATS:
        raise TlopError(f"--plot {path}: the picture's format comes from the file name; use one of "
                        f"{', '.join(FORMATS)}")


def plotted_axes(names: list, shape: tuple, command: str) -> tuple:
    """``(x, series)``: the names of the swept parameters a picture draws — ``x`` across (``m``
    when swept, else the last swept one), ``series`` the other one or None.  A grid of one point
    or of more than two swept parameters is refused, and so is one too large to draw."""
    swept = [k for k, n in zip(names, shape) if n > 1]
    size = int(np.prod(shape)) if shape else 1
    if not swept:
        raise TlopError(f"tlop {command} --plot: the grid has one point; sweep one or two parameters "
                        f"(e.g. m=1KiB..4MiB:x2) to draw it")
    if len(swept) > 2:
        raise TlopError(f"tlop {command} --plot draws one or two swept parameters; this grid sweeps "
                        f"{len(swept)} ({', '.join(swept)}): give the others one value")
    if size > MAX_PLOT_POINTS:
        raise TlopError(f"tlop {command} --plot draws at most {MAX_PLOT_POINTS:,} points; this grid has {size:,}")
    x = "m" if "m" in swept else swept[-1]
    other = [k for k in swept if k != x]
    return x, (other[0] if other else None)


def time_unit(values) -> tuple:
    """``(scale, name)``: the unit in which the largest finite positive value is at least 1."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    top = float(v.max()) if v.size else 1.0
    for scale, name in _UNITS:
        if top >= scale:
            return scale, name
    return _UNITS[-1]


def _spans_decades(values) -> bool:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return bool(v.size and v.min() > 0 and v.max() / v.min() > 100)


def _geometric(values) -> bool:
    """Whether the values (at least three, positive) grow by one constant factor > 1."""
    v = np.asarray(values, dtype=float)
    if v.size < 3 or not np.all(np.isfinite(v)) or v.min() <= 0:
        return False
    r = v[1:] / v[:-1]
    return bool(r.min() > 1.01 and np.allclose(r, r[0], rtol=1e-6))


def _pick(table: np.ndarray, names: list, x: str, series) -> np.ndarray:
    """The grid's values as a 2-D array [series value, x value] (the fixed axes dropped)."""
    keep = [names.index(series)] if series is not None else []
    keep.append(names.index(x))
    index = tuple(slice(None) if i in keep else 0 for i in range(len(names)))
    sub = table[index]
    if series is not None and names.index(series) > names.index(x):
        sub = sub.T
    return sub.reshape(-1, table.shape[names.index(x)])


def sweep_figure(title: str, names: list, axes: dict, values: np.ndarray, label):
    """The cost over the grid: ``values`` has the grid's shape (``axes[k]`` the values of
    parameter ``k``, ``names`` in grid order); ``label(k, v)`` prints a parameter value."""
    from matplotlib.figure import Figure

    shape = tuple(len(axes[k]) for k in names)
    x, series = plotted_axes(names, shape, "sweep")
    table = _pick(np.asarray(values, dtype=float).reshape(shape), names, x, series)
    if series is not None and len(axes[series]) > MAX_SERIES:
        raise TlopError(f"tlop sweep --plot draws at most {MAX_SERIES} lines; {series} has {len(axes[series])} "
                        f"values (sweep fewer, or make {series} the x axis by fixing m)")
    xs = np.asarray(list(axes[x]), dtype=float)
    scale, unit = time_unit(table)
    fig = Figure(figsize=(7.0, 4.6), layout="constrained")
    ax = fig.subplots()
    ax.set_gid("sweep")
    for k, row in enumerate(table):
        name = f"{series}={label(series, axes[series][k])}" if series is not None else title.split(" ")[0]
        ax.plot(xs, row / scale, marker="o", markersize=3, linewidth=1.2, label=name, gid=f"series-{k}")
    if _spans_decades(xs) or _geometric(xs):
        ax.set_xscale("log", base=2 if x in ("m", "seg", "s", "S", "P") else 10)
    if _spans_decades(table):
        ax.set_yscale("log")
    _size_ticks(ax, x, xs, label)
    ax.set_xlabel(x)
    ax.set_ylabel(f"predicted time ({unit})")
    ax.grid(True, which="major", linewidth=0.4, color="0.85")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, title=series, title_fontsize=8)
    return fig


def _size_ticks(ax, x, xs, label) -> None:
    """Label at most about eight of the x values with their printed form (``64KiB``)."""
    step = max(1, -(-len(xs) // 8))
    ticks = xs[::step]
    ax.set_xticks(ticks, [label(x, v) for v in ticks], fontsize=7, rotation=30)
    ax.minorticks_off()


def selection_figure(title: str, names: list, axes: dict, winners: np.ndarray, algorithms: list, label):
    """Which algorithm wins where: ``winners`` has the grid's shape and holds the index of the
    cheapest algorithm of ``algorithms`` at each point (−1 where none prices it)."""
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    shape = tuple(len(axes[k]) for k in names)
    x, series = plotted_axes(names, shape, "best")
    table = _pick(np.asarray(winners, dtype=int).reshape(shape), names, x, series)
    colours = [NONE_COLOUR] + [COLOURS[i % len(COLOURS)] for i in range(len(algorithms))]
    nx, ny = table.shape[1], table.shape[0]
    fig = Figure(figsize=(max(5.0, min(12.0, 2.5 + 0.32 * nx)), max(2.6, min(9.0, 1.8 + 0.32 * ny))),
                 layout="constrained")
    ax = fig.subplots()
    ax.set_gid("selection-map")
    mesh = ax.pcolormesh(np.arange(nx + 1) - 0.5, np.arange(ny + 1) - 0.5, table + 1,
                         cmap=ListedColormap(colours), vmin=-0.5, vmax=len(algorithms) + 0.5,
                         edgecolors="white", linewidth=0.3 if nx * ny <= 2500 else 0.0)
    mesh.set_gid("selection")
    xs = list(axes[x])
    step = max(1, -(-nx // 12))
    ax.set_xticks(range(0, nx, step), [label(x, xs[i]) for i in range(0, nx, step)], fontsize=7, rotation=30)
    ax.set_xlabel(x)
    if series is not None:
        ys = list(axes[series])
        step = max(1, -(-ny // 16))
        ax.set_yticks(range(0, ny, step), [label(series, ys[i]) for i in range(0, ny, step)], fontsize=7)
        ax.set_ylabel(series)
    else:
        ax.set_yticks([])
    ax.set_xlim(-0.5, nx - 0.5)
    ax.set_ylim(-0.5, ny - 0.5)
    ax.set_title(title, fontsize=10)
    won = sorted({int(w) for w in np.unique(table)})
    handles = [Patch(facecolor=colours[w + 1], edgecolor="0.5", label=algorithms[w] if w >= 0 else "none")
               for w in won]
    fig.legend(handles=handles, loc="outside right upper", fontsize=8, title="cheapest", title_fontsize=8)
    return fig


def best_curves_figure(title: str, x: str, xs, costs: np.ndarray, algorithms: list, label):
    """The cost of every candidate over one swept parameter ``x`` (values ``xs``; ``costs`` is
    [candidate, point], inf or NaN where a candidate does not price a point): a thin line each,
    and thick where it is the cheapest; log axes as :func:`sweep_figure` chooses them."""
    from matplotlib.figure import Figure

    costs = np.asarray(costs, dtype=float)
    xs = np.asarray(list(xs), dtype=float)
    finite = np.where(np.isfinite(costs), costs, np.nan)
    scale, unit = time_unit(finite)
    best = np.nanargmin(np.where(np.isnan(finite), np.inf, finite), axis=0)
    priced = np.isfinite(finite).any(axis=0)
    fig = Figure(figsize=(7.0, 4.6), layout="constrained")
    ax = fig.subplots()
    ax.set_gid("best-curves")
    for k, name in enumerate(algorithms):
        colour = COLOURS[k % len(COLOURS)]
        if not np.isfinite(finite[k]).any():
            continue
        ax.plot(xs, finite[k] / scale, color=colour, linewidth=0.9, alpha=0.6, marker="o", markersize=2,
                label=name, gid=f"cost-{k}")
        won = np.where((best == k) & priced, finite[k], np.nan)
        if np.isfinite(won).any():
            ax.plot(xs, won / scale, color=colour, linewidth=3.2, solid_capstyle="round", gid=f"winner-{k}")
    if _spans_decades(xs) or _geometric(xs):
        ax.set_xscale("log", base=2 if x in ("m", "seg", "s", "S", "P") else 10)
    if _spans_decades(finite):
        ax.set_yscale("log")
    _size_ticks(ax, x, xs, label)
    ax.set_xlabel(x)
    ax.set_ylabel(f"predicted time ({unit})")
    ax.grid(True, which="major", linewidth=0.4, color="0.85")
    ax.set_title(title + "\n(thick: the cheapest)", fontsize=10)
    ax.legend(fontsize=8, title="algorithm", title_fontsize=8)
    return fig


def write_figure(fig, path: str) -> None:
    """Save ``fig`` to ``path`` (.svg, .png or .pdf), with no creation date in the file."""
    suffix = Path(path).suffix.lower()
    meta = {"Date": None} if suffix == ".svg" else ({"CreationDate": None} if suffix == ".pdf" else {})
    try:
        fig.savefig(path, format=suffix[1:], metadata=meta)
    except OSError as err:
        raise TlopError(f"{path}: cannot write the picture: {err.strerror or err}") from None
