"""Partial evaluation of cost IR for closed forms: substitution, small exact folding, guard hoisting.

What it does: :func:`_subst` (capture-aware substitution), :func:`_peval` (known names replaced
and the little exact folding that follows), sign checks (:func:`_nonneg`, :func:`_nonpos`), and
:func:`_hoist` (``if s <= 0 then 0 else …`` moved out of ``sum``/``let``/products; a ``sum`` of a
stage-independent body becomes a product).  What it does not do: recognise patterns, or simplify
with the rewrite rules (:mod:`tlop.analysis.simplify`).
"""

from __future__ import annotations

from tlop import ir
from tlop.lower.closedform.base import _ONE, _ZERO, _b, _num
from tlop.lower.closedform.normal import _from_linear, _linear, poly

def _subst(e: ir.Expr, name: str, value: ir.Expr) -> ir.Expr:
    """``e`` with free ``name`` replaced by ``value`` (``value`` is closed or uses outer names)."""
    if isinstance(e, ir.Var):
        return value if e.name == name else e
    if isinstance(e, ir.Let):
        binds = tuple((n, _subst(v, name, value)) for n, v in e.bindings)
        body = e.body if any(n == name for n, _ in e.bindings) else _subst(e.body, name, value)
        return ir.Let(binds, body, span=e.span)
    kids = list(ir.children(e))
    bnd = ir.binder(e)
    for i, k in enumerate(kids):
        if bnd is not None and bnd[0] == name and i >= bnd[1]:
            continue
        kids[i] = _subst(k, name, value)
    return ir.rebuild(e, tuple(kids))


def _strip_mod(e: ir.Expr, P: str, rename):
    """``(inner, modded)``: ``inner`` of ``inner % P``, or ``e`` itself."""
    if isinstance(e, ir.Bin) and e.op == "%" and isinstance(e.rhs, ir.Var) and rename.get(e.rhs.name, e.rhs.name) == P:
        return e.lhs, True
    return e, False


def _cond(test, then_, else_):
    if isinstance(test, ir.Num):
        return then_ if test.value else else_
    return ir.Cond(test, then_, else_)


def _and(*parts):
    out = None
    for p in parts:
        if isinstance(p, ir.Num) and p.value:
            continue
        out = p if out is None else _b("and", out, p)
    return out if out is not None else _ONE


def _nonneg(e: ir.Expr, nonneg: set) -> bool:
    """Whether ``e`` is >= 0 for integer variables ``nonneg`` >= 0 (a syntactic check)."""
    if isinstance(e, ir.Num):
        return e.value >= 0
    if isinstance(e, ir.Var):
        return e.name in nonneg
    if isinstance(e, ir.Bin) and e.op in ("+", "*", "<<", ">>", "xor", "&", "div"):
        return _nonneg(e.lhs, nonneg) and _nonneg(e.rhs, nonneg)
    return False


def _nonpos(e: ir.Expr, nonneg: set) -> bool:
    if isinstance(e, ir.Num):
        return e.value <= 0
    return isinstance(e, ir.Bin) and e.op == "-" and _nonpos(e.lhs, nonneg) and _nonneg(e.rhs, nonneg)


def _peval(e: ir.Expr, known: dict, nonneg: set) -> ir.Expr:
    """``e`` with the names of ``known`` replaced by their values and the little folding that
    follows (numbers, ``x + 0``, ``x − 0``, ``x · 1``, an ``if`` on a known test, ``v < 0`` false
    for ``v >= 0``, ``min(v, 0) = 0`` and ``max(0, −v) = 0``); every ``let`` is inlined.  Exact:
    each step is an identity on the integers the index expressions hold."""
    from tlop.ir import ops

    if isinstance(e, ir.Var):
        return known.get(e.name, e)
    if isinstance(e, ir.Let):
        body = e.body
        for n, v in reversed(e.bindings):
            body = _subst(body, n, v)
        return _peval(body, known, nonneg)
    if ir.binder(e) is not None:
        return e
    kids = tuple(_peval(k, known, nonneg) for k in ir.children(e))
    e = ir.rebuild(e, kids)
    if isinstance(e, ir.Bin):
        a, b = e.lhs, e.rhs
        if isinstance(a, ir.Num) and isinstance(b, ir.Num) and e.op in ops.BINARY:
            return _num(float(ops.BINARY[e.op](a.value, b.value)))
        if e.op in ("+", "-", "xor", "<<", ">>") and b == _ZERO:
            return a
        if e.op in ("+", "xor") and a == _ZERO:
            return b
        if e.op == "*" and b == _ONE:
            return a
        if e.op == "*" and a == _ONE:
            return b
        if e.op == "<" and b == _ZERO and _nonneg(a, nonneg):
            return _ZERO
        return e
    if isinstance(e, ir.Cond) and isinstance(e.test, ir.Num):
        return e.then_ if e.test.value else e.else_
    if isinstance(e, ir.Fn) and e.name == "min" and len(e.args) == 2:
        a, b = e.args
        if (b == _ZERO and _nonneg(a, nonneg)) or (a == _ZERO and _nonneg(b, nonneg)):
            return _ZERO
    if isinstance(e, ir.Fn) and e.name == "max" and len(e.args) == 2:
        a, b = e.args
        if a == _ZERO and _nonpos(b, nonneg):
            return _ZERO
        if b == _ZERO and _nonpos(a, nonneg):
            return _ZERO
    return e


def _hoist(e: ir.Expr, alg: ir.Algorithm) -> ir.Expr:
    """Move ``if s <= 0 then 0 else …`` guards out of ``sum``, ``let`` and products by a
    stage-independent factor when the test does not use the bound names."""
    kids = tuple(_hoist(k, alg) for k in ir.children(e))
    e = ir.rebuild(e, kids)
    if isinstance(e, ir.Reduce) and e.kind == "sum" and e.var not in ir.free_vars(e.body):
        # a stage that does not depend on its stage variable: (hi − lo + 1) times (hi >= lo)
        n = poly(_b("+", _b("-", e.hi, e.lo), _ONE))
        n_ir = _from_linear(n) if n is not None else None
        if n_ir is not None:
            body = e.body
            if _zero_guard(body):
                return ir.Cond(body.test, _ZERO, _times(n_ir, body.else_, alg))
            return _times(n_ir, body, alg)
    if isinstance(e, ir.Reduce) and e.kind == "sum" and _zero_guard(e.body):
        g = e.body
        if e.var not in ir.free_vars(g.test):
            return ir.Cond(g.test, _ZERO, ir.Reduce(e.kind, e.var, e.lo, e.hi, g.else_, span=e.span))
    if isinstance(e, ir.Let) and _zero_guard(e.body):
        g = e.body
        if not ir.free_vars(g.test) & {n for n, _ in e.bindings}:
            return ir.Cond(g.test, _ZERO, ir.Let(e.bindings, g.else_, span=e.span))
    if isinstance(e, ir.Bin) and e.op == "*" and _zero_guard(e.rhs):
        return ir.Cond(e.rhs.test, _ZERO, _b("*", e.lhs, e.rhs.else_))
    return e


def _times(n: ir.Expr, body: ir.Expr, alg: ir.Algorithm) -> ir.Expr:
    """``max(n, 0)·body`` (an empty range sums to 0), written ``n·body`` when ``n`` is a numeral
    or ``x + c`` with ``x`` a parameter whose declared lower bound keeps it non-negative."""
    if isinstance(n, ir.Num):
        return _b("*", _num(max(n.value, 0)), body)
    lin = _linear(poly(n))
    if lin is not None and len(lin[0]) == 1:
        (v, c), = lin[0].items()
        p = next((p for p in alg.params if p.name == v), None)
        if c == 1 and p is not None and p.constraint and p.constraint[0] in (">=", ">") \
                and isinstance(p.constraint[1], ir.Num) and p.constraint[1].value + float(lin[1]) >= 0:
            return _b("*", n, body)
    return _b("*", ir.Fn("max", (n, _ZERO)), body)


def _zero_guard(e) -> bool:
    return isinstance(e, ir.Cond) and isinstance(e.then_, ir.Num) and e.then_.value == 0 \
        and isinstance(e.test, ir.Bin) and e.test.op == "<="
