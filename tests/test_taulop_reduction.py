"""The one τ-Lop reduction of a parallel composition (tlop.ir.taulop.expand_parcomp): the
expressions it builds, what it decides at expansion time, and its semantics at the edges."""

import pytest

from tlop import ir
from tlop.ir.taulop import ExpandParComps, expand_parcomp
from tlop.backends.interp import Interpreter
from tlop.backends.jit import compile_algorithm

from conftest import synthetic_profile
from test_regressions_taulop import M, O, Tshm, linear_table, A_SHM

N, V, B = ir.Num, ir.Var, ir.Bin



def X(c, m, w=N(1.0), name="T"):
    return ir.Xmit(w, name, c, m)


def pc(*ops):
    return ir.ParComp(tuple(tuple(op) for op in ops))


def test_constant_channels_and_sizes_give_the_sorted_a2_form():
    # 000 eq. 9: T(124) ‖ T(97) ‖ T(35) = 3‖T(35) + 2‖T(62) + T(27)
    got = expand_parcomp(pc([X(N(0.0), N(124.0))], [X(N(0.0), N(97.0))], [X(N(0.0), N(35.0))]))
    assert got.static
    assert got.expr == B("+", B("+", ir.Conc(N(3.0), ir.Transmit("T", N(0.0), N(35.0))),
                                 ir.Conc(N(2.0), ir.Transmit("T", N(0.0), N(62.0)))),
                         ir.Transmit("T", N(0.0), N(27.0)))


def test_decided_orders_fold_and_undecided_ones_stay_run_time_tests():
    e = pc([X(N(0.0), V("a"))], [X(N(0.0), V("b"), name="U")])
    a, b = V("a"), V("b")
    facts = {B("<=", a, b): True, B("<", b, a): False, B(">=", a, N(0.0)): True, B("<=", a, N(0.0)): False,
             B("<=", B("-", b, a), N(0.0)): False}
    got = expand_parcomp(e, facts.get, share=False)
    assert got.static
    assert got.expr == B("+", ir.Conc(N(2.0), ir.Transmit("T", N(0.0), a)), ir.Transmit("U", N(0.0), B("-", b, a)))
    # with a ≥ 0 only known, and X(0) = 0 allowed (A1), the increment needs no test either
    facts.pop(B("<=", B("-", b, a), N(0.0)))
    facts[B(">=", B("-", b, a), N(0.0))] = True
    assert expand_parcomp(e, facts.get, share=False).static is False
    assert expand_parcomp(e, facts.get, share=False, zero_size_free=True).expr == got.expr
    loose = expand_parcomp(e)
    assert not loose.static
    assert any(isinstance(n, ir.Cond) for n in ir.walk(loose.expr))


def test_symbolic_channels_expand_to_per_item_groups():
    e = pc([X(V("c"), V("a"))], [X(N(1.0), V("b"))])
    got = expand_parcomp(e)
    assert not got.static
    names = {n.name for n in ir.walk(got.expr) if isinstance(n, ir.Var)}
    assert {"c", "a", "b"} <= names
    assert ExpandParComps().visit(B("+", e, N(1.0))) == B("+", got.expr, N(1.0))


def test_negative_sizes_count_as_zero():
    # prev = max(0, …): a negative size neither costs nor lowers the next increment
    prof = synthetic_profile(tables={"o": {"shm": {"m": M, "values": [O, O]}},
                                     "L": {"shm": linear_table(A_SHM)}})
    tables = {"o": ir.TableSig("o", True, ("m",), None), "L": ir.TableSig("L", True, ("m", "tau"), 1)}
    mv = V("m")
    body = B("+", ir.Lookup("o", N(0.0), (mv,)), B("*", N(2.0), ir.Lookup("L", N(0.0), (mv, N(1.0)))))
    trans = {"T": (ir.TransmissionVariant("T", 0, None, "m", body),)}
    e = pc([X(N(0.0), V("a"))], [X(N(0.0), V("b"))])
    alg = ir.Algorithm("g", (ir.ParamSig("a", "real"), ir.ParamSig("b", "real")), e)
    program = ir.Program(("shm",), tables, {}, trans, {"g": alg})
    it = Interpreter(program, prof)
    assert it.eval(e, {"a": -5.0, "b": 10.0}) == pytest.approx(Tshm(10))
    assert it.eval(e, {"a": -5.0, "b": -1.0}) == 0.0
    ev = compile_algorithm(program, "g", prof)
    assert ev(a=-5.0, b=10.0) == pytest.approx(Tshm(10))
