"""The whole-evaluation term budget: how many reduction terms an evaluation will run, known
before it runs.

Why: every ``sum``/``max``/``min`` is limited to :data:`~tlop.backends.interp.MAX_TERMS` terms,
but nested reductions multiply — ``sum i in 1 .. P: sum j in 1 .. P: …`` with P = 3,000,000 is
9·10¹² terms, each loop within its limit.  The limit is on the whole evaluation of a point.

What it does: :func:`term_count` turns a cost expression into a *count expression* (ordinary
IR, evaluated by any engine on the same arguments) giving the number of reduction terms its
evaluation runs:

* a reduction over ``lo .. hi`` runs ``n = max(0, ⌊hi⌋ − ⌈lo⌉ + 1)`` terms (0 when a bound is
  not finite or beyond ±2^53: the reduction's own check reports those), plus, for each term,
  the count of its body — ``n · (1 + C)`` when the body's count C does not depend on the index,
  else ``sum i in lo .. hi: 1 + C(i)`` (one loop over the outer range only: a triangular
  nest is counted in O(outer), not O(total));
* a ``sum`` of a schedule that does not depend on its index runs its body once (the engines'
  rule), so it counts ``n`` plus the body's count;
* ``if`` counts its test and the branch taken; ``let`` its bindings and its body (with the
  bindings the body's count needs); every other node the sum of its children's counts;
* a schedule stage counts its elements: a ``par``/``seq`` loop over ``lo .. hi`` counts like a
  reduction over that range (every binding is tried), a ``send`` or ``compute`` 1 (plus what
  its operands run) — so ``stages k in 1 .. P − 1 { par p in 0 .. P − 1: send … }`` counts about
  P² and pairwise at P = 16,384 is refused at once instead of running for minutes (issue 22 item
  12; a stage alone is also limited to :data:`~tlop.backends.enumeration.MAX_ELEMENTS` elements
  by its enumeration).

Both engines evaluate the count first and refuse a point whose count exceeds ``MAX_TERMS``
with one message (:func:`over_budget_error`): the interpreter in
:meth:`tlop.backends.interp.Interpreter.eval` (:func:`count_terms`, vectorised over the outer
index when the arguments are scalars), the JIT at the start of the cost function
(:meth:`tlop.backends.jit.codegen.CodeGen._emit_core`).

What it does not do: bound what a ``let`` binding computes with a reduction when the count
needs its value (it is evaluated, under its own per-loop limit, to know the count), or count a
repeated dataflow program (``n * stage {…}`` in LogGP, which runs n times) more than once.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from tlop import ir
from tlop.ir.memo import free_vars as _free_vars, has_schedule as _has_schedule

__all__ = ["term_count", "count_terms", "over_budget_error"]

_N, _ONE, _ZERO = ir.Num, ir.Num(1.0), ir.Num(0.0)
_CACHE: dict = {}


def _count_outer(x, memo):
    return _count(x, memo)


def _add(a: Optional[ir.Expr], b: Optional[ir.Expr]) -> Optional[ir.Expr]:
    if a is None:
        return b
    if b is None:
        return a
    return ir.Bin("+", a, b)


def _terms(e: ir.Reduce) -> ir.Expr:
    lim = _N(float(2 ** 53))
    inside = ir.Bin("and", ir.Bin("<=", ir.Fn("abs", (e.lo,)), lim), ir.Bin("<=", ir.Fn("abs", (e.hi,)), lim))
    n = ir.Fn("max", (_ZERO, ir.Bin("+", ir.Bin("-", ir.Fn("floor", (e.hi,)), ir.Fn("ceil", (e.lo,))), _ONE)))
    return ir.Cond(inside, n, _ZERO)


def _count(e: ir.Expr, memo: Optional[dict] = None) -> Optional[ir.Expr]:
    """The count expression of ``e``; ``memo`` (by node identity) keeps a shared sub-expression
    of the IR — a DAG after inlining — from being counted once per path to it."""
    if memo is None:
        memo = {}
    got = memo.get(id(e))
    if got is not None and got[0] is e:
        return got[1]
    out = _count_node(e, memo)
    memo[id(e)] = (e, out)
    return out


def _count_node(e: ir.Expr, memo: dict) -> Optional[ir.Expr]:
    def _count(x):  # noqa: F811 - the memoised recursion
        return _count_outer(x, memo)
    if isinstance(e, (ir.Stage, ir.Block)):
        out = None
        for it in e.items:
            out = _add(out, _count(it))
        return out
    if isinstance(e, (ir.Send, ir.Compute)):  # one element of a stage, plus what its operands run
        out = _ONE
        for c in ir.children(e):
            if isinstance(c, ir.Expr):
                out = _add(out, _count(c))
        return out
    if isinstance(e, ir.Loop):  # par/seq: every binding is tried (its where evaluated), then its body
        n = _terms(e)
        inner = _add(_count(e.where), _count(e.body)) or _ZERO
        if e.var not in _free_vars(inner):
            own = ir.Bin("*", n, ir.Bin("+", _ONE, inner))
        else:
            own = ir.Reduce("sum", e.var, e.lo, e.hi, ir.Bin("+", _ONE, inner))
        return _add(_add(_count(e.lo), _count(e.hi)), own)
    if isinstance(e, ir.Reduce):
        n = _terms(e)
        inner = _count(e.body)
        bounds = _add(_count(e.lo), _count(e.hi))
        if e.kind == "sum" and e.var not in _free_vars(e.body) and _has_schedule(e.body):
            own = n if inner is None else _add(n, ir.Cond(ir.Bin(">=", n, _ONE), inner, _ZERO))
        elif inner is None:
            own = n
        elif e.var not in _free_vars(inner):
            own = ir.Bin("*", n, ir.Bin("+", _ONE, inner))
        else:
            own = ir.Reduce("sum", e.var, e.lo, e.hi, ir.Bin("+", _ONE, inner))
        return _add(bounds, own)
    if isinstance(e, ir.Cond):
        a, b = _count(e.then_), _count(e.else_)
        branch = None if a is None and b is None else ir.Cond(e.test, a or _ZERO, b or _ZERO)
        return _add(_count(e.test), branch)
    if isinstance(e, ir.Let):
        out = None
        for _, v in e.bindings:
            out = _add(out, _count(v))
        body = _count(e.body)
        if body is not None:
            need = _free_vars(body)
            bindings = tuple((n, v) for n, v in e.bindings if n in need)
            out = _add(out, ir.Let(bindings, body) if bindings else body)
        return out
    out = None
    for c in ir.children(e):
        if isinstance(c, ir.Expr):
            out = _add(out, _count(c))
    return out


def term_count(e: ir.Expr) -> Optional[ir.Expr]:
    """The count expression of ``e`` (see the module docstring), None when ``e`` holds no
    reduction; cached per node."""
    got = _CACHE.get(id(e))
    if got is None or got[0] is not e:
        if len(_CACHE) > 4096:
            _CACHE.clear()
        try:
            has = any(isinstance(n, ir.Reduce) for n in ir.walk_unique(e))
        except TypeError:  # a node class no pass knows: the engine reports it by name (not kept)
            return None
        got = (e, _count(e) if has else None)
        _CACHE[id(e)] = got
    return got[1]


def count_terms(interp, count: ir.Expr, env: dict, conc):
    """The value of the count expression ``count`` with the interpreter ``interp``; a sum over
    an outer index whose body holds no further reduction is evaluated on the whole index
    range at once when the arguments are scalars."""
    scalar = not any(isinstance(v, np.ndarray) and v.ndim for v in env.values())
    if scalar and isinstance(count, ir.Bin) and count.op in ("+", "*"):
        a = count_terms(interp, count.lhs, env, conc)
        b = count_terms(interp, count.rhs, env, conc)
        return a + b if count.op == "+" else a * b
    if scalar and isinstance(count, ir.Reduce) and not any(isinstance(n, ir.Reduce)
                                                           for n in ir.walk_unique(count.body)):
        from tlop.backends.interp import MAX_TERMS

        lo, hi = float(interp.evaluate(count.lo, env, conc)), float(interp.evaluate(count.hi, env, conc))
        if not (np.isfinite(lo) and np.isfinite(hi)) or max(abs(lo), abs(hi)) > 2.0 ** 53:
            return 0.0
        start, stop = int(np.ceil(lo)), int(np.floor(hi))
        if stop < start:
            return 0.0
        if stop - start + 1 > MAX_TERMS:  # the outer loop alone is over: so is the whole
            return float(stop - start + 1)
        inner = dict(env)
        inner[count.var] = np.arange(start, stop + 1, dtype=float)
        return float(np.sum(np.broadcast_to(interp.evaluate(count.body, inner, conc), (stop - start + 1,))))
    return interp.evaluate(count, env, conc)


def over_budget_error(total: float, e: ir.Expr):
    """The error of an evaluation that would run ``total`` reduction terms."""
    from tlop.backends.interp import MAX_TERMS, EvalError

    if _has_schedule(e):
        first = next((n for n in ir.walk(e) if isinstance(n, (ir.Reduce, ir.Loop))), None)
        return EvalError(f"this evaluation runs {total:,.0f} reduction terms and schedule elements in all "
                         f"(sends, computations and par/seq bindings of every stage, times the stages), "
                         f"which is longer than tlop evaluates (at most {MAX_TERMS:,} per evaluation, in "
                         f"every engine)", getattr(first, "span", None))
    first = next((n for n in ir.walk(e) if isinstance(n, ir.Reduce)), None)
    what = f"'{first.kind}'" if first is not None else "the reductions"
    return EvalError(f"this evaluation runs {total:,.0f} reduction terms in all (nested reductions multiply: "
                     f"{what} here and those inside it), which is longer than tlop evaluates (at most "
                     f"{MAX_TERMS:,} terms per evaluation, in every engine)",
                     getattr(first, "span", None))
