"""The Python API as used in a notebook (issue 25): Tab names, best/explain/show/tune from
Python, grids as pandas frames, text and HTML tables and figures, readable parameters, strings
with units, configurations."""

import re

import numpy as np
import pytest

import tlop


def test_dir_lists_the_lazy_names():
    names = dir(tlop)
    for n in ("load", "loads", "sequential", "best", "explain", "show", "tune", "load_config", "Grid"):
        assert n in names
    for n in tlop.__all__:  # everything advertised resolves
        assert getattr(tlop, n) is not None


def test_params_read_as_the_signature_and_strings_take_units():
    h = tlop.load("taulop/bcast")["binomial_bcast"]
    assert repr(h.params) == "(P: int >= 1, m: bytes, c: channel = shm)"
    assert [p.name for p in h.params] == ["P", "m", "c"]
    assert h.evaluate(P=16, m="1KiB") == h.evaluate(P=16, m=1024.0)
    assert h.evaluate(P=16, m="1KiB", c="net") == h.evaluate(P=16, m=1024.0, c=1.0)
    with pytest.raises(tlop.TlopError, match="unknown unit 'mb'; did you mean 'MB' or 'MiB'"):
        h.evaluate(P=16, m="1mb")


def test_best_from_python_agrees_with_evaluate():
    r = tlop.best("taulop/bcast", P=[4, 8], m="1KiB,1MiB", profile="lusitania")
    prof = tlop.load_profile("lusitania")
    mod = tlop.load("taulop/bcast")
    assert len(r.winners) == 4
    for point, winner in r.winners:
        costs = {a: mod[a].evaluate(prof, **point) for a in ("binomial_bcast", "linear_bcast")}
        assert winner == min(costs, key=costs.get)
    assert "runs over a process mapping" in r.excluded["binomial"]
    assert "cheapest of 2 algorithms" in repr(r) and "<pre" in r._repr_html_()
    with pytest.raises(tlop.TlopError, match="did you mean 'taulop/bcast'"):
        tlop.best("taulop/bcat", P=4, m=1024)


def test_explain_show_and_tune_from_python():
    e = tlop.explain("taulop/allgather", "ring", P=8, m="1KiB", mapping=tlop.sequential(4))
    stages = e.data["stages"]
    assert len(stages) == 7 and e.data["mapping"] == "sequential(4)"
    total = sum(s["seconds"] for s in stages)
    ring = tlop.load("taulop/allgather")["ring"]
    assert total == pytest.approx(ring.evaluate(P=8, m=1024.0, mapping=tlop.sequential(4)), rel=1e-9)
    assert "binomial_bcast:" in repr(tlop.explain("taulop/bcast", "binomial_bcast"))
    s = tlop.show("taulop/bcast", "binomial_bcast")
    assert s.data["algorithms"][0]["text"].startswith("Σ_{i=0}")
    t = tlop.tune("bcast", P=[4, 8], m=[1024, 2 ** 20], library="mpich", mapping=tlop.sequential(4))
    rows = t.rows()
    assert [(r["P"], r["m"]) for r in rows] == [(4, 1024), (4, 2 ** 20), (8, 1024), (8, 2 ** 20)]
    alg, params, cost = t.winner("mpich", "bcast", 8, 2 ** 20)
    assert alg == rows[3]["algorithm"] and cost == rows[3]["seconds"] > 0
    assert re.search(r"bcast — MPICH", repr(t))  # the text of tlop tune


def test_grid_is_a_table_a_frame_and_a_figure():
    h = tlop.load("taulop/bcast")["binomial_bcast"]
    g = h.grid(P=[2, 4, 8], m=["1KiB", "1MiB"])
    text = repr(g)
    assert text.splitlines()[0] == "binomial_bcast on metropolis"
    assert text.splitlines()[1].split() == ["P", "\\", "m", "1KiB", "1MiB"]
    assert "<table" in g._repr_html_()
    rows = g.rows()
    assert [r["seconds"] for r in rows] == [float(v) for v in g.values.ravel()]
    pd = pytest.importorskip("pandas")
    df = g.to_pandas()
    assert isinstance(df, pd.DataFrame) and list(df.columns) == ["P", "m", "seconds"]
    assert df["P"].tolist() == [2, 2, 4, 4, 8, 8] and np.allclose(df["seconds"], g.values.ravel())
    pytest.importorskip("matplotlib")
    fig = g.plot()
    (ax,) = fig.axes
    assert ax.get_xscale() == "log"  # m spans three decades
    lines = [ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith("series-")]
    assert len(lines) == 3
    assert ax.get_legend().get_title().get_text() == "P"


def test_a_geometric_sweep_has_a_log_x_axis_even_within_two_decades():
    pytest.importorskip("matplotlib")
    h = tlop.load("taulop/bcast")["binomial_bcast"]
    fig = h.grid(P=[2, 4, 8, 16, 32], m="1KiB").plot()
    assert fig.axes[0].get_xscale() == "log"
    fig = h.grid(P=[2, 3, 4, 5, 6], m="1KiB").plot()
    assert fig.axes[0].get_xscale() == "linear"


def test_configurations_are_reachable():
    cfg = tlop.load_config("fig8")
    assert cfg.P == 6 and "fig8" in tlop.bundled_configs()
    with pytest.raises(tlop.TlopError, match="did you mean 'fig8'"):
        tlop.load_config("fig88")
