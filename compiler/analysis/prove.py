"""Proofs with Z3: rule verification, translation validation, and inequalities between costs.

What it does:

* :func:`verify_rule` proves a rewrite rule sound: ``unsat(pre ∧ facts ∧ ¬(lhs = rhs))`` with
  the rule's pattern variables as Z3 constants of their sort (``any`` variables as
  uninterpreted functions of the concurrency factor) and only the model axioms the rule
  declares.  Rules over sums are proved by induction on their declared variable: a domain
  obligation (the side conditions imply ``n ≥ base``), a base case (every sum empty) and a step
  (each sum at ``n+1`` is its value at ``n`` plus the new term), as separate obligations.
  Computed rules are proved on each declared instance.  ``unknown`` is a failure.  A plain
  rule's outcome names the model assumptions its proof needed (``tlop rules --verify`` fails a
  rule that needs one it does not declare).
  :func:`condition_needed` drops one side condition and expects a counterexample.
* :func:`validate` (translation validation) proves a simplified expression equal to the
  original under the axioms of the families used: symbolically (sums with symbolic bounds
  abstracted), and if that is not decided, for bounded parameters by unrolling every sum to at
  most ``bound`` terms.  A failure carries a counterexample.
* :func:`prove_relation` proves or refutes ``lhs rel rhs`` under assumptions, in exact
  arithmetic (:data:`NUMBER_MODEL`: reals, whole numbers for int, channel and bytes; not the
  engines' doubles).  Contradictory assumptions give ``vacuous``, never ``proved``.  A
  counterexample is re-evaluated by the interpreter (:mod:`tlop.analysis.recheck`): the claim
  is ``refuted`` only when that evaluation confirms it; otherwise the answer is ``unknown``
  with the reason (spurious: the claim holds there; or the point could not be evaluated).

What it does not do: choose rules or simplify (:mod:`tlop.analysis.simplify`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional

import z3

from tlop import ir
from tlop.analysis.rules.core import Rule, match, MatchContext, PVAR
from tlop.analysis.smt import CostVar, Encoder, ModelAxioms, fresh_context, z3_value
from tlop.analysis.solver_time import solver_timeout_ms

__all__ = ["Outcome", "verify_rule", "condition_needed", "validate", "prove_relation", "Counterexample", "NUMBER_MODEL"]


@dataclass
class Counterexample:
    """Values of the variables and of both sides where a claim fails."""
    values: dict
    lhs: Optional[float] = None
    rhs: Optional[float] = None
    functions: dict = field(default_factory=dict)
    #: both sides re-evaluated by the interpreter at this point (claims only; see
    #: :mod:`tlop.analysis.recheck`); None when not re-evaluated
    checked: Optional[object] = None

    @property
    def spurious(self) -> bool:
        """True when re-evaluation shows the claim holds at this point (the solver's values
        came from an abstraction)."""
        return self.checked is not None and self.checked.fails is False

    def render(self, types: Optional[dict] = None) -> str:
        """The counterexample as text; ``types`` (variable -> type name) adds units to the
        variables' values (``m = 1024 B``, ``t = 2e-06 s``)."""
        types = types or {}
        parts = [f"{k} = {_fmt_typed(v, types.get(k))}" for k, v in sorted(self.values.items())]
        out = "counterexample: " + (", ".join(parts) if parts else "(no variables)")
        c = self.checked
        if c is not None and c.fails is not None:
            where = "with the tables the solver chose" if c.reads_profile else "by the interpreter"
            out += f"\n  lhs = {_fmt(c.lhs)}, rhs = {_fmt(c.rhs)}  (evaluated at this point {where})"
            if not (_close(c.lhs, self.lhs) and _close(c.rhs, self.rhs)):
                out += (f"\n  (the solver's abstraction of powers, logarithms or sums gave lhs = {_fmt(self.lhs)}, "
                        f"rhs = {_fmt(self.rhs)})")
        elif self.lhs is not None or self.rhs is not None:
            out += f"\n  lhs = {_fmt(self.lhs)}, rhs = {_fmt(self.rhs)}  (the solver's values"
            out += f"; the interpreter could not evaluate this point: {c.error})" if c is not None else ")"
        if self.functions:
            out += "\n  tables and transmissions as the solver chose them:"
        for k, v in sorted(self.functions.items()):
            out += f"\n    {v}"
        return out


def _close(a, b) -> bool:
    return a is not None and b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _fmt_typed(v, ty):
    if isinstance(v, (int, float)) and ty == "bytes":
        return f"{float(v):.10g} B"
    if isinstance(v, (int, float)) and ty in ("time", "cost"):
        return f"{float(v):.10g} s"
    return _fmt(v)


def _fmt(v):
    if v is None:
        return "?"
    if isinstance(v, float):
        return f"{v:.10g}"
    return str(v)


@dataclass
class Outcome:
    """The result of a proof: ``status`` is ``proved``, ``refuted`` or ``unknown`` (and, for
    :func:`prove_relation`, ``vacuous``)."""
    status: str
    seconds: float = 0.0
    counterexample: Optional[Counterexample] = None
    obligations: list = field(default_factory=list)  # (name, status, seconds)
    mode: str = "symbolic"
    detail: str = ""
    assumptions: tuple = ()  # the model assumptions (fact groups) a proof needed, sorted


    @property
    def ok(self) -> bool:
        return self.status == "proved"


def _interrupted(s) -> None:
    """Z3 answers ``unknown`` when Ctrl-C interrupts a check (it catches SIGINT itself): raise
    KeyboardInterrupt then, so that an interrupted proof is not reported as undecided."""
    if "interrupted" in s.reason_unknown():
        raise KeyboardInterrupt


def _check(facts, goal, timeout_ms):
    """Prove ``facts → goal``: returns (status, model)."""
    s = z3.Solver()
    s.set("timeout", solver_timeout_ms(timeout_ms))
    s.add(*facts)
    s.add(z3.Not(goal))
    r = s.check()
    if r == z3.unsat:
        return "proved", None
    if r == z3.sat:
        return "refuted", s.model()
    _interrupted(s)
    return "unknown", None


#: time for each check that tries to drop a model assumption from a finished proof
MINIMIZE_TIMEOUT_MS = 2000


def _check_tracked(groups: dict, base: list, goal, timeout_ms):
    """Prove ``base ∧ groups → goal`` and find which model assumptions the proof needs.

    ``groups`` maps a model-assumption name to its ground facts (:meth:`Encoder.fact_groups`
    without ``math``).  Each group is guarded by a Boolean literal; on ``unsat`` the unsat core
    names the groups used, and the core is shrunk by dropping one group at a time while the
    proof still goes through.  Returns ``(status, model, assumptions)``."""
    s = z3.Solver()
    s.set("timeout", solver_timeout_ms(timeout_ms))
    s.add(*base)
    lits = {}
    for name, facts in sorted(groups.items()):
        if not facts:
            continue
        lit = z3.Bool(f"assume!{name}")
        lits[name] = lit
        s.add(z3.Implies(lit, z3.And(*facts)))
    s.add(z3.Not(goal))
    r = s.check(*lits.values())
    if r == z3.sat:
        return "refuted", s.model(), ()
    if r != z3.unsat:
        _interrupted(s)
        return "unknown", None, ()
    core_ids = {str(c) for c in s.unsat_core()}
    used = [n for n, lit in lits.items() if str(lit) in core_ids]
    # shrink: a group whose removal keeps the proof is not needed; a check that does not finish
    # quickly keeps the group (over-reporting an assumption is safe, under-reporting is not)
    s.set("timeout", solver_timeout_ms(min(timeout_ms, MINIMIZE_TIMEOUT_MS)))
    for name in list(used):
        rest = [lits[n] for n in used if n != name]
        r = s.check(*rest)
        if r == z3.unknown:
            _interrupted(s)
        if r == z3.unsat:
            used.remove(name)
    return "proved", None, tuple(sorted(used))


def _split_groups(enc):
    """``(math facts, model-assumption groups)`` of an encoder (call once, at the end)."""
    groups = enc.fact_groups()
    return groups.pop("math"), groups


def _val(model, t):
    try:
        v = model.eval(t, model_completion=True)
        return z3_value(v)
    except Exception:
        return None


# ----------------------------------------------------------------------------- rules

def _axioms_of(rule: Rule) -> ModelAxioms:
    return ModelAxioms(linearity="linearity" in rule.axioms, a1="A1" in rule.axioms)


def _rule_env(rule: Rule, enc: Encoder):
    """Z3 values for the pattern variables, and the facts their sorts give."""
    env, facts, shown = {}, [], {}
    idx = {r.var for r in ir.walk(rule.lhs) if isinstance(r, ir.Reduce)}
    for name, sort in rule.vars.items():
        plain = name[1:]
        if sort == "any":
            deps = [i for i in idx if name.endswith("_" + i)]
            env[name] = CostVar(enc.func("cost_" + plain, 1 + len(deps)), tuple(deps))
        elif sort == "int":
            v = z3.Int(plain)
            env[name] = z3.ToReal(v)
            shown[plain] = env[name]
        else:
            v = z3.Real(plain)
            env[name] = v
            shown[plain] = v
    return env, facts, shown


def _counterexample(model, shown, lhs, rhs, enc) -> Counterexample:
    vals = {k: _val(model, t) for k, t in shown.items()}
    funcs = {}
    for d in model.decls():
        if d.arity() > 0 and (d.name().startswith("cost_") or d.name().startswith("xmit_")
                              or d.name().startswith("tbl_")):
            funcs[d.name()] = _function_text(d, model[d], getattr(enc, "program", None), getattr(enc, "tables", {}))
    return Counterexample(vals, _val(model, lhs), _val(model, rhs), funcs)


#: the most table entries of a counterexample printed per function
MAX_ENTRIES = 8


def _function_text(decl, interp, program, tables) -> str:
    """The values the solver chose for a table or transmission, one entry a line with units:
    ``L^shm(m = 1 B, tau = 2) = 3.000 µs``, then ``otherwise …``."""
    from tlop.ir import types as T
    from tlop.runtime.units import format_time

    name = decl.name()
    kind, _, base = name.partition("_")
    try:
        entries = interp.as_list()
    except Exception:  # not a function interpretation: print what the solver gave
        return str(interp)[:200]
    sig = (tables or {}).get(base) if kind == "tbl" else None
    if sig is None and program is not None and kind == "tbl":
        sig = program.tables.get(base)
    channels = list(program.channels) if program is not None else []

    def chan(v):
        i = z3_value(v)
        return channels[int(i)] if i is not None and float(i).is_integer() and 0 <= int(i) < len(channels) else str(v)

    def qty(v, ty):
        x = z3_value(v)
        if x is None:
            return str(v)
        if ty == T.BYTES:
            return f"{x:.6g} B"
        if ty == T.TIME:
            return format_time(float(x))
        return f"{x:.6g}"

    def head(args):
        if kind == "xmit":  # T(channel, m, concurrency)
            return f"{base}^{chan(args[0])}(m = {qty(args[1], T.BYTES)}, τ = {qty(args[2], None)})"
        if sig is not None:
            rest = list(args)
            ch = ""
            if sig.channel_indexed and rest:
                ch = f"^{chan(rest.pop(0))}"
            tys = list(getattr(sig, "param_tys", None) or [None] * len(sig.params))
            inner = ", ".join(f"{p} = {qty(a, t)}" for p, a, t in zip(sig.params, rest, tys))
            return f"{base}{ch}({inner})"
        return f"{base}({', '.join(qty(a, None) for a in args)})"

    value_ty = T.TIME
    lines = []
    for entry in entries[:-1][:MAX_ENTRIES]:
        *args, value = entry
        lines.append(f"{head(args)} = {qty(value, value_ty)}")
    if len(entries) - 1 > MAX_ENTRIES:
        lines.append(f"… {len(entries) - 1 - MAX_ENTRIES} more")
    lines.append(f"otherwise {qty(entries[-1], value_ty)}")
    return "\n    ".join(lines)  # continuation lines under the first


def verify_rule(rule: Rule, timeout_ms: int = 10000, drop: Optional[int] = None) -> Outcome:
    """Prove ``rule`` (optionally without its condition number ``drop``)."""
    t0 = time.perf_counter()
    if rule.compute is not None:
        out = _verify_computed(rule, timeout_ms)
    elif rule.induction is not None:
        out = _verify_induction(rule, timeout_ms, drop)
    else:
        out = _verify_plain(rule, timeout_ms, drop)
    out.seconds = time.perf_counter() - t0
    return out


def _conds(rule, drop):
    return [c for i, c in enumerate(rule.conditions) if i != drop]


def _verify_plain(rule, timeout_ms, drop):
    enc = Encoder(None, axioms=_axioms_of(rule), tables=rule.tables)
    env, facts, shown = _rule_env(rule, enc)
    lhs = enc.encode(rule.lhs, env)
    rhs = enc.encode(rule.rhs, env)
    pre = [enc.encode(c, env) != 0 for c in _conds(rule, drop)]
    math, groups = _split_groups(enc)
    status, model, used = _check_tracked(groups, facts + pre + math, lhs == rhs, timeout_ms)
    cex = _counterexample(model, shown, lhs, rhs, enc) if model is not None else None
    return Outcome(status, counterexample=cex, obligations=[("equality", status)], assumptions=used)


def _verify_induction(rule, timeout_ms, drop):
    var, base_e = rule.induction
    obligations = []
    cex = None

    def run(name, build):
        nonlocal cex
        enc = Encoder(None, axioms=_axioms_of(rule), tables=rule.tables)
        env, facts, shown = _rule_env(rule, enc)
        hyps, goal, lhs, rhs = build(enc, env)
        status, model = _check(facts + hyps + enc.all_facts(), goal, timeout_ms)
        obligations.append((name, status))
        if model is not None and cex is None:
            cex = _counterexample(model, shown, lhs, rhs, enc)
        return status

    def domain(enc, env):
        pre = [enc.encode(c, env) != 0 for c in _conds(rule, drop)]
        n = env[var]
        return pre, n >= enc.encode(base_e, env), None, None

    def base(enc, env):
        b = enc.encode(base_e, env)
        env = dict(env)
        env[var] = b
        empties = []

        def hook(enc_, e, env_, conc, lo, hi):
            empties.append(hi < lo)
            return z3.RealVal(0)
        enc.reduce_hook = hook
        lhs = enc.encode(rule.lhs, env)
        rhs = enc.encode(rule.rhs, env)
        enc.reduce_hook = None
        pre = [enc.encode(c, env) != 0 for c in _conds(rule, drop)]
        return pre, z3.And(lhs == rhs, *empties), lhs, rhs

    def step(enc, env):
        n = env[var]
        b = enc.encode(base_e, env)
        sums: dict = {}
        side = []

        def hook_n(enc_, e, env_, conc, lo, hi):
            key = (e, str(conc))
            if key not in sums:
                sums[key] = (z3.Real(f"S{len(sums)}"), lo, hi)
            return sums[key][0]

        def hook_n1(enc_, e, env_, conc, lo, hi):
            key = (e, str(conc))
            if key not in sums:
                return None
            s_n, lo_n, hi_n = sums[key]
            side.append(z3.And(lo == lo_n, hi == hi_n + 1, hi_n >= lo_n - 1))
            return s_n + enc_.body_fn(e, env_, conc)(hi)

        env_n1 = dict(env)
        env_n1[var] = n + 1
        enc.reduce_hook = hook_n
        lhs_n = enc.encode(rule.lhs, env)
        rhs_n = enc.encode(rule.rhs, env)
        pre_n = [enc.encode(c, env) != 0 for c in _conds(rule, drop)]
        enc.reduce_hook = hook_n1
        lhs1 = enc.encode(rule.lhs, env_n1)
        rhs1 = enc.encode(rule.rhs, env_n1)
        enc.reduce_hook = None
        pre_n1 = [enc.encode(c, env_n1) != 0 for c in _conds(rule, drop)]
        ih = z3.Implies(z3.And(*pre_n) if pre_n else z3.BoolVal(True), lhs_n == rhs_n)
        hyps = [n >= b, ih] + pre_n1
        return hyps, z3.And(lhs1 == rhs1, *side), lhs1, rhs1

    statuses = [run("domain", domain), run("base", base), run("step", step)]
    if all(s == "proved" for s in statuses):
        status = "proved"
    elif any(s == "unknown" for s in statuses):
        status = "unknown"
    else:
        # a failing induction step is not a refutation of the rule itself: confirm with a
        # concrete counterexample search (unrolled sums)
        status = _refute_bounded(rule, timeout_ms, drop)
        if status != "refuted":
            cex = None
    return Outcome(status, counterexample=cex, obligations=obligations, mode="induction")


def _refute_bounded(rule, timeout_ms, drop) -> str:
    enc = Encoder(None, axioms=_axioms_of(rule), tables=rule.tables, sum_mode="bounded", bound=6)
    env, facts, shown = _rule_env(rule, enc)
    lhs = enc.encode(rule.lhs, env)
    rhs = enc.encode(rule.rhs, env)
    pre = [enc.encode(c, env) != 0 for c in _conds(rule, drop)]
    status, _ = _check(facts + pre + enc.all_facts() + enc.assumptions, lhs == rhs, timeout_ms)
    return "refuted" if status == "refuted" else "unknown"


def _verify_computed(rule, timeout_ms):
    from tlop.analysis.rules.catalogue import INSTANCE_PROGRAM
    from tlop.analysis.simplify import Context, DEFAULT_FAMILIES
    obligations = []
    status = "proved"
    cex = None
    for inst in rule.instances:
        fv = sorted(ir.free_vars(inst))
        facts = tuple(ir.Bin(">=", ir.Var(v), ir.Num(1)) for v in fv)
        ctx = Context(INSTANCE_PROGRAM, facts=facts, families=DEFAULT_FAMILIES)
        b = match(rule, rule.lhs, inst, {}, MatchContext(INSTANCE_PROGRAM))
        new = rule.compute(b, ctx) if b is not None else None
        if new is None:
            obligations.append((f"instance {len(obligations) + 1}: rule did not apply", "unknown"))
            status = "unknown"
            continue
        res = validate(inst, new, INSTANCE_PROGRAM, assume=facts, axioms=_axioms_of(rule),
                       timeout_ms=timeout_ms)
        obligations.append((f"instance {len(obligations) + 1}", res.status))
        if res.status != "proved":
            status = res.status if status == "proved" else status
            cex = cex or res.counterexample
    return Outcome(status, counterexample=cex, obligations=obligations, mode="instances")


def condition_needed(rule: Rule, index: int, timeout_ms: int = 10000) -> Outcome:
    """Verify ``rule`` without its side condition ``index``: a needed condition gives
    ``refuted`` with a counterexample."""
    return verify_rule(rule, timeout_ms, drop=index)


# ----------------------------------------------------------------------------- translation validation

def validate(original: ir.Expr, simplified: ir.Expr, program: Optional[ir.Program] = None, *,
             assume=(), int_vars=(), axioms: ModelAxioms = ModelAxioms(), bound: int = 64,
             timeout_ms: int = 20000) -> Outcome:
    """Prove ``original = simplified`` under ``assume`` (IR conditions) and ``axioms``:
    symbolically first, then for sums of at most ``bound`` terms by unrolling."""
    t0 = time.perf_counter()
    tried = []
    for mode in ("abstract", "bounded"):
        enc = Encoder(program, axioms=axioms, int_vars=int_vars, sum_mode=mode, bound=bound)
        try:
            a = enc.encode(original)
            b = enc.encode(simplified)
            pre = [enc.encode(f) != 0 for f in assume]
        except Exception as err:  # an unencodable construct: report as unknown
            tried.append((mode, "unknown"))
            return Outcome("unknown", time.perf_counter() - t0, obligations=tried, mode=mode, detail=str(err))
        math, groups = _split_groups(enc)
        status, model, used = _check_tracked(groups, pre + math + enc.assumptions, a == b, timeout_ms)
        tried.append((mode, status))
        if status == "proved":
            return Outcome("proved", time.perf_counter() - t0, obligations=tried, assumptions=used,
                           mode="symbolic" if mode == "abstract" else f"bounded (sums of at most {bound} terms)")
        if status == "refuted" and mode == "bounded":
            shown = {k: v for k, v in enc.vars.items()}
            cex = _counterexample(model, shown, a, b, enc)
            return Outcome("refuted", time.perf_counter() - t0, counterexample=cex, obligations=tried, mode=mode)
    return Outcome(tried[-1][1] if tried[-1][1] != "refuted" else "unknown", time.perf_counter() - t0,
                   obligations=tried, mode="bounded")


# ----------------------------------------------------------------------------- inequalities

_RELS = {"<=": lambda a, b: a <= b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b,
         ">": lambda a, b: a > b, "==": lambda a, b: a == b, "=": lambda a, b: a == b,
         "!=": lambda a, b: a != b}


#: the number model every verdict of :func:`prove_relation` is about (printed with it)
NUMBER_MODEL = ("exact arithmetic (reals; int, channel and bytes variables whole numbers, bytes never negative), not the engines' "
                "doubles: their rounding is not covered")


def _satisfiable(facts, timeout_ms) -> Optional[bool]:
    """Whether ``facts`` have a model (None: undecided within the time)."""
    s = z3.Solver()
    s.set("timeout", solver_timeout_ms(min(timeout_ms, 10000)))
    s.add(*facts)
    r = s.check()
    if r == z3.unknown:
        _interrupted(s)
        return None
    return r == z3.sat


def prove_relation(lhs: ir.Expr, rel: str, rhs: ir.Expr, program: Optional[ir.Program] = None, *,
                   assume=(), int_vars=(), axioms: ModelAxioms = ModelAxioms(), bound: int = 64,
                   timeout_ms: int = 30000, mapping=None) -> Outcome:
    """Prove ``lhs rel rhs`` for every value of the free variables satisfying ``assume``, in
    :data:`NUMBER_MODEL`.  Sums with symbolic bounds are unrolled to ``bound`` terms (the result
    then holds where no sum is longer).

    The status is ``proved``; ``vacuous`` when the assumptions contradict each other (nothing
    satisfies them, so nothing is proved); ``refuted`` only with a counterexample the
    interpreter evaluated and confirmed (:mod:`tlop.analysis.recheck`: both sides computed
    there, reading only table values the solver chose consistently with the model's axioms;
    ``mapping`` evaluates schedules); else ``unknown``, ``detail`` saying why."""
    t0 = time.perf_counter()
    if rel not in _RELS:
        from tlop.runtime.diagnostics import TlopError
        raise TlopError(f"unknown relation '{rel}'; use one of <=, <, >=, >, ==, !=")
    fresh_context()  # the verdict and its time must not depend on the proofs run before
    last = None
    why = "the solver could not decide within the time"
    for mode in ("abstract", "bounded"):
        enc = Encoder(program, axioms=axioms, int_vars=int_vars, sum_mode=mode, bound=bound)
        a = enc.encode(lhs)
        b = enc.encode(rhs)
        pre = [enc.encode(f) != 0 for f in assume]
        math, groups = _split_groups(enc)
        if mode == "abstract" and pre and _satisfiable(pre + math, timeout_ms) is False:
            return Outcome("vacuous", time.perf_counter() - t0, mode=mode,
                           detail="the assumptions contradict each other (with the parameters' constraints "
                                  "and the algorithms' where clauses): no point satisfies them, so the claim "
                                  "is not proved")
        status, model, used = _check_tracked(groups, pre + math + enc.assumptions, _RELS[rel](a, b), timeout_ms)
        last = (status, model, enc, a, b, mode)
        if status == "proved" and mode == "bounded" and enc.assumptions \
                and _satisfiable(pre + math + enc.assumptions, timeout_ms) is not True:
            last = ("unknown", None, enc, a, b, mode)
            why = (f"no point satisfying the assumptions has every sum within --bound {bound} terms, "
                   f"so the bounded proof says nothing; a larger --bound may decide it")
            break  # no point has every sum within the bound: a bounded proof would be vacuous
        if status == "proved":
            return Outcome("proved", time.perf_counter() - t0, assumptions=used,
                           mode="symbolic" if mode == "abstract" else f"bounded (sums of at most {bound} terms)")
    status, model, enc, a, b, mode = last
    if status != "refuted" or model is None:
        return Outcome("unknown", time.perf_counter() - t0, mode=mode, detail=why)
    shown = {k: v for k, v in enc.vars.items() if not k.startswith("%")}  # never an internal name
    cex = _counterexample(model, shown, a, b, enc)
    from tlop.analysis.recheck import recheck

    cex.checked = recheck(program, model, enc, lhs, rhs, _RELS[rel], cex.values, mapping=mapping)
    c = cex.checked
    if c.fails is True and not c.error:
        return Outcome("refuted", time.perf_counter() - t0, counterexample=cex, mode=mode)
    if c.fails is False:
        detail = (f"the solver's counterexample is spurious: evaluated there, lhs = {_fmt(c.lhs)} and "
                  f"rhs = {_fmt(c.rhs)}, and the claim holds (the solver's values came from an abstraction)")
    else:
        detail = f"the solver's counterexample could not be confirmed: {c.error}"
    return Outcome("unknown", time.perf_counter() - t0, counterexample=cex, mode=mode, detail=detail)


# ----------------------------------------------------------------------------- compile with --verify

@dataclass
class Validated:
    """The expression to use, the simplifier's result and the validation outcome.  ``expr`` is
    the simplified expression when validation proved it, else the original (the fallback)."""
    expr: ir.Expr
    result: object
    outcome: Outcome
    fell_back: bool


def simplify_validated(program: ir.Program, algorithm: ir.Algorithm, *, families=None, assume=(),
                       bound: int = 64, timeout_ms: int = 20000) -> Validated:
    """Simplify ``algorithm``'s body and prove the result equal to the original (translation
    validation); on failure (refuted or unknown) fall back to the unsimplified body."""
    from tlop.analysis.simplify import DEFAULT_FAMILIES, context_for, PassManager
    fams = DEFAULT_FAMILIES if families is None else frozenset(families)
    ctx = context_for(program, algorithm, families=fams, assume=assume)
    res = PassManager(ctx).run(algorithm.body)
    if res.expr == algorithm.body:
        return Validated(res.expr, res, Outcome("proved", mode="unchanged"), False)
    out = validate(algorithm.body, res.expr, program, assume=ctx.facts, int_vars=ctx.int_vars,
                   axioms=ModelAxioms(linearity="linearity" in fams, a1="A1" in fams), bound=bound,
                   timeout_ms=timeout_ms)
    if out.ok:
        return Validated(res.expr, res, out, False)
    return Validated(algorithm.body, res, out, True)
