"""One definition of each operator (tlop.ir.ops): the constant folder and the interpreter use it,
and the LLVM code the JIT emits agrees with it bit for bit on every operator and function,
including the edge cases (negative %, 0^0, log2 of 0, NaN, infinities, signed zeros)."""

import math

import numpy as np
import pytest

from tlop import ir
from tlop.ir import ops
from tlop.ir.constfold import const_value, fold_node
from tlop.backends.interp import Interpreter
from tlop.backends.jit import compile_algorithm
from tlop.analysis.rules.computed import eval_const

from _jit_helpers import make_profile

N, V, B = ir.Num, ir.Var, ir.Bin

EDGE = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 7.0, -7.0, 0.5, -0.5, 1e308, 5e-324,
        math.inf, -math.inf, math.nan]
SENTINEL = -123456.75  # stands for NaN (a non-finite cost is an error in the JIT's calling paths)
POS_INF, NEG_INF = 918273.5, -918273.5  # stand for +inf and -inf, for the same reason


def _same(a: float, b: float) -> bool:
    """Bit-for-bit equality, NaN equal to NaN (any payload)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return np.float64(a).tobytes() == np.float64(b).tobytes()


def _select(var: str) -> ir.Expr:
    """``EDGE[var]`` as an expression of an int parameter (a chain of run-time ifs, so the
    code generator cannot fold the operands)."""
    out = N(EDGE[-1])
    for k in range(len(EDGE) - 2, -1, -1):
        out = ir.Cond(B("==", V(var), N(float(k))), N(EDGE[k]), out)
    return out


def _nan_to_sentinel(e: ir.Expr) -> ir.Expr:
    """``e`` with NaN, +inf and -inf replaced by finite sentinels (compared bit for bit)."""
    r = V("r")
    finite = ir.Cond(B("==", r, N(math.inf)), N(POS_INF), ir.Cond(B("==", r, N(-math.inf)), N(NEG_INF), r))
    return ir.Let((("r", e),), ir.Cond(B("==", r, r), finite, N(SENTINEL)))


def _jit(body):
    params = (ir.ParamSig("i", "int"), ir.ParamSig("j", "int", N(0.0)))
    alg = ir.Algorithm("op", params, _nan_to_sentinel(body))
    program = ir.Program((), {}, {}, {}, {"op": alg})
    return compile_algorithm(program, "op", make_profile())


IDX = np.arange(len(EDGE), dtype=float)
I2, J2 = (a.ravel() for a in np.meshgrid(IDX, IDX, indexing="ij"))


def _expected(f, *idx):
    with np.errstate(all="ignore"):
        v = float(f(*(EDGE[int(k)] for k in idx)))
    return SENTINEL if math.isnan(v) else POS_INF if v == math.inf else NEG_INF if v == -math.inf else v


@pytest.mark.parametrize("op", list(ops.BINARY))
def test_jit_binary_operator_agrees_with_ops(op):
    ev = _jit(B(op, _select("i"), _select("j")))
    got = ev.batch(i=I2, j=J2)
    for k, (i, j) in enumerate(zip(I2, J2)):
        want = _expected(lambda a, b: ops.binary(op, a, b), i, j)
        assert _same(got[k], want), (op, EDGE[int(i)], EDGE[int(j)], got[k], want)


@pytest.mark.parametrize("name", list(ops.UNARY_FUNCTIONS) + ["neg", "not", "if"])
def test_jit_unary_agrees_with_ops(name):
    x = _select("i")
    body = {"neg": ir.Neg(x), "not": ir.Not(x), "if": ir.Cond(x, N(1.0), N(2.0))}.get(name) or ir.Fn(name, (x,))
    ev = _jit(body)
    got = ev.batch(i=IDX)
    f = {"neg": ops.negate, "not": ops.logical_not, "if": lambda a: 1.0 if ops.truth(a) else 2.0}.get(name) \
        or (lambda a: ops.call(name, [a]))
    for k in range(len(EDGE)):
        want = _expected(f, k)
        assert _same(got[k], want), (name, EDGE[k], got[k], want)


@pytest.mark.parametrize("name", ["min", "max"])
def test_jit_min_max_agree_with_ops(name):
    ev = _jit(ir.Fn(name, (_select("i"), _select("j"), N(0.25))))
    got = ev.batch(i=I2, j=J2)
    for k, (i, j) in enumerate(zip(I2, J2)):
        want = _expected(lambda a, b: ops.call(name, [a, b, 0.25]), i, j)
        assert _same(got[k], want), (name, EDGE[int(i)], EDGE[int(j)], got[k], want)


def test_documented_edge_cases():
    with np.errstate(all="ignore"):
        assert ops.binary("%", -7.0, 3.0) == 2.0 and ops.binary("%", 7.0, -3.0) == -2.0
        assert math.isnan(ops.binary("%", 1.0, 0.0))
        assert ops.binary("^", 0.0, 0.0) == 1.0 and ops.binary("^", 0.0, -1.0) == math.inf
        assert math.isnan(ops.binary("^", -8.0, 1.0 / 3.0))
        assert ops.binary("/", 1.0, 0.0) == math.inf and math.isnan(ops.binary("/", 0.0, 0.0))
        assert ops.call("log2", [0.0]) == -math.inf and math.isnan(ops.call("log2", [-1.0]))
        nan = math.nan
        assert ops.binary("!=", nan, nan) == 1.0 and ops.binary("==", nan, nan) == 0.0
        assert ops.binary("<", nan, 1.0) == 0.0 and ops.binary("and", nan, 1.0) == 1.0
        assert ops.logical_not(nan) == 0.0
        assert math.isnan(ops.call("max", [1.0, nan])) and math.isnan(ops.call("min", [nan, 1.0]))
    # results are Python floats for scalars and arrays for arrays
    assert type(ops.binary("<", 1.0, 2.0)) is float
    assert ops.binary("<", np.array([1.0, 3.0]), 2.0).tolist() == [1.0, 0.0]


@pytest.mark.parametrize("op", list(ops.BINARY))
def test_constant_folder_and_interpreter_use_ops(op):
    interp = Interpreter(ir.Program((), {}, {}, {}, {}), None)
    for a in EDGE:
        for b in EDGE:
            e = B(op, N(a), N(b))
            with np.errstate(all="ignore"):
                want = float(ops.binary(op, a, b))
            assert _same(const_value(e), want)
            assert _same(float(interp.eval(e, {})), want)
            folded = fold_node(e)
            assert folded is None if not math.isfinite(want) else _same(folded, want)
            assert eval_const(e) == folded or (eval_const(e) is None and folded is None)


def test_constant_folder_folds_closed_expressions_only():
    assert const_value(ir.Let((("a", N(2.0)),), B("^", V("a"), N(10.0)))) == 1024.0
    assert const_value(ir.Cond(N(0.0), V("unknown"), N(3.0))) == 3.0  # only the chosen branch
    assert const_value(B("+", V("x"), N(1.0))) is None
    assert const_value(B("+", V("x"), N(1.0)), {"x": 2.0}) == 3.0
    assert const_value(ir.Transmit("T", N(0.0), N(1.0))) is None
    # max propagates NaN as the interpreter does (Python's max would not)
    assert fold_node(ir.Fn("max", (N(1.0), N(math.nan)))) is None
