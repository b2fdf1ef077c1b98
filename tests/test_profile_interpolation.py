"""Interpolation rules of profile tables (tlop.runtime.interpolation, TableData.lookup)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tlop.runtime.interpolation import Interpolation, lookup_1d, lookup_2d, segment
from tlop.runtime.profile import profile_from_dict

M = [1.0, 64.0, 128.0, 1024.0]
O = [0.5, 0.7, 0.6, 2.0]
TAU = [1.0, 2.0, 4.0]
L = [[1.0, 1.5, 3.0],
     [2.0, 2.5, 5.0],
     [3.0, 4.0, 6.0],
     [10.0, 15.0, 30.0]]


def make(**rules):
    return profile_from_dict({
        "tlop_profile": 1, "name": "t", "interpolation": rules,
        "channels": {"shm": {"transmission": "shm"}},
        "tables": {"o": {"shm": {"m": M, "values": O}},
                   "L": {"shm": {"m": M, "tau": TAU, "values": L}}},
    })


def tables(**rules):
    p = make(**rules)
    return p.table("o", "shm"), p.table("L", "shm")


def test_grid_points_return_raw_values_exactly():
    o, L_ = tables()
    assert np.array_equal(o.lookup(np.array(M)), np.array(O))
    for i, m in enumerate(M):
        for j, t in enumerate(TAU):
            assert L_.lookup(m, t) == L[i][j]


def test_grid_points_exact_for_awkward_floats():
    # v0 + (v1 - v0) * 1 is not always v1 in floating point; the last point must still be exact
    p = profile_from_dict({"tlop_profile": 1, "name": "f",
                           "tables": {"g": {"*": {"m": [0, 3], "values": [0.3, 1e-17]}}}})
    g = p.table("g", None)
    assert 0.3 + (1e-17 - 0.3) * 1.0 != 1e-17      # the trap this guards against
    assert g.lookup(3.0) == 1e-17 and g.lookup(0.0) == 0.3


def test_midpoints_are_linear_in_m_and_tau():
    o, L_ = tables()
    assert o.lookup(32.5) == pytest.approx(0.6)                   # halfway 1 .. 64
    assert o.lookup(576.0) == pytest.approx(1.3)                  # halfway 128 .. 1024
    assert L_.lookup(32.5, 1) == pytest.approx(1.5)
    assert L_.lookup(64, 3) == pytest.approx(3.75)                # halfway tau 2 .. 4
    # bilinear in the middle of a cell: mean of its four corners
    assert L_.lookup(96, 3) == pytest.approx(np.mean([2.5, 5.0, 4.0, 6.0]))


def test_extrapolation_below_and_beyond_linear():
    o, L_ = tables()
    slope_lo = (0.7 - 0.5) / 63
    assert o.lookup(0.0) == pytest.approx(0.5 - slope_lo)
    slope_hi = (2.0 - 0.6) / (1024 - 128)
    assert o.lookup(2048.0) == pytest.approx(2.0 + slope_hi * 1024)
    assert L_.lookup(2048.0, 1) == pytest.approx(10.0 + (10.0 - 3.0) / 896 * 1024)


def test_extrapolation_clamp_rules():
    o, L_ = tables(m_below="clamp", m_beyond="clamp")
    assert o.lookup(0.0) == 0.5 and o.lookup(1e9) == 2.0
    assert L_.lookup(0.0, 2) == 1.5 and L_.lookup(1e9, 2) == 15.0
    o2, _ = tables(m_below="clamp")          # each side is independent
    assert o2.lookup(0.0) == 0.5 and o2.lookup(2048.0) > 2.0


def test_tau_beyond_proportional_is_the_default():
    _, L_ = tables()
    assert L_.policy.tau_beyond == "proportional"
    assert L_.lookup(64, 8) == pytest.approx(5.0 * 8 / 4)
    assert L_.lookup(96, 12) == pytest.approx(L_.lookup(96, 4) * 3)


def test_tau_beyond_clamp_and_linear():
    _, Lc = tables(tau_beyond="clamp")
    assert Lc.lookup(64, 100) == 5.0
    _, Ll = tables(tau_beyond="linear")
    assert Ll.lookup(64, 6) == pytest.approx(5.0 + (5.0 - 2.5) / 2 * 2)
    assert Ll.lookup(1024, 8) == pytest.approx(30.0 + (30.0 - 15.0) / 2 * 4)


def test_tau_below_smallest_column_clamps_under_every_rule():
    for rule in ("proportional", "clamp", "linear"):
        _, L_ = tables(tau_beyond=rule)
        assert L_.lookup(64, 0.5) == 2.0


def test_nonnegative_clamps_extrapolated_values_at_zero():
    p = profile_from_dict({"tlop_profile": 1, "name": "n",
                           "tables": {"g": {"*": {"m": [10, 20], "values": [1.0, 3.0]}}}})
    assert p.table("g").lookup(0.0) == 0.0                      # line gives -1
    raw = p.with_interpolation(nonnegative=False).table("g")
    assert raw.lookup(0.0) == pytest.approx(-1.0)
    assert np.isnan(p.table("g").lookup(np.nan))                 # NaN is not hidden by the clamp


def test_broadcasting_shapes():
    o, L_ = tables()
    m = np.array([1.0, 50.0, 700.0])
    assert o.lookup(m).shape == (3,)
    assert L_.lookup(m, 2).shape == (3,)
    assert L_.lookup(m[:, None], np.array([1, 2, 3, 8])[None, :]).shape == (3, 4)
    grid = L_.lookup(m[:, None], np.array([1.0, 2.0])[None, :])
    assert grid[1, 1] == L_.lookup(50.0, 2.0)
    assert np.ndim(L_.lookup(5.0, 1.0)) == 0 and isinstance(float(L_.lookup(5.0, 1.0)), float)
    assert L_.lookup(np.zeros((2, 0)), 1).shape == (2, 0)


def test_tau_argument_required_exactly_for_tau_tables():
    o, L_ = tables()
    with pytest.raises(Exception, match="requires|required"):
        L_.lookup(64)
    with pytest.raises(Exception, match="takes no tau"):
        o.lookup(64, 2)


def test_one_point_axes_are_constant():
    pol = Interpolation()
    assert lookup_1d(np.array([5.0]), np.array([3.0]), np.array([0, 5, 99.0]), pol).tolist() == [3, 3, 3]
    v = np.array([[1.0], [2.0]])
    # one tau column: constant below, proportional beyond
    assert lookup_2d(np.array([1.0, 3.0]), np.array([1.0]), v, 2.0, 1.0, pol) == 1.5
    assert lookup_2d(np.array([1.0, 3.0]), np.array([1.0]), v, 2.0, 4.0, pol) == 6.0
    lin = Interpolation(tau_beyond="linear")
    assert lookup_2d(np.array([1.0, 3.0]), np.array([1.0]), v, 2.0, 4.0, lin) == 1.5


def test_segment_rule():
    g = np.array([1.0, 2.0, 4.0])
    assert segment(g, np.array([0.0, 1.0, 1.5, 2.0, 4.0, 9.0])).tolist() == [0, 0, 0, 1, 1, 1]


grids = st.lists(st.floats(0, 1e7, allow_nan=False), min_size=2, max_size=12, unique=True).map(sorted)


@settings(max_examples=60, deadline=None)
@given(grids, st.data())
def test_property_exact_at_nodes_and_bounded_inside(ms, data):
    ms = np.array(ms)
    vals = np.array(data.draw(st.lists(st.floats(0, 1.0, allow_nan=False),
                                       min_size=len(ms), max_size=len(ms))))
    pol = Interpolation()
    assert np.array_equal(lookup_1d(ms, vals, ms, pol), vals)
    x = np.array(data.draw(st.lists(st.floats(ms[0], ms[-1]), min_size=1, max_size=20)))
    r = lookup_1d(ms, vals, x, pol)
    i = segment(ms, x)
    lo = np.minimum(vals[i], vals[i + 1])
    hi = np.maximum(vals[i], vals[i + 1])
    assert np.all(r >= lo - 1e-12) and np.all(r <= hi + 1e-12)


# ---------------------------------------------------------------------- m_beyond = "chunks"
def test_chunks_by_hand_on_the_small_tables():
    o, L_ = tables(m_beyond="chunks")
    # 2.5 * 1024 = 2 * 1024 + 512: two whole 1024 B messages plus o(512) on segment 128..1024
    o512 = 0.6 + (2.0 - 0.6) * (512 - 128) / (1024 - 128)
    assert o.lookup(2560.0) == pytest.approx(2 * 2.0 + o512, rel=1e-15)
    L512 = {1: 3.0 + (10.0 - 3.0) * 384 / 896, 2: 4.0 + 11.0 * 384 / 896}
    assert L_.lookup(2560.0, 1) == pytest.approx(2 * 10.0 + L512[1], rel=1e-15)
    assert L_.lookup(2560.0, 2) == pytest.approx(2 * 15.0 + L512[2], rel=1e-15)
    # an exact multiple is k whole messages, not k - 1 plus a zero-byte one
    assert o.lookup(3072.0) == 3 * 2.0 and L_.lookup(4096.0, 4) == 4 * 30.0
    # just past the grid: one whole message plus T(1)
    assert o.lookup(1025.0) == 2.0 + 0.5
    # inside the grid nothing changes, bit for bit
    plain, _ = tables()
    xs = np.array([0.0, 1.0, 3.5, 64.0, 100.0, 1023.0, 1024.0])
    assert np.array_equal(o.lookup(xs), plain.lookup(xs))


def test_chunks_is_the_libtaulop_recursion():
    o, L_ = tables(m_beyond="chunks")

    def recursive(f, m):  # T(m) = T(s) + T(m - s) for m > s, as libtaulop writes it
        return f(1024.0) + recursive(f, m - 1024.0) if m > 1024.0 else f(m)

    for m in (1025.0, 2047.0, 2048.0, 2049.0, 2560.0, 9 * 1024 + 17.0, 100 * 1024.0):
        assert o.lookup(m) == pytest.approx(recursive(lambda x: float(o.lookup(x)), m), rel=1e-14)
        for tau in (1, 3, 6):  # the τ rule (proportional beyond 4) applies to every chunk
            want = recursive(lambda x: float(L_.lookup(x, tau)), m)
            assert L_.lookup(m, tau) == pytest.approx(want, rel=1e-14)


def test_chunks_is_linear_in_whole_messages_and_vectorised():
    o, L_ = tables(m_beyond="chunks")
    ms = np.array([[2560.0], [1e6], [2.0 ** 60], [np.inf], [np.nan]])
    got = L_.lookup(ms, np.array([1.0, 4.0, 8.0]))
    assert got.shape == (5, 3)
    assert got[1, 0] == pytest.approx(976 * 10.0 + float(L_.lookup(1e6 - 976 * 1024, 1)), rel=1e-15)
    assert got[2, 0] == pytest.approx(2.0 ** 50 * 10.0, rel=1e-15)   # O(1), no recursion
    assert np.all(np.isinf(got[3])) and np.all(np.isnan(got[4]))
    assert np.isinf(o.lookup(np.inf))


def test_chunks_on_a_one_point_or_zero_grid():
    p = profile_from_dict({"tlop_profile": 1, "name": "one", "interpolation": {"m_beyond": "chunks"},
                           "tables": {"g": {"*": {"m": [8], "values": [3.0]}},
                                      "z": {"*": {"m": [0], "values": [3.0]}}}})
    assert p.table("g").lookup(20.0) == 3 * 3.0 and p.table("g").lookup(8.0) == 3.0
    assert p.table("z").lookup(20.0) == 3.0   # no chunk of 0 bytes: the constant rule


def test_chunks_only_for_m_beyond():
    with pytest.raises(Exception, match=r"interpolation.m_below: unknown rule 'chunks'"):
        make(m_below="chunks")
    assert make(m_beyond="chunks").interpolation.m_beyond == "chunks"
