"""The meaning of every operator and built-in function of the cost IR, on floats and numpy arrays.

What it does: one definition of each operator of :data:`tlop.ir.ARITH_OPS`,
:data:`~tlop.ir.COMPARE_OPS`, :data:`~tlop.ir.LOGIC_OPS`, unary ``-`` and ``not``, and each
function of :data:`~tlop.ir.FUNCTIONS`, as numpy operations (IEEE doubles, numpy broadcasting).
The reference interpreter and the constant folder (:mod:`tlop.ir.constfold`) call these
functions; the LLVM code generator emits its own instructions and the test suite checks that
they agree with these on every operator, including the edge cases below.

The rules, exactly:

* ``+ - * /`` are IEEE double operations: ``x / 0`` is ``±inf`` (``0 / 0`` is NaN), never an
  exception;
* ``a ^ b`` is C's ``pow`` (``numpy.float_power``): ``0 ^ 0 = 1``, ``0 ^ -1 = inf``,
  ``(-inf) ^ 0.5 = inf``, a negative finite base with a non-integer exponent gives NaN;
* ``a % b`` is the *floored* remainder (the sign of ``b``, like Python's and ``numpy.mod``):
  ``-7 % 3 = 2``, ``7 % -3 = -2``; ``a % 0`` is NaN;
* comparisons give 1.0 or 0.0; any comparison with NaN is false except ``!=``, which is true;
* ``and``, ``or``, ``not`` and ``if`` read any non-zero value as true — NaN included — and give
  1.0 or 0.0;
* ``log2 0 = -inf``, ``log2`` / ``ln`` / ``sqrt`` of a negative number is NaN; ``min`` and ``max``
  propagate NaN and fold their arguments left to right: ``max(a, b)`` is ``a`` when ``a >= b`` or
  ``a`` is NaN, else ``b`` (so ``max(0, -0) = 0`` and ``max(-0, 0) = -0``).

What it does not do: evaluate expressions (the interpreter and the constant folder walk the IR),
check types, or raise: every operator is total on doubles.  numpy warns about division by
zero and invalid operations; callers run these functions under ``numpy.errstate(all="ignore")``
(the interpreter and the constant folder do).
"""

from __future__ import annotations

import numpy as np

from tlop.ir.nodes import ARITH_OPS, COMPARE_OPS, FUNCTIONS, LOGIC_OPS

__all__ = ["binary", "negate", "logical_not", "truth", "call", "maximum", "minimum", "BINARY",
           "UNARY_FUNCTIONS"]


def _pow(a, b):
    # float_power is C's pow for every shape; numpy.power takes shortcuts (sqrt, square,
    # reciprocal) for some scalar exponents, which differ from pow on -0 and -inf, so an
    # array evaluation could differ from a scalar one
    return np.float_power(a, b)


def _compare(f):
    def op(a, b):
        r = f(a, b)
        return r.astype(float) if isinstance(r, np.ndarray) else float(r)
    return op


def _and(a, b):
    r = np.logical_and(np.not_equal(a, 0), np.not_equal(b, 0))
    return r.astype(float) if isinstance(r, np.ndarray) else float(r)


def _or(a, b):
    r = np.logical_or(np.not_equal(a, 0), np.not_equal(b, 0))
    return r.astype(float) if isinstance(r, np.ndarray) else float(r)


#: operator name -> function of two floats or arrays
BINARY = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "^": _pow, "%": np.mod,
    "<": _compare(np.less), "<=": _compare(np.less_equal), ">": _compare(np.greater),
    ">=": _compare(np.greater_equal), "==": _compare(np.equal), "!=": _compare(np.not_equal),
    "and": _and, "or": _or,
}
assert set(BINARY) == set(ARITH_OPS) | set(COMPARE_OPS) | set(LOGIC_OPS)


def _unary(f):
    return lambda x: f(np.asarray(x, dtype=float))


#: one-argument built-in function name -> function of a float or array
UNARY_FUNCTIONS = {
    "ceil": _unary(np.ceil), "floor": _unary(np.floor), "log2": _unary(np.log2), "abs": _unary(np.abs),
    "sqrt": _unary(np.sqrt), "exp": _unary(np.exp), "ln": _unary(np.log),
}
assert set(UNARY_FUNCTIONS) | {"min", "max"} == set(FUNCTIONS)


def maximum(a, b):
    """``max(a, b)``: ``a if (a >= b or a is NaN) else b`` — NaN propagates, and of two equal
    values (``0`` and ``-0``) the first is kept.  (``numpy.maximum``'s vector loops do not
    promise which zero they return, hence this definition.)"""
    r = np.where(np.greater_equal(a, b) | np.isnan(a), a, b)
    return float(r) if r.ndim == 0 else r


def minimum(a, b):
    """``min(a, b)``: ``a if (a <= b or a is NaN) else b`` (see :func:`maximum`)."""
    r = np.where(np.less_equal(a, b) | np.isnan(a), a, b)
    return float(r) if r.ndim == 0 else r


def _scalar(x):
    """0-d arrays and numpy scalars as Python floats, so scalar inputs give scalar outputs."""
    if isinstance(x, np.ndarray):
        return float(x) if x.ndim == 0 else x
    return float(x)


def binary(op: str, a, b):
    """``a op b`` for an operator of ``ARITH_OPS``, ``COMPARE_OPS`` or ``LOGIC_OPS``."""
    return _scalar(BINARY[op](a, b))


def negate(a):
    """``-a``."""
    return _scalar(np.negative(a))


def logical_not(a):
    """``not a``: 1.0 where ``a`` is 0, else 0.0 (NaN is true, so ``not NaN`` is 0.0)."""
    r = np.equal(a, 0)
    return r.astype(float) if isinstance(r, np.ndarray) else float(r)


def truth(a):
    """Whether ``a`` counts as true (``a != 0``; NaN is true), as a bool or a bool array."""
    return np.not_equal(a, 0)


def call(name: str, args):
    """The built-in function ``name`` applied to ``args`` (``min``/``max`` take two or more)."""
    if name == "min" or name == "max":
        pick = minimum if name == "min" else maximum
        out = args[0]
        for a in args[1:]:
            out = pick(out, a)
        return _scalar(out)
    return _scalar(UNARY_FUNCTIONS[name](args[0]))
