"""Agreement with libtaulop's own single-node predictions on the metropolis tables.

tests/data/taulop-oracle-sample.csv is copied from the reference library's output
(algorithm,P,Q,m,predicted_seconds).  libtaulop reads tables as 32-bit floats, so 1e-6 relative is
exact agreement.  Every row is checked.
"""

import csv
from pathlib import Path

import pytest

import tlop

DATA = Path(__file__).parent / "data" / "taulop-oracle-sample.csv"
ROWS = list(csv.DictReader(DATA.open()))
ALGS = {
    "bcast_linear": ("taulop/bcast", "linear_bcast"),
    "bcast_binomial": ("taulop/bcast", "binomial_bcast"),
    "allgather_ring": ("taulop/allgather", "ring_allgather_node"),
}


@pytest.fixture(scope="module")
def metropolis():
    return tlop.load_profile("metropolis")


def test_sample_covers_three_algorithms():
    assert {r["algorithm"] for r in ROWS} == set(ALGS)
    assert len(ROWS) == 180


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['algorithm']}-P{r['P']}-Q{r['Q']}-m{r['m']}" for r in ROWS])
def test_row(row, metropolis):
    file, name = ALGS[row["algorithm"]]
    alg = tlop.load(file)[name]
    P, m = float(row["P"]), float(row["m"])
    assert P <= float(row["Q"])  # single node: all traffic through shared memory
    got = alg.evaluate(metropolis, P=P, m=m)
    assert got == pytest.approx(float(row["predicted_seconds"]), rel=1e-6)
