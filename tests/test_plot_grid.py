"""``tlop sweep --plot`` and ``tlop best --plot``: the figures' content (lines and their values,
the selection map's cells and legend) against the same command's JSON, and the files written."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from tlop.cli.main import main

pytest.importorskip("matplotlib")

SWEEP = ["sweep", "taulop/allgather", "ring", "P=2..16:x2", "m=1KiB..4MiB:x4", "--mapping", "sequential(4)"]
BEST = ["best", "taulop/bcast", "P=2..64:x2", "m=1KiB..4MiB:x4", "--mapping", "sequential(8)"]


@pytest.fixture
def figures(monkeypatch):
    """The figures the command line draws (each also written to its file as usual)."""
    import tlop.cli.plot_grid as pg

    drawn = []
    original = pg.write_figure

    def keep(fig, path):
        drawn.append(fig)
        original(fig, path)

    monkeypatch.setattr(pg, "write_figure", keep)
    return drawn


def _json(argv, capsys):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_sweep_plot_draws_a_line_per_P_with_the_swept_costs(tmp_path, capsys, figures):
    ref = _json(SWEEP, capsys)["points"]
    out = tmp_path / "sweep.svg"
    assert main([*SWEEP, "--plot", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.rstrip().endswith(f"wrote {out}")
    assert "ring on metropolis" in text  # the table is printed as without --plot
    (fig,) = figures
    (ax,) = fig.axes
    lines = [ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith("series-")]
    assert [ln.get_label() for ln in lines] == ["P=2", "P=4", "P=8", "P=16"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["P=2", "P=4", "P=8", "P=16"]
    assert ax.get_xlabel() == "m" and ax.get_ylabel() == "predicted time (ms)"
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1KiB", "4KiB", "16KiB", "64KiB", "256KiB", "1MiB", "4MiB"]
    for P, ln in zip((2, 4, 8, 16), lines):
        want = [p["seconds"] * 1e3 for p in ref if p["P"] == P]
        assert np.allclose(ln.get_ydata(), want, rtol=1e-12)
        assert np.allclose(ln.get_xdata(), [p["m"] for p in ref if p["P"] == P])
    ids = [el.get("id") or "" for el in ET.parse(out).getroot().iter()]
    assert sum(i.startswith("series-") for i in ids) == 4
    svg = out.read_text()
    assert "P=16" in svg and "4MiB" in svg  # legend and tick text are in the file


def test_sweep_plot_of_one_swept_parameter_and_png(tmp_path, capsys, figures):
    png = tmp_path / "one.png"
    assert main(["sweep", "taulop/bcast", "binomial_bcast", "P=8", "m=1..1MiB:x2", "--plot", str(png), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)  # --json is still clean JSON: "wrote" is not printed
    (fig,) = figures
    (ln,) = fig.axes[0].get_lines()
    scale = {"s": 1, "ms": 1e3, "µs": 1e6, "ns": 1e9}[fig.axes[0].get_ylabel().split("(")[1].rstrip(")")]
    assert np.allclose(ln.get_ydata(), [p["seconds"] * scale for p in data["points"]], rtol=1e-12)
    assert "P=8" in fig.axes[0].get_title()
    w, h = _png_size(png)
    assert (w, h) == (700, 460)


def test_best_plot_colours_each_cell_by_the_cheapest_algorithm(tmp_path, capsys, figures):
    from matplotlib.colors import to_rgba

    from tlop.cli.plot_grid import COLOURS

    ref = _json(BEST, capsys)
    out = tmp_path / "best.svg"
    assert main([*BEST, "--plot", str(out)]) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"wrote {out}")
    (fig,) = figures
    ax = fig.axes[0]
    (mesh,) = [c for c in ax.collections if c.get_gid() == "selection"]
    cells = np.asarray(mesh.get_array()).reshape(6, 7)  # P down (2..64), m across (1KiB..4MiB:x4)
    algs = ref["algorithms"]
    for p in ref["points"]:
        i = [2, 4, 8, 16, 32, 64].index(p["P"])
        j = [1024 * 4 ** k for k in range(7)].index(p["m"])
        assert cells[i, j] - 1 == algs.index(p["best"])
    legend = fig.legends[0]
    winners = [a for a in algs if any(p["best"] == a for p in ref["points"])]
    assert len(winners) >= 2  # the map shows a real choice
    assert [t.get_text() for t in legend.get_texts()] == winners
    for patch, name in zip(legend.get_patches(), winners):
        assert patch.get_facecolor() == to_rgba(COLOURS[algs.index(name)])
    assert ax.get_xlabel() == "m" and ax.get_ylabel() == "P"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["2", "4", "8", "16", "32", "64"]
    ids = [el.get("id") or "" for el in ET.parse(out).getroot().iter()]
    assert "selection" in ids
    png = tmp_path / "best.png"
    assert main([*BEST, "--plot", str(png)]) == 0
    w, h = _png_size(png)
    assert w >= 500 and h >= 260


def test_a_point_no_algorithm_prices_is_shown_as_none(tmp_path, capsys, figures):
    # rd_allgather needs m > 0: at m = 0 only ring prices; with --only rd_allgather, nothing does
    out = tmp_path / "n.svg"
    assert main(["best", "taulop/allgather", "P=2..8:x2", "m=0,1KiB", "seg=8KiB", "--only", "rd_allgather",
                 "--plot", str(out)]) == 0
    capsys.readouterr()
    (fig,) = figures
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["none", "rd_allgather"]


@pytest.mark.parametrize("argv, message", [
    (["sweep", "taulop/allgather", "ring_allgather_seq", "P=2..8:x2", "m=1KiB..4KiB:x2", "Q=1,2", "--plot", "x.svg"],
     "tlop sweep --plot draws one or two swept parameters; this grid sweeps 3 (P, m, Q)"),
    (["sweep", "taulop/bcast", "binomial_bcast", "P=8", "m=1KiB", "--plot", "x.svg"],
     "tlop sweep --plot: the grid has one point"),
    ([*SWEEP, "--plot", "x.jpg"], "--plot x.jpg: the picture's format comes from the file name; use one of .svg, "
                                  ".png, .pdf"),
    ([*BEST, "--plot", "x.gif"], "--plot x.gif: the picture's format"),
    (["sweep", "taulop/bcast", "binomial_bcast", "P=2..100", "m=1KiB..4KiB:x2", "--plot", "x.svg"],
     "tlop sweep --plot draws at most 24 lines; P has 99 values"),
])
def test_plot_refusals_are_one_line_errors(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)  # restored after the test: later tests read files relative to the repository
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "x.svg").exists()


BLOCKED = ("import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
           "        if name == 'matplotlib' or name.startswith('matplotlib.'):\n"
           "            raise ImportError('matplotlib is blocked for this test')\n"
           "sys.meta_path.insert(0, Block())\nfrom tlop.cli import main\nsys.exit(main(sys.argv[1:]))\n")


def test_without_matplotlib_plot_says_how_to_install(tmp_path):
    env = dict(os.environ, TLOP_CACHE_DIR=str(tmp_path / "cache"))
    target = tmp_path / "x.svg"
    r = subprocess.run([sys.executable, "-c", BLOCKED, *BEST, "--plot", str(target)], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 2
    assert r.stderr.strip() == ("tlop: error[E050]: tlop best --plot needs matplotlib, which is not installed; "
                                "install it with pip install 'tlop[plot]'")
    assert not target.exists()
