"""The JIT's fast paths give the answers of the general paths: batch loops specialised for
scalar (broadcast) arguments, the exact 2^k shortcut, the native scalar wrapper,
and the report of the first failing point of a batch that runs every point."""

import math

import numpy as np
import pytest

import tlop
from tlop.runtime.diagnostics import TlopError
from tlop.backends.jit import compile_algorithm

from _jit_helpers import interp_point, make_profile

from test_jit_stdlib import _plogp_profile


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


@pytest.fixture(scope="module")
def chain():
    return compile_algorithm(tlop.load("plogp/bcast").program, "chain_segmented", _plogp_profile())


def test_scalar_variant_matches_general_loop(chain):
    rng = np.random.default_rng(7)
    P = rng.integers(2, 300, 500).astype(float)
    m = np.floor(np.exp(rng.uniform(0, 18, 500)))
    handle = tlop.load("plogp/bcast")["chain_segmented"]
    for args in ({"P": P, "m": m, "seg": 8192.0}, {"P": 64, "m": m, "seg": 1000.0}, {"P": P, "m": 1e6, "seg": 77.0}):
        chain.scalar_variant_min = None
        general = chain.batch(**args)
        chain.scalar_variant_min = 1
        special = chain.batch(**args)
        assert _same(general, special)
        assert _same(special, handle.evaluate(chain.profile, **args))
    code = chain._primary
    assert len(code.variants) == 3 and all(v.stats.source in ("compiled", "disk", "process")
                                           for v in code.variants.values())


def test_scalar_variant_reports_errors_like_the_general_loop(chain):
    chain.scalar_variant_min = 1
    m = np.array([10.0, 2e4, 3e5])
    with pytest.raises(TlopError, match="seg = -1"):
        chain.batch(P=np.array([2.0, 3.0, 4.0]), m=m, seg=-1.0)
    with pytest.raises(TlopError, match=r"P = 1") as err:
        chain.batch(P=np.array([2.0, 3.0, 1.0]), m=m, seg=4096.0)
    assert "1 of 3" in str(err.value)
    with pytest.raises(TlopError, match=r"m = -5"):
        chain.batch(P=5, m=np.array([1.0, -5.0, 7.0]), seg=100.0)


def test_first_failure_is_reported_in_point_order():
    # point kinds: an evaluation error whose result is not NaN (an empty max inside a
    # comparison, so the if picks a side), a NaN result (log2 of a negative x), an argument
    # outside its constraint
    mod = tlop.loads('import "taulop/platform.tlop"\n'
                     'algorithm f(P: int >= 1, x: real) = ((if (max i in 1 .. P - 2: i) > 0 then 1 else 2) + log2(x)) * 1s\n')
    ev = compile_algorithm(mod.program, "f", tlop.default_profile())
    assert ev(P=5, x=4.0) == 3.0
    cases = [
        ([5, 2, 5], [1, 1, -1], "empty", "(1,)"),
        ([5, 5, 2], [1, -1, 1], "NaN", "(1,)"),
        ([5, 2, 0], [1, 1, 1], "empty", "(1,)"),
        ([5, 0, 2], [1, 1, 1], "P = 0", None),
        ([2, 5, 5], [-1, 1, 1], "empty", "(0,)"),
    ]
    for P, x, what, where in cases:
        with pytest.raises(TlopError) as err:
            ev.batch(P=np.array(P, dtype=float), x=np.array(x, dtype=float))
        assert what in str(err.value), (P, x, str(err.value))
        if where:
            assert where in str(err.value), (P, x, str(err.value))
    with pytest.raises(TlopError, match="empty"):
        ev(P=2, x=1.0)


def test_power_of_two_shortcut_is_exact():
    mod = tlop.loads('import "taulop/platform.tlop"\nalgorithm f(y: real) = 2 ^ y * 1s\n'
                     'algorithm g(P: int >= 1) = sum i in -1080 .. P: 2 ^ i * 1s\n')
    prof = tlop.default_profile()
    f = compile_algorithm(mod.program, "f", prof)
    ys = [-1100.0, -1075.0, -1074.0, -1050.0, -1023.0, -1022.0, -0.0, 0.0, 1.0, 52.0, 1023.0, 1024.0,
          0.5, -0.5, 3.0000001, 1e300, float("inf"), float("-inf"), 2.0 ** 62]
    finite = [y for y in ys if y < 1024]
    for y in ys:
        want = interp_point(mod.program, mod.program.algorithms["f"], prof, {"y": y})
        if y not in finite:  # 2^y overflows: a non-finite cost is an error, naming the overflow
            assert isinstance(want, TlopError) and "not finite: inf" in str(want)
            why = r"the argument y \(it is inf\)" if y == math.inf else r"an overflow \(2 \^ "
            with pytest.raises(TlopError, match=r"costs inf s, not a finite time.*" + why):
                f(y=y)
            continue
        got = f(y=y)
        assert got == want and math.copysign(1, got) == math.copysign(1, want), (y, got, want)
    assert _same(f.batch(y=np.array(finite)), [float(2.0 ** y) for y in finite])
    with pytest.raises(TlopError, match=r"batch point \(11,\)\): an overflow"):
        f.batch(y=np.array(ys))
    g = compile_algorithm(mod.program, "g", prof)
    for P in (1, 5, 1022, 1023, 1030):
        want = interp_point(mod.program, mod.program.algorithms["g"], prof, {"P": float(P)})
        if P >= 1023:  # the sum reaches 2^1024 (P = 1023), a term is 2^1024 (P = 1030): an overflow
            assert isinstance(want, TlopError) and "not finite: inf" in str(want)
            why = r"the sum over i of finite terms is inf" if P == 1023 else r"2 \^ 1024"
            with pytest.raises(TlopError, match=r"an overflow \(" + why + r"\)"):
                g(P=P)
            continue
        assert g(P=P) == want


def _count_fallbacks(ev):
    calls = []
    slow = ev._call_slow

    def counted(*args, **kwargs):
        calls.append((args, kwargs))
        return slow(*args, **kwargs)

    ev._native.set_fallback(counted)
    return calls


def test_native_scalar_wrapper_answers_every_calling_form():
    import functools
    import gc

    met = tlop.load_profile("metropolis")
    mod = tlop.load("taulop/bcast")
    ev = compile_algorithm(mod.program, "binomial_bcast", met)
    # a documented call: a functools.partial of a builtin, no type slot written
    assert type(ev).__call__ is functools.partial.__call__
    assert type(ev.func).__name__ == "builtin_function_or_method" and ev.args == () and ev.keywords == {}
    h = mod["binomial_bcast"]
    want = h.evaluate(met, P=16, m=1024.0)
    calls = _count_fallbacks(ev)
    forms = [((), {"P": 16, "m": 1024.0}), ((16, 1024.0), {}), ((16,), {"m": 1024.0}),
             ((), {"P": 16, "m": 1024.0, "c": "shm"}), ((), {"P": 16, "m": 1024.0, "c": 0}),
             ((), {"P": np.int64(16), "m": np.float64(1024.0)}), ((), {"P": 16.0, "m": np.float32(1024.0)}),
             ((), {"".join(["P"]): 16, "m": 1024.0}),  # a keyword built at run time (not interned)
             ((), {"P": 16, "m": 1024.0, "c": "".join(["s", "hm"])})]
    for args, kwargs in forms:
        assert ev(*args, **kwargs) == want, (args, kwargs)
    assert calls == []  # the native path answered every one
    # another channel: the first call compiles its code (fallback), later calls are native
    other = h.evaluate(met, P=16, m=1024.0, c="net")
    assert ev(P=16, m=1024.0, c="net") == other and len(calls) == 1
    assert ev(P=16, m=1024.0, c="net") == other and ev(16, 1024.0, 1) == other and len(calls) == 1
    # what the native path does not answer goes to the fallback, which raises the exact errors
    for args, kwargs, match in [((), {"P": 4, "m": -1.0}, "m = -1"), ((), {"P": 2.5, "m": 1.0}, "integer"),
                                ((16, 1024.0), {"P": 3}, "given twice"), ((1, 2, 3, 4), {}, "takes 3"),
                                ((), {"P": 16, "m": 1.0, "c": "nvlink"}, "unknown channel"),
                                ((), {"P": 16, "m": 1.0, "c": 7}, "not a channel"),
                                ((), {"P": 16, "m": 10 ** 400}, "too large"),
                                ((), {"P": 16, "m": "1KiB"}, "string"), ((), {"P": 16}, "missing"),
                                ((), {"P": 16, "m": 1.0, "Q": 1}, "no parameter 'Q'")]:
        n = len(calls)
        with pytest.raises(TlopError, match=match):
            ev(*args, **kwargs)
        assert len(calls) == n + 1, (args, kwargs)
    n = len(calls)
    assert ev(P=True, m=1024.0) == h.evaluate(met, P=True, m=1024.0) and len(calls) == n + 1  # bool: fallback
    assert _same(ev(P=[16, 2], m=1024.0), h.evaluate(met, P=[16, 2], m=1024.0))  # arrays: the batch
    # the builtin keeps what it needs alive without the evaluator
    fn = ev.func
    ev._native.set_fallback(ev._call_slow)
    del ev, calls
    gc.collect()
    assert fn(P=16, m=1024.0) == want
    other_ev = compile_algorithm(tlop.load("taulop/allgather").program, "ring_allgather_node", met)
    assert other_ev(P=16, m=1024.0) == tlop.load("taulop/allgather")["ring_allgather_node"].evaluate(
        met, P=16, m=1024.0)
    assert fn(P=16, m=1024.0) == want  # contexts do not mix
    with pytest.raises(TypeError, match="cannot be pickled"):
        import pickle
        pickle.dumps(other_ev)


def test_many_tables_and_parameters_fall_back_cleanly():
    n = 40  # more parameters than the native wrapper takes: the ctypes path answers
    params = ", ".join(f"a{k}: real = {k}" for k in range(n))
    body = " + ".join(f"a{k}" for k in range(n))
    mod = tlop.loads(f'import "taulop/platform.tlop"\nalgorithm f({params}) = ({body}) * 1s\n')
    ev = compile_algorithm(mod.program, "f", make_profile())
    assert ev() == sum(range(n)) and ev(a3=10.0) == sum(range(n)) + 7
    assert _same(ev.batch(a0=np.array([1.0, 2.0])), [sum(range(n)) + 1, sum(range(n)) + 2])


@pytest.mark.parametrize("shift", [0.0, 1.0])
def test_shared_m_segment_only_for_equal_grids(shift):
    # o and L on the same m grid (the m search is shared) or on grids differing in one point
    # (each table searches its own); both must match the interpreter
    rng = np.random.default_rng(11)
    m_o = [1.0, 64.0, 512.0, 4096.0, 65536.0, 1e6]
    m_L = list(m_o)
    m_L[3] += shift
    tables = {"o": {"shm": {"m": m_o, "values": [float(v) for v in rng.uniform(1e-7, 1e-5, 6)]}},
              "L": {"shm": {"m": m_L, "tau": [1.0, 2.0, 4.0],
                            "values": [[float(v) for v in row] for row in rng.uniform(1e-7, 1e-3, (6, 3))]}}}
    prof = make_profile(tables=tables)
    mod = tlop.load("taulop/allgather")
    ev = compile_algorithm(mod.program, "ring_allgather_node", prof)
    P = rng.integers(2, 12, 400).astype(float)
    m = np.concatenate([np.exp(rng.uniform(-1, 15, 390)), m_o, [4096.5, 4097.0, 0.0, 2e6]])
    want = mod["ring_allgather_node"].evaluate(prof, P=P, m=m)
    assert _same(ev.batch(P=P, m=m), want)
    assert all(ev(P=float(p), m=float(x)) == w for p, x, w in zip(P[:50], m[:50], want[:50]))
