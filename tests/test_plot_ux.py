"""Pictures as HPC users expect them (issue 25), checked by inspecting the figures: a 1-D
``best --plot`` draws every candidate's cost curve with the winner's stretch thick."""

import json

import numpy as np
import pytest

from tlop.cli.main import main

pytest.importorskip("matplotlib")


@pytest.fixture
def figures(monkeypatch):
    import tlop.cli.plot_grid as pg

    drawn = []
    original = pg.write_figure

    def keep(fig, path):
        drawn.append(fig)
        original(fig, path)

    monkeypatch.setattr(pg, "write_figure", keep)
    return drawn


def test_one_dimensional_best_plot_draws_the_cost_curves_with_the_winner_thick(tmp_path, capsys, figures):
    argv = ["best", "taulop/bcast", "P=2..64:x2", "m=64KiB", "--mapping", "sequential(8)"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert main([*argv, "--plot", str(tmp_path / "b.svg")]) == 0
    capsys.readouterr()
    (fig,) = figures
    (ax,) = fig.axes
    assert ax.get_xscale() == "log"  # P doubles
    lines = {ln.get_gid(): ln for ln in ax.get_lines()}
    algs = data["algorithms"]
    for k, name in enumerate(algs):
        ys = lines[f"cost-{k}"].get_ydata()
        want = [p["costs"][name] for p in data["points"]]
        scale = want[0] / ys[0]
        assert np.allclose(np.asarray(ys) * scale, want, rtol=1e-9)
    # the thick stretches are exactly the winners, point by point
    for j, p in enumerate(data["points"]):
        thick = [name for k, name in enumerate(algs)
                 if f"winner-{k}" in lines and np.isfinite(lines[f"winner-{k}"].get_ydata()[j])]
        assert thick == [p["best"]]
    assert all(lines[g].get_linewidth() > 2 * lines[g.replace("winner", "cost")].get_linewidth()
               for g in lines if g.startswith("winner-"))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == algs


def _extent(fig, artist):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return artist.get_window_extent(canvas.get_renderer())


def _inside(fig, artist) -> bool:
    """The artist lies in the figure, and a colour bar's label no longer than its bar."""
    box = _extent(fig, artist)
    W, H = fig.bbox.width, fig.bbox.height
    return box.x0 >= -0.5 and box.y0 >= -0.5 and box.x1 <= W + 0.5 and box.y1 <= H + 0.5


@pytest.mark.parametrize("Ps", [[2], [2, 4], [2, 4, 8, 16, 32, 64]])
def test_the_mu_colour_bar_label_is_not_clipped(Ps):
    from tlop.cli.validate_report import Cell, cells_from_records, figures

    cells = [Cell(f"a:{P}:{m}", "taulop/bcast:binomial", P, m, 1e-6 * P) for P in Ps for m in (1024.0, 4096.0)]
    records = [{"kind": "point", "key": c.key, "stats": {"median": c.predicted * 1.5, "n": 5}} for c in cells]
    heat = figures(cells_from_records(cells, records))["mu"]
    bar_axes = [a for a in heat.axes if a.get_ylabel().startswith("µ = ")]
    assert len(bar_axes) == 1
    assert _inside(heat, bar_axes[0].yaxis.label)
    # the label runs along the bar and is no longer than it (else it is cut or overhangs)
    assert _extent(heat, bar_axes[0].yaxis.label).height <= _extent(heat, bar_axes[0]).height
