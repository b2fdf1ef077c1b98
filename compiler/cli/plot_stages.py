"""``tlop explain … --plot FILE``: a schedule's stages as a picture (matplotlib).

What it does: draws an :class:`tlop.analysis.stages.Explanation` as one panel per stage; in each
panel the ranks are dots grouped by node (one box per node of the mapping, its ranks in a row),
every send is an arrow from its source to its destination coloured by its channel, and the
stage's cost is written under the panel in the papers' notation with its value.  Artists carry
ids (``gid``) that the SVG output keeps: ``stage-I`` (the panel), ``node-I-N`` (a node box),
``ranks-I`` (the dots), ``send-I-K`` (an arrow), ``cost-I`` (the cost text).  :func:`build_figure`
returns the figure (for tests and for Python users), :func:`write_plot` saves it (the format from
the file's suffix: .svg, .png or .pdf).

What it does not do: compute anything (every number comes from the explanation), use pyplot or a
display, or get imported at start-up (matplotlib is the optional extra ``tlop[plot]``).
"""

from __future__ import annotations

from pathlib import Path

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.units import format_time

__all__ = ["build_figure", "write_plot", "check_target", "have_matplotlib", "PLOT_HINT", "FORMATS",
           "MAX_PLOT_STAGES", "MAX_PLOT_RANKS", "CHANNEL_COLOURS"]

PLOT_HINT = ("tlop explain --plot needs matplotlib, which is not installed; install it with "
             "pip install 'tlop[plot]'")
#: the file suffixes --plot writes
FORMATS = (".svg", ".png", ".pdf")
#: the most stages and ranks one picture draws
MAX_PLOT_STAGES = 64
MAX_PLOT_RANKS = 256
#: channel colours, in the program's channel order (shm, net, …); computations are drawn black
CHANNEL_COLOURS = ("tab:blue", "tab:red", "tab:green", "tab:purple", "tab:orange", "tab:brown")
_COLUMNS = 6


def have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def check_target(path: str) -> None:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise TlopError(f"--plot {path}: the picture's format comes from the file name; use one of "
                        f"{', '.join(FORMATS)}")


def _short(text: str, width: int = 44) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def _positions(e):
    """Rank -> (x, y): node n's ranks in a row at height −row(n), in rank order."""
    rows = {nd: i for i, nd in enumerate(e.nodes)}
    col: dict = {}
    pos = {}
    for r, nd in enumerate(e.node_of):
        x = col.get(nd, 0)
        col[nd] = x + 1
        pos[r] = (float(x), -float(rows[nd]))
    return pos, rows, max(col.values())


def build_figure(e):
    """The figure of explanation ``e`` (a matplotlib :class:`~matplotlib.figure.Figure`)."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch, Rectangle

    n = len(e.stages)
    if n > MAX_PLOT_STAGES:
        raise TlopError(f"--plot draws at most {MAX_PLOT_STAGES} stages; this schedule has {n} at this point "
                        f"(try a smaller P)")
    if e.P > MAX_PLOT_RANKS:
        raise TlopError(f"--plot draws at most {MAX_PLOT_RANKS} ranks; P = {e.P} (try a smaller P)")
    pos, rows, width = _positions(e)
    cols = max(1, min(n, _COLUMNS))
    lines = -(-max(n, 1) // cols)
    pw, ph = 0.45 * width + 1.2, 0.45 * len(rows) + 1.6
    fig = Figure(figsize=(cols * pw, lines * ph + 0.8), layout="constrained")
    args = ", ".join(f"{k}={v}" for k, v in e.arguments.items())
    fig.suptitle(f"{e.algorithm}({args}) over {e.mapping} on {e.profile}: {n} stage{'s' * (n != 1)}, "
                 f"total {format_time(e.total)}")
    axes = fig.subplots(lines, cols, squeeze=False).ravel() if n else []
    label_ranks = e.P <= 64
    for ax, s in zip(axes, e.stages):
        ax.set_gid(f"stage-{s.index}")
        ax.set_xlim(-0.8, width - 0.2)
        ax.set_ylim(-len(rows) + 0.4, 0.8)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xticks([])
        ax.set_yticks([])
        for side in ax.spines.values():
            side.set_visible(False)
        var = ", ".join(f"{k} = {v}" for k, v in s.variables.items())
        ax.set_title(f"stage {s.index}" + (f" ({var})" if var else ""), fontsize=9)
        for nd, row in rows.items():
            count = sum(1 for x in e.node_of if x == nd)
            ax.add_patch(Rectangle((-0.4, -row - 0.32), count - 0.2, 0.64, facecolor="0.94", edgecolor="0.55",
                                   linewidth=0.8, gid=f"node-{s.index}-{nd}"))
            ax.text(-0.55, -row, f"node {nd}", ha="right", va="center", fontsize=6, color="0.4")
        xs = [pos[r][0] for r in range(e.P)]
        ys = [pos[r][1] for r in range(e.P)]
        ax.scatter(xs, ys, s=14, color="black", zorder=3, gid=f"ranks-{s.index}")
        if label_ranks:
            for r in range(e.P):
                ax.annotate(str(r), pos[r], xytext=(0, -7), textcoords="offset points", ha="center", va="top",
                            fontsize=4.5, color="0.3")
        for k, (src, dst, _size, _w, ch, _phase) in enumerate(s.sends):
            colour = CHANNEL_COLOURS[e.channels.index(ch) % len(CHANNEL_COLOURS)]
            a, b = pos[src], pos[dst]
            if src == dst:  # a self-send: a small loop above the rank
                a, b = (a[0] - 0.12, a[1] + 0.05), (a[0] + 0.12, a[1] + 0.05)
                style = "arc3,rad=-1.6"
            else:
                style = "arc3,rad=0.35" if a[1] == b[1] else "arc3,rad=0.12"
            ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=7, linewidth=0.9, color=colour,
                                         connectionstyle=style, shrinkA=3, shrinkB=3, zorder=4,
                                         gid=f"send-{s.index}-{k}"))
        ax.text(0.5, -0.02, f"{_short(s.notation)}\n= {format_time(s.cost)}", transform=ax.transAxes,
                ha="center", va="top", fontsize=7, gid=f"cost-{s.index}")
    for ax in list(axes)[n:]:
        ax.set_visible(False)
    used = [c for c in e.channels if any(x[4] == c for s in e.stages for x in s.sends)]
    if used:
        fig.legend(handles=[Line2D([], [], color=CHANNEL_COLOURS[e.channels.index(c) % len(CHANNEL_COLOURS)],
                                   label=c) for c in used], loc="outside lower center", ncols=len(used), fontsize=8)
    return fig


def write_plot(e, path: str) -> None:
    """Draw ``e`` into ``path`` (.svg, .png or .pdf)."""
    check_target(path)
    fig = build_figure(e)
    fig.savefig(path, format=Path(path).suffix.lower()[1:], metadata=_metadata(path))


def _metadata(path: str) -> dict:
    # no creation date in the file, so that the same explanation gives the same picture
    suffix = Path(path).suffix.lower()
    return {"Date": None} if suffix in (".svg",) else ({"CreationDate": None} if suffix == ".pdf" else {})
