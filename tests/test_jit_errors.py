"""Run-time problems of compiled evaluators are clean TlopErrors (or warnings), never crashes,
and the scalar fast path and its fallback behave like the interpreter."""

import warnings

import numpy as np
import pytest

import tlop
from tlop.runtime.diagnostics import TlopError
from tlop.backends.jit import compile_algorithm
from tlop.runtime.errors import OutOfGridWarning

from _jit_helpers import make_profile, taulop_tables


@pytest.fixture(scope="module")
def bcast():
    return tlop.load("taulop/bcast")


@pytest.fixture(scope="module")
def ev(bcast):
    return bcast["binomial_bcast"].compile(tlop.default_profile())


def test_native_fast_path_installed(ev):
    assert type(ev.func).__name__ == "builtin_function_or_method"  # the native wrapper
    assert ev(P=16, m=1024) == pytest.approx(ev(P=16.0, m=np.float64(1024.0)), rel=0, abs=0)


def test_constraint_violation_names_parameter_value_and_constraint(ev, bcast):
    with pytest.raises(TlopError) as err:
        ev(P=0, m=10.0)
    assert "P = 0" in str(err.value) and "P >= 1" in str(err.value)
    with pytest.raises(TlopError) as err:
        ev.batch(P=np.array([4, 0, -1, 8]), m=10.0)
    assert "P = 0" in str(err.value) and "2 of 4" in str(err.value)
    with pytest.raises(TlopError, match="must be an integer"):
        ev(P=2.5, m=1.0)
    with pytest.raises(TlopError, match="NaN"):
        ev(P=float("nan"), m=1.0)


def test_argument_problems(ev):
    with pytest.raises(TlopError, match="no parameter 'Q'"):
        ev(P=2, m=1.0, Q=3)
    with pytest.raises(TlopError, match="missing argument 'm'"):
        ev(P=2)
    with pytest.raises(TlopError, match="unknown channel"):
        ev(P=2, m=1.0, c="nvlink")
    with pytest.raises(TlopError, match="not a channel"):
        ev(P=2, m=1.0, c=7)
    with pytest.raises(TlopError):
        ev(P=2, m="lots")
    with pytest.raises(TlopError, match="broadcast"):
        ev.batch(P=np.arange(1, 4), m=np.ones(5))
    assert ev(2, 100.0) == ev(P=2, m=100.0)  # positional arguments take the slow path
    assert ev(P=True, m=100.0) == ev(P=1, m=100.0)
    arr = ev(P=np.array([2, 4]), m=100.0)  # an array in a scalar call: a batch
    assert arr.shape == (2,) and arr[0] == ev(P=2, m=100.0)


def test_nan_result_is_an_error():
    mod = tlop.loads('import "taulop/platform.tlop"\nalgorithm f(x: real) = (log2(x) * 0 + sqrt(x)) * 1s')
    ev = compile_algorithm(mod.program, "f", tlop.default_profile())
    assert ev(x=4.0) == 2.0
    with pytest.raises(TlopError, match="NaN"):
        ev(x=-1.0)
    with pytest.raises(TlopError, match="NaN.*x=-1"):
        ev.batch(x=np.array([1.0, -1.0]))


def test_out_of_grid_error_and_warning(bcast):
    rng = np.random.default_rng(3)
    prof = make_profile(tables=taulop_tables(rng), out_of_grid="error")
    ev = bcast["binomial_bcast"].compile(prof)
    ev(P=4, m=100.0)
    with pytest.raises(TlopError, match="outside the measured grid"):
        ev(P=4, m=1e9)
    with pytest.raises(TlopError, match="outside the measured grid"):
        ev.batch(P=4, m=np.array([10.0, 1e9]))
    prof = make_profile(tables=taulop_tables(rng), out_of_grid="warn")
    ev = bcast["binomial_bcast"].compile(prof)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        a = ev(P=4, m=1e9)
        b = ev.batch(P=4, m=np.array([1e9, 2e9]))
    assert [x.category for x in w].count(OutOfGridWarning) >= 1
    assert a == b[0] == bcast["binomial_bcast"].evaluate(prof, P=4, m=1e9)


def test_missing_table_is_reported_at_call_time(bcast):
    prof = make_profile(tables={"o": taulop_tables(np.random.default_rng(1))["o"]})  # no L
    ev = bcast["binomial_bcast"].compile(prof)
    with pytest.raises(TlopError, match="missing"):
        ev(P=4, m=10.0)
    assert ev(P=1, m=10.0) == 0.0  # empty sum: L is never read


def test_threads_and_shapes(ev):
    P = np.random.default_rng(0).integers(1, 200, 100_000).astype(float)
    m = np.random.default_rng(1).uniform(0, 5e6, 100_000)
    one = ev.batch(P=P, m=m)
    ev.threads = 2
    try:
        two = ev.batch(P=P, m=m)
    finally:
        ev.threads = 1
    assert np.array_equal(one, two)
    assert ev.batch(P=4, m=10.0).shape == ()
    grid = ev.batch(P=np.array([[2], [4]]), m=np.array([1.0, 10.0, 100.0]))
    assert grid.shape == (2, 3) and grid[1, 2] == ev(P=4, m=100.0)
    strided = ev.batch(P=P[::2], m=m[::2])
    assert np.array_equal(strided, one[::2])


def test_specialized_matches_generic(bcast):
    prof = tlop.default_profile()
    gen = bcast["binomial_bcast"].compile(prof)
    spec = bcast["binomial_bcast"].compile(prof, specialize=True)
    P = np.arange(1, 300, dtype=float)
    m = np.geomspace(0.5, 1e8, P.size)
    assert np.allclose(gen.batch(P=P, m=m), spec.batch(P=P, m=m), rtol=1e-12, atol=0)
