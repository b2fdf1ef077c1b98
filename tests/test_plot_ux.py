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
