"""``tlop partition … --plot FILE``: a configuration's partition as a picture, like 000 Fig. 10.

What it does: :func:`build_figure` draws each rank's rectangle of the N × N matrix of blocks,
filled with its node's colour (one colour per node, cycling through a qualitative palette;
hatched for a GPU process) and labelled with its rank, rows downwards as in the paper's
figures; :func:`write_plot` saves it (.svg, .png or .pdf, no date in the file).

What it does not do: compute a partition (:mod:`tlop.runtime.partition`) or import matplotlib at
start-up (the optional extra ``tlop[plot]``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["build_figure", "write_plot", "node_colours"]


def node_colours(cfg) -> list:
    """The fill colour of each rank: its node's, from matplotlib's ``tab20`` palette."""
    from matplotlib import colormaps

    cmap = colormaps["tab20"]
    return [cmap(int(n) % 20) for n in cfg.node]


def build_figure(cfg):
    """The figure of ``cfg``'s partition (a matplotlib :class:`~matplotlib.figure.Figure`)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    part = cfg.partition
    fig = Figure(figsize=(6, 6))
    ax = fig.add_subplot(1, 1, 1)
    colours = node_colours(cfg)
    gpu = cfg.gpu()
    for r in range(cfg.P):
        ax.add_patch(Rectangle((part.x[r], part.y[r]), part.w[r], part.h[r], facecolor=colours[r],
                               edgecolor="black", linewidth=0.8, hatch="//" if gpu[r] else None, label=f"p{r}"))
        ax.text(part.x[r] + part.w[r] / 2, part.y[r] + part.h[r] / 2, str(r), ha="center", va="center", fontsize=8)
    ax.set_xlim(0, part.N)
    ax.set_ylim(part.N, 0)  # row 0 at the top
    ax.set_aspect("equal")
    ax.set_xlabel("columns (blocks)")
    ax.set_ylabel("rows (blocks)")
    nodes = max(cfg.node) + 1
    ax.set_title(f"{cfg.name or cfg.source}: {part.name or 'partition'}, N = {part.N}, P = {cfg.P}, "
                 f"{nodes} node{'s' * (nodes != 1)} (colour: node; hatched: GPU)", fontsize=9)
    return fig


def write_plot(cfg, path: str) -> None:
    """Draw ``cfg``'s partition into ``path`` (.svg, .png or .pdf)."""
    from tlop.cli.plot_stages import check_target

    check_target(path)
    suffix = Path(path).suffix.lower()
    meta = {"Date": None} if suffix == ".svg" else ({"CreationDate": None} if suffix == ".pdf" else {})
    build_figure(cfg).savefig(path, format=suffix[1:], metadata=meta)
