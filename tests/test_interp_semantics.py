"""The reference interpreter's τ-Lop semantics on a linear synthetic platform.

With o(m) = O and L(m, τ) = a·m·τ (linear in m and τ), every rule of docs/semantics.rst has a
closed form that is easy to compute by hand.
"""

import numpy as np
import pytest

import tlop
from tlop.runtime.diagnostics import TlopError

from conftest import synthetic_profile

O, A_SHM, A_NET = 1e-6, 1e-9, 4e-9
TAU = [1, 2, 4, 8]
M = [0.0, 1e6]


def linear_table(a):
    return {"m": M, "tau": TAU, "values": [[a * m * t for t in TAU] for m in M]}


@pytest.fixture(scope="module")
def prof():
    return synthetic_profile(
        "linear",
        channels={"shm": {"transmission": "shm"}, "ib": {"transmission": "rdma"}},
        bind={"net": "ib"},
        tables={"o": {"shm": {"m": M, "values": [O, O]}, "ib": {"m": M, "values": [O, O]}},
                "L": {"shm": linear_table(A_SHM), "ib": linear_table(A_NET)}})


def Tshm(m, tau=1):
    return O + 2 * A_SHM * m * tau


def Tnet(m, tau=1):
    return O + A_NET * m * tau


def cost(prof, body, **args):
    params = ", ".join(f"{k}: bytes" for k in args)
    mod = tlop.loads(f'import "taulop/platform.tlop"\nalgorithm a({params}) = {body}\n')
    return mod["a"].evaluate(prof, **args)


def test_concurrency_scales_transfers_not_overheads(prof):
    assert cost(prof, "2 || T[shm](m)", m=1000) == pytest.approx(Tshm(1000, 2))
    assert cost(prof, "2 || (3 || T[shm](m))", m=1000) == pytest.approx(Tshm(1000, 6))
    assert cost(prof, "2 || o[shm](m)", m=1000) == pytest.approx(O)


def test_a2_on_one_channel(prof):
    # T(m1) ‖ T(m2) = 2‖T(m1) + T(m2 − m1), whichever side is larger
    assert cost(prof, "T[shm](a) || T[shm](b)", a=300, b=1000) == pytest.approx(Tshm(300, 2) + Tshm(700))
    assert cost(prof, "T[shm](a) || T[shm](b)", a=1000, b=300) == pytest.approx(Tshm(300, 2) + Tshm(700))


def test_a2_nary_sorted(prof):
    # 000 eq. 9 shape: T(124) ‖ T(97) ‖ T(35) = 3‖T(35) + 2‖T(62) + T(27)
    got = cost(prof, "T[net](a) || T[net](b) || T[net](c)", a=124, b=97, c=35)
    assert got == pytest.approx(Tnet(35, 3) + Tnet(62, 2) + Tnet(27))


def test_equal_sizes_have_no_zero_remainder(prof):
    assert cost(prof, "T[shm](a) || T[shm](a)", a=500) == pytest.approx(Tshm(500, 2))


def test_a3_takes_the_max_across_channels(prof):
    assert cost(prof, "T[shm](a) || T[net](b)", a=500, b=100) == pytest.approx(max(Tshm(500), Tnet(100)))


def test_eq6_lock_step_phases(prof):
    # [T0(ma) + T1(mb)] ‖ [T0(ma) + T1(mb)] = 2‖T0(ma) + 2‖T1(mb)   (000 eq. 6)
    got = cost(prof, "(T[shm](a) + T[net](b)) || (T[shm](a) + T[net](b))", a=134, b=158)
    assert got == pytest.approx(Tshm(134, 2) + Tnet(158, 2))


def test_eq8_summa_pivot_column(prof):
    # (T0(134) + T1(158)) ‖ (T0(116) + T1(104)) = 2‖T0(116) + T0(18) + 2‖T1(104) + T1(54)   (000 eq. 8)
    got = cost(prof, "(T[shm](a) + T[net](b)) || (T[shm](c) + T[net](d))", a=134, b=158, c=116, d=104)
    assert got == pytest.approx(Tshm(116, 2) + Tshm(18) + Tnet(104, 2) + Tnet(54))


def test_multiplicity_inside_a_composition(prof):
    # 2‖T(a) ‖ T(b) with a < b: three transfers of a, then one of b − a
    got = cost(prof, "2 || T[shm](a) || T[shm](b)", a=100, b=400)
    assert got == pytest.approx(Tshm(100, 3) + Tshm(300))


def test_arrays_broadcast(prof):
    a = np.array([100.0, 600.0])
    b = np.array([[300.0], [50.0]])
    got = cost(prof, "T[shm](a) || T[shm](b)", a=a, b=b)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    want = Tshm(lo, 2) + np.where(hi > lo, Tshm(hi - lo), 0.0)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_sum_with_array_bounds():
    mod = tlop.loads("algorithm a(n: int) = sum i in 1 .. n: i * 1s\n")
    np.testing.assert_allclose(mod["a"].evaluate(None, n=np.array([0, 1, 4])), [0, 1, 10])


def test_empty_max_is_an_error():
    mod = tlop.loads("algorithm a(n: int) = max i in 1 .. n: i * 1s\n")
    assert mod["a"].evaluate(None, n=3) == 3
    with pytest.raises(TlopError, match="empty range"):
        mod["a"].evaluate(None, n=0)


def test_conditional_on_arrays():
    mod = tlop.loads("algorithm a(n: int) = if n > 2 then n * 1s else 0.5s\n")
    np.testing.assert_allclose(mod["a"].evaluate(None, n=np.array([1, 3])), [0.5, 3])


def test_defs_inline_without_capture():
    mod = tlop.loads("def f(x: int, y: int) -> int = x - y\n"
                     "algorithm a(x: int, y: int) = f(y, x) * 1s\n")
    assert mod["a"].evaluate(None, x=5, y=2) == -3


def test_named_arguments_and_defaults(prof):
    mod = tlop.loads('import "taulop/bcast.tlop"\n'
                     'algorithm a(m: bytes) = binomial_bcast(4, m, c = net) + linear_bcast(P = 2, m = m)\n')
    want = Tnet(1000) + Tnet(1000, 2) + Tshm(1000)
    assert mod["a"].evaluate(prof, m=1000) == pytest.approx(want)


def test_constraints_are_checked_elementwise(prof):
    alg = tlop.load("taulop/bcast")["binomial_bcast"]
    with pytest.raises(TlopError, match=r"P = 0 violates the constraint P >= 1 \(1 of 3 values\)"):
        alg.evaluate(prof, P=np.array([1, 0, 4]), m=1.0)
    with pytest.raises(TlopError, match="must be an integer"):
        alg.evaluate(prof, P=2.5, m=1.0)
    with pytest.raises(TlopError, match="has no parameter 'Q'"):
        alg.evaluate(prof, P=2, m=1.0, Q=3)


def test_missing_table_names_the_lookup(prof):
    mod = tlop.load("plogp/bcast")
    with pytest.raises(TlopError, match="table 'g' is missing from profile 'linear'") as e:
        mod["flat"].evaluate(prof, P=4, m=1.0)
    assert e.value.span is not None and e.value.span.file.endswith("plogp/bcast.tlop")


def test_tlop_path_is_searched(tmp_path, monkeypatch):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "mine.tlop").write_text("/// one microsecond\nalgorithm one() = 1us\n")
    monkeypatch.setenv("TLOP_PATH", str(lib))
    mod = tlop.loads('import "mine.tlop"\nalgorithm two() = one() + one()\n', base=tmp_path / "elsewhere")
    assert mod["two"].evaluate(None) == pytest.approx(2e-6)
    assert tlop.load("mine")["one"].evaluate(None) == pytest.approx(1e-6)


def test_huge_reduction_is_refused_not_hung(prof):
    mod = tlop.loads('import "taulop/platform.tlop"\nalgorithm a(n: int, m: bytes) = sum i in 1 .. n: T[shm](m)\n')
    with pytest.raises(TlopError, match="longer than tlop evaluates"):
        mod["a"].evaluate(prof, n=2 ** 40, m=1.0)
    ev = mod["a"].compile(prof)  # the JIT refuses the same range instead of looping for hours
    with pytest.raises(TlopError, match="longer than tlop evaluates"):
        ev(n=2 ** 40, m=1.0)
    with pytest.raises(TlopError, match="longer than tlop evaluates"):
        ev.batch(n=np.array([3, 2 ** 40]), m=1.0)
    assert ev(n=10 ** 3, m=1.0) == pytest.approx(mod["a"].evaluate(prof, n=10 ** 3, m=1.0), rel=1e-12)


def test_argument_too_large_for_a_double(prof):
    alg = tlop.load("taulop/bcast")["binomial_bcast"]
    with pytest.raises(TlopError, match="too large for a double"):
        alg.evaluate(prof, P=10 ** 400, m=1.0)
    with pytest.raises(TlopError, match="too large for a double"):
        alg.compile(prof)(P=10 ** 400, m=1.0)


def test_engines_agree_on_degenerate_batches(prof):
    alg = tlop.load("taulop/bcast")["binomial_bcast"]
    ev = alg.compile(prof)
    assert alg.evaluate(prof, P=np.array([]), m=1.0).shape == (0,) == ev.batch(P=np.array([]), m=1.0).shape
    for bad in ({"P": 2 ** 1024, "m": 1.0}, {"P": [2, 4], "m": 1.0, "c": None}):
        with pytest.raises(TlopError):
            alg.evaluate(prof, **bad)
        with pytest.raises(TlopError):
            ev.batch(**bad)
