"""Rules whose right-hand side is computed: constant folding, atomic/dead ``let`` bindings, and
the n-ary lock-step A2/A3 reduction of a parallel composition.

What it does: functions ``(bindings, ctx) -> Expr | None`` used as :attr:`Rule.compute`.  The
context ``ctx`` (the simplifier's) answers ``ctx.decide(cond)`` — True, False or None (unknown)
for a pure IR condition — and ``ctx.families``.

What it does not do: prove anything; ``tlop rules --verify`` proves each computed rule on its
declared instances, and translation validation proves every use.
"""

from __future__ import annotations

import math

from tlop import ir
from tlop.ir.constfold import fold_node
from tlop.ir.taulop import expand_parcomp

__all__ = ["fold", "let_inline", "parcomp_lockstep", "eval_const"]

def eval_const(e: ir.Expr):
    """The value of a node whose children are numerals, computed exactly as the interpreter
    does (the operators of :mod:`tlop.ir.ops`, through :func:`tlop.ir.constfold.fold_node`), or
    None when it is not finite or not foldable."""
    return fold_node(e)


def _exact_log2(v: float):
    """``(floor(log2 v), exact)`` for a positive numeral, by integer arithmetic."""
    from fractions import Fraction
    q = Fraction(v)
    k = q.numerator.bit_length() - q.denominator.bit_length()
    while Fraction(2) ** k > q:
        k -= 1
    while Fraction(2) ** (k + 1) <= q:
        k += 1
    return k, Fraction(2) ** k == q


_TRANSCENDENTAL = ("log2", "sqrt", "exp", "ln")


def fold(b: dict, ctx):
    """``op(numerals) → numeral`` and ``if numeral then a else b → branch``.  Transcendental
    functions fold only when the result is exact (``log2 64``, ``sqrt 9``); ``⌈log2 n⌉`` and
    ``⌊log2 n⌋`` of a numeral fold exactly by integer arithmetic."""
    e = b["?e"]
    if isinstance(e, ir.Cond) and isinstance(e.test, ir.Num):
        return e.then_ if e.test.value != 0 else e.else_
    if (isinstance(e, ir.Fn) and e.name in ("ceil", "floor") and isinstance(e.args[0], ir.Fn)
            and e.args[0].name == "log2" and isinstance(e.args[0].args[0], ir.Num)
            and e.args[0].args[0].value > 0 and math.isfinite(e.args[0].args[0].value)):
        k, exact = _exact_log2(e.args[0].args[0].value)
        return ir.Num(float(k if exact or e.name == "floor" else k + 1))
    if isinstance(e, ir.Fn) and e.name in _TRANSCENDENTAL:
        if not (len(e.args) == 1 and isinstance(e.args[0], ir.Num)):
            return None
        v = e.args[0].value
        if e.name == "log2" and v > 0 and math.isfinite(v) and _exact_log2(v)[1]:
            return ir.Num(float(_exact_log2(v)[0]))
        if e.name == "sqrt" and v >= 0 and math.isfinite(v) and float(math.isqrt(int(v))) ** 2 == v:
            return ir.Num(float(math.isqrt(int(v))))
        return None
    if isinstance(e, (ir.Bin, ir.Neg, ir.Not, ir.Fn)):
        v = eval_const(e)
        if v is not None:
            return ir.Num(v)
    return None


def let_inline(b: dict, ctx):
    """Substitute let bindings whose value is a numeral or a variable not rebound by the let,
    and drop bindings the body does not use."""
    from tlop.analysis.rules.core import replace_var
    e = b["?e"]
    if not isinstance(e, ir.Let):
        return None
    names = {n for n, _ in e.bindings}
    used = ir.free_vars(e.body)
    keep, inline = [], []
    for n, v in e.bindings:
        if n not in used:
            continue
        if isinstance(v, ir.Num) or (isinstance(v, ir.Var) and v.name not in names):
            inline.append((n, v))
        else:
            keep.append((n, v))
    if len(keep) == len(e.bindings):
        return None
    body = e.body
    for n, v in inline:
        if isinstance(v, ir.Var) and _binds(body, v.name):
            keep.append((n, v))
            continue
        body = replace_var(body, n, v)
    if len(keep) == len(e.bindings):
        return None
    return ir.Let(tuple(keep), body) if keep else body


def _binds(e: ir.Expr, name: str) -> bool:
    """Whether some Let or Reduce inside ``e`` binds ``name`` (substituting it would capture)."""
    for n in ir.walk(e):
        if isinstance(n, ir.Reduce) and n.var == name:
            return True
        if isinstance(n, ir.Let) and any(x == name for x, _ in n.bindings):
            return True
    return False


def parcomp_lockstep(b: dict, ctx):
    """A parallel composition as the sum over lock-step phases of, per phase, the maximum over
    channels (A3) of the A2 expansion on that channel: sizes sorted ``m1 ≤ … ≤ mn``,
    ``Σ_j (w_j + … + w_n) ‖ X_j(m_j − m_{j−1})``, zero increments dropped — the shared
    reduction :func:`tlop.ir.taulop.expand_parcomp` with the context deciding channel
    identities, size orders and signs.  None when something is left undecided (the rewrite
    would need a run-time ``if``)."""
    e = b["?e"]
    if not isinstance(e, ir.ParComp):
        return None
    got = expand_parcomp(e, ctx.decide, zero_size_free="A1" in ctx.families, share=False)
    return got.expr if got.static else None
