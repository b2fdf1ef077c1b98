"""Schedules agree with the published closed forms they replace, under the forms' own assumptions.

pLogP (Barchet-Steffenel & Mounié, paper 004, Table 1 broadcast rows and Table 2 scatter rows, in
``plogp/bcast`` and ``plogp/scatter``): every row that is a tree or a chain — flat, segmented flat,
chain, segmented chain (pipeline), binomial, segmented binomial; flat, chain and binomial scatter —
equals the dataflow price of the schedule that row describes, for P ≤ 64 and random pLogP
profiles (property test), P a power of two for the binomial rows.  The rows assume a send's
overheads fit in its gap (os(s) + or(s) ≤ g(s)) and, for the binomial scatter, g non-decreasing;
on the measured bundled profile, where os + or > g, the schedule costs at least the row.

LogGP: the chain is (P − 1)·(L + 2o + (m − 1)G), and the pipeline of k segments of S bytes is
(P − 1)·(L + 2o + (S − 1)G) + (k − 1)·max(o, g + (S − 1)G) when 2o fits in the gap — for P = 2
that is 002's segmented point-to-point ``loggp/p2p p2p_segmented``.  The binomial broadcast
against an event-by-event simulation (P = 2 … 1024, g > L + 2o) is tests/test_dataflow.py.

τ-Lop's closed forms (binomial broadcast and scatter, recursive doubling, the ring under both
mappings) are checked against their schedules in tests/test_stdlib_collectives.py,
tests/test_stdlib_collectives_b.py and tests/test_closedform.py.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tlop
from conftest import synthetic_profile

PB, PS = tlop.load("plogp/bcast"), tlop.load("plogp/scatter")
LB, LP2P = tlop.load("loggp/bcast"), tlop.load("loggp/p2p")
GRID = [1.0, 256.0, 4096.0, 65536.0, 1048576.0, 16777216.0, 2.0 ** 30]  # no size extrapolates
MAPPING = tlop.sequential(4)  # LogGP and pLogP: the mapping does not change the cost


@st.composite
def plogp_profiles(draw):
    """A pLogP profile on GRID: g non-decreasing, os + or ≤ g at every grid point (so also between
    them: linear interpolation keeps it; no size used here is beyond the grid), L ≥ 0."""
    steps = draw(st.lists(st.floats(0, 1e-4), min_size=len(GRID), max_size=len(GRID)))
    g = list(np.cumsum(np.array(steps) + 1e-7))
    split = draw(st.lists(st.floats(0, 1), min_size=len(GRID), max_size=len(GRID)))
    share = draw(st.floats(0, 1))
    os_ = [x * f * share for x, f in zip(g, split)]
    or_ = [x * (1 - f) * share for x, f in zip(g, split)]
    L = draw(st.floats(0, 2e-4))
    return synthetic_profile("plogp-random", tables={
        "g": {"*": {"m": GRID, "values": g}}, "os": {"*": {"m": GRID, "values": os_}},
        "or_": {"*": {"m": GRID, "values": or_}}}, scalars={"L": {"*": L}})


def run(alg, prof, **kw):
    return float(alg.evaluate(prof, mapping=MAPPING, **kw))


def row(alg, prof, **kw):
    return float(alg.evaluate(prof, **kw))


def same(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-18)


sizes = st.sampled_from([1.0, 100.0, 4096.0, 50000.0, 1048576.0])


@settings(max_examples=40, deadline=None)
@given(prof=plogp_profiles(), P=st.integers(2, 64), m=sizes, k=st.integers(1, 5))
def test_plogp_table1_flat_and_chain_rows(prof, P, m, k):
    assert same(run(PB["linear"], prof, P=P, m=m), row(PB["flat"], prof, P=P, m=m))
    assert same(run(PB["pipeline"], prof, P=P, m=m, seg=m), row(PB["chain"], prof, P=P, m=m))
    s = m
    assert same(run(PB["linear_segm"], prof, P=P, m=k * s, seg=s), row(PB["flat_segmented"], prof, P=P, m=k * s, s=s))
    assert same(run(PB["pipeline"], prof, P=P, m=k * s, seg=s), row(PB["chain_segmented"], prof, P=P, m=k * s, s=s))


@settings(max_examples=40, deadline=None)
@given(prof=plogp_profiles(), n=st.integers(1, 6), m=sizes, k=st.integers(1, 5))
def test_plogp_table1_binomial_rows_for_powers_of_two(prof, n, m, k):
    P = 2 ** n
    assert same(run(PB["binomial"], prof, P=P, m=m), row(PB["binomial_closed"], prof, P=P, m=m))
    assert same(run(PB["binomial_segm"], prof, P=P, m=k * m, seg=m),
                row(PB["binomial_segmented"], prof, P=P, m=k * m, s=m))


@settings(max_examples=40, deadline=None)
@given(prof=plogp_profiles(), P=st.integers(2, 64), m=sizes)
def test_plogp_table2_scatter_rows(prof, P, m):
    assert same(run(PS["linear"], prof, P=P, m=m), row(PS["flat_scatter"], prof, P=P, m=m))
    assert same(run(PS["chain"], prof, P=P, m=m), row(PS["chain_scatter"], prof, P=P, m=m))
    if P & (P - 1) == 0:
        assert same(run(PS["binomial"], prof, P=P, m=m), row(PS["binomial_scatter"], prof, P=P, m=m))


def test_the_binomial_rows_are_not_the_schedule_for_other_P():
    """For P not a power of two the rows count ⌈log2 P⌉ latencies on every path; the schedule's
    short branches do not wait that long (P = 3: the root's second send waits a gap, 2g(m) + L)."""
    prof = synthetic_profile("plogp-fixed", tables={"g": {"*": {"m": GRID, "values": [5e-6] * len(GRID)}},
                                                    "os": {"*": {"m": GRID, "values": [1e-6] * len(GRID)}},
                                                    "or_": {"*": {"m": GRID, "values": [1e-6] * len(GRID)}}},
                             scalars={"L": {"*": 20e-6}})
    assert same(run(PS["binomial"], prof, P=3, m=1.0), 2 * 5e-6 + 20e-6)
    assert run(PS["binomial"], prof, P=3, m=1.0) < row(PS["binomial_scatter"], prof, P=3, m=1.0)


@pytest.mark.parametrize("P", [2, 3, 4, 7, 8, 16, 33, 64])
def test_on_the_measured_profile_the_rows_are_lower_bounds(P):
    """localhost-example was measured: os(m) + or(m) > g(m) there, which the rows ignore."""
    prof = tlop.load_profile("localhost-example")
    for m in (1.0, 4096.0, 65536.0, 1048576.0):
        pairs = [(run(PB["linear"], prof, P=P, m=m), row(PB["flat"], prof, P=P, m=m)),
                 (run(PB["pipeline"], prof, P=P, m=m, seg=m), row(PB["chain"], prof, P=P, m=m)),
                 (run(PS["linear"], prof, P=P, m=m), row(PS["flat_scatter"], prof, P=P, m=m)),
                 (run(PS["chain"], prof, P=P, m=m), row(PS["chain_scatter"], prof, P=P, m=m))]
        if P & (P - 1) == 0:
            pairs.append((run(PB["binomial"], prof, P=P, m=m), row(PB["binomial_closed"], prof, P=P, m=m)))
        for got, published in pairs:
            assert got >= published * (1 - 1e-12)
    if P >= 3:  # and strictly more where os(m) > g(m): the root's sends are os apart, not g
        assert run(PB["linear"], prof, P=P, m=1.0) > row(PB["flat"], prof, P=P, m=1.0) * (1 + 1e-9)


def loggp(L, o, g, G):
    return synthetic_profile("loggp-random", scalars={"L": {"*": L}, "o": {"*": o}, "g": {"*": g}, "G": {"*": G}})


@settings(max_examples=60, deadline=None)
@given(P=st.integers(2, 64), m=sizes, k=st.integers(1, 6), L=st.floats(0, 1e-4), o=st.floats(0, 1e-5),
       g=st.floats(0, 1e-4), G=st.floats(0, 1e-8))
def test_loggp_chain_and_pipeline(P, m, k, L, o, g, G):
    prof = loggp(L, o, g, G)
    hop = lambda x: L + 2 * o + (x - 1) * G
    gap = lambda x: max(o, g + (x - 1) * G)
    assert same(run(LB["pipeline"], prof, P=P, m=m, seg=m), (P - 1) * hop(m))
    got = run(LB["pipeline"], prof, P=P, m=k * m, seg=m)
    if 2 * o <= gap(m):
        assert same(got, (P - 1) * hop(m) + (k - 1) * gap(m))
        if P == 2 and g + (m - 1) * G >= o:
            assert same(got, row(LP2P["p2p_segmented"], prof, m=k * m, seg=m))
    else:  # the receiver's overheads, not the gap, space the segments
        assert got >= ((P - 1) * hop(m) + (k - 1) * gap(m)) * (1 - 1e-12)
