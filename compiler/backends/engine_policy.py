"""Which engine evaluates: the one policy of the command line, the Python API and batch paths.

What it does: :func:`predicted_work` turns an algorithm and one bound point into a number of
*work units* — the reduction terms its evaluation runs plus, for every schedule stage, the
elements its ``par``/``seq`` loops enumerate (an upper bound: ``where`` filters are not
applied), a fixed charge per stage and per phase of a rank's sequence — known before anything is evaluated (the count is an
ordinary IR expression built like :func:`tlop.backends.budget.term_count`, evaluated by the
interpreter at the point, vectorised over an outer index).  :func:`choose` compares what the
interpreter would cost for the evaluation (work × :data:`INTERP_S_PER_UNIT` per point, plus a
fixed cost per point) with what native code would cost (compiling it — cold, or loading it from
the on-disk cache when :func:`tlop.backends.jit.evaluator.is_cached` says it is there — then
work × :data:`NATIVE_S_PER_UNIT` per point) and returns a :class:`Choice` naming the engine and
why.  :class:`Tally` is the rent-or-buy rule of a long run of cheap calls (the API's): the
interpreted time actually spent on one (algorithm, profile, mapping) is summed, and once it
exceeds what compiling would cost, the evaluator is compiled.

The constants are measured on this project's reference machine (2 vCPU;
``bench/bench_engine_policy.py`` prints, per case, the engine chosen and both engines' times
in one run): their only role is to put the crossover in the right decade.

What it does not do: compile or evaluate anything itself (the callers do), decide whether an
algorithm *can* be compiled (the JIT's :class:`~tlop.backends.jit.NotCompilable` says so, and
the callers fall back to the interpreter), or apply to ``--engine jit``/``interp``: an explicit
engine is always obeyed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from tlop import ir

__all__ = ["Choice", "choose", "predicted_work", "Tally", "INTERP_S_PER_UNIT", "NATIVE_S_PER_UNIT",
           "COMPILE_COLD_S", "COMPILE_HIT_S", "DATAFLOW_INTERP_FACTOR", "is_dataflow", "INTERP_S_PER_POINT", "STAGE_UNITS", "PHASE_UNITS", "SCHEDULE_POINTS", "RENT_SHARE"]

#: interpreter seconds per work unit (a reduction term, or one enumerated stage element)
INTERP_S_PER_UNIT = 3.0e-7
#: the dataflow interpreter (LogGP, pLogP) against τ-Lop's per work unit: 185-850 ns a unit against
#: 220-830 on the reference machine, its median over the stdlib's schedules ~1.5× τ-Lop's per
#: big evaluation (``bench/calibrate_engine_policy.py``, bench/RESULTS.md)
DATAFLOW_INTERP_FACTOR = 1.5
#: native seconds per work unit
NATIVE_S_PER_UNIT = 5.0e-8
#: interpreter seconds of one point beyond its work (binding, dispatch, numpy set-up)
INTERP_S_PER_POINT = 1.0e-4
#: work units charged per schedule stage (the interpreter's per-stage numpy set-up)
STAGE_UNITS = 1500
#: work units charged per step of a ``seq`` outside any ``par`` (a phase the interpreter reduces on its own)
PHASE_UNITS = 300
#: seconds to generate, optimise and load native code for a schedule (no cache entry)
COMPILE_COLD_S = 1.5
#: seconds to obtain native code from the on-disk cache (including the closed-form derivation)
COMPILE_HIT_S = 0.25

#: the share of the compile cost a run of cheap calls spends interpreting before it compiles (rent
#: or buy: a long loop then costs at most 1 + RENT_SHARE times what compiling first would have)
RENT_SHARE = 0.5
#: without a point to predict from, a schedule is compiled for at least this many evaluations
SCHEDULE_POINTS = 16

_ONE = ir.Num(1.0)
_WORK_CACHE: dict = {}


@dataclass(frozen=True)
class Choice:
    """The engine an evaluation uses and why (shown by ``--explain`` and ``--verbose``)."""
    engine: str                # "jit" or "interp"
    reason: str
    work: float = math.nan     # predicted work units per point (NaN: not predicted)
    interp_s: float = math.nan
    native_s: float = math.nan

    def describe(self) -> str:
        if math.isnan(self.work):
            return f"engine {self.engine}: {self.reason}"
        return (f"engine {self.engine}: {self.reason} (predicted work {self.work:,.0f} units a point; "
                f"interpreter ≈ {_secs(self.interp_s)}, native ≈ {_secs(self.native_s)} with compiling)")


def _secs(s: float) -> str:
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


# ---------------------------------------------------------------------------- the work expression
def _reduce_terms(e: ir.Expr, memo: dict) -> Optional[ir.Expr]:
    """An estimate of the reduction terms ``e`` runs, as an expression of the process count:
    every reduction counted as :data:`tlop.ir.RANKS` iterations of its body (a rank's
    ``min q in 0 .. P - 1: …``), without evaluating its bounds; None when ``e`` runs none."""
    got = memo.get(id(e))
    if got is not None and got[0] is e:
        return got[1]
    out: Optional[ir.Expr] = None
    for c in ir.children(e):
        if isinstance(c, ir.Expr):
            t = _reduce_terms(c, memo)
            if t is not None:
                out = t if out is None else ir.Bin("+", out, t)
    if isinstance(e, ir.Reduce):
        body = _reduce_terms(e.body, memo)
        per = _ONE if body is None else ir.Bin("+", _ONE, body)
        own = ir.Bin("*", ir.Var(ir.RANKS), per)
        bounds = out if body is None else None  # the children's terms, less the body's (counted in own)
        if body is not None:
            bounds = None
            for c in (e.lo, e.hi):
                t = _reduce_terms(c, memo)
                if t is not None:
                    bounds = t if bounds is None else ir.Bin("+", bounds, t)
        out = own if bounds is None else ir.Bin("+", own, bounds)
    memo[id(e)] = (e, out)
    return out


def _inner(*exprs) -> ir.Expr:
    """A reduction whose term count is the estimate (:func:`_reduce_terms`) of the reductions
    ``exprs`` run (``where leader(P, p) == p``, a rank found by ``min q in 0 .. P - 1: …``):
    work each time the element is enumerated; 0 when none does."""
    total: Optional[ir.Expr] = None
    memo: dict = {}
    for e in exprs:
        t = _reduce_terms(e, memo)
        if t is not None:
            total = t if total is None else ir.Bin("+", total, t)
    if total is None:
        return ir.Num(0.0)
    return ir.Reduce("sum", "%inner", _ONE, total, _ONE)


def _stage_count(item: ir.Expr, in_par: bool = False) -> ir.Expr:
    """An expression whose reduction-term count is the number of elements ``item`` enumerates,
    each step of a ``seq`` outside any ``par`` (a phase of its own, which the interpreter
    reduces on its own) charged :data:`PHASE_UNITS` more, plus the terms of the reductions an
    element's condition, ranks and sizes run."""
    if isinstance(item, ir.Loop):
        body = ir.Bin("+", _stage_count(item.body, in_par or item.kind == "par"), _inner(item.where))
        if item.kind == "seq" and not in_par:
            body = ir.Bin("+", ir.Reduce("sum", "%phase", _ONE, ir.Num(float(PHASE_UNITS)), _ONE), body)
        lo, hi = item.lo, item.hi
        bounds = _inner(lo, hi)
        if not isinstance(bounds, ir.Num):  # bounds that run reductions are not evaluated: P iterations
            lo, hi = ir.Num(0.0), ir.Bin("-", ir.Var(ir.RANKS), _ONE)
        return ir.Bin("+", ir.Reduce("sum", item.var, lo, hi, body), bounds)
    if isinstance(item, ir.Block):
        parts = [_stage_count(i, in_par) for i in item.items]
        out = parts[0] if parts else ir.Num(0.0)
        for p in parts[1:]:
            out = ir.Bin("+", out, p)
        return out
    if isinstance(item, ir.Send):
        return ir.Bin("+", _ONE, _inner(item.src, item.dst, item.size, item.weight))
    if isinstance(item, ir.Compute):
        return ir.Bin("+", _ONE, _inner(item.rank, item.cost))
    return _ONE


def _workify(e: ir.Expr, memo: dict, dataflow: bool = False) -> ir.Expr:
    """``e`` with every stage replaced by the loops its elements come from (and a fixed
    :data:`STAGE_UNITS` term range), so that :func:`tlop.backends.budget.term_count` of the
    result counts the work.  ``dataflow`` (LogGP, pLogP): a sum of stages that do not depend on
    its index is still run stage by stage (the ranks' clocks carry from one to the next)."""
    got = memo.get(id(e))
    if got is not None and got[0] is e:
        return got[1]
    if isinstance(e, ir.Stage):
        out: ir.Expr = ir.Reduce("sum", "%stage", ir.Num(1.0), ir.Num(float(STAGE_UNITS)), _ONE)
        for item in e.items:
            out = ir.Bin("+", out, _stage_count(item))
    elif not ir.has_schedule(e):
        out = e
    elif isinstance(e, ir.Reduce):
        if e.kind == "sum" and not dataflow and e.var not in ir.free_vars(e.body):
            out = _workify(e.body, memo, dataflow)  # τ-Lop engines price a schedule that does not depend on the index once
        else:
            out = ir.Reduce(e.kind, e.var, e.lo, e.hi, _workify(e.body, memo, dataflow))
    elif isinstance(e, ir.Let):
        out = ir.Let(e.bindings, _workify(e.body, memo, dataflow))
    elif isinstance(e, ir.Cond):
        out = ir.Cond(e.test, _workify(e.then_, memo, dataflow), _workify(e.else_, memo, dataflow))
    elif isinstance(e, ir.Bin) and dataflow and e.op == "*" and ir.has_schedule(e.lhs) != ir.has_schedule(e.rhs):
        # ``(P - 1) * stage {…}``: the dataflow engines run the stage that many times
        sched, count = (e.lhs, e.rhs) if ir.has_schedule(e.lhs) else (e.rhs, e.lhs)
        out = ir.Reduce("sum", "%repeat", _ONE, count, _workify(sched, memo, dataflow))
    elif isinstance(e, ir.Bin):
        out = ir.Bin(e.op, _workify(e.lhs, memo, dataflow), _workify(e.rhs, memo, dataflow))
    else:  # any other holder of a schedule: its schedule children, summed
        out = ir.Num(0.0)
        for c in ir.children(e):
            if isinstance(c, ir.Expr) and ir.has_schedule(c):
                out = ir.Bin("+", out, _workify(c, memo, dataflow))
    memo[id(e)] = (e, out)
    return out


def _work_count(alg: ir.Algorithm, dataflow: bool = False):
    key = (id(alg), dataflow)
    got = _WORK_CACHE.get(key)
    if got is None or got[0] is not alg:
        from tlop.backends.budget import term_count

        if len(_WORK_CACHE) > 1024:
            _WORK_CACHE.clear()
        got = (alg, term_count(_workify(alg.body, {}, dataflow)))
        _WORK_CACHE[key] = got
    return got[1]


def is_dataflow(program: ir.Program) -> bool:
    """Whether ``program``'s schedules have the dataflow meaning (LogGP, pLogP, LogGPH)."""
    from tlop.backends.dataflow_names import DATAFLOW_MODELS

    return program.model in DATAFLOW_MODELS


def predicted_work(program: ir.Program, alg: ir.Algorithm, env: dict, profile=None, mapping=None) -> float:
    """Work units of evaluating ``alg`` at the bound scalar point ``env`` (0 when it runs no
    reduction and no stage); NaN when the count itself cannot be evaluated there (the
    evaluation will report why)."""
    count = _work_count(alg, is_dataflow(program))
    if count is None:
        return 0.0
    from tlop.backends.budget import count_terms
    from tlop.backends.interp import Interpreter

    env = dict(env)
    if "P" in env and ir.RANKS not in env:
        env[ir.RANKS] = env["P"]
    try:
        interp = Interpreter(program, profile, mapping)
        with _quiet():
            return float(count_terms(interp, count, env, 1.0))
    except Exception:  # noqa: BLE001 - an error of the point itself: the evaluation reports it
        return math.nan


class _quiet:
    def __enter__(self):
        import numpy as np

        self._old = np.seterr(all="ignore")

    def __exit__(self, *exc):
        import numpy as np

        np.seterr(**self._old)


# ---------------------------------------------------------------------------- the choice
def interp_seconds(work: float, points: int, dataflow: bool = False) -> float:
    per_unit = INTERP_S_PER_UNIT * (DATAFLOW_INTERP_FACTOR if dataflow else 1.0)
    return points * (INTERP_S_PER_POINT + work * per_unit)


def native_seconds(work: float, points: int, cached: Optional[bool]) -> float:
    compile_s = COMPILE_HIT_S if cached else COMPILE_COLD_S
    return compile_s + points * work * NATIVE_S_PER_UNIT


def choose(program: ir.Program, alg: ir.Algorithm, env: Optional[dict], points: int = 1, *,
           profile=None, mapping=None, override: str = "auto", cached=None, schedule_only: bool = True) -> Choice:
    """The engine for ``points`` evaluations of ``alg`` like the bound scalar point ``env`` (the
    largest of a grid, so the work is not underestimated).  ``override`` ``"jit"``/``"interp"``
    is obeyed; ``cached`` is a callable telling whether native code is on disk (asked only when
    the answer matters).  With ``schedule_only`` (the command line's rule for closed forms:
    they cost microseconds in either engine), an algorithm without a schedule is left to the
    interpreter for a single point."""
    if override in ("jit", "interp"):
        return Choice(override, f"--engine {override}")
    if any(p.per_rank is not None for p in alg.params):
        return Choice("interp", "per-rank arguments (the JIT refuses them)")
    schedule = alg.over is not None or ir.has_schedule(alg.body)
    if env is None:  # nothing to predict from: the count of points decides
        many = points >= (SCHEDULE_POINTS if schedule else 2)
        return Choice("jit" if many else "interp", f"{points:,} point{'s' if points != 1 else ''} "
                      f"({'at least' if many else 'fewer than'} {SCHEDULE_POINTS if schedule else 2}; no point "
                      f"to predict the work from)")
    if not schedule and schedule_only and points == 1:
        return Choice("interp", "one point of a cost expression without a schedule")
    work = predicted_work(program, alg, env, profile, mapping)
    if math.isnan(work):
        return Choice("interp", "the point cannot be priced (the interpreter reports why)")
    interp = interp_seconds(work, points, is_dataflow(program))
    cold = native_seconds(work, points, False)
    hit = native_seconds(work, points, True)
    if interp <= hit:
        return Choice("interp", "interpreting costs less than loading native code", work, interp, hit)
    if interp > cold:
        return Choice("jit", "interpreting costs more than compiling", work, interp, cold)
    on_disk = bool(cached()) if cached is not None else False
    if on_disk:
        return Choice("jit", "native code is in the on-disk cache", work, interp, hit)
    return Choice("interp", "interpreting costs less than compiling", work, interp, cold)


class Tally:
    """Rent or buy for a run of calls: interpreted seconds spent, against the compile cost."""
    __slots__ = ("spent",)

    def __init__(self):
        self.spent = 0.0

    def add(self, seconds: float, cached: bool = False) -> bool:
        """Count ``seconds`` of interpreting; True when it is time to compile (the interpreted
        time has reached :data:`RENT_SHARE` of the compile cost, ``cached`` or cold)."""
        self.spent += seconds
        return self.spent >= RENT_SHARE * (COMPILE_HIT_S if cached else COMPILE_COLD_S)
