"""Closed forms of schedules as users read them: derived, simplified, printed.

What it does: :func:`derive` and :func:`closed_form` are the lowering pass
:mod:`tlop.lower.closedform` with the simplifier (:mod:`tlop.analysis.simplify`) applied to the
derived body and the side conditions written in tlop's notation (:mod:`tlop.backends.notation`);
:func:`expand_transmissions` writes a closed form at the transfer level of a profile (``tlop show
--mapping``); :func:`conditions_for_q` and :func:`substitute_q` fix the ranks per node.  The
derivation itself (patterns, normal forms, partial evaluation) is
:mod:`tlop.lower.closedform`, whose names this module also re-exports (the old import path).

What it does not do: derive anything the lowering pass does not (engines compile the lowering
pass's result directly: :mod:`tlop.lower.schedules`).
"""

from __future__ import annotations

from typing import Optional

from tlop import ir
from tlop.lower.closedform import KINDS, Derivation, NoClosedForm, parse_kind, typed  # noqa: F401
from tlop.lower.closedform import closed_form as _closed_form
from tlop.lower.closedform import derive as _derive
from tlop.lower.closedform.base import _b, _num
from tlop.lower.closedform.derive import _with_q
from tlop.lower.closedform.peval import _subst

__all__ = ["Derivation", "derive", "closed_form", "KINDS", "parse_kind", "expand_transmissions", "conditions_for_q",
           "substitute_q"]


def _describe(e: ir.Expr, program) -> str:
    from tlop.backends.notation import format_text

    return format_text(e, program)


def _simplified(program, alg, body, q):
    from tlop.analysis.simplify import PassManager, context_for

    a = _with_q(program, alg, q)
    a = ir.Algorithm(a.name, a.params, body, a.doc, a.model)
    return PassManager(context_for(program, a)).run(body).expr


def derive(program: ir.Program, alg: ir.Algorithm, kind: str, *, simplify: bool = True) -> Derivation:
    """The closed form of ``alg``'s cost under mapping ``kind`` (:func:`tlop.lower.closedform.derive`),
    simplified unless ``simplify=False``, its conditions in tlop's notation."""
    return _derive(program, alg, kind, simplify=_simplified if simplify else None, describe=_describe)


def closed_form(program: ir.Program, alg: ir.Algorithm, mapping_kind: str) -> Optional[ir.Expr]:
    """:func:`tlop.lower.closedform.closed_form`, simplified."""
    return _closed_form(program, alg, mapping_kind, simplify=_simplified)


# ----------------------------------------------------------------------------- a profile's view

def expand_transmissions(program: ir.Program, e: ir.Expr, profile) -> ir.Expr:
    """``e`` with every transmission on a constant channel replaced by the decomposition the
    profile's channel selects (``via tcp`` / ``via rdma``), and every ``A ‖ …`` pushed into the
    transfer tables' τ argument (``A ‖ L(m, τ) = L(m, A·τ)``; overheads are untouched) — the
    papers' transfer-level form (002 eq. 7–8).  Transmissions on channels not known at this
    point are left whole."""
    from tlop.backends.interp import Interpreter

    interp = Interpreter(program, profile)

    def go(x: ir.Expr, factor: Optional[ir.Expr]) -> ir.Expr:
        if isinstance(x, ir.Conc):
            f = x.factor if factor is None else _b("*", factor, x.factor)
            return go(x.body, f)
        if isinstance(x, ir.Transmit) and isinstance(x.channel, ir.Num):
            v = interp.variant(x.name, program.channels[int(x.channel.value)], x.span)
            return go(_subst(v.body, v.param, x.size), factor)
        if isinstance(x, ir.Lookup) and factor is not None:
            sig = program.tables.get(x.table)
            if sig is not None and sig.tau_index is not None:
                args = list(x.args)
                tau = args[sig.tau_index]
                args[sig.tau_index] = factor if isinstance(tau, ir.Num) and tau.value == 1 else _b("*", factor, tau)
                return ir.Lookup(x.table, x.channel, tuple(args), span=x.span)
            return x
        if isinstance(x, (ir.Transmit, ir.ParComp, ir.Xmit)) and factor is not None:
            return ir.Conc(factor, x)
        return ir.rebuild(x, tuple(go(k, factor) for k in ir.children(x)))

    return go(e, None)


def conditions_for_q(d: Derivation, q: int) -> tuple:
    """``(remaining, failed)``: the texts of the side conditions that remain when the ranks per
    node are ``q`` (those that hold whatever the other parameters are dropped), and of those
    that ``q`` alone makes false."""
    from tlop.backends.interp import Interpreter

    out, failed = [], []
    for c, text in zip(d.condition_parts, d.condition_text):
        c = _subst(c, d.q, _num(q))
        if not ir.free_vars(c):
            if not float(Interpreter(ir.Program((), {}, {}, {}, {}), None).eval(c, {})):
                failed.append(text.replace(d.q, str(q)) if d.q + " " not in text[:len(d.q) + 1] else
                              f"{text} ({d.q} = {q})")
            continue
        out.append(text.replace(d.q, str(q)))
    return out, failed


def substitute_q(program: ir.Program, alg: ir.Algorithm, d: Derivation, q: int, guarded: bool = False) -> ir.Expr:
    """The closed form with the ranks per node fixed to ``q`` (a concrete mapping), simplified;
    with ``guarded``, ``if conditions then closed form else the schedule``."""
    e = _subst(d.expr, d.q, _num(q))
    if guarded:
        e = ir.Cond(_subst(d.conditions, d.q, _num(q)), e, alg.body)
    e = _strip_types(e)
    e = typed(program, alg, e, d.q)
    if guarded:
        return e
    return _simplified(program, alg, e, d.q)


def _strip_types(e: ir.Expr) -> ir.Expr:
    """``e`` rebuilt without type annotations (a numeral's type is re-derived where it sits)."""
    from tlop.ir.nodes import _rebuild

    if isinstance(e, ir.Num):
        return ir.Num(e.value, span=e.span)
    if isinstance(e, ir.Var):
        return ir.Var(e.name, span=e.span)
    return _rebuild(e, tuple(_strip_types(k) for k in ir.children(e)), getattr(e, "span", None))
