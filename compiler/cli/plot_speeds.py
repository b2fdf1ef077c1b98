"""``tlop partition … --speeds FILE --plot-speeds OUT``: speed functions and the balance they give.

What it does: :func:`build_figure` draws two panels — on the left each speed function a layout
uses (speed against problem size, log-scaled sizes, a marker at each table point, one line per
process type), with a dot at each process's balanced size (:func:`tlop.runtime.speedfunc.
balanced_sizes`); on the right each rank's computation time ``area / s(area)`` on its rectangle of
the partition, against the balanced time (a dashed line), bars coloured by node as in
:mod:`tlop.cli.plot_partition`; :func:`write_plot` saves it (.svg, .png or .pdf, no date).

What it does not do: compute the partition (:mod:`tlop.runtime.speedfunc`) or import matplotlib
at start-up (the optional extra ``tlop[plot]``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["build_figure", "write_plot"]


def build_figure(cfg, fns):
    """The figure of the speed functions ``fns`` (:class:`~tlop.runtime.speedfunc.SpeedFunctions`)
    of ``cfg``'s ranks and of the computation times on ``cfg``'s partition."""
    from matplotlib.figure import Figure

    from tlop.cli.plot_partition import node_colours
    from tlop.runtime.speedfunc import balanced_sizes

    per = fns.for_layout(cfg)
    part = cfg.partition
    fig = Figure(figsize=(11, 4.5))
    ax, bx = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    d, t = balanced_sizes(per, float(part.N) ** 2)
    used = []
    for f in per:
        if f not in used:
            used.append(f)
    for f in used:
        label = f.label.split(" ", 1)[-1].strip("()")
        line, = ax.plot(f.size, f.speed, marker="o", markersize=3, linewidth=1.2, label=label)
        ranks = [r for r in range(cfg.P) if per[r] is f]
        ax.plot(d[ranks], [float(f(x)) for x in d[ranks]], linestyle="none", marker="D", markersize=6,
                color=line.get_color(), markeredgecolor="black")
    ax.set_xscale("log")
    ax.set_xlabel("problem size (blocks)")
    ax.set_ylabel("speed (blocks per unit time)")
    ax.set_title(f"speed functions of {fns.name or fns.source} (diamond: balanced size)", fontsize=9)
    ax.legend(fontsize=7, loc="best")
    areas = part.areas().astype(float)
    times = np.array([float(f.time(a)) for f, a in zip(per, areas)])
    bx.bar(np.arange(cfg.P), times, color=node_colours(cfg), edgecolor="black", linewidth=0.5)
    bx.axhline(t, color="black", linestyle="--", linewidth=1.0, label="balanced time")
    bx.set_xlabel("rank")
    bx.set_ylabel("computation time area / s(area)")
    bx.set_title(f"{cfg.name or cfg.source}, N = {part.N}: time per rank on its rectangle "
                 f"(max/min {times.max() / times.min():.3f})", fontsize=9)
    bx.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def write_plot(cfg, fns, path: str) -> None:
    """Draw the speed functions and times into ``path`` (.svg, .png or .pdf)."""
    from tlop.cli.plot_stages import check_target

    check_target(path)
    suffix = Path(path).suffix.lower()
    meta = {"Date": None} if suffix == ".svg" else ({"CreationDate": None} if suffix == ".pdf" else {})
    build_figure(cfg, fns).savefig(path, format=suffix[1:], metadata=meta)
