"""The figure of ``tlop measure --plot FILE``: the ping-pong latency per channel with its spread.

What it does: :func:`latency_figure` draws, from the records of a samples file (:mod:`.store`),
one panel per channel: the median half round trip against the message size (log–log, as the
closing OSU/IMB table lists it, :mod:`.summary`), the median's confidence interval as error bars
(``ci_low``/``ci_high`` of the point's statistics, order statistics, :mod:`.stats`) and the
samples' interquartile range as a band, where the record kept its samples; :func:`write` saves it
as SVG, PNG or PDF by the file's suffix, with no creation date in the file.  Artists carry gids
(``median-CH``, ``ci-CH``, ``spread-CH``) so that tests read the figure's content.

What it does not do: fit anything, or import matplotlib before a figure is asked for (without it
``--plot`` is refused before anything is measured, :mod:`.cli`).
"""

from __future__ import annotations

import math
from pathlib import Path

from tlop.runtime.diagnostics import TlopError

__all__ = ["latency_figure", "write", "SUFFIXES"]

#: the file types --plot writes
SUFFIXES = (".svg", ".png", ".pdf")


def _points(records) -> dict:
    """channel -> [(m, median, ci_low, ci_high, p25, p75)] of the ping-pong points, by size."""
    import numpy as np

    out: dict = {}
    for r in records:
        st = r.get("stats")
        if r.get("kind") != "point" or r.get("bench") != "pingpong" or not isinstance(st, dict):
            continue
        m = (r.get("params") or {}).get("m")
        med = st.get("median")
        if not isinstance(m, (int, float)) or not isinstance(med, (int, float)) or not m > 0:
            continue
        x = np.asarray(r.get("samples") or [], dtype=np.float64)
        x = x[np.isfinite(x)]
        q1, q3 = (float(v) for v in np.percentile(x, [25, 75])) if x.size else (math.nan, math.nan)
        lo, hi = st.get("ci_low"), st.get("ci_high")
        out.setdefault(str(r.get("channel")), []).append(
            (float(m), float(med), float(lo) if isinstance(lo, (int, float)) else math.nan,
             float(hi) if isinstance(hi, (int, float)) else math.nan, q1, q3))
    return {ch: sorted(v) for ch, v in sorted(out.items())}


def latency_figure(records):
    """A matplotlib Figure of the ping-pong points per channel (None when there are none)."""
    from matplotlib.figure import Figure

    from tlop.runtime.units import format_size

    points = _points(list(records))
    if not points:
        return None
    fig = Figure(figsize=(4.4 * len(points), 3.8), layout="constrained")
    axes = fig.subplots(1, len(points), squeeze=False)[0]
    for k, (ax, (ch, pts)) in enumerate(zip(axes, points.items())):
        ax.set_gid(f"panel-{ch}")
        ms = [p[0] for p in pts]
        us = [[v * 1e6 for v in p[1:]] for p in pts]
        ax.plot(ms, [u[0] for u in us], color="tab:blue", marker="o", markersize=3, linewidth=1.2,
                label="median (half round trip)", gid=f"median-{ch}")
        band = [(m, u) for m, u in zip(ms, us) if math.isfinite(u[3]) and math.isfinite(u[4])]
        if band:
            ax.fill_between([m for m, _ in band], [u[3] for _, u in band], [u[4] for _, u in band],
                            color="tab:blue", alpha=0.18, linewidth=0, label="samples, 25–75 %", gid=f"spread-{ch}")
        bars = [(m, u) for m, u in zip(ms, us) if math.isfinite(u[1]) and math.isfinite(u[2])]
        if bars:
            eb = ax.errorbar([m for m, _ in bars], [u[0] for _, u in bars],
                             yerr=[[max(u[0] - u[1], 0.0) for _, u in bars], [max(u[2] - u[0], 0.0) for _, u in bars]],
                             fmt="none", ecolor="tab:blue", elinewidth=1.0, capsize=2, label="95 % CI of the median")
            eb.lines[2][0].set_gid(f"ci-{ch}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ticks = ms[::max(1, -(-len(ms) // 6))]
        ax.set_xticks(ticks, [format_size(t) for t in ticks], fontsize=7, rotation=30)
        ax.minorticks_off()
        ax.set_title(f"{ch}: ping-pong", fontsize=9)
        ax.set_xlabel("message size")
        ax.set_ylabel("latency (µs)")
        ax.grid(True, linewidth=0.4, color="0.85")
        ax.legend(fontsize=6)
    return fig


def write(fig, path) -> None:
    """Save ``fig`` to ``path`` (.svg, .png or .pdf), with no creation date in the file."""
    suffix = Path(path).suffix.lower()
    meta = {"Date": None} if suffix == ".svg" else ({"CreationDate": None} if suffix == ".pdf" else {})
    try:
        fig.savefig(path, format=suffix[1:], metadata=meta)
    except OSError as err:
        raise TlopError(f"--plot {path}: cannot write the picture: {err.strerror or err}") from None
