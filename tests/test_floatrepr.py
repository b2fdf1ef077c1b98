"""Native ``repr`` of doubles (:mod:`tlop.backends.jit.floatrepr`, Ryu) writes exactly what
Python's ``repr`` writes: edge cases, every power of two, and random bit patterns of every
exponent (sign, subnormals, integers, the positional/scientific boundaries)."""

import math

import numpy as np
from hypothesis import given, strategies as st

from tlop.backends.jit.floatrepr import pow5_tables, repr_lines

EDGES = [0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.3, 0.5, 1 / 3, 2 / 3, 4.35, 123.456, 100.0,
         1e15, 1e16, 1e17, 9999999999999998.0, 999999999999999.9, 1e-4, 1e-5, 0.00012, 0.000123456,
         1e21, 1e22, 1e23, 2.0 ** 53, 2.0 ** 53 - 1, 2.0 ** 63, 2.0 ** 64, 9007199254740993.0,
         123456789012345678.0, 1e100, 1e-100, 1e300, 1e-300, 5e-324, 1e-323, 2.2250738585072014e-308,
         2.225073858507201e-308, 1.7976931348623157e308, 8.0000152587890625, 8 + 3 / 65536,
         math.inf, -math.inf, math.pi, math.e]


def _check(values):
    x = np.asarray(values, dtype=np.float64)
    got = repr_lines(x, "nan")
    assert got == [repr(v) for v in x.tolist()]


def test_edge_cases_and_every_power_of_two():
    _check(EDGES + [-v for v in EDGES])
    _check(np.ldexp(1.0, np.arange(-1074, 1024)))
    _check(np.nextafter(np.ldexp(1.0, np.arange(-1074, 1024)), 0))  # just below each power of two


def test_random_bit_patterns():
    rng = np.random.default_rng(20261126)
    bits = rng.integers(0, np.iinfo(np.int64).max, 200_000, dtype=np.int64)
    x = bits.view(np.float64)
    x = x[~np.isnan(x)]
    _check(x)
    _check(-x[:1000])
    _check(rng.random(50_000) * 10.0 ** rng.integers(-8, 20, 50_000))  # costs-like values
    _check(rng.integers(0, 10 ** 7, 20_000).astype(float))  # whole numbers


@given(st.floats(allow_nan=False))
def test_any_double(v):
    _check([v])


def test_nan_is_the_callers_text():
    assert repr_lines([1.0, math.nan, 2.5], "") == ["1.0", "", "2.5"]
    assert repr_lines([math.nan], "nan") == ["nan"]
    assert repr_lines([], "") == []


def test_the_tables_are_ryus():
    # the first entries of ulfjack/ryu d2s_full_table.h (DOUBLE_POW5_INV_SPLIT, DOUBLE_POW5_SPLIT)
    inv, split = pow5_tables()
    assert (inv[0] & (2 ** 64 - 1), inv[0] >> 64) == (1, 2305843009213693952)
    assert (inv[1] & (2 ** 64 - 1), inv[1] >> 64) == (11068046444225730970, 1844674407370955161)
    assert (split[0] & (2 ** 64 - 1), split[0] >> 64) == (0, 1152921504606846976)
    assert (split[1] & (2 ** 64 - 1), split[1] >> 64) == (0, 1441151880758558720)
