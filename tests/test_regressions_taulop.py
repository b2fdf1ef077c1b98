"""Regressions of issue 8: ``||`` groups by channel, not by transmission name (item 3); arrays
and scalars agree in the interpreter and the JIT (item 6).  Each failed before the one τ-Lop
reduction (tlop.ir.taulop) and the element-wise interpreter."""

import numpy as np
import pytest

import tlop
from tlop import ir
from tlop.backends.interp import EvalError, Interpreter
from tlop.cli.main import main
from tlop.runtime.diagnostics import TlopError

from conftest import synthetic_profile

N, V, B = ir.Num, ir.Var, ir.Bin
O, A_SHM, A_NET = 1e-6, 1e-9, 4e-9
TAU = [1, 2, 4, 8]
M = [0.0, 1e6]

SOURCE = '''import "taulop/platform.tlop"
/// defined exactly like T
transmission U[shm](m) = o[shm](m) + 2 * L[shm](m, 1)
/// a cheaper transmission on the same channel
transmission V[shm](m) = o[shm](m) + L[shm](m, 1)
algorithm tu(m: bytes) = T[shm](m) || U[shm](m)
algorithm tt(m: bytes) = T[shm](m) || T[shm](m)
algorithm tv(a: bytes, b: bytes) = T[shm](a) || V[shm](b)
algorithm three(a: bytes, b: bytes, c: bytes) = T[shm](a) || U[shm](b) || T[net](c)
algorithm guarded(k: int, m: bytes) = if k > 0 then max i in 1..k: T[shm](m) else 0s
algorithm huge(k: int) = sum i in k..k: 1s
algorithm chans(c: channel, a: bytes, b: bytes) = T[c](a) || T[shm](b)
algorithm pair(a: bytes, b: bytes) = T[shm](a) || T[shm](b)
'''


def linear_table(a):
    return {"m": M, "tau": TAU, "values": [[a * m * t for t in TAU] for m in M]}


@pytest.fixture(scope="module")
def prof():
    return synthetic_profile(
        "linear", channels={"shm": {"transmission": "shm"}, "ib": {"transmission": "rdma"}}, bind={"net": "ib"},
        tables={"o": {"shm": {"m": M, "values": [O, O]}, "ib": {"m": M, "values": [O, O]}},
                "L": {"shm": linear_table(A_SHM), "ib": linear_table(A_NET)}})


def Tshm(m, tau=1):
    return O + 2 * A_SHM * m * tau


def Vshm(m, tau=1):
    return O + A_SHM * m * tau


def Tnet(m, tau=1):
    return O + A_NET * m * tau


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    path = tmp_path_factory.mktemp("red") / "red.tlop"
    path.write_text(SOURCE, encoding="utf-8")
    return tlop.load(path), path


def both(module, prof, name, **args):
    """The interpreter's and the JIT's value (they must be equal)."""
    handle = module[0][name]
    a = handle.evaluate(prof, **args)
    b = handle.compile(prof)(**args)
    assert b == pytest.approx(a, rel=1e-12)
    return a


# ----------------------------------------------------------------------------- same channel = A2

def test_same_channel_is_a2_whatever_the_name(module, prof):
    # issue 8 item 3: T[shm](m) || U[shm](m) with U defined like T must equal T || T
    tu = both(module, prof, "tu", m=1000.0)
    tt = both(module, prof, "tt", m=1000.0)
    assert tu == tt == pytest.approx(Tshm(1000, 2))


def test_same_channel_prints_as_a2(module, capsys):
    assert main(["show", str(module[1]), "tu"]) == 0
    out = capsys.readouterr().out
    assert "max" not in out and "2‖T^shm(m)" in out


def test_mixed_names_each_increment_carried_by_its_own_item(module, prof):
    # the smaller size's increment is carried (by both items: 2‖) by the transmission of the
    # item whose size ends it; the remainder by the larger item's own transmission
    assert both(module, prof, "tv", a=300.0, b=1000.0) == pytest.approx(Tshm(300, 2) + Vshm(700))
    assert both(module, prof, "tv", a=1000.0, b=300.0) == pytest.approx(Vshm(300, 2) + Tshm(700))
    # equal sizes: the tie goes to the first operand
    assert both(module, prof, "tv", a=500.0, b=500.0) == pytest.approx(Tshm(500, 2))


def test_channels_group_across_names_and_a3_across_channels(module, prof):
    got = both(module, prof, "three", a=300.0, b=1000.0, c=800.0)
    assert got == pytest.approx(max(Tshm(300, 2) + Tshm(700), Tnet(800)))


def test_channel_parameter_decides_the_grouping(module, prof):
    # c = shm: one channel (A2); c = net: two channels (A3)
    assert both(module, prof, "chans", c="shm", a=300.0, b=1000.0) == pytest.approx(Tshm(300, 2) + Tshm(700))
    assert both(module, prof, "chans", c="net", a=300.0, b=1000.0) == pytest.approx(max(Tnet(300), Tshm(1000)))


# ----------------------------------------------------------------------------- arrays = scalars

def test_array_if_evaluates_each_branch_only_where_taken(module, prof):
    # issue 8 item 6: the max over 1..0 in the untaken branch must not fail for k = 0
    h = module[0]["guarded"]
    k = np.array([0, 1, 3])
    got = h.evaluate(prof, k=k, m=1000.0)
    want = [h.evaluate(prof, k=int(x), m=1000.0) for x in k]
    assert list(got) == want == [0.0, pytest.approx(Tshm(1000)), pytest.approx(Tshm(1000))]
    assert list(h.compile(prof).batch(k=k, m=1000.0)) == want


def test_array_a2_never_looks_up_an_increment_it_drops(module):
    # equal sizes leave a zero increment; on a grid starting at 1 B with out_of_grid = "error"
    # looking it up would fail, and no scalar evaluation looks it up
    grid = [1.0, 1e6]
    strict = synthetic_profile(tables={"o": {"shm": {"m": grid, "values": [O, O]}},
                                       "L": {"shm": {"m": grid, "tau": TAU,
                                                     "values": [[A_SHM * m * t for t in TAU] for m in grid]}}})
    strict = strict.with_interpolation(out_of_grid="error")
    h = module[0]["pair"]
    a, b = np.array([100.0, 100.0]), np.array([100.0, 300.0])
    want = [h.evaluate(strict, a=x, b=y) for x, y in zip(a, b)]
    assert list(h.evaluate(strict, a=a, b=b)) == pytest.approx(want, rel=1e-12)
    assert list(h.compile(strict).batch(a=a, b=b)) == pytest.approx(want, rel=1e-12)


def test_reduction_bounds_beyond_2_53_are_the_same_error_in_every_engine(module, prof):
    # issue 8 item 6: 1e19 gave 1 s in the interpreter and a bare "evaluation error" in the JIT
    h = module[0]["huge"]
    ev = h.compile(prof)
    msgs = []
    for f in (lambda: h.evaluate(prof, k=1e19), lambda: ev(k=1e19), lambda: ev.batch(k=np.array([1.0, 1e19])),
              lambda: h.evaluate(prof, k=np.array([1.0, 1e19]))):
        with pytest.raises(TlopError) as err:
            f()
        msgs.append(str(err.value))
    for m in msgs:
        assert "sum range bound 1e+19 is beyond ±2^53 (9007199254740992)" in m
    assert "(batch point (1,))" in msgs[2]
    # 2^53 itself still counts
    assert h.evaluate(prof, k=2.0 ** 53) == ev(k=2.0 ** 53) == 1.0


def test_array_reduction_checks_each_element_as_a_scalar():
    # the terms limit applies per element: two short ranges far apart are fine
    e = ir.Reduce("sum", "i", V("lo"), B("+", V("lo"), N(2.0)), V("i"))
    it = Interpreter(ir.Program((), {}, {}, {}, {}), None)
    los = [0.0, 5e15, -3.0]
    got = it.eval(e, {"lo": np.array(los)})
    assert list(got) == [it.eval(e, {"lo": x}) for x in los]
    assert got[0] == 3.0 and got[2] == -6.0
    # an empty max fails for the array exactly when it fails for some element
    m = ir.Reduce("max", "i", N(1.0), V("k"), V("i"))
    assert list(it.eval(m, {"k": np.array([1.0, 4.0])})) == [1.0, 4.0]
    with pytest.raises(EvalError, match="max over an empty range"):
        it.eval(m, {"k": np.array([1.0, 0.0])})


def test_array_channel_selects_per_element(prof, module):
    program = module[0].program
    body = ir.Transmit("T", ir.Cond(B(">", V("k"), N(1.0)), N(1.0), N(0.0)), V("m"))
    it = Interpreter(program, prof)
    got = it.eval(body, {"k": np.array([0.0, 2.0, 1.0]), "m": np.array([10.0, 20.0, 30.0])})
    want = [it.eval(body, {"k": k, "m": m}) for k, m in ((0.0, 10.0), (2.0, 20.0), (1.0, 30.0))]
    assert list(got) == want
    assert want[1] == pytest.approx(Tnet(20))


