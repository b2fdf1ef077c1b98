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

import numpy as np

from tlop import ir

__all__ = ["fold", "let_inline", "parcomp_lockstep", "eval_const"]

_CMP = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
        "==": np.equal, "!=": np.not_equal}
_FN = {"ceil": np.ceil, "floor": np.floor, "log2": np.log2, "abs": np.abs, "sqrt": np.sqrt,
       "exp": np.exp, "ln": np.log}


def eval_const(e: ir.Expr):
    """The value of a node whose children are numerals, computed exactly as the interpreter
    does (IEEE doubles), or None when it is not finite or not foldable."""
    with np.errstate(all="ignore"):
        if isinstance(e, ir.Bin) and isinstance(e.lhs, ir.Num) and isinstance(e.rhs, ir.Num):
            a, b = e.lhs.value, e.rhs.value
            op = e.op
            if op == "+":
                v = np.add(a, b)
            elif op == "-":
                v = np.subtract(a, b)
            elif op == "*":
                v = np.multiply(a, b)
            elif op == "/":
                v = np.true_divide(a, b)
            elif op == "^":
                v = np.power(np.asarray(a, dtype=float), b)
            elif op == "%":
                v = np.mod(a, b)
            elif op in _CMP:
                v = float(_CMP[op](a, b))
            elif op == "and":
                v = float(a != 0 and b != 0)
            elif op == "or":
                v = float(a != 0 or b != 0)
            else:
                return None
        elif isinstance(e, ir.Neg) and isinstance(e.operand, ir.Num):
            v = -e.operand.value
        elif isinstance(e, ir.Not) and isinstance(e.operand, ir.Num):
            v = float(e.operand.value == 0)
        elif isinstance(e, ir.Fn) and all(isinstance(a, ir.Num) for a in e.args):
            vals = [a.value for a in e.args]
            if e.name == "min":
                v = min(vals)
            elif e.name == "max":
                v = max(vals)
            elif e.name in _FN:
                v = _FN[e.name](np.asarray(vals[0], dtype=float))
            else:
                return None
        else:
            return None
    v = float(v)
    return v if math.isfinite(v) else None


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


def _add(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(a, ir.Num) and isinstance(b, ir.Num):
        return ir.Num(a.value + b.value)
    return ir.Bin("+", a, b)


def _sub(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(a, ir.Num) and isinstance(b, ir.Num):
        return ir.Num(a.value - b.value)
    if isinstance(b, ir.Num) and b.value == 0:
        return a
    return ir.Bin("-", a, b)


def _sort_items(items, ctx):
    """Sort (count, size) pairs ascending by size when every comparison is decided; ties keep
    their order (stable, like the interpreter).  None when some order is unknown."""
    out = []
    for it in items:
        pos = len(out)
        for j, other in enumerate(out):
            le = ctx.decide(ir.Bin("<", it[1], other[1]))
            if le is None:
                return None
            if le:
                pos = j
                break
        out.insert(pos, it)
    # verify the order is a chain (the decision procedure may be partial)
    for a, c in zip(out, out[1:]):
        if ctx.decide(ir.Bin("<=", a[1], c[1])) is not True:
            return None
    return out


def parcomp_lockstep(b: dict, ctx):
    """A parallel composition as the sum over lock-step phases of, per phase, the maximum over
    channels (A3) of the A2 expansion on that channel: sizes sorted ``m1 ≤ … ≤ mn``,
    ``Σ_j (w_j + … + w_n) ‖ T(m_j − m_{j−1})``, zero increments dropped.  None when some size
    order, sign or channel identity is not decided."""
    e = b["?e"]
    if not isinstance(e, ir.ParComp):
        return None
    a1 = "A1" in ctx.families
    phases = max(len(op) for op in e.operands)
    total = None
    for k in range(phases):
        groups: list = []  # [(name, channel, [(count, size)])]
        for op in e.operands:
            if k >= len(op):
                continue
            x = op[k]
            for g in groups:
                if g[0] == x.name and g[1] == x.channel:
                    g[2].append((x.count, x.size))
                    break
            else:
                groups.append((x.name, x.channel, [(x.count, x.size)]))
        # channels of different groups must be known to differ (A3 needs it)
        for i, g in enumerate(groups):
            for h in groups[i + 1:]:
                if g[0] == h[0] and ctx.decide(ir.Bin("!=", g[1], h[1])) is not True:
                    return None
        costs = []
        for name, ch, items in groups:
            ordered = _sort_items(items, ctx)
            if ordered is None:
                return None
            terms = []
            prev = ir.Num(0)
            for j, (_, size) in enumerate(ordered):
                d = _sub(size, prev)
                prev = size
                pos = ctx.decide(ir.Bin(">", d, ir.Num(0)))
                if pos is False:
                    if ctx.decide(ir.Bin("==", d, ir.Num(0))) is True:
                        continue
                    return None
                if pos is None:
                    if not (a1 and ctx.decide(ir.Bin(">=", d, ir.Num(0))) is True):
                        return None
                w = ordered[j][0]
                for other, _ in ordered[j + 1:]:
                    w = _add(w, other)
                t = ir.Transmit(name, ch, d)
                terms.append(t if isinstance(w, ir.Num) and w.value == 1 else ir.Conc(w, t))
            cost = None
            for t in terms:
                cost = t if cost is None else ir.Bin("+", cost, t)
            costs.append(cost if cost is not None else ir.Num(0))
        phase = costs[0] if len(costs) == 1 else ir.Fn("max", tuple(costs))
        total = phase if total is None else ir.Bin("+", total, phase)
    return total
