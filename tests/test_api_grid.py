"""Python API: NaN for refused points (evaluate(invalid="nan")) and grids shown in Jupyter
(AlgorithmHandle.grid, _repr_html_; _repr_latex_ of an algorithm)."""

import math

import numpy as np
import pytest

import tlop
from tlop.runtime.diagnostics import TlopError


@pytest.fixture(scope="module")
def bcast():
    return tlop.load("taulop/bcast")["binomial_bcast"]


def test_invalid_points_are_nan_and_the_others_exact(bcast):
    P = np.array([0.0, 2.0, 3.5, 8.0, np.nan, -1.0])
    got = bcast.evaluate(P=P, m=np.array([[1024.0], [65536.0]]), invalid="nan")
    assert got.shape == (2, 6)
    ok = np.array([False, True, False, True, False, False])
    assert np.isnan(got[:, ~ok]).all()
    want = bcast.evaluate(P=P[ok], m=np.array([[1024.0], [65536.0]]))
    assert np.array_equal(got[:, ok], want)
    with pytest.raises(TlopError, match="argument P is NaN"):
        bcast.evaluate(P=P, m=1024.0)  # the default: one error for the whole array
    assert math.isnan(bcast.evaluate(P=0, m=1024.0, invalid="nan"))
    assert bcast.evaluate(P=8, m=1024.0, invalid="nan") == bcast.evaluate(P=8, m=1024.0)
    with pytest.raises(TlopError, match="expected 'raise' or 'nan'"):
        bcast.evaluate(P=8, m=1024.0, invalid="skip")


def test_invalid_nan_follows_the_where_condition(tmp_path):
    f = tmp_path / "rd.tlop"
    f.write_text('model taulop\nimport "taulop/platform"\n'
                 "algorithm rd(P: int >= 1, m: bytes, S: bytes > 0B) where P & (P - 1) == 0 and S <= m =\n"
                 "    (m / S) * o[shm](S) + log2(P) * 1us\n")
    h = tlop.load(str(f))["rd"]
    got = h.evaluate(P=np.arange(1.0, 9.0), m=1024.0, S=np.array([[512.0], [2048.0]]), invalid="nan")
    assert np.isnan(got[1]).all()  # S > m everywhere on the second row
    assert [P for P, v in zip(range(1, 9), got[0]) if not np.isnan(v)] == [1, 2, 4, 8]


def test_grid_values_are_the_costs_at_each_point(bcast):
    g = bcast.grid(P=[2, 4, 8], m=["1KiB", "1MiB"], c=["shm", "net"])
    assert g.names == ["P", "m", "c"] and g.values.shape == (3, 2, 2)
    for i, P in enumerate([2, 4, 8]):
        for j, m in enumerate([1024.0, 1048576.0]):
            for k, c in enumerate(["shm", "net"]):
                assert g.values[i, j, k] == bcast.evaluate(P=P, m=m, c=c)
    assert len(g.rows()) == 12 and g.rows()[0] == {"P": 2.0, "m": 1024.0, "c": 0.0, "seconds": g.values[0, 0, 0]}


def test_grid_html_matrix_and_rows(bcast):
    g = bcast.grid(P=[2, 8], m=["1KiB", "1MiB"], c="net")
    html = g._repr_html_()
    assert "<caption>binomial_bcast on metropolis (c=net)</caption>" in html
    assert "<tr><th>P \\ m</th><th>1KiB</th><th>1MiB</th></tr>" in html
    assert f"<td>{tlop.runtime.units.format_time(g.values[1, 1])}</td>" in html
    rows = bcast.grid(P=[0, 2], m="1KiB", invalid="nan")._repr_html_()
    assert "<tr><th>P</th><th>cost</th></tr>" in rows and "<td>0</td><td>–</td>" in rows


def test_an_algorithm_shows_its_cost_in_latex(bcast):
    assert bcast._repr_latex_().startswith("$") and "T^{" in bcast._repr_latex_()
