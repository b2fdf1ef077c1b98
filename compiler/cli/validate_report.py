"""The report of ``tlop validate``: predicted against measured, per cell, as a table, a CSV,
figures and one self-contained HTML or Markdown file.

What it does: :func:`cells_from_records` joins the cells a run planned (algorithm, P, m, the
prediction) with the measured records of the samples file (the median of every kept sample);
:func:`mu` is the proportional error µ = max(r, e)/min(r, e) of paper 000 §5.5 (1 when the two
agree; it treats over- and underestimation alike), :func:`summary` gives µ̄ (the mean of µ over
the measured cells), the worst cell and the cells where the model misses by more than
:data:`MISS` (1.5×), each distinct program counted once (:func:`distinct`: cells whose program is
identical to an earlier cell's take its measurement and are not counted again), beside the
median and the geometric mean of µ.  :func:`write_csv` writes one row per cell; :func:`figures` draws the
predicted-against-measured lines (one panel per algorithm, a colour per P, measured solid with
the median's confidence interval as error bars and the samples' interquartile range as a band,
predicted dashed) and the µ heat map (one panel per algorithm, P down, m across, µ written in
each cell); :func:`write_report` writes ``report.html`` (figures inline as SVG) or
``report.md`` (figures inline as base64 PNG), each readable on its own.

What it does not do: measure or predict (:mod:`tlop.cli.validate`), or import matplotlib unless
figures are asked for (without it the report says so and has tables only).
"""

from __future__ import annotations

import base64
import csv
import html
import io
import math
from dataclasses import dataclass

from tlop.runtime.units import format_size, format_time

__all__ = ["Cell", "mu", "summary", "distinct", "cells_from_records", "write_csv", "figures", "write_report", "MISS",
           "table_rows", "header"]

#: a cell whose µ exceeds this is listed as a miss
MISS = 1.5


@dataclass
class Cell:
    key: str
    algorithm: str       # FILE:ALG
    P: int
    m: float
    predicted: float     # seconds
    measured: float = math.nan   # median of the samples, seconds
    n: int = 0
    ci_low: float = math.nan
    ci_high: float = math.nan
    library: float = math.nan    # median of the library's own collective, algorithm forced (--library)
    forced: str = ""             # e.g. "bcast binomial"
    same_as: str = ""            # the key of the cell that ran the identical program ("" : this one ran)
    p25: float = math.nan        # quartiles of the samples (the spread the figure draws)
    p75: float = math.nan

    @property
    def measured_key(self) -> str:
        """The key of the record that holds this cell's measurement."""
        return self.same_as or self.key

    @property
    def mu_library(self) -> float:
        return mu(self.library, self.predicted)

    @property
    def mu(self) -> float:
        return mu(self.measured, self.predicted)

    @property
    def done(self) -> bool:
        return self.n > 0 and math.isfinite(self.measured)


def mu(r: float, e: float) -> float:
    """max(r, e) / min(r, e); NaN when either is missing or not positive."""
    if not (math.isfinite(r) and math.isfinite(e)) or r <= 0 or e <= 0:
        return math.nan
    return max(r, e) / min(r, e)


def cells_from_records(cells: list, records: list) -> list:
    """``cells`` with their measurements filled in from the samples file's ``records``."""
    by_key = {r["key"]: r for r in records if r.get("kind") == "point" and "key" in r}
    for c in cells:
        r = by_key.get(c.measured_key)
        if r is not None:
            st = r.get("stats", {})
            c.measured = float(st.get("median", math.nan) or math.nan)
            c.n = int(st.get("n", 0) or 0)
            c.ci_low = float(st.get("ci_low", math.nan) or math.nan)
            c.ci_high = float(st.get("ci_high", math.nan) or math.nan)
            c.p25, c.p75 = _quartiles(r.get("samples"))
        lib = by_key.get(c.measured_key + ":library")
        if lib is not None:
            c.library = float(lib.get("stats", {}).get("median", math.nan) or math.nan)
    return cells


def _quartiles(samples) -> tuple:
    """(25th, 75th percentile) of a record's samples (NaNs when it kept none)."""
    import numpy as np

    try:
        x = np.asarray(samples if samples is not None else [], dtype=np.float64)
    except (TypeError, ValueError):
        return math.nan, math.nan
    x = x[np.isfinite(x)] if x.ndim == 1 else np.empty(0)
    if not x.size:
        return math.nan, math.nan
    q1, q3 = np.percentile(x, [25, 75])
    return float(q1), float(q3)


def distinct(cells: list) -> list:
    """The measured cells with each distinct program once: a cell that took another's measurement
    (the identical program, ``same_as``) with the same prediction is left out."""
    seen, out = set(), []
    for c in cells:
        k = (c.measured_key, c.predicted)
        if k not in seen:
            seen.add(k)
            out.append(c)
    return out


def summary(cells: list) -> dict:
    """µ̄ over the measured cells — each distinct program once (:func:`distinct`) — with the median
    and geometric mean of µ, their count (``cells``; ``measured`` counts every cell), the worst
    cell, the misses (µ > :data:`MISS`, worst first), and how many predictions are under and over
    the measurement."""
    measured = [c for c in cells if c.done and math.isfinite(c.mu)]
    done = distinct(measured)
    mus = [c.mu for c in done]
    misses = sorted((c for c in done if c.mu > MISS), key=lambda c: -c.mu)
    libs = [c.mu_library for c in distinct(cells) if math.isfinite(c.mu_library)]
    import statistics

    return {"mean_mu": sum(mus) / len(mus) if mus else math.nan, "cells": len(done), "planned": len(cells),
            "measured": len(measured),
            # robust beside the mean: one cell run on a loaded machine (µ = 379) moves µ̄, not these
            "median_mu": statistics.median(mus) if mus else math.nan,
            "geomean_mu": math.exp(sum(math.log(x) for x in mus) / len(mus)) if mus else math.nan,
            "mean_mu_library": sum(libs) / len(libs) if libs else math.nan, "library_cells": len(libs),
            "worst": max(done, key=lambda c: c.mu) if done else None, "misses": misses,
            "under": sum(c.predicted < c.measured for c in done), "over": sum(c.predicted > c.measured for c in done)}


def table_rows(cells: list) -> list:
    """Rows for a printed table: algorithm, P, m, predicted, measured, µ, samples (and, when the
    library's own collective was timed, its time and µ)."""
    lib = any(math.isfinite(c.library) for c in cells)
    return [[c.algorithm, str(c.P), format_size(c.m), format_time(c.predicted),
             format_time(c.measured) if c.done else "-", f"{c.mu:.2f}" if c.done else "-",
             (str(c.n) + (f" (the run of {c.same_as.split(':P=')[0]})" if c.same_as else "")) if c.done else "-"]
            + ([format_time(c.library) if math.isfinite(c.library) else "-",
                f"{c.mu_library:.2f}" if math.isfinite(c.mu_library) else "-"] if lib else []) for c in cells]


HEADER = ["algorithm", "P", "m", "predicted", "measured", "µ", "samples"]
LIBRARY_HEADER = ["library", "µ library"]


def header(cells: list) -> list:
    return HEADER + (LIBRARY_HEADER if any(math.isfinite(c.library) for c in cells) else [])


def write_csv(path, cells: list) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["algorithm", "P", "m", "predicted_s", "measured_median_s", "mu", "samples", "ci_low_s",
                    "ci_high_s", "library_forced", "library_median_s", "mu_library", "same_run_as"])
        for c in cells:
            lib = math.isfinite(c.library)
            w.writerow([c.algorithm, c.P, int(c.m), repr(c.predicted), repr(c.measured) if c.done else "",
                        repr(c.mu) if c.done else "", c.n, repr(c.ci_low) if c.done else "",
                        repr(c.ci_high) if c.done else "", c.forced, repr(c.library) if lib else "",
                        repr(c.mu_library) if lib else "", c.same_as.split(":P=")[0] if c.same_as else ""])


def _algorithms(cells):
    return list(dict.fromkeys(c.algorithm for c in cells))


def figures(cells: list) -> dict:
    """``{"lines": Figure, "mu": Figure}`` (matplotlib figures; gids ``measured-A-P`` (medians),
    ``predicted-A-P``, ``spread-A-P`` (the samples' 25–75 % band), ``ci-A-P`` (the median's
    confidence interval as error bars), ``mu-A``)."""
    import numpy as np
    from matplotlib.figure import Figure

    algs = _algorithms(cells)
    Ps = sorted({c.P for c in cells})
    ms = sorted({c.m for c in cells})
    n = len(algs)
    colours = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
    lines = Figure(figsize=(4.2 * n, 3.8), layout="constrained")
    axes = lines.subplots(1, n, squeeze=False)[0]
    for k, (ax, a) in enumerate(zip(axes, algs)):
        ax.set_gid(f"panel-{k}")
        for i, P in enumerate(Ps):
            mine = sorted((c for c in cells if c.algorithm == a and c.P == P), key=lambda c: c.m)
            if not mine:
                continue
            col = colours[i % len(colours)]
            ax.plot([c.m for c in mine], [c.predicted for c in mine], linestyle="--", color=col, marker="x",
                    markersize=4, label=f"P={P} predicted", gid=f"predicted-{k}-{P}")
            got = [c for c in mine if c.done]
            ax.plot([c.m for c in got], [c.measured for c in got], linestyle="-", color=col, marker="o",
                    markersize=4, label=f"P={P} measured", gid=f"measured-{k}-{P}")
            # the samples' spread (interquartile band) and the median's confidence interval (bars)
            band = [c for c in got if math.isfinite(c.p25) and math.isfinite(c.p75)]
            if band:
                ax.fill_between([c.m for c in band], [c.p25 for c in band], [c.p75 for c in band], color=col,
                                alpha=0.18, linewidth=0, label=f"P={P} samples, 25–75 %", gid=f"spread-{k}-{P}")
            bars = [c for c in got if math.isfinite(c.ci_low) and math.isfinite(c.ci_high)]
            if bars:
                eb = ax.errorbar([c.m for c in bars], [c.measured for c in bars],
                                 yerr=[[max(c.measured - c.ci_low, 0.0) for c in bars],
                                       [max(c.ci_high - c.measured, 0.0) for c in bars]],
                                 fmt="none", ecolor=col, elinewidth=1.0, capsize=2)
                eb.lines[2][0].set_gid(f"ci-{k}-{P}")
            lib = [c for c in mine if math.isfinite(c.library)]
            if lib:
                ax.plot([c.m for c in lib], [c.library for c in lib], linestyle=":", color=col, marker="s",
                        markersize=3, label=f"P={P} library ({lib[0].forced})", gid=f"library-{k}-{P}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ticks = ms[::max(1, -(-len(ms) // 6))]
        ax.set_xticks(ticks, [format_size(t) for t in ticks], fontsize=7, rotation=30)
        ax.minorticks_off()
        ax.set_title(a, fontsize=9)
        ax.set_xlabel("m")
        ax.set_ylabel("time (s)")
        ax.grid(True, linewidth=0.4, color="0.85")
        ax.legend(fontsize=6)
    # tall enough for the colour bar's label (2.4 in): a row or two of P must not clip it
    heat = Figure(figsize=(4.2 * n, max(2.4, 0.9 + 0.55 * len(Ps))), layout="constrained")
    haxes = heat.subplots(1, n, squeeze=False)[0]
    mesh = None
    for k, (ax, a) in enumerate(zip(haxes, algs)):
        grid = np.full((len(Ps), len(ms)), np.nan)
        for c in cells:
            if c.algorithm == a and c.done:
                grid[Ps.index(c.P), ms.index(c.m)] = c.mu
        mesh = ax.pcolormesh(np.arange(len(ms) + 1) - 0.5, np.arange(len(Ps) + 1) - 0.5,
                             np.ma.masked_invalid(np.log2(grid)), cmap="viridis", vmin=0.0, vmax=3.0)
        mesh.set_gid(f"mu-{k}")
        for i in range(len(Ps)):
            for j in range(len(ms)):
                if np.isfinite(grid[i, j]):
                    ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=6,
                            color="white" if grid[i, j] < 4 else "black")
        ax.set_xticks(range(len(ms)), [format_size(t) for t in ms], fontsize=6, rotation=45)
        ax.set_yticks(range(len(Ps)), [str(P) for P in Ps], fontsize=7)
        ax.set_xlabel("m")
        ax.set_ylabel("P")
        ax.set_title(f"µ of {a}", fontsize=9)
    if mesh is not None:
        bar = heat.colorbar(mesh, ax=list(haxes), shrink=0.9)
        bar.set_ticks([0, 1, 2, 3], labels=["1", "2", "4", "≥8"])
        bar.set_label("µ = max(r, e)/min(r, e)", fontsize=7)
    return {"lines": lines, "mu": heat}


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _png64(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _summary_lines(s: dict, context: dict) -> list:
    out = []
    if s["cells"]:
        same = s.get("measured", s["cells"]) - s["cells"]
        out.append(f"µ̄ = {s['mean_mu']:.2f} (median {s['median_mu']:.2f}, geometric mean {s['geomean_mu']:.2f}) "
                   f"over {s['cells']} distinct measured programs "
                   f"(of {s['planned']} planned cells"
                   + (f"; {same} cell(s) ran a program identical to another's and count once" if same else "")
                   + f"); the model predicts less than measured in {s['under']} and more in {s['over']}.")
        w = s["worst"]
        out.append(f"Worst cell: {w.algorithm} at P = {w.P}, m = {format_size(w.m)}: predicted "
                   f"{format_time(w.predicted)}, measured {format_time(w.measured)}, µ = {w.mu:.2f}.")
        if s["misses"]:
            out.append(f"The model misses by more than {MISS:g}× in {len(s['misses'])} of {s['cells']} cells.")
        else:
            out.append(f"The model is within {MISS:g}× in every cell.")
        if s.get("library_cells"):
            out.append(f"The library's own collective (algorithm forced) against the same predictions: "
                       f"µ̄ = {s['mean_mu_library']:.2f} over {s['library_cells']} cells.")
        goal = context.get("goal", 1.15)
        out.append(f"Goal µ̄ ≤ {goal:g}: {'met' if s['mean_mu'] <= goal else 'not met'}.")
    else:
        out.append("No cell measured yet (run the same command with --resume).")
    return out


def _context_lines(context: dict) -> list:
    return [f"{k}: {v}" for k, v in context.items() if k != "goal"]


def write_report(path, cells: list, context: dict, figs=None, note: str = "") -> None:
    """``report.html`` or ``report.md`` (by the suffix of ``path``), self-contained."""
    s = summary(cells)
    rows = table_rows(cells)
    fmt_html = str(path).endswith(".html")
    misses = [[c.algorithm, str(c.P), format_size(c.m), format_time(c.predicted), format_time(c.measured),
               f"{c.mu:.2f}"] for c in s["misses"]]
    if fmt_html:
        e = html.escape
        parts = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'><title>tlop validate</title>",
                 "<style>body{font-family:sans-serif;max-width:72em;margin:auto}table{border-collapse:collapse}"
                 "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td:first-child{text-align:left}"
                 ".miss{background:#fdd}</style></head><body>",
                 "<h1>tlop validate: predicted against measured</h1>"]
        parts += [f"<p><b>{e(x)}</b></p>" for x in _summary_lines(s, context)]
        parts.append("<ul>" + "".join(f"<li>{e(x)}</li>" for x in _context_lines(context)) + "</ul>")
        if note:
            parts.append(f"<p>{e(note)}</p>")
        if figs:
            parts += ["<h2>Predicted and measured</h2>", _svg(figs["lines"]), "<h2>Proportional error µ</h2>",
                      _svg(figs["mu"])]
        else:
            parts.append("<p>(no figures: matplotlib is not installed; pip install 'tlop[plot]')</p>")
        if misses:
            parts.append(f"<h2>Cells where the model misses by more than {MISS:g}×</h2><table><tr>"
                         + "".join(f"<th>{h}</th>" for h in HEADER[:6]) + "</tr>"
                         + "".join("<tr>" + "".join(f"<td>{e(x)}</td>" for x in r) + "</tr>" for r in misses)
                         + "</table>")
        parts.append("<h2>Every cell</h2><table><tr>" + "".join(f"<th>{h}</th>" for h in header(cells)) + "</tr>")
        for c, r in zip(cells, rows):
            cls = " class='miss'" if c.done and c.mu > MISS else ""
            parts.append(f"<tr{cls}>" + "".join(f"<td>{e(x)}</td>" for x in r) + "</tr>")
        parts.append("</table></body></html>")
        text = "\n".join(parts) + "\n"
    else:
        def table(header, rs):
            out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
            return out + ["| " + " | ".join(r) + " |" for r in rs]
        parts = ["# tlop validate: predicted against measured", ""]
        parts += [f"**{x}**" + "  " for x in _summary_lines(s, context)] + [""]
        parts += [f"- {x}" for x in _context_lines(context)] + [""]
        if note:
            parts += [note, ""]
        if figs:
            parts += ["## Predicted and measured", "", f"![predicted and measured](data:image/png;base64,"
                                                       f"{_png64(figs['lines'])})", "",
                      "## Proportional error µ", "", f"![µ](data:image/png;base64,{_png64(figs['mu'])})", ""]
        else:
            parts += ["(no figures: matplotlib is not installed; pip install 'tlop[plot]')", ""]
        if misses:
            parts += [f"## Cells where the model misses by more than {MISS:g}×", ""] + table(HEADER[:6], misses) + [""]
        parts += ["## Every cell", ""] + table(header(cells), rows)
        text = "\n".join(parts) + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
