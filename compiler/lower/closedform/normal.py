"""Exact normal forms of index expressions, for recognising schedule patterns.

What it does: :func:`poly` writes an integer index expression (``+``, ``−``, ``·``, ``<<``, powers
of two of linear exponents) as a polynomial-exponential with exact (Fraction) coefficients, so
that equal indices are recognised whatever their spelling; helpers add, multiply and read such
forms back as IR (:func:`_from_linear`, :func:`_tidy`).  What it does not do: evaluate, or decide
anything about the schedule (:mod:`tlop.lower.closedform.patterns`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

from tlop import ir
from tlop.lower.closedform.base import _ZERO, _b, _num

# ----------------------------------------------------------------------------- index normal form

# A polynomial-exponential: {(monomial, exponent): coefficient} where monomial is a sorted tuple of
# (variable, degree) and exponent a sorted tuple of (variable, integer coefficient): the term
# c · Π x^k · 2^(Σ a·v).  Exact (Fractions); None for anything else.

def _padd(a, b, sign=1):
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + sign * v
        if out[k] == 0:
            del out[k]
    return out


def _merge(x, y):
    d = dict(x)
    for k, v in y:
        d[k] = d.get(k, 0) + v
        if d[k] == 0:
            del d[k]
    return tuple(sorted(d.items()))


def _pmul(a, b):
    out = {}
    for (m1, e1), c1 in a.items():
        for (m2, e2), c2 in b.items():
            k = (_merge(m1, m2), _merge(e1, e2))
            out[k] = out.get(k, 0) + c1 * c2
            if out[k] == 0:
                del out[k]
    return out


def _pconst(c):
    return {((), ()): Fraction(c)} if c else {}


def _linear(p):
    """``(coefficients, constant)`` when ``p`` is linear in plain variables with integer
    coefficients, else None."""
    coef, const = {}, Fraction(0)
    for (mono, expo), c in p.items():
        if expo or c.denominator != 1:
            return None
        if not mono:
            const = c
        elif len(mono) == 1 and mono[0][1] == 1:
            coef[mono[0][0]] = c
        else:
            return None
    return coef, const


def _pow2(p):
    """``2^p`` for a linear ``p``."""
    lin = _linear(p)
    if lin is None:
        return None
    coef, const = lin
    return {((), tuple(sorted((v, int(c)) for v, c in coef.items()))): Fraction(2) ** int(const)}


def poly(e: ir.Expr, rename=None):
    """The normal form of an integer index expression, or None when it is not one."""
    rename = rename or {}
    if isinstance(e, ir.Num):
        v = Fraction(e.value) if float(e.value).is_integer() else None
        return None if v is None else _pconst(v)
    if isinstance(e, ir.Var):
        return {(((rename.get(e.name, e.name), 1),), ()): Fraction(1)}
    if isinstance(e, ir.Neg):
        a = poly(e.operand, rename)
        return None if a is None else {k: -v for k, v in a.items()}
    if isinstance(e, ir.Bin) and e.op in ("+", "-", "*", "<<", "^"):
        a, b = poly(e.lhs, rename), poly(e.rhs, rename)
        if a is None or b is None:
            return None
        if e.op == "+":
            return _padd(a, b)
        if e.op == "-":
            return _padd(a, b, -1)
        if e.op == "*":
            return _pmul(a, b)
        if e.op == "<<":
            t = _pow2(b)
            return None if t is None else _pmul(a, t)
        if a == _pconst(2):
            return _pow2(b)
    return None


def _uses(p, var) -> bool:
    return any(v == var for (mono, expo) in p for v, _ in mono + expo)


def _coeff_of(p, var):
    """``(c, rest)`` with ``p = c·var + rest`` and neither using ``var``; None otherwise."""
    c, rest = {}, {}
    for (mono, expo), k in p.items():
        degs = dict(mono)
        d = degs.pop(var, 0)
        if any(v == var for v, _ in expo) or d > 1:
            return None
        if d == 1:
            c[(tuple(sorted(degs.items())), expo)] = k
        else:
            rest[(mono, expo)] = k
    return c, rest


# ----------------------------------------------------------------------------- IR helpers


def _tidy(e: ir.Expr, p) -> ir.Expr:
    """``e`` rebuilt from its normal form ``p`` when that is a single ``c · 2^(linear)`` term
    (``2^(S − 1 − s)`` rather than ``(2t + 1 << S − 1 − s) − (t << S − s)`` at t = 0)."""
    if len(p) != 1:
        return e
    ((mono, expo), c), = p.items()
    if mono:
        return e
    k = 0
    while c.denominator != 1 and c.denominator % 2 == 0:
        c, k = c * 2, k - 1
    while c.numerator % 2 == 0 and c != 0:
        c, k = c / 2, k + 1
    if c != 1:
        return e
    lin = None
    for v, a in expo:
        term = ir.Var(v) if a == 1 else _b("*", _num(a), ir.Var(v))
        if a < 0:
            term = ir.Var(v) if a == -1 else _b("*", _num(-a), ir.Var(v))
            lin = _b("-", lin if lin is not None else _ZERO, term)
        else:
            lin = term if lin is None else _b("+", lin, term)
    if lin is None:
        return _num(2 ** k)
    if k:
        lin = _b("+", lin, _num(k)) if k > 0 else _b("-", lin, _num(-k))
    return _b("^", _num(2), lin)


def _from_linear(p) -> Optional[ir.Expr]:
    """The IR of a linear normal form (``P − 1``, ``root``, ``0``), None when ``p`` is not linear."""
    lin = _linear(p)
    if lin is None:
        return None
    coef, const = lin
    out = None
    for v, c in sorted(coef.items()):
        term = ir.Var(v) if abs(c) == 1 else _b("*", _num(abs(c)), ir.Var(v))
        out = (term if c > 0 else ir.Neg(term)) if out is None else _b("+" if c > 0 else "-", out, term)
    if out is None:
        return _num(const)
    if const:
        out = _b("+" if const > 0 else "-", out, _num(abs(const)))
    return out
