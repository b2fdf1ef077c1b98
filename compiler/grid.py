"""The cost of one algorithm over a grid of points, for the Python API and notebooks
(``AlgorithmHandle.grid``).

What it does: evaluates the outer product of the given values of each parameter (strings with a
unit are read as on the command line; a channel parameter may take several channels, each
evaluated on its own), keeps the values as an array with one axis per swept parameter, and
shows itself as an HTML table in Jupyter and as a text table in a terminal (a matrix for two
swept parameters, one row per point otherwise; times auto-scaled to s/ms/µs/ns with 4
significant digits), and converts to a pandas DataFrame (``to_pandas``, pandas optional) or a
matplotlib figure (``plot``, the figure of ``tlop sweep --plot``).
What it does not do: choose an engine (it uses :meth:`AlgorithmHandle.evaluate`, the
interpreter) or stream grids too large for memory.
"""

from __future__ import annotations

import html
import itertools
from typing import Any

import numpy as np

from tlop.runtime.units import format_size, format_time

__all__ = ["Grid", "evaluate_grid"]

#: the most rows of a grid's HTML table (the rest is summarised)
MAX_HTML_ROWS = 200


class Grid:
    """``values[i, j, …]`` is the cost at ``axes[names[0]][i]``, ``axes[names[1]][j]``, …;
    ``fixed`` holds the parameters given one value.  NaN marks a point the arguments of which
    binding refuses (``invalid="nan"``)."""

    def __init__(self, algorithm: str, profile: str, axes: dict, fixed: dict, types: dict, channels: tuple,
                 values: np.ndarray):
        self.algorithm, self.profile = algorithm, profile
        self.axes, self.fixed, self.types, self.channels = axes, fixed, types, channels
        self.values = values

    @property
    def names(self) -> list:
        return list(self.axes)

    def rows(self) -> list:
        """One dict per point: every parameter and ``seconds``."""
        out = []
        for idx in itertools.product(*(range(len(v)) for v in self.axes.values())):
            row = {k: self.axes[k][i] for k, i in zip(self.axes, idx)}
            row.update(self.fixed)
            row["seconds"] = float(self.values[idx]) if idx else float(self.values)
            out.append(row)
        return out

    def _label(self, name, v) -> str:
        t = self.types.get(name)
        if hasattr(v, "elements"):  # a per-rank argument (tlop.runtime.per_rank.PerRankValues)
            return v.text(lambda x: self._label(name, x))
        if t == "channel":
            return self.channels[int(v)]
        if t == "bytes":
            return format_size(float(v))
        if t == "time":
            return format_time(float(v))
        v = float(v)
        return str(int(v)) if v.is_integer() else f"{v:g}"

    @staticmethod
    def _cost(v) -> str:
        return "–" if np.isnan(v) else format_time(float(v))

    def _caption(self) -> str:
        out = f"{self.algorithm} on {self.profile}"
        if self.fixed:
            out += " (" + ", ".join(f"{k}={self._label(k, v)}" for k, v in self.fixed.items()) + ")"
        return out

    def __repr__(self) -> str:
        """The grid's table as ``tlop sweep`` prints it (at most :data:`MAX_HTML_ROWS` rows)."""
        from tlop.display.table import format_table

        names = self.names
        if len(names) == 2:
            rk, ck = names
            header = [f"{rk} \\ {ck}"] + [self._label(ck, c) for c in self.axes[ck]]
            rows = [[self._label(rk, r)] + [self._cost(self.values[i, j]) for j in range(len(self.axes[ck]))]
                    for i, r in enumerate(self.axes[rk][:MAX_HTML_ROWS])]
            total = len(self.axes[rk])
        else:
            header = names + ["cost"]
            all_rows = self.rows()
            rows = [[self._label(n, row[n]) for n in names] + [self._cost(row["seconds"])]
                    for row in all_rows[:MAX_HTML_ROWS]]
            total = len(all_rows)
        more = f"\n({len(rows)} of {total} rows shown)" if len(rows) < total else ""
        return self._caption() + "\n" + format_table(header, rows) + more

    def to_pandas(self):
        """One row per point: a column per swept and fixed parameter (numbers in bytes and
        seconds; channels by name) and ``seconds``.  Needs pandas."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Grid.to_pandas() needs pandas: pip install pandas") from None
        rows = self.rows()
        for row in rows:
            for k, v in row.items():
                if self.types.get(k) == "channel":
                    row[k] = self.channels[int(v)]
                elif self.types.get(k) == "int" and not hasattr(v, "elements"):
                    row[k] = int(v)
                elif hasattr(v, "elements"):
                    row[k] = self._label(k, v)
        return pd.DataFrame(rows)

    def plot(self, path=None):
        """The cost over the one or two swept parameters as a matplotlib figure (that of
        ``tlop sweep --plot``: lines, log axes for geometric values); with ``path`` also written
        there (.svg, .png or .pdf).  Needs matplotlib."""
        from tlop.display.plot_grid import sweep_figure, write_figure

        fig = sweep_figure(self._caption(), self.names, self.axes, self.values, self._label)
        if path is not None:
            write_figure(fig, str(path))
        return fig

    def _repr_html_(self) -> str:
        e = html.escape
        caption = f"{e(self.algorithm)} on {e(self.profile)}"
        if self.fixed:
            caption += " (" + ", ".join(f"{e(k)}={e(self._label(k, v))}" for k, v in self.fixed.items()) + ")"
        out = [f'<table class="tlop-grid"><caption>{caption}</caption>']
        names = self.names
        if len(names) == 2:
            rk, ck = names
            out.append(f"<tr><th>{e(rk)} \\ {e(ck)}</th>"
                       + "".join(f"<th>{e(self._label(ck, c))}</th>" for c in self.axes[ck]) + "</tr>")
            for i, r in enumerate(self.axes[rk][:MAX_HTML_ROWS]):
                out.append(f"<tr><th>{e(self._label(rk, r))}</th>"
                           + "".join(f"<td>{e(self._cost(self.values[i, j]))}</td>"
                                     for j in range(len(self.axes[ck]))) + "</tr>")
            shown, total = min(len(self.axes[rk]), MAX_HTML_ROWS), len(self.axes[rk])
        else:
            out.append("<tr>" + "".join(f"<th>{e(n)}</th>" for n in names) + "<th>cost</th></tr>")
            rows = self.rows()
            for row in rows[:MAX_HTML_ROWS]:
                out.append("<tr>" + "".join(f"<td>{e(self._label(n, row[n]))}</td>" for n in names)
                           + f"<td>{e(self._cost(row['seconds']))}</td></tr>")
            shown, total = min(len(rows), MAX_HTML_ROWS), len(rows)
        out.append("</table>")
        if shown < total:
            out.append(f"<p>{shown} of {total} rows shown</p>")
        return "\n".join(out)


def evaluate_grid(handle, profile, mapping, invalid: str, axes: dict) -> Grid:
    from tlop.backends.binding import parse_cli_value

    program = handle.module.program
    types = {p.name: p.type for p in handle.ir.params}
    swept, fixed = {}, {}
    per_rank = {p.name for p in handle.ir.params if p.per_rank is not None}
    if not set(axes) <= set(types):     # a retired name (S, s: now seg), read with a warning
        from tlop.backends.renamed import renamed_arguments

        axes = renamed_arguments(axes, types, handle.name)
    for k, v in axes.items():
        if k not in types:
            handle.bind({k: 0})  # the standard message: no such parameter
        if k in per_rank:  # one vector (or one value for every rank) for the whole grid, never an axis
            from tlop.runtime.per_rank import parse_per_rank_text, per_rank as vector

            fixed[k] = (parse_per_rank_text(k, v, lambda t: parse_cli_value(t, types[k], k, program))
                        if isinstance(v, str) else float(v) if np.ndim(v) == 0 else vector(v))
            continue
        vals = [v] if isinstance(v, (str, int, float)) or np.ndim(v) == 0 else list(np.ravel(v))
        vals = [parse_cli_value(x, types[k], k, program) if isinstance(x, str) else float(x) for x in vals]
        (swept if len(vals) > 1 else fixed)[k] = vals if len(vals) > 1 else vals[0]
    names = list(swept)
    chan = [k for k in names if types[k] == "channel"]
    numeric = [k for k in names if k not in chan]
    values = np.full(tuple(len(swept[k]) for k in names), np.nan)
    mesh = np.meshgrid(*(np.asarray(swept[k], dtype=float) for k in numeric), indexing="ij") if numeric else []
    for combo in itertools.product(*(range(len(swept[k])) for k in chan)):
        args: dict[str, Any] = dict(fixed)
        args.update({k: swept[k][i] for k, i in zip(chan, combo)})
        args.update({k: m for k, m in zip(numeric, mesh)})
        r = handle.evaluate(profile, mapping=mapping, invalid=invalid, **args)
        index = tuple(combo[chan.index(k)] if k in chan else slice(None) for k in names)
        values[index] = np.broadcast_to(r, tuple(len(swept[k]) for k in numeric))
    return Grid(handle.name, profile.name, swept, fixed, types, tuple(program.channels), values)
