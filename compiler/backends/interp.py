"""The reference interpreter of the cost IR: the oracle every faster engine must agree with.

What it does: evaluates an IR expression of :mod:`tlop.ir` against a platform profile, over
Python floats or numpy arrays (any argument may be an array; numpy broadcasting applies).  It
implements the τ-Lop semantics described in :mod:`tlop.ir` literally: a concurrency factor
carried down the tree (``Conc``), transmissions expanded through the profile's channel
decomposition (``Transmit``), and parallel composition through the one shared reduction
:func:`tlop.ir.taulop.expand_parcomp` (``ParComp``).  Operators and functions are those of
:mod:`tlop.ir.ops`.  It dispatches through :class:`tlop.ir.visitor.ExprFunctor`.

What it does not do: simplify, cache, compile, or check types (the front end did).  It is
written for clarity and exactness, not speed; it never mutates the IR.

Layout: the core (this module); stages and the mapping queries (:mod:`.interp_schedules`, a
part of :class:`Interpreter`); the limits, checks and helpers every engine shares
(:mod:`.interp_checks`, re-exported here).

Rules an engine must reproduce exactly:

* ``sum`` over an empty range is 0; ``max``/``min`` over an empty range is an error.
* reduction bounds must be finite and within ±2^53 (:data:`BOUND_LIMIT`), where doubles still
  hold every integer; a reduction longer than :data:`MAX_TERMS` is an error (an engine limit
  the JIT shares), and so is an evaluation whose reductions run more than :data:`MAX_TERMS`
  terms in all (nested reductions multiply), counted before it starts
  (:mod:`tlop.backends.budget`).
* comparisons and logic give 1.0/0.0; ``%`` is the floored remainder; ``/`` is true division.
* a **schedule stage** is enumerated and reduced by :mod:`tlop.backends.schedule` for one point
  at a time (array arguments: once per element); ``node(p)`` asks the mapping.  Both need the
  interpreter's ``mapping`` and the process count under :data:`tlop.ir.RANKS` in the
  environment.  A ``sum`` whose body holds a stage that does not depend on the index is
  evaluated once and multiplied by the number of terms (the ring's P − 1 identical stages).
* sizes and concurrencies are checked where they are used (:func:`check_size`,
  :func:`check_concurrency`): a negative message size of a transmission or a table lookup, and
  a concurrency that is not positive (``A ‖ …``, the count of an item of a parallel
  composition, a table's ``tau``), are errors.  Inside a parallel composition a size is not
  checked: there a size below 0 counts as 0 and an increment ``m_i − m_{i−1}`` that is ≤ 0 is
  dropped (:mod:`tlop.ir.taulop`; ``T(m − s) ‖ T(s)`` may legitimately have ``m − s ≤ 0``),
  and the transmissions the reduction builds only ever get positive increments.
* **arrays are many scalars**: the result for each element of an array argument is exactly what
  evaluating that element alone gives, and an array evaluation fails exactly when some element
  fails.  So ``if`` with an array test evaluates each branch only on the elements that take it;
  a reduction with array bounds evaluates its body at index i only on the elements whose range
  holds i (and checks each element's bounds as a scalar evaluation would); a channel-valued
  array selects, per channel, the elements on that channel.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from tlop import ir
from tlop.ir import ops
from tlop.ir.memo import free_vars as _free_vars, has_schedule as _has_schedule
from tlop.ir.taulop import expand_parcomp
from tlop.ir.visitor import ExprFunctor
from tlop.runtime.codes import code_of
from tlop.runtime.diagnostics import Diagnostic, TlopError

__all__ = ["Interpreter", "evaluate", "EvalError", "MAX_TERMS", "BOUND_LIMIT", "check_reduce_bounds", "check_size",
           "check_concurrency"]


from tlop.backends.interp_checks import (BOUND_LIMIT, MAX_TERMS, EvalError, check_concurrency, check_reduce_bounds,
                                         check_size, _is_array, _node_fact, _restrict, _scalar, _shape)
from tlop.backends.interp_schedules import ScheduleEvaluation


class Interpreter(ScheduleEvaluation, ExprFunctor):
    """Evaluates IR of one :class:`~tlop.ir.Program` on one profile."""

    visit_prefix = "_eval_"

    def __init__(self, program: ir.Program, profile, mapping=None, schedules: str = "sort", stage_recorder=None):
        self.program = program
        #: how stages are reduced: "sort" (the oracle) or "count" (:mod:`tlop.backends.schedule_count`,
        #: the faster path property-tested against it; the API and ``--engine auto`` use it)
        self.schedules = schedules
        self.profile = profile
        #: the process mapping (:mod:`tlop.runtime.mapping`) schedules are evaluated with
        self.mapping = mapping
        self._expansions: dict = {}  # id(ParComp) -> (node, expansion)
        self._stages = None  # the StageEvaluator, made on first use
        self._dataflow = None  # the Dataflow pricer (LogGP, pLogP), made on first use
        #: whether schedules mean a dataflow program here (the module's model: LogGP, pLogP)
        from tlop.backends.dataflow import DATAFLOW_MODELS

        self.dataflow = program.model in DATAFLOW_MODELS
        self._composable: dict = {}  # id(root expression) -> (node,) once checked
        self._holds: dict = {}  # id(node) -> (node, whether it contains a stage)
        #: given a StageDetail for every stage evaluated (tlop explain); with it, every stage of a
        #: ``sum`` is evaluated, even one that does not depend on the index
        self.stage_recorder = stage_recorder

    # ------------------------------------------------------------------ public
    def eval(self, e: ir.Expr, env: Mapping[str, Any], conc=1.0):
        if self.dataflow:
            got = self._composable.get(id(e))
            if got is None or got[0] is not e:
                from tlop.backends.dataflow import check_composition

                check_composition(e, self.program.model)
                self._composable[id(e)] = (e,)
        with np.errstate(all="ignore"):
            self._check_budget(e, env, conc)
            return _scalar(self.visit(e, dict(env), conc))

    _eval = ExprFunctor.visit

    # ------------------------------------------------------------------ the evaluation protocol
    # what other engines (stage enumeration, dataflow pricing, the term budget) call: a
    # sub-expression's value, a transmission's cost, whether an expression holds a stage
    def evaluate(self, e: ir.Expr, env: Mapping[str, Any], conc=1.0):
        """The value of sub-expression ``e`` (scalars or numpy arrays in ``env``), without the
        top-level checks of :meth:`eval` (composition, term budget)."""
        return self._eval(e, env, conc)

    def transmit(self, name: str, channel: str, size, conc, span=None):
        """``conc ‖ name[channel](size)``: the transmission's variant on ``channel``, checked size."""
        return self._transmit(name, channel, size, conc, span)

    def holds_stage(self, e: ir.Expr) -> bool:
        """Whether ``e`` contains a schedule stage."""
        return self._holds_stage(e)

    def _check_budget(self, e, env, conc) -> None:
        """The whole evaluation runs at most :data:`MAX_TERMS` reduction terms per point,
        counted before it starts (:mod:`tlop.backends.budget`)."""
        from tlop.backends.budget import count_terms, over_budget_error, term_count

        count = term_count(e)
        if count is None:
            return
        total = np.asarray(count_terms(self, count, dict(env), conc), dtype=float)
        over = total > MAX_TERMS
        if over.any():
            raise over_budget_error(float(total[over].flat[0]) if total.ndim else float(total), e)

    # ------------------------------------------------------------------ element-wise selection
    def _split(self, shape, parts, env, conc):
        """Evaluate ``thunk(env', conc')`` for each ``(mask, thunk)`` of ``parts`` on the
        elements of ``mask`` only, and assemble one array of ``shape``."""
        out = np.empty(shape, dtype=float)
        for mask, thunk in parts:
            n = int(np.count_nonzero(mask))
            if n == 0:
                continue
            if n == mask.size:
                out[...] = thunk(env, conc)
                continue
            sub_env, sub_conc = _restrict(env, conc, shape, mask)
            out[mask] = thunk(sub_env, sub_conc)
        return out

    # ------------------------------------------------------------------ core
    def _eval_Num(self, e, env, conc):
        return e.value

    def _eval_Var(self, e, env, conc):
        try:
            return env[e.name]
        except KeyError:
            raise EvalError(f"no value for '{e.name}'", e.span) from None

    def _eval_Bin(self, e, env, conc):
        if self.dataflow and e.op in ("+", "*") and self._holds_stage(e):
            return self._schedule_program(e, env, conc)
        a = self._eval(e.lhs, env, conc)
        b = self._eval(e.rhs, env, conc)
        if e.op not in ops.BINARY:
            raise EvalError(f"unknown operator '{e.op}'", e.span)
        return ops.BINARY[e.op](a, b)

    def _eval_Neg(self, e, env, conc):
        return ops.negate(self._eval(e.operand, env, conc))

    def _eval_Not(self, e, env, conc):
        return ops.logical_not(self._eval(e.operand, env, conc))

    def _eval_Fn(self, e, env, conc):
        args = [self._eval(a, env, conc) for a in e.args]
        return ops.call(e.name, args)

    def _eval_Cond(self, e, env, conc):
        t = self._eval(e.test, env, conc)
        if not _is_array(t):
            return self._eval(e.then_ if ops.truth(t) else e.else_, env, conc)
        shape = _shape(env, conc, t)
        yes = np.broadcast_to(ops.truth(t), shape)
        return self._split(shape, [(yes, lambda en, c: self._eval(e.then_, en, c)),
                                   (~yes, lambda en, c: self._eval(e.else_, en, c))], env, conc)

    def _eval_Let(self, e, env, conc):
        values = [(name, self._eval(v, env, conc)) for name, v in e.bindings]
        inner = dict(env)
        inner.update(values)
        return self._eval(e.body, inner, conc)

    def _stage_invariant(self, e) -> bool:
        """Whether ``e`` (a Reduce) is a ``sum`` of a schedule that does not depend on its index."""
        return self.stage_recorder is None and _node_fact(
            "invariant", e, lambda e: e.kind == "sum" and _has_schedule(e.body) and e.var not in _free_vars(e.body))

    def _eval_Reduce(self, e, env, conc):
        if self.dataflow and e.kind == "sum" and self._holds_stage(e):
            return self._schedule_program(e, env, conc)
        lo = self._eval(e.lo, env, conc)
        hi = self._eval(e.hi, env, conc)
        if not (_is_array(lo) or _is_array(hi)) and self._stage_invariant(e):
            start, stop = check_reduce_bounds(e.kind, float(lo), float(hi), e.span)
            if stop < start:
                return 0.0
            return np.multiply(float(stop - start + 1), self._eval(e.body, env, conc))
        if not (_is_array(lo) or _is_array(hi)):
            start, stop = check_reduce_bounds(e.kind, float(lo), float(hi), e.span)
            inner = dict(env)
            acc = 0.0 if e.kind == "sum" else (-np.inf if e.kind == "max" else np.inf)
            pick = np.add if e.kind == "sum" else (ops.maximum if e.kind == "max" else ops.minimum)
            for i in range(start, stop + 1):
                inner[e.var] = float(i)
                acc = pick(acc, self._eval(e.body, inner, conc))
            return acc
        return self._reduce_elementwise(e, lo, hi, env, conc)

    def _reduce_elementwise(self, e, lo, hi, env, conc):
        """A reduction with array bounds: each element checked and summed as a scalar
        evaluation would, the body evaluated at index i only where i is in the range."""
        shape = _shape(env, conc, lo, hi)
        lo_a = np.broadcast_to(np.asarray(lo, dtype=float), shape)
        hi_a = np.broadcast_to(np.asarray(hi, dtype=float), shape)
        bad = ~(np.isfinite(lo_a) & np.isfinite(hi_a))
        bad |= (np.abs(lo_a) > BOUND_LIMIT) | (np.abs(hi_a) > BOUND_LIMIT)
        start = np.ceil(np.where(bad, 0.0, lo_a))
        stop = np.floor(np.where(bad, 0.0, hi_a))
        bad |= stop - start + 1 > MAX_TERMS
        if e.kind != "sum":
            bad |= stop < start
        if bad.any():
            k = int(np.flatnonzero(bad.ravel())[0])
            check_reduce_bounds(e.kind, float(lo_a.flat[k]), float(hi_a.flat[k]), e.span)
            raise AssertionError("unreachable: the bounds check must fail")  # pragma: no cover
        if self._stage_invariant(e):  # count · body, on the elements with a non-empty range
            live = np.broadcast_to(stop >= start, shape)
            counts = np.where(live, stop - start + 1, 0.0)
            return self._split(shape, [(live, lambda en, c: np.multiply(
                                            np.broadcast_to(counts, shape)[live] if live.size != int(live.sum())
                                            else counts, self._eval(e.body, en, c))),
                                       (~live, lambda en, c: 0.0)], env, conc)
        pick = np.add if e.kind == "sum" else (ops.maximum if e.kind == "max" else ops.minimum)
        acc = np.full(shape, 0.0 if e.kind == "sum" else (-np.inf if e.kind == "max" else np.inf))
        inner = dict(env)
        for first, last in _union(start.ravel(), stop.ravel()):
            for i in range(first, last + 1):
                active = (start <= i) & (i <= stop)
                n = int(np.count_nonzero(active))
                if n == 0:
                    continue
                inner[e.var] = float(i)
                if n == active.size:
                    acc = pick(acc, self._eval(e.body, inner, conc))
                    continue
                sub_env, sub_conc = _restrict(inner, conc, shape, active)
                acc[active] = pick(acc[active], self._eval(e.body, sub_env, sub_conc))
        return acc

    # ------------------------------------------------------------------ profile access
    def _check_channel(self, c: float, span) -> str:
        if not (math.isfinite(c) and float(c).is_integer() and 0 <= c < len(self.program.channels)):
            raise EvalError(f"{c:g} is not a channel of this program", span)
        return self.program.channels[int(c)]

    def _on_channel(self, expr, env, conc, fn):
        """``fn(model_channel, env, conc)`` for the channel ``expr`` denotes; with an array of
        channels, once per channel on the elements that select it (each element as a scalar
        evaluation would)."""
        c = self._eval(expr, env, conc)
        if not _is_array(c):
            return fn(self._check_channel(float(c), expr.span), env, conc)
        shape = _shape(env, conc, c)
        cb = np.broadcast_to(np.asarray(c, dtype=float), shape)
        with np.errstate(all="ignore"):
            valid = np.isfinite(cb) & (np.floor(cb) == cb) & (cb >= 0) & (cb < len(self.program.channels))
        if not valid.all():  # the first invalid element fails, as its scalar evaluation does
            self._check_channel(float(cb.flat[int(np.flatnonzero(~valid.ravel())[0])]), expr.span)
        parts = []
        for v in np.unique(cb):
            ch = self._check_channel(float(v), expr.span)
            parts.append((cb == v, lambda en, cc, ch=ch: fn(ch, en, cc)))
        return self._split(shape, parts, env, conc)

    def _profile_channel(self, model_channel, span, what):
        pch = self.profile.resolve_channel(model_channel)
        if pch is None:
            raise EvalError(
                f"profile '{self.profile.name}' has no channel for '{model_channel}' (needed by {what})", span)
        return pch

    def _eval_Lookup(self, e, env, conc):
        if e.channel is not None:
            return self._on_channel(e.channel, env, conc, lambda mch, en, c: self._lookup(e, mch, en, c))
        return self._lookup(e, None, env, conc)

    def _lookup(self, e, mch, env, conc):
        sig = self.program.tables[e.table]
        if mch is not None:
            pch = self._profile_channel(mch, e.span, f"table '{e.table}'")
            label = f"{e.table}[{mch}]"
        else:
            pch, label = None, e.table
        key = sig.profile_key(self.profile, pch)
        if not self.profile.has_table(key, pch):
            raise EvalError(f"table '{label}' is missing from profile '{self.profile.name}'", e.span)
        table = self.profile.table(key, pch)
        args = [self._eval(a, env, conc) for a in e.args]
        tau = None
        if sig.tau_index is not None:
            tau = np.multiply(args.pop(sig.tau_index), conc)
            check_concurrency(label, tau, e.span)
        check_size(label, args[0], e.span)
        try:
            return table.lookup(args[0], tau) if tau is not None else table.lookup(args[0])
        except TlopError as err:
            first = err.diagnostics[0]  # the table's own error (out of grid: E020), placed here
            raise EvalError(Diagnostic(f"{label}: {first.message}", e.span, code=code_of(first))) from None

    def _eval_Scalar(self, e, env, conc):
        if e.channel is not None:
            return self._on_channel(e.channel, env, conc, lambda mch, en, c: self._scalar_param(e, mch))
        return self._scalar_param(e, None)

    def _scalar_param(self, e, mch):
        if mch is not None:
            pch = self._profile_channel(mch, e.span, f"parameter '{e.name}'")
            label = f"{e.name}[{mch}]"
        else:
            pch, label = None, e.name
        key = self.program.scalars[e.name].profile_key(self.profile, pch)
        if not self.profile.has_scalar(key, pch):
            raise EvalError(f"parameter '{label}' is missing from profile '{self.profile.name}'", e.span)
        return self.profile.scalar(key, pch)

    # ------------------------------------------------------------------ τ-Lop operators
    def _eval_Conc(self, e, env, conc):
        f = self._eval(e.factor, env, conc)
        check_concurrency("the left side of '||'", f, e.factor.span or e.span)
        return self._eval(e.body, env, np.multiply(conc, f))

    def variant(self, name, model_channel, span):
        """The transmission decomposition of ``name`` on ``model_channel`` under this profile."""
        idx = self.program.channels.index(model_channel)
        variants = self.program.variants(name, idx)
        if not variants:
            raise EvalError(f"transmission '{name}' is not defined on channel '{model_channel}'", span)
        pch = self._profile_channel(model_channel, span, f"transmission '{name}'")
        kind = self.profile.transmission_kind(pch)
        chosen = self.program.variant_for(name, idx, kind)
        if chosen is not None:
            return chosen
        kinds = ", ".join(sorted(str(v.via) for v in variants))
        raise EvalError(
            f"profile channel '{pch}' is a '{kind}' channel but {name}[{model_channel}] "
            f"is only defined via {kinds}", span)

    def _transmit(self, name, model_channel, size, conc, span):
        check_size(f"{name}[{model_channel}]", size, span)
        v = self.variant(name, model_channel, span)
        return self._eval(v.body, {v.param: size}, conc)

    def _eval_Transmit(self, e, env, conc):
        return self._on_channel(e.channel, env, conc, lambda ch, en, c: self._transmit(
            e.name, ch, self._eval(e.size, en, c), c, e.span))

    def _eval_Xmit(self, e, env, conc):
        raise EvalError("a concurrent transmission item outside a parallel composition", e.span)

    def _eval_ParComp(self, e, env, conc):
        """The shared τ-Lop reduction (:func:`tlop.ir.taulop.expand_parcomp`), expanded once per
        node and evaluated like any other expression."""
        for operand in e.operands:  # the counts the user wrote (sizes below 0 count as 0 there)
            for x in operand:
                check_concurrency(f"the count of transmission '{x.name}' in a parallel composition",
                                  self._eval(x.count, env, conc), x.span)
        got = self._expansions.get(id(e))
        if got is None or got[0] is not e:
            got = (e, expand_parcomp(e).expr)
            self._expansions[id(e)] = got
        return self._eval(got[1], env, conc)


def _union(starts: np.ndarray, stops: np.ndarray):
    """The integer intervals ``[first, last]`` covering every non-empty ``[start, stop]``,
    merged where they touch or overlap, in increasing order."""
    keep = stops >= starts
    pairs = sorted(set(zip(starts[keep].astype(np.int64).tolist(), stops[keep].astype(np.int64).tolist())))
    out = []
    for a, b in pairs:
        if out and a <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def evaluate(program: ir.Program, expr: ir.Expr, profile, env: Mapping[str, Any], mapping=None):
    """Evaluate ``expr`` of ``program`` on ``profile`` with variables ``env`` (reference semantics)."""
    return Interpreter(program, profile, mapping).eval(expr, env)
