"""The IR visitor base classes: every back end handles every node class, an unhandled node is an
error naming the node and the visitor, and the mutator keeps what it does not change."""

import pytest

from tlop import ir
from tlop.ir.visitor import ExprFunctor, ExprMutator, UnhandledNode, node_classes
from tlop.backends.interp import Interpreter
from tlop.backends.jit.codegen import CodeGen
from tlop.analysis.smt import Encoder

N, V, B = ir.Num, ir.Var, ir.Bin


def test_node_classes_are_the_ir():
    names = {c.__name__ for c in node_classes()}
    assert {"Num", "Var", "Bin", "Cond", "Let", "Reduce", "Lookup", "Transmit", "Conc", "ParComp", "Xmit"} <= names


@pytest.mark.parametrize("backend", [Interpreter, CodeGen, Encoder])
def test_every_back_end_decides_every_node_class(backend):
    assert backend.unhandled() == ()


def test_an_unhandled_node_names_the_node_and_the_visitor():
    class Partial(ExprFunctor):
        def visit_Num(self, e):
            return e.value

    assert Partial().visit(N(2.0)) == 2.0
    with pytest.raises(UnhandledNode, match=r"Partial has no method for IR node Bin \(define Partial.visit_Bin\)"):
        Partial().visit(B("+", N(1.0), N(2.0)))
    assert ir.Bin in Partial.unhandled() and ir.Num not in Partial.unhandled()


def test_a_new_node_class_is_unhandled_until_a_back_end_decides():
    class Fresh(ir.Expr):
        pass
    try:
        assert Fresh in Interpreter.unhandled()
        with pytest.raises(UnhandledNode, match="Interpreter has no method for IR node Fresh"):
            Interpreter(ir.Program((), {}, {}, {}, {}), None).eval(Fresh(), {})
    finally:
        del Fresh
        import gc
        gc.collect()


def test_mutator_rebuilds_only_what_changes_and_keeps_spans():
    class Double(ExprMutator):
        def visit_Num(self, e):
            return N(e.value * 2) if e.value == 3.0 else e

    keep = B("*", V("x"), N(5.0), span="kept")
    e = B("+", keep, N(3.0), span="outer")
    out = Double().visit(e)
    assert out == B("+", keep, N(6.0))
    assert out.lhs is keep  # unchanged subtree: the same object
    assert out.span == "outer"
    assert Double().visit(keep) is keep
