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
* ``a div b`` is ``floor(a / b)`` (``/`` then ``floor``; exact floored division for integers
  below 2^53, where ``a / b`` never rounds onto the next integer; ``a div 0`` is ``±inf`` or NaN);
* ``a xor b`` and ``a & b`` are the bitwise operations on the two's-complement 64-bit integers
  ``a`` and ``b``, defined when both are integers of magnitude ``< 2^53`` (NaN otherwise; the
  result is then exact);
* ``a << b`` is ``a · 2^b`` and ``a >> b`` is ``floor(a · 2^−b)``, defined when ``a`` is an
  integer of magnitude ``< 2^53`` and ``b`` an integer in ``0 … 63`` (NaN otherwise);
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

from tlop.ir.nodes import ARITH_OPS, COMPARE_OPS, FUNCTIONS, INT_OPS, LOGIC_OPS

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


#: integer operands of ``xor``, ``&``, ``<<`` and ``>>`` are below this in magnitude
INT_LIMIT = float(2 ** 53)


def _result(r):
    return float(r) if np.ndim(r) == 0 else r


def _int_ok(x):
    return (np.floor(x) == x) & (np.abs(x) < INT_LIMIT)


def _div(a, b):
    return _result(np.floor(np.true_divide(a, b)))


def _bitwise(f):
    def op(a, b):
        a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
        ok = _int_ok(a) & _int_ok(b)
        ai = np.where(ok, a, 0.0).astype(np.int64)
        bi = np.where(ok, b, 0.0).astype(np.int64)
        return _result(np.where(ok, f(ai, bi).astype(float), np.nan))
    return op


def _shift(left: bool):
    def op(a, b):
        a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
        ok = _int_ok(a) & (np.floor(b) == b) & (b >= 0) & (b <= 63)
        scale = np.ldexp(1.0, np.where(ok, b, 0.0).astype(np.int64) * (1 if left else -1))
        r = a * scale if left else np.floor(a * scale)
        return _result(np.where(ok, r, np.nan))
    return op


#: operator name -> function of two floats or arrays
BINARY = {
    "div": _div, "xor": _bitwise(np.bitwise_xor), "&": _bitwise(np.bitwise_and),
    "<<": _shift(True), ">>": _shift(False),
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "^": _pow, "%": np.mod,
    "<": _compare(np.less), "<=": _compare(np.less_equal), ">": _compare(np.greater),
    ">=": _compare(np.greater_equal), "==": _compare(np.equal), "!=": _compare(np.not_equal),
    "and": _and, "or": _or,
}
assert set(BINARY) == set(ARITH_OPS) | set(COMPARE_OPS) | set(LOGIC_OPS) | set(INT_OPS)


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
    """``a op b`` for an operator of ``ARITH_OPS``, ``COMPARE_OPS``, ``LOGIC_OPS`` or ``INT_OPS``."""
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
