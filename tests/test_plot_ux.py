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


def _explanation(argv):
    """The Explanation ``tlop explain`` computes for ``argv`` (its --json is the same data)."""
    import contextlib
    import io

    import tlop
    import tlop.analysis.stages as st
    from tlop.cli import rules
    from tlop.cli.main import build_parser

    got = {}
    original = st.explain_stages

    def keep(*a, **k):
        got["e"] = original(*a, **k)
        return got["e"]

    st.explain_stages = keep
    try:
        args = build_parser("explain").parse_args(["explain", *argv])
        with contextlib.redirect_stdout(io.StringIO()):
            rules.run_explain_stages(args, tlop.load)
    finally:
        st.explain_stages = original
    return got["e"]


RING_SEGM = ["taulop/allreduce", "ring_segm", "P=8", "m=64KiB", "--mapping", "sequential(4)"]


def test_timeline_draws_each_send_receive_and_reduction_in_its_stage_and_phase(tmp_path, capsys):
    from tlop.cli.plot_stages import timeline_figure

    e = _explanation(RING_SEGM)
    fig = timeline_figure(e)
    (ax,) = fig.axes
    colls = {c.get_gid(): c for c in ax.collections}
    sends = [x for s in e.stages for x in s.sends]
    computes = [x for s in e.stages for x in s.computes]
    assert sum(len(c.get_paths()) for g, c in colls.items() if g.startswith("timeline-send-")) == len(sends)
    assert sum(len(c.get_paths()) for g, c in colls.items() if g.startswith("timeline-recv-")) == len(sends)
    assert len(colls["timeline-compute"].get_paths()) == len(computes) > 0
    # every bar lies inside its stage, and the last stage ends at the explanation's total
    bounds = sorted(ln.get_xdata()[0] for ln in ax.get_lines() if (ln.get_gid() or "").startswith("timeline-stage-"))
    scale = ax.get_xlim()[1] / sum(s.cost for s in e.stages)
    assert np.allclose(np.asarray(bounds) / scale, np.cumsum([0] + [s.cost for s in e.stages[:-1]]))
    # a rank's reduction starts when the stage's first phase (the transfers) ends
    s1 = e.stages[0]
    first = min(p.get_extents().x0 for p in colls["timeline-compute"].get_paths())
    assert first / scale == pytest.approx(s1.phases[0].cost, rel=1e-9)
    # rank 0 on top, one row per rank, labelled with its node
    assert ax.get_ylim() == (e.P - 0.5, -0.5)
    assert [t.get_text() for t in ax.get_yticklabels()][:2] == ["0 (node 0)", "1 (node 0)"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["shm sends", "net sends", "shm receives", "net receives", "computes / reduces", "idle"]


def test_explain_plot_view_auto_is_a_timeline_for_many_stages(tmp_path, capsys, monkeypatch):
    import xml.etree.ElementTree as ET

    many = tmp_path / "pipe.svg"
    # --view timeline asks for the timeline whatever the number of stages
    assert main(["explain", "taulop/bcast", "binomial", "P=4", "m=1KiB", "--mapping", "sequential(2)",
                 "--plot", str(many), "--view", "timeline"]) == 0
    ids = [el.get("id") or "" for el in ET.parse(many).getroot().iter()]
    assert "timeline" in ids and not any(i.startswith("stage-") for i in ids)
    few = tmp_path / "few.svg"
    assert main(["explain", "taulop/bcast", "binomial", "P=4", "m=1KiB", "--mapping", "sequential(2)",
                 "--plot", str(few)]) == 0  # auto: 2 stages, panels
    ids = [el.get("id") or "" for el in ET.parse(few).getroot().iter()]
    assert "stage-1" in ids and "timeline" not in ids
    from tlop.cli import plot_stages

    e = _explanation(["taulop/bcast", "binomial", "P=4", "m=1KiB", "--mapping", "sequential(2)"])
    monkeypatch.setattr(plot_stages, "TIMELINE_FROM", len(e.stages))
    auto = tmp_path / "auto.svg"
    plot_stages.write_plot(e, str(auto))
    assert "timeline" in [el.get("id") for el in ET.parse(auto).getroot().iter()]


def test_stage_panels_are_readable_at_64_ranks(tmp_path):
    from tlop.cli.plot_stages import build_figure

    e = _explanation(["taulop/bcast", "binomial", "P=64", "m=1KiB", "--mapping", "sequential(8)"])
    fig = build_figure(e)
    assert fig.get_figwidth() <= 16.0  # was 28.8 in (2880 px)
    panel = next(a for a in fig.axes if a.get_gid() == "stage-1")
    sizes = {t.get_fontsize() for t in panel.texts if t.get_text().isdigit()}
    assert sizes and min(sizes) >= 6
    cost = next(t for t in panel.texts if t.get_gid() == "cost-1")
    assert "…" not in cost.get_text() and cost.get_text().replace("\n", " ").startswith(
        e.stages[0].notation.split()[0])


def test_reductions_are_drawn_in_stage_panels():
    from tlop.cli.plot_stages import build_figure

    e = _explanation(RING_SEGM)
    fig = build_figure(e)
    panel = next(a for a in fig.axes if a.get_gid() == "stage-1")
    (ringed,) = [c for c in panel.collections if c.get_gid() == "compute-1"]
    assert len(ringed.get_offsets()) == len({r for r, _, _ in e.stages[0].computes})


def test_a_pipelined_schedule_of_79_stages_is_drawn_as_a_timeline(tmp_path, capsys):
    import xml.etree.ElementTree as ET

    out = tmp_path / "ring80.svg"
    assert main(["explain", "taulop/allgather", "ring", "P=80", "m=1KiB", "--mapping", "sequential(4)",
                 "--plot", str(out)]) == 0
    ids = [el.get("id") or "" for el in ET.parse(out).getroot().iter()]
    assert "timeline" in ids and sum(i.startswith("timeline-stage-") for i in ids) == 79
