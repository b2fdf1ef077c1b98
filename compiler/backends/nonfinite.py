"""Why a cost is not finite: the operation that produced the infinity or the NaN.

What it does: a cost that is ``±inf`` or NaN is an error in every engine (a time cannot be
infinite, and ``-inf s`` printed as a result is nonsense).  :func:`check_finite` raises it, with
a message naming what produced the value — ``log2 of 0``, ``division by zero``, ``0 / 0``,
``sqrt of a negative number (-1)``, ``an overflow (1e+200 * 1e+200)``, a table lookup — and the
span of that operation (file:line:col and a caret).  To find it, the point is evaluated again,
as a scalar, by :class:`_Tracer`, an :class:`~tlop.backends.interp.Interpreter` that records, for
each value it computes, where its non-finite part came from: the first non-finite operand that
the value was computed from (for ``let`` and ``if``, the body or the branch taken; for a
transmission, its size), or the node itself when all its operands were finite.  Following the
result down this chain ends at the operation to blame, even when another infinity was
produced and absorbed on the way (``min(1/0, 1) + log2(0)`` blames ``log2``).

For array results the first non-finite element is explained (its point evaluated alone, which
gives the same value: arrays are many scalars).

What it does not do: decide that a cost is wrong when it is finite, or explain errors other
than non-finite values (those are raised by the interpreter with their own messages).  The
JIT calls it on the failing point, so both engines say the same words.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional

import numpy as np

from tlop import ir
from tlop.backends.interp import Interpreter
from tlop.ir.visitor import ExprFunctor
from tlop.runtime.diagnostics import TlopError

__all__ = ["check_finite", "explain_nonfinite", "nonfinite_error", "NonFiniteCost"]


class NonFiniteCost(TlopError):
    """An algorithm's cost is ``±inf`` or NaN at some point."""


def _finite(v) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return True  # not a number (never the case for IR values)


class _Tracer(Interpreter):
    """The interpreter, recording (value, blame) of every node it evaluates; ``blame`` is None
    for finite values, else ``(node, operand values, value, span)`` of the origin."""

    def __init__(self, program, profile, mapping=None):
        super().__init__(program, profile, mapping)
        self.frames: list = [[]]
        self.lets: list = []  # stacks of {name: blame} for let-bound names and transmission sizes
        self.spans: list = []

    def _eval(self, e, env, conc):
        self.frames.append([])
        pushed = getattr(e, "span", None) is not None
        if pushed:
            self.spans.append(e.span)
        try:
            v = ExprFunctor.visit(self, e, env, conc)
        finally:
            kids = self.frames.pop()
            if pushed:
                self.spans.pop()
        blame = None
        if not _finite(v):
            if isinstance(e, (ir.Let, ir.Cond)) and kids:
                blame = kids[-1][1]  # the body, the branch taken
            else:
                blame = next((b for kv, b in kids if b is not None and not _finite(kv)), None)
            if blame is None and isinstance(e, ir.Var):
                for scope in reversed(self.lets):
                    if e.name in scope:
                        blame = scope[e.name]
                        break
            if blame is None:
                span = e.span if getattr(e, "span", None) is not None else (self.spans[-1] if self.spans else None)
                blame = (e, [kv for kv, _ in kids], v, span)
        self.frames[-1].append((v, blame))
        return v

    def _last_blame(self):
        frame = self.frames[-1]
        return frame[-1][1] if frame else None

    def _eval_Let(self, e, env, conc):
        values, scope = [], {}
        for name, v in e.bindings:
            values.append((name, self._eval(v, env, conc)))
            scope[name] = self._last_blame()
        inner = dict(env)
        inner.update(values)
        self.lets.append(scope)
        try:
            return self._eval(e.body, inner, conc)
        finally:
            self.lets.pop()

    def _transmit(self, name, model_channel, size, conc, span):
        blame = self._last_blame()  # the size, just evaluated by _eval_Transmit
        v = self.variant(name, model_channel, span)
        self.lets.append({v.param: blame})
        try:
            return super()._transmit(name, model_channel, size, conc, span)
        finally:
            self.lets.pop()


def _g(x) -> str:
    if hasattr(x, "text"):  # a per-rank vector (tlop.runtime.per_rank.PerRankValues)
        return x.text(_g)
    return f"{float(x):g}"


def _describe(node, operands: list, value) -> str:
    """What operation ``node`` did to finite ``operands`` to give the non-finite ``value``."""
    if isinstance(node, ir.Bin) and len(operands) == 2:
        a, b = (float(x) for x in operands)
        if node.op == "/":
            if b == 0:
                return "0 / 0" if a == 0 else f"a division by zero ({_g(a)} / 0)"
            return f"an overflow ({_g(a)} / {_g(b)})"
        if node.op == "%" and b == 0:
            return f"a remainder of a division by zero ({_g(a)} % 0)"
        if node.op == "^":
            if a == 0 and b < 0:
                return f"0 raised to a negative power (0 ^ {_g(b)})"
            if a < 0 and not float(b).is_integer():
                return f"a negative number raised to a non-integer power ({_g(a)} ^ {_g(b)})"
            return f"an overflow ({_g(a)} ^ {_g(b)})"
        if node.op in ("+", "-", "*"):
            return f"an overflow ({_g(a)} {node.op} {_g(b)})"
        return f"'{node.op}' of {_g(a)} and {_g(b)} (giving {_g(value)})"
    if isinstance(node, ir.Fn):
        args = [float(x) for x in operands]
        if node.name in ("log2", "ln", "log") and len(args) == 1:
            if args[0] == 0:
                return f"{node.name} of 0"
            if args[0] < 0:
                return f"{node.name} of a negative number ({_g(args[0])})"
        if node.name == "sqrt" and len(args) == 1 and args[0] < 0:
            return f"sqrt of a negative number ({_g(args[0])})"
        if node.name == "exp" and len(args) == 1:
            return f"an overflow (exp({_g(args[0])}))"
        return f"{node.name}({', '.join(_g(x) for x in args)}) = {_g(value)}"
    if isinstance(node, ir.Reduce):
        return f"an overflow (the {node.kind} over {node.var} of finite terms is {_g(value)})"
    if isinstance(node, ir.Lookup):
        return f"the table lookup {node.table} (it gives {_g(value)} here)"
    if isinstance(node, ir.Scalar):
        return f"the profile parameter {node.name} (it is {_g(value)})"
    if isinstance(node, ir.Var):
        return f"the argument {node.name} (it is {_g(value)})"
    if isinstance(node, ir.Num):
        return f"the constant {_g(value)}"
    return f"{type(node).__name__} = {_g(value)}"


def explain_nonfinite(program: ir.Program, profile, expr: ir.Expr, env: Mapping[str, Any],
                      mapping=None) -> tuple:
    """``(description, span)`` of the operation that made ``expr`` non-finite at the scalar
    point ``env``; ``(None, None)`` when the value is finite there (or another error is
    raised first, which the caller reports as it is)."""
    tracer = _Tracer(program, profile, mapping)
    try:
        with np.errstate(all="ignore"):
            value = tracer.evaluate(expr, dict(env), 1.0)
    except TlopError:
        return None, None
    if _finite(value):
        return None, None
    blame = tracer.frames[0][-1][1]
    if blame is None:
        return None, None
    node, operands, v, span = blame
    return _describe(node, operands, v), span


def _point(env: Mapping[str, Any], index: int) -> dict:
    """The scalar point ``index`` (flat) of the broadcast arrays of ``env``."""
    arrays = {k: v for k, v in env.items() if isinstance(v, np.ndarray) and v.ndim > 0}
    shape = np.broadcast_shapes(*(v.shape for v in arrays.values())) if arrays else ()
    return {k: (float(np.broadcast_to(v, shape).flat[index]) if k in arrays else v) for k, v in env.items()}


def check_finite(result, name: str, program: ir.Program, profile, expr: ir.Expr, env: Mapping[str, Any],
                 where: str = "", mapping=None):
    """``result`` when every value of it is finite; else raise :class:`NonFiniteCost` naming
    the operation that produced the first non-finite value (``where``: text to add after the
    point, e.g. the batch index)."""
    if type(result) is float:
        if math.isfinite(result):
            return result
        point, shown = dict(env), result
    else:
        flat = np.asarray(result, dtype=float).reshape(-1)
        bad = np.flatnonzero(~np.isfinite(flat))
        if not bad.size:
            return result
        point, shown = _point(env, int(bad[0])), float(flat[bad[0]])
    raise nonfinite_error(name, shown, program, profile, expr, point, where, mapping=mapping)


def nonfinite_error(name: str, value: float, program, profile, expr, point: Mapping[str, Any],
                    where: str = "", at: Optional[str] = None, mapping=None) -> NonFiniteCost:
    """The error for cost ``value`` (not finite) of ``name`` at the scalar ``point`` (shown as
    ``at`` when given, e.g. with channel names)."""
    what, span = explain_nonfinite(program, profile, expr, point, mapping)
    if at is None:
        at = ", ".join(f"{k}={_g(v)}" for k, v in point.items() if not k.startswith("%")) or "this point"
    kind = "NaN" if value != value else f"{value:g} s"
    cause = f": {what}" if what else ""
    return NonFiniteCost(f"'{name}' costs {kind}, not a finite time, at {at}{where}{cause}", span)
