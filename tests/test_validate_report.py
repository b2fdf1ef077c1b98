"""The report of tlop validate (no MPI): µ, µ̄ and the misses, the CSV, the figures' content and
the self-contained HTML and Markdown files."""

from __future__ import annotations

import base64
import csv
import math
import re

import numpy as np
import pytest

from tlop.cli.validate_report import Cell, cells_from_records, figures, mu, summary, write_csv, write_report


def _cells():
    cells = [Cell(f"{alg}:{P}:{m}", alg, P, m, pred) for alg, P, m, pred in [
        ("taulop/bcast:binomial", 2, 1024.0, 2e-6), ("taulop/bcast:binomial", 2, 4096.0, 4e-6),
        ("taulop/bcast:binomial", 4, 1024.0, 3e-6), ("taulop/bcast:binomial", 4, 4096.0, 6e-6),
        ("taulop/allgather:ring", 2, 1024.0, 5e-6), ("taulop/allgather:ring", 2, 4096.0, 8e-6),
        ("taulop/allgather:ring", 4, 1024.0, 9e-6), ("taulop/allgather:ring", 4, 4096.0, 1e-5)]]
    measured = [2e-6, 5e-6, 6e-6, 6.6e-6, 4e-6, 8e-6, None, 2e-5]  # one cell not measured yet
    records = [{"kind": "point", "key": c.key, "stats": {"median": r, "n": 30, "ci_low": r * 0.9, "ci_high": r * 1.1}}
               for c, r in zip(cells, measured) if r is not None]
    return cells_from_records(cells, records)


def test_mu_is_symmetric_and_one_when_equal():
    assert mu(2.0, 2.0) == 1.0
    assert mu(3.0, 1.5) == mu(1.5, 3.0) == 2.0
    assert math.isnan(mu(math.nan, 1.0)) and math.isnan(mu(0.0, 1.0))


def test_summary_mean_misses_and_directions():
    cells = _cells()
    s = summary(cells)
    mus = [1.0, 1.25, 2.0, 1.1, 1.25, 1.0, 2.0]
    assert s["cells"] == 7 and s["planned"] == 8
    assert s["mean_mu"] == pytest.approx(sum(mus) / 7)
    assert [(c.algorithm, c.P, c.m) for c in s["misses"]] == [("taulop/bcast:binomial", 4, 1024.0),
                                                              ("taulop/allgather:ring", 4, 4096.0)]
    assert s["under"] == 4 and s["over"] == 1


def test_csv_has_a_row_per_cell_with_mu(tmp_path):
    cells = _cells()
    write_csv(tmp_path / "v.csv", cells)
    rows = list(csv.DictReader(open(tmp_path / "v.csv")))
    assert len(rows) == 8
    assert float(rows[2]["mu"]) == pytest.approx(2.0) and rows[6]["mu"] == "" and rows[6]["samples"] == "0"
    assert float(rows[1]["predicted_s"]) == 4e-6 and float(rows[1]["measured_median_s"]) == 5e-6


def test_figures_show_predicted_and_measured_and_mu_per_cell():
    pytest.importorskip("matplotlib")
    cells = _cells()
    figs = figures(cells)
    axes = [a for a in figs["lines"].axes if (a.get_gid() or "").startswith("panel-")]
    assert [a.get_title() for a in axes] == ["taulop/bcast:binomial", "taulop/allgather:ring"]
    lines = {ln.get_gid(): ln for a in axes for ln in a.get_lines()}
    assert list(lines["predicted-0-4"].get_ydata()) == [3e-6, 6e-6]
    assert list(lines["measured-0-4"].get_ydata()) == [6e-6, 6.6e-6]
    assert list(lines["measured-1-4"].get_xdata()) == [4096.0]  # the unmeasured cell is not drawn
    legend = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert legend == ["P=2 predicted", "P=2 measured", "P=4 predicted", "P=4 measured"]
    heat = figs["mu"]
    meshes = {c.get_gid(): c for a in heat.axes for c in a.collections if (c.get_gid() or "").startswith("mu-")}
    grid = np.ma.filled(meshes["mu-0"].get_array(), np.nan).reshape(2, 2)
    assert np.allclose(2 ** grid, [[1.0, 1.25], [2.0, 1.1]])
    texts = [t.get_text() for t in heat.axes[1].texts]
    assert texts == ["1.25", "1.00", "2.00"]


@pytest.mark.parametrize("fmt", ["html", "md"])
def test_report_is_self_contained_and_states_mu_bar_and_misses(tmp_path, fmt):
    pytest.importorskip("matplotlib")
    cells = _cells()
    path = tmp_path / f"report.{fmt}"
    write_report(path, cells, {"machine": "test box", "goal": 1.15}, figures(cells))
    text = path.read_text()
    assert "µ̄ = 1.37 (median 1.25, geometric mean 1.32) over 7 distinct measured programs (of 8 planned cells)" in text
    assert "misses by more than 1.5× in 2 of 7 cells" in text
    assert "Goal µ̄ ≤ 1.15: not met" in text
    assert "test box" in text
    assert "src=\"http" not in text and "](http" not in text  # nothing fetched from elsewhere
    if fmt == "html":
        assert text.count("<svg") == 2 and text.count("class='miss'") == 2
    else:
        pngs = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)\)", text)
        assert len(pngs) == 2 and all(base64.b64decode(p)[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
        assert "| taulop/allgather:ring | 4 | 1KiB | 9.000 µs | - | - | - |" in text


@pytest.mark.parametrize("argv, message", [
    (["taulop/bcast", "P=2"], "give schedules as FILE:ALG"),
    (["taulop/bcast:binomial_bcast", "P=2", "m=1KiB"], "is not a schedule over a process mapping"),
    (["taulop/bcast:binomial", "P=2", "Q=3"], "'binomial' has no parameter 'Q'"),
    (["taulop/bcast:binomial", "P=1", "m=1KiB"], "a run needs at least 2 ranks"),
    (["taulop/bcast:nosuch", "P=2"], "nosuch"),
])
def test_validate_refusals_before_running_anything(tmp_path, capsys, argv, message):
    pytest.importorskip("mpi4py")
    from tlop.cli.main import main

    assert main(["validate", *argv, "--profile", "metropolis", "--out", str(tmp_path / "v")]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "v" / "samples.jsonl").exists()


def test_summary_reports_median_and_geometric_mean_beside_the_mean():
    """One cell measured on a loaded machine (µ = 379) moves µ̄ a lot, the median and the
    geometric mean much less (issue 25)."""
    cells = _cells()
    s = summary(cells)
    mus = sorted([1.0, 1.25, 2.0, 1.1, 1.25, 1.0, 2.0])
    assert s["median_mu"] == pytest.approx(mus[3])
    assert s["geomean_mu"] == pytest.approx(math.exp(sum(math.log(x) for x in mus) / 7))
    records = [{"kind": "point", "key": cells[6].key, "stats": {"median": 379 * cells[6].predicted, "n": 30}}]
    loaded = summary(cells_from_records(cells, records))
    assert loaded["mean_mu"] > 45 and loaded["median_mu"] < 1.3 and loaded["geomean_mu"] < 3


def test_environment_warnings_load_oversubscription_and_another_host():
    from tlop.cli.validate import environment_warnings
    from tlop.runtime.profile import load_profile

    prof = load_profile("localhost-example")  # measured on the host 'vm'
    assert environment_warnings(prof, 16, 0.5, "vm", 4) == []
    w = environment_warnings(prof, 2, 8.7, "node7.cluster", 4)
    assert w[0].startswith("the load average (8.7) exceeds the 2 cores")
    assert w[1] == "up to 4 ranks on 2 cores: ranks are oversubscribed and wait for each other"
    assert w[2].startswith("the profile 'localhost-example' was measured on 'vm', not on this host ('node7.cluster')")
    assert environment_warnings(prof, 2, None, "vm", 2) == []  # no load average on this system


def test_the_mpi_is_named_by_library_and_version():
    from tlop.runtime.measure.launch import mpi_version_text

    hydra = "HYDRA build details:\n    Version:                                 5.0.2\n    Release Date: x\n"
    assert mpi_version_text(hydra) == "MPICH 5.0.2 (Hydra)"
    assert mpi_version_text("mpiexec (Open MPI) 5.0.3\n\nReport bugs to …\n") == "mpiexec (Open MPI) 5.0.3"
    assert mpi_version_text("") == ""


def _duplicated():
    """At P = 2 linear and binomial broadcasts are the same single send: the second cell takes the
    first one's measurement (``same_as``) and must not be counted twice."""
    a = Cell("bcast:binomial:P=2:m=1024:shm", "taulop/bcast:binomial", 2, 1024.0, 2e-6)
    b = Cell("bcast:linear:P=2:m=1024:shm", "taulop/bcast:linear", 2, 1024.0, 2e-6,
             same_as="bcast:binomial:P=2:m=1024:shm")
    c = Cell("allgather:ring:P=2:m=1024:shm", "taulop/allgather:ring", 2, 1024.0, 1e-6)
    samples = [1e-6, 3e-6, 4e-6, 5e-6, 9e-6]
    records = [{"kind": "point", "key": a.key, "samples": samples,
                "stats": {"median": 4e-6, "n": 5, "ci_low": 3e-6, "ci_high": 5e-6}},
               {"kind": "point", "key": c.key, "samples": [1e-6] * 3, "stats": {"median": 1e-6, "n": 3}}]
    return cells_from_records([a, b, c], records)


def test_identical_programs_count_once_in_mu_bar():
    cells = _duplicated()
    assert cells[1].measured == cells[0].measured == 4e-6 and cells[1].n == 5
    s = summary(cells)
    assert s["cells"] == 2 and s["measured"] == 3
    assert s["mean_mu"] == pytest.approx((2.0 + 1.0) / 2)      # not (2 + 2 + 1) / 3
    assert s["geomean_mu"] == pytest.approx(math.sqrt(2.0))


def test_report_and_csv_say_which_cell_ran_a_program(tmp_path):
    cells = _duplicated()
    write_report(tmp_path / "r.md", cells, {"machine": "box"})
    text = (tmp_path / "r.md").read_text()
    assert "over 2 distinct measured programs (of 3 planned cells; 1 cell(s) ran a program identical to " \
           "another's and count once)" in text
    assert "| 5 (the run of bcast:binomial) |" in text
    write_csv(tmp_path / "v.csv", cells)
    rows = list(csv.DictReader(open(tmp_path / "v.csv")))
    assert [r["same_run_as"] for r in rows] == ["", "bcast:binomial", ""]


def test_figure_draws_the_spread_and_the_medians_confidence_interval():
    """Where samples exist the measured line carries the median's CI as error bars and the samples'
    interquartile range as a band (issue 25: spread where samples exist)."""
    pytest.importorskip("matplotlib")
    cells = _duplicated()
    fig = figures(cells)["lines"]
    ax = next(a for a in fig.axes if a.get_gid() == "panel-0")
    coll = {c.get_gid(): c for c in ax.collections}
    band = coll["spread-0-2"].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(3e-6) and band[:, 1].max() == pytest.approx(5e-6)  # np.percentile 25/75
    (seg,) = coll["ci-0-2"].get_segments()
    assert seg[0][1] == pytest.approx(3e-6) and seg[1][1] == pytest.approx(5e-6) and seg[0][0] == 1024.0
    assert "P=2 samples, 25–75 %" in [t.get_text() for t in ax.get_legend().get_texts()]
    # no samples kept, no band (never an invented spread)
    other = next(a for a in fig.axes if a.get_gid() == "panel-2")
    assert "spread-2-2" in {c.get_gid() for c in other.collections}
    bare = figures(_cells())["lines"]
    assert not any((c.get_gid() or "").startswith("spread-") for a in bare.axes for c in a.collections)


def test_oversubscribed_launches_are_barrier_timed():
    """More ranks than cores cannot start a window together (every window was late: a P = 4 cell
    on 2 cores ran 20,000 windows without a sample): such a launch starts each run after a barrier,
    and the report says so."""
    from types import SimpleNamespace

    from tlop.cli.validate import _oversubscribed, _timing

    window = SimpleNamespace(timing="window")
    assert _timing(window, 2, 2, True) == "window"
    assert _timing(window, 4, 2, True) == "barrier"
    assert _timing(window, 4, 2, False) == "window"      # srun / a cluster: ranks spread over nodes
    assert _timing(SimpleNamespace(timing="barrier"), 2, 16, True) == "barrier"
    runs = [{"kind": "run", "role": "validate", "np": 4, "timing": "barrier"},
            {"kind": "run", "role": "validate", "np": 2, "timing": "window"}, {"kind": "point", "np": 8}]
    assert _oversubscribed(runs) == [4]
