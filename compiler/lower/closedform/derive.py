"""Closed forms of an algorithm: :func:`derive` and :func:`closed_form`.

What it does: runs the pattern walk (:mod:`tlop.lower.closedform.patterns`) over an algorithm's
cost, hoists the zero-size guards, adds the side conditions every derivation has (``Q ≥ 1``,
``Q | P``), optionally hands the body to a ``simplify`` function, and types and verifies the
result.  What it does not do: simplify by itself, or print (callers pass ``describe``).
"""

from __future__ import annotations

from typing import Callable, Optional

from tlop import ir
from tlop.lower.closedform.base import _ONE, _ZERO, KINDS, Derivation, NoClosedForm, _b, parse_kind
from tlop.lower.closedform.patterns import _Deriver
from tlop.lower.closedform.peval import _and, _hoist, _subst

__all__ = ["derive", "closed_form", "typed"]

_PLAIN_OPS = {"+", "-", "*", "/", "%", "<<", ">>", "div", "xor", "&", "==", "<", "<=", ">", ">=", "and", "or"}


def _plain(e: ir.Expr, program=None) -> str:
    """A plain infix text of an index expression (numbers, names, binary operators)."""
    if isinstance(e, ir.Num):
        return f"{e.value:g}"
    if isinstance(e, ir.Var):
        return e.name
    if isinstance(e, ir.Bin) and e.op in _PLAIN_OPS:
        return f"({_plain(e.lhs)} {e.op} {_plain(e.rhs)})"
    return type(e).__name__


def _q_name(alg: ir.Algorithm) -> str:
    names = {p.name for p in alg.params}
    for q in ("Q", "Q_node", "Q_ranks"):
        if q not in names:
            return q
    return "%Q"


def derive(program: ir.Program, alg: ir.Algorithm, kind: str, *, simplify: Optional[Callable] = None,
           describe: Optional[Callable] = None) -> Derivation:
    """The closed form of ``alg``'s cost under mapping ``kind`` (see :mod:`tlop.lower.closedform`).
    ``simplify(program, alg, typed body, q)``, when given, rewrites the derived body (the
    analyses pass the simplifier); ``describe(expression, program)`` writes the side conditions'
    text (default: a plain infix form)."""
    kind = parse_kind(kind) or kind
    out = Derivation(kind, q=_q_name(alg))
    if kind not in KINDS:
        out.reason = f"closed forms are derived for the mapping kinds {', '.join(KINDS)}, not '{kind}'"
        return out
    if alg.over is None or not ir.has_schedule(alg.body):
        out.reason = "the algorithm has no schedule: its cost is already a formula"
        return out
    if not any(p.name == "P" for p in alg.params):
        out.reason = "the algorithm has no parameter P (the process count)"
        return out
    try:
        d = _Deriver(program, alg, kind, out.q, describe or _plain)
        body = d.walk(alg.body)
    except NoClosedForm as err:
        out.reason = str(err)
        return out
    body = _hoist(_subst(body, ir.RANKS, ir.Var("P")), alg)
    Q = ir.Var(out.q)
    base = [(_b(">=", Q, _ONE), f"{out.q} >= 1"), (_b("==", _b("%", ir.Var("P"), Q), _ZERO), f"{out.q} divides P")]
    conds = base + d.conditions
    out.conditions = _and(*(c for c, _ in conds))
    out.condition_text = [t for _, t in conds]
    out.condition_parts = [c for c, _ in conds]
    out.patterns = d.patterns
    if simplify is not None:
        body = simplify(program, alg, typed(program, alg, body, out.q), out.q)
    out.expr = typed(program, alg, body, out.q)
    out.conditions = typed(program, alg, out.conditions, out.q, bool_=True)
    return out


def _with_q(program, alg, q):
    params = tuple(alg.params) + (ir.ParamSig(q, "int", None, (">=", _ONE)),)
    return ir.Algorithm(alg.name, params, alg.body, alg.doc, alg.model, over=None)


def typed(program, alg, e, q, bool_=False):
    """``e`` annotated and verified (a time, or a condition with ``bool_``) over the algorithm's
    parameters and ``q``."""
    from tlop.ir import types as T
    from tlop.ir.typecheck import algorithm_env, annotate
    from tlop.ir.verify import verify_expr

    env = algorithm_env(_with_q(program, alg, q))
    want = T.BOOL if bool_ else T.TIME
    out = annotate(e, program, env, want)
    verify_expr(out, program, env, want, what=f"the closed form of {alg.name}")
    return out


def closed_form(program: ir.Program, alg: ir.Algorithm, mapping_kind: str, *,
                simplify: Optional[Callable] = None) -> Optional[ir.Expr]:
    """The cost of ``alg`` under ``mapping_kind`` with the ranks per node a variable (named by
    :attr:`Derivation.q`, ``Q`` unless the algorithm has a parameter of that name), as
    ``if conditions then closed form else the schedule`` — None when no closed form is derived.
    Engines that cannot run a schedule use :func:`derive` and test ``conditions`` themselves."""
    d = derive(program, alg, mapping_kind, simplify=simplify)
    if not d.ok:
        return None
    if isinstance(d.conditions, ir.Num) and d.conditions.value:
        return d.expr
    return typed(program, alg, ir.Cond(d.conditions, d.expr, alg.body), d.q)
