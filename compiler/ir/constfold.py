"""The constant folder: the value of an IR expression that needs no profile and no unknowns.

What it does: :func:`const_value` computes the value of a *closed* expression — numerals,
operators, built-in functions, ``if`` and ``let`` over them, and variables given in ``env`` —
with the one definition of each operator in :mod:`tlop.ir.ops`, so a folded constant is
bit-for-bit what the interpreter computes at run time.  :func:`fold_node` applies the operator
of one node to numeral children (the simplifier's ``fold`` rule and side-condition decisions use
it).

What it does not do: rewrite expressions (the simplifier does that, rule by rule), evaluate
reductions, profile tables, transmissions or parallel compositions (they return None), or
decide whether a non-finite result is acceptable (callers that build numerals refuse them).
"""

from __future__ import annotations

import math
from typing import Mapping, Optional

import numpy as np

from tlop.ir import nodes as ir
from tlop.ir import ops

__all__ = ["const_value", "fold_node", "apply"]


def apply(e: ir.Expr, values: tuple):
    """The operator of node ``e`` (a Bin, Neg, Not or Fn) applied to the values of its
    children, in :func:`tlop.ir.children` order."""
    if isinstance(e, ir.Bin):
        return ops.binary(e.op, values[0], values[1])
    if isinstance(e, ir.Neg):
        return ops.negate(values[0])
    if isinstance(e, ir.Not):
        return ops.logical_not(values[0])
    if isinstance(e, ir.Fn):
        return ops.call(e.name, values)
    raise TypeError(f"not an operator node: {type(e).__name__}")


def fold_node(e: ir.Expr) -> Optional[float]:
    """The value of a Bin, Neg, Not or Fn whose children are all numerals, when it is finite;
    None otherwise (non-finite values are not folded into numerals)."""
    if not isinstance(e, (ir.Bin, ir.Neg, ir.Not, ir.Fn)):
        return None
    kids = ir.children(e)
    if not all(isinstance(k, ir.Num) for k in kids):
        return None
    if isinstance(e, ir.Bin) and e.op not in ops.BINARY:
        return None
    if isinstance(e, ir.Fn) and e.name not in ir.FUNCTIONS:
        return None
    with np.errstate(all="ignore"):
        v = float(apply(e, tuple(k.value for k in kids)))
    return v if math.isfinite(v) else None


def const_value(e: ir.Expr, env: Optional[Mapping[str, float]] = None) -> Optional[float]:
    """The value of ``e`` when it is closed (given the scalar values of ``env``), else None.

    ``if`` folds when its test does, and then needs only the chosen branch (the scalar
    semantics).  Non-finite values are returned as they are."""
    with np.errstate(all="ignore"):
        return _value(e, env or {})


def _value(e, env):
    if isinstance(e, ir.Num):
        return float(e.value)
    if isinstance(e, ir.Var):
        v = env.get(e.name)
        return None if v is None else float(v)
    if isinstance(e, (ir.Bin, ir.Neg, ir.Not, ir.Fn)):
        vals = []
        for k in ir.children(e):
            v = _value(k, env)
            if v is None:
                return None
            vals.append(v)
        if isinstance(e, ir.Bin) and e.op not in ops.BINARY or isinstance(e, ir.Fn) and e.name not in ir.FUNCTIONS:
            return None
        return float(apply(e, tuple(vals)))
    if isinstance(e, ir.Cond):
        t = _value(e.test, env)
        if t is None:
            return None
        return _value(e.then_ if t != 0 else e.else_, env)
    if isinstance(e, ir.Let):
        inner = dict(env)
        for name, v in e.bindings:
            x = _value(v, env)
            if x is None:
                inner.pop(name, None)
            else:
                inner[name] = x
        return _value(e.body, inner)
    return None
