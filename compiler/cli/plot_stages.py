"""``tlop explain … --plot FILE``: a schedule's stages as a picture (matplotlib).

What it does: draws an :class:`tlop.analysis.stages.Explanation` as one panel per stage; in each
panel the ranks are dots grouped by node (one box per node of the mapping, its ranks in a row),
every send is an arrow from its source to its destination coloured by its channel, and the
stage's cost is written under the panel in the papers' notation with its value.  Artists carry
ids (``gid``) that the SVG output keeps: ``stage-I`` (the panel), ``node-I-N`` (a node box),
``ranks-I`` (the dots), ``send-I-K`` (an arrow), ``compute-I`` (the ranks that reduce or compute,
ringed), ``cost-I`` (the cost text, wrapped, not cut).  Panels are laid out at most about 16
inches wide, so that rank labels stay readable.

:func:`timeline_figure` draws the same explanation as a timeline (Gantt chart) per rank — the view
of LogGOPSim and SimGrid/Paje users, and the one that works for pipelined schedules of many
stages: time across, one row per rank; stages follow one another (each its cost), the phases of a
stage one another, and in a phase each send occupies its source's row (upper half, ``send``) and its
destination's (lower half, ``receive``) for its contention group's time, each computation or
reduction its rank's row (black); the rest of a stage is the rank's idle time.  Collections carry
gids ``timeline-send-CH``, ``timeline-recv-CH`` and ``timeline-compute``; stage boundaries
``timeline-stage-I``.  :func:`build_figure` returns the panels figure (for tests and for Python
users), :func:`write_plot` saves one view (the format from the file's suffix: .svg, .png or .pdf):
``auto`` is the timeline from :data:`TIMELINE_FROM` stages on, the panels below.

What it does not do: compute anything (every number comes from the explanation), use pyplot or a
display, or get imported at start-up (matplotlib is the optional extra ``tlop[plot]``).
"""

from __future__ import annotations

from pathlib import Path

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.units import format_time

__all__ = ["build_figure", "timeline_figure", "write_plot", "check_target", "have_matplotlib", "PLOT_HINT",
           "FORMATS", "MAX_PLOT_STAGES", "MAX_PLOT_RANKS", "CHANNEL_COLOURS", "TIMELINE_FROM", "VIEWS"]

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
#: the widest a figure of panels is laid out (inches)
_MAX_WIDTH = 16.0
#: ``--view auto`` draws a timeline from this many stages on
TIMELINE_FROM = 13
#: the views ``tlop explain --plot`` draws
VIEWS = ("auto", "stages", "timeline")
#: the most bars (sends, receives, computations) one timeline draws
MAX_TIMELINE_BARS = 400_000


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


def _wrapped(text: str, width: int) -> str:
    """``text`` broken into lines of at most about ``width`` characters (never cut)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, max(20, width), break_long_words=False, break_on_hyphens=False)) or text


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
    pw, ph = 0.45 * width + 1.2, 0.45 * len(rows) + 1.6
    cols = max(1, min(n, _COLUMNS, int(_MAX_WIDTH // pw)))
    lines = -(-max(n, 1) // cols)
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
                            fontsize=6, color="0.3")
        computing = sorted({rank for rank, _cost, _phase in s.computes})
        if computing:  # reductions and computations: the rank ringed
            ax.scatter([pos[r][0] for r in computing], [pos[r][1] for r in computing], s=60, facecolors="none",
                       edgecolors="black", linewidths=1.0, zorder=5, gid=f"compute-{s.index}")
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
        ax.text(0.5, -0.02, f"{_wrapped(s.notation, int(pw * 11))}\n= {format_time(s.cost)}",
                transform=ax.transAxes, ha="center", va="top", fontsize=7, gid=f"cost-{s.index}")
    for ax in list(axes)[n:]:
        ax.set_visible(False)
    used = [c for c in e.channels if any(x[4] == c for s in e.stages for x in s.sends)]
    handles = [Line2D([], [], color=CHANNEL_COLOURS[e.channels.index(c) % len(CHANNEL_COLOURS)], label=c)
               for c in used]
    if any(s.computes for s in e.stages):
        handles.append(Line2D([], [], marker="o", markerfacecolor="none", markeredgecolor="black", linestyle="",
                              label="computes / reduces"))
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8)
    return fig


def _bars(e):
    """The timeline's bars: ``{(kind, channel): [(rank, start, duration, stage), …]}`` with kind
    ``send``, ``recv`` or ``compute`` (channel None), and the start of each stage."""
    bars: dict = {}
    starts = []
    t = 0.0
    for s in e.stages:
        starts.append(t)
        offset = t
        for ph in s.phases:
            for g in ph.groups:
                for member in g.members:
                    if g.channel == "compute":
                        rank, cost = member[0], member[1]
                        bars.setdefault(("compute", None), []).append((rank, offset, cost, s.index))
                    else:
                        src, dst = member[0], member[1]
                        bars.setdefault(("send", g.channel), []).append((src, offset, g.cost, s.index))
                        bars.setdefault(("recv", g.channel), []).append((dst, offset, g.cost, s.index))
            offset += ph.cost
        t += s.cost
    return bars, starts, t


def timeline_figure(e):
    """The explanation as a timeline per rank (see the module's description)."""
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    if e.P > MAX_PLOT_RANKS:
        raise TlopError(f"--plot draws at most {MAX_PLOT_RANKS} ranks; P = {e.P} (try a smaller P)")
    bars, starts, total = _bars(e)
    if sum(len(v) for v in bars.values()) > MAX_TIMELINE_BARS:
        raise TlopError(f"--plot --view timeline draws at most {MAX_TIMELINE_BARS:,} sends, receives and "
                        f"computations; this schedule has more at this point (try a smaller P)")
    scale, unit = next(((f, u) for f, u in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
                        if total >= f), (1e-9, "ns"))
    fig = Figure(figsize=(11.0, min(18.0, 1.8 + 0.22 * e.P)), layout="constrained")
    ax = fig.subplots()
    ax.set_gid("timeline")
    half = {"send": (-0.42, 0.0), "recv": (0.0, 0.42), "compute": (-0.42, 0.42)}
    for (kind, ch), items in sorted(bars.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        lo, hi = half[kind]
        verts = [[(t0 / scale, r + lo), ((t0 + d) / scale, r + lo), ((t0 + d) / scale, r + hi), (t0 / scale, r + hi)]
                 for r, t0, d, _stage in items]
        if kind == "compute":
            colour, alpha, hatch = "black", 0.85, None
        else:
            colour = CHANNEL_COLOURS[e.channels.index(ch) % len(CHANNEL_COLOURS)]
            alpha, hatch = (0.9, None) if kind == "send" else (0.45, "///")
        coll = PolyCollection(verts, facecolors=colour, edgecolors="white", linewidths=0.3, alpha=alpha,
                              hatch=hatch, gid=f"timeline-{kind}" + (f"-{ch}" if ch else ""))
        ax.add_collection(coll)
    for s, t0 in zip(e.stages, starts):
        ax.axvline(t0 / scale, color="0.6", linewidth=0.5, zorder=0, gid=f"timeline-stage-{s.index}")
    ax.axvline(total / scale, color="0.6", linewidth=0.5, zorder=0)
    ax.set_xlim(0, total / scale if total > 0 else 1)
    ax.set_ylim(e.P - 0.5, -0.5)  # rank 0 on top
    step = max(1, -(-e.P // 32))
    ax.set_yticks(range(0, e.P, step), [f"{r} (node {e.node_of[r]})" if len(e.nodes) > 1 else str(r)
                                        for r in range(0, e.P, step)], fontsize=7)
    ax.set_ylabel("rank")
    ax.set_xlabel(f"time ({unit}); grey lines: stage boundaries")
    args = ", ".join(f"{k}={v}" for k, v in e.arguments.items())
    n = len(e.stages)
    ax.set_title(f"{e.algorithm}({args}) over {e.mapping} on {e.profile}: {n} stage{'s' * (n != 1)}, "
                 f"total {format_time(total)}", fontsize=10)
    handles = []
    for kind, label in (("send", "sends"), ("recv", "receives")):
        for ch in e.channels:
            if (kind, ch) in bars:
                colour = CHANNEL_COLOURS[e.channels.index(ch) % len(CHANNEL_COLOURS)]
                handles.append(Patch(facecolor=colour, alpha=0.9 if kind == "send" else 0.45,
                                     hatch=None if kind == "send" else "///", label=f"{ch} {label}"))
    if ("compute", None) in bars:
        handles.append(Patch(facecolor="black", label="computes / reduces"))
    handles.append(Patch(facecolor="white", edgecolor="0.6", label="idle"))
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 6), fontsize=8)
    return fig


def write_plot(e, path: str, view: str = "auto") -> None:
    """Draw ``e`` into ``path`` (.svg, .png or .pdf): its stages as panels, or its timeline per
    rank (``view``: ``stages``, ``timeline``, or ``auto``: the timeline from
    :data:`TIMELINE_FROM` stages on)."""
    check_target(path)
    if view == "auto":
        view = "timeline" if len(e.stages) >= TIMELINE_FROM else "stages"
    fig = timeline_figure(e) if view == "timeline" else build_figure(e)
    fig.savefig(path, format=Path(path).suffix.lower()[1:], metadata=_metadata(path))


def _metadata(path: str) -> dict:
    # no creation date in the file, so that the same explanation gives the same picture
    suffix = Path(path).suffix.lower()
    return {"Date": None} if suffix in (".svg",) else ({"CreationDate": None} if suffix == ".pdf" else {})
