"""The simplifier: bottom-up rewriting with the proved rules of :mod:`tlop.rules`, to a fixpoint.

What it does:

* rewrites an IR expression bottom-up with the rules of the catalogue (in catalogue order) until
  no rule applies; ``+`` and ``·`` are treated as associative-commutative: a binary rule over
  ``+`` is tried on every pair of summands of a flattened sum, so like terms are gathered
  wherever they stand (``2‖T1(104) + … + 2‖T1(62)`` → ``2‖T1(166)`` under A1);
* **terminates**: every rewrite must strictly decrease a polynomial measure of the term
  (:func:`measure`: ‖ and Σ weigh their body multiplicatively, a parallel composition
  cubically); a rewrite that does not is refused and counted, so the loop is bounded;
* is **deterministic** and puts commutative operands in a **canonical order** (transmissions by
  name, channel, then falling concurrency; numerals last in sums, first in products) — except
  the stages of a schedule, which keep the order they are written in (a rewrite that would
  reorder them is not taken: the notation would describe another algorithm);
* decides side conditions with the context's facts — what argument binding enforces
  (:func:`tlop.ir.facts.param_facts`: integrality, declared constraints, the implicit ``>= 0``
  of bytes and time), user assumptions, enclosing ``sum`` ranges and ``let`` definitions — and
  true mathematics, by evaluation or a short Z3 query; never with a model assumption (so an
  ``int`` may be negative, and a table value is not known to be ≥ 0);
* each model-assumption family (``linearity``, ``A1``, ``A2``, ``A3``) can be switched off;
* a small pass manager (:class:`PassManager`) runs ``fold``, ``parcomp`` and ``rewrite``,
  times each and can dump the IR after any pass; every rule application is recorded
  (:class:`Step`) for ``tlop explain``.

What it does not do: prove its result (``--verify`` runs :func:`tlop.analysis.prove.validate`), expand
transmissions into transfers, or inline anything lowering did not.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import z3

from tlop import ir
from tlop.ir.facts import param_facts
from tlop.analysis.rules.catalogue import RULES, MODEL_FAMILIES, rules_by_name
from tlop.analysis.rules.core import MatchContext, Rule, match, substitute, node_head, is_int_expr
from tlop.analysis.rules.computed import eval_const
from tlop.analysis.solver_time import solver_timeout_ms

__all__ = ["Context", "Simplifier", "simplify", "Step", "PassManager", "SimplifyResult", "measure",
           "context_for", "DEFAULT_FAMILIES"]

DEFAULT_FAMILIES = frozenset({"fold", "arith", "conc", "sum", "minmax", "intfn"} | set(MODEL_FAMILIES))



# ----------------------------------------------------------------------------- context

class Context:
    """What is known where a term stands: the program, integer variables, facts (IR conditions
    assumed non-zero) and the enabled rule families.  ``decide`` answers side conditions."""

    def __init__(self, program: Optional[ir.Program] = None, *, int_vars=frozenset(), facts=(),
                 families=DEFAULT_FAMILIES, timeout_ms: int = 300, _cache=None):
        self.program = program
        self.int_vars = frozenset(int_vars)
        self.facts = tuple(facts)
        self.families = frozenset(families)
        self.timeout_ms = timeout_ms
        self._cache = {} if _cache is None else _cache
        self.queries = 0

    def child(self, int_vars=(), facts=()):
        c = Context(self.program, int_vars=self.int_vars | set(int_vars), facts=self.facts + tuple(facts),
                    families=self.families, timeout_ms=self.timeout_ms, _cache=self._cache)
        return c

    def match_context(self) -> MatchContext:
        return MatchContext(self.program, self.int_vars)

    def decide(self, cond: ir.Expr) -> Optional[bool]:
        """True if ``cond`` follows from the facts, False if its negation does, else None."""
        v = _const_value(cond)
        if v is not None:
            return v != 0
        key = (cond, self.facts, self.int_vars)
        if key in self._cache:
            return self._cache[key]
        from tlop.analysis.smt import Encoder, ModelAxioms
        self.queries += 1
        # side conditions are decided from the context's facts and true mathematics only: no
        # model assumption (table non-negativity, monotonicity, A1, linearity) may decide one,
        # so a result rests on exactly the model assumptions of the rules that produced it
        enc = Encoder(self.program, axioms=ModelAxioms(linearity=False, a1=False), int_vars=self.int_vars)
        try:
            goal = enc.encode(cond) != 0
            facts = [enc.encode(f) != 0 for f in self.facts]
        except Exception:
            self._cache[key] = None
            return None
        base = facts + enc.fact_groups()["math"] + enc.assumptions
        out = None
        for want, target in ((True, z3.Not(goal)), (False, goal)):
            s = z3.Solver()
            s.set("timeout", solver_timeout_ms(self.timeout_ms))
            s.add(*base)
            s.add(target)
            if s.check() == z3.unsat:
                out = want
                break
        self._cache[key] = out
        return out


def _const_value(e: ir.Expr):
    """The value of a closed numeral expression, folding bottom-up; None otherwise."""
    if isinstance(e, ir.Num):
        return e.value
    if isinstance(e, (ir.Bin, ir.Neg, ir.Not, ir.Fn)):
        kids = ir.children(e)
        vals = [_const_value(k) for k in kids]
        if any(v is None for v in vals):
            return None
        return eval_const(ir.rebuild(e, tuple(ir.Num(v) for v in vals)))
    return None


def context_for(program: ir.Program, algorithm: ir.Algorithm, *, families=DEFAULT_FAMILIES,
                assume=()) -> Context:
    """The context of an algorithm's body: the integer parameters and the facts argument binding
    enforces (:func:`tlop.ir.facts.param_facts`: declared constraints, the implicit ``>= 0`` of
    bytes and time, channel indices), plus ``assume`` (IR conditions the user states)."""
    ints, facts = param_facts(algorithm.params, program)
    if getattr(algorithm, "requires", None) is not None:  # 'where COND': binding enforces it too
        facts = tuple(facts) + (algorithm.requires,)
    return Context(program, int_vars=ints, facts=tuple(facts) + tuple(assume), families=families)


# ----------------------------------------------------------------------------- termination order

def measure(e: ir.Expr) -> int:
    """A polynomial interpretation every rewrite must strictly decrease: leaves weigh 2, most
    nodes the sum of their children plus 2, ``A ‖ x`` weighs (A+1)(x+1), a Σ (lo+hi+2)(body+1),
    a parallel composition 1000·(Σ children + 2)³."""
    if isinstance(e, (ir.Num, ir.Var)):
        return 2
    kids = [measure(k) for k in ir.children(e)]
    if isinstance(e, ir.Conc):
        return (kids[0] + 1) * (kids[1] + 1)
    if isinstance(e, ir.Reduce):
        return (kids[0] + kids[1] + 2) * (kids[2] + 1)
    if isinstance(e, ir.ParComp):
        return 1000 * (sum(kids) + 2) ** 3
    return sum(kids) + 2


# ----------------------------------------------------------------------------- canonical order

def _factor_value(f: ir.Expr) -> float:
    return f.value if isinstance(f, ir.Num) else 0.0


def sort_key(t: ir.Expr):
    """The canonical position of a summand: transmissions (by name, channel, falling
    concurrency), then transfer and other terms, numerals last."""
    coeff = 1.0
    core = t
    if isinstance(core, ir.Bin) and core.op == "*" and isinstance(core.lhs, ir.Num):
        coeff, core = core.lhs.value, core.rhs
    conc = 1.0
    if isinstance(core, ir.Conc):
        conc, inner = _factor_value(core.factor), core.body
    else:
        inner = core
    if isinstance(inner, ir.Transmit):
        ch = inner.channel.value if isinstance(inner.channel, ir.Num) else 1e9
        return (1, inner.name, ch, -conc, repr(inner.size), -coeff, repr(t))
    if isinstance(t, ir.Num):
        return (9, "", 0, 0, "", 0, repr(t))
    if isinstance(t, ir.Reduce):
        return (0, "", 0, 0, "", 0, repr(t))
    return (5, "", 0, 0, "", 0, repr(t))


def _factor_key(t: ir.Expr):
    """Products list counts and sizes before costs, as papers write ``(P − 1)·[…]``."""
    costly = any(isinstance(n, (ir.Lookup, ir.Transmit, ir.ParComp, ir.Scalar)) for n in ir.walk(t))
    return (costly, repr(t))


def _flatten(e: ir.Expr, op: str) -> list:
    if isinstance(e, ir.Bin) and e.op == op:
        return _flatten(e.lhs, op) + _flatten(e.rhs, op)
    return [e]


def _chain(items: list, op: str) -> ir.Expr:
    out = items[0]
    for t in items[1:]:
        out = ir.Bin(op, out, t)
    return out


# ----------------------------------------------------------------------------- the rewriter

@dataclass(frozen=True)
class Step:
    """One rule application: which rule, on which subterm, giving what, and the facts of the
    context it fired in (the declarations, the ranges of enclosing reductions, let definitions):
    its conditions were decided under those facts, so they need only hold where the subterm is
    evaluated — e.g. inside ``Σ_{i=k}^{P}`` the range is non-empty, so ``P ≥ k − 1`` is known."""
    rule: str
    before: ir.Expr
    after: ir.Expr
    facts: tuple = ()


class Simplifier:
    """Rewrites with ``rules`` (default: the catalogue, filtered by the context's families)."""

    MAX_REWRITES = 20000

    def __init__(self, ctx: Context, rules=None, record: bool = True):
        self.ctx = ctx
        rules = RULES if rules is None else rules
        self.rules = [r for r in rules if r.family in ctx.families]
        self.by_head: dict = {}
        for r in self.rules:
            self.by_head.setdefault(r.head, []).append(r)
        self.steps: list = []
        self.record = record
        self.refused = 0
        self.rewrites = 0
        self._memo: dict = {}

    # -------------------------------------------------------------- driver
    def run(self, e: ir.Expr) -> ir.Expr:
        """Rewrite ``e`` to a fixpoint."""
        prev = None
        while prev != e:
            prev = e
            e = self._rw(e, self.ctx)
        return e

    def _rw(self, e: ir.Expr, ctx: Context) -> ir.Expr:
        # the type is part of the key: equality ignores it, and 1 (int) must not become 1B
        key = (e, e.ty, ctx.facts, ctx.int_vars)
        got = self._memo.get(key)
        if got is not None:
            return got
        out = self._rw_node(e, ctx)
        self._memo[key] = out
        self._memo[(out, out.ty, ctx.facts, ctx.int_vars)] = out
        return out

    def _rw_children(self, e: ir.Expr, ctx: Context) -> ir.Expr:
        if isinstance(e, ir.Stage):
            return e  # a stage is opaque: its meaning is the enumeration, not an expression to rewrite
        if isinstance(e, ir.Reduce):
            lo, hi = self._rw(e.lo, ctx), self._rw(e.hi, ctx)
            inner = ctx.child(int_vars={e.var}, facts=(ir.Bin(">=", ir.Var(e.var), lo),
                                                        ir.Bin("<=", ir.Var(e.var), hi)))
            return ir.rebuild(e, (lo, hi, self._rw(e.body, inner)))
        if isinstance(e, ir.Let):
            vals = tuple(self._rw(v, ctx) for _, v in e.bindings)
            names = {n for n, _ in e.bindings}
            # facts about the outer names no longer hold for shadowed ones
            outer = [f for f in ctx.facts if not (ir.free_vars(f) & names)]
            ints = {n for n, v in zip(names, vals) if is_int_expr(v, ctx.int_vars)}
            defs = tuple(ir.Bin("==", ir.Var(n), v) for (n, _), v in zip(e.bindings, vals)
                         if not (ir.free_vars(v) & names) and _is_pure_val(v, ctx))
            inner = Context(ctx.program, int_vars=(ctx.int_vars - names) | ints, facts=tuple(outer) + defs,
                            families=ctx.families, timeout_ms=ctx.timeout_ms, _cache=ctx._cache)
            return ir.rebuild(e, vals + (self._rw(e.body, inner),))
        kids = ir.children(e)
        if not kids:
            return e
        return ir.rebuild(e, tuple(self._rw(k, ctx) for k in kids))

    def _rw_node(self, e: ir.Expr, ctx: Context) -> ir.Expr:
        e = self._rw_children(e, ctx)
        if _dataflow_program(e, ctx):
            return e  # in LogGP/pLogP the order of stages is their meaning: no rule applies here
        if isinstance(e, ir.Bin) and e.op in ("+", "*"):
            return _keep_stage_order(e, self._rw_ac(e, ctx))
        new = self._apply(e, ctx)
        if new is None:
            return e
        return _keep_stage_order(e, self._rw(new, ctx))

    def _apply(self, e: ir.Expr, ctx: Context, rules=None) -> Optional[ir.Expr]:
        """The result of the first rule that fires at the root of ``e``, or None."""
        if self.rewrites >= self.MAX_REWRITES:
            return None
        cands = rules if rules is not None else self.by_head.get(node_head(e), []) + self.by_head.get(("*",), [])
        mctx = ctx.match_context()
        for r in cands:
            b = match(r, r.lhs, e, {}, mctx)
            if b is None:
                continue
            if not all(ctx.decide(substitute(c, b)) is True for c in r.conditions):
                continue
            new = r.compute(b, ctx) if r.compute is not None else substitute(r.rhs, b)
            if new is None or new == e:
                continue
            if measure(new) >= measure(e):
                self.refused += 1
                continue
            self.rewrites += 1
            if self.record:
                self.steps.append(Step(r.name, e, new, ctx.facts))
            return new
        return None

    def _rw_ac(self, e: ir.Bin, ctx: Context) -> ir.Expr:
        """A flattened ``+`` or ``·`` chain: fold its numerals, try binary rules on every pair of
        operands until none fires, then order it canonically."""
        op = e.op
        items = _flatten(e, op)
        pair_rules = [r for r in self.by_head.get(("Bin", op), [])]
        changed = True
        while changed and len(items) > 1:
            changed = False
            items = self._fold_numerals(items, op)
            if len(items) == 1:
                break
            for i in range(len(items)):
                for j in range(len(items)):
                    if i == j:
                        continue
                    pair = ir.Bin(op, items[i], items[j])
                    new = self._apply(pair, ctx, pair_rules)
                    if new is None:
                        continue
                    new = self._rw(new, ctx)
                    rest = [t for k, t in enumerate(items) if k not in (i, j)]
                    items = rest + _flatten(new, op)
                    changed = True
                    break
                if changed:
                    break
        items = self._fold_numerals(items, op)
        if op == "+":
            items = sorted(items, key=sort_key)
        else:
            nums = [t for t in items if isinstance(t, ir.Num)]
            items = nums + sorted((t for t in items if not isinstance(t, ir.Num)), key=_factor_key)
        out = _chain(items, op)
        if isinstance(out, ir.Bin) and out.op == op:
            # a rule over the whole chain (non-pair rules, e.g. the root of a non-AC pattern)
            return out
        new = self._apply(out, ctx) if out != e else None
        return self._rw(new, ctx) if new is not None else out

    def _fold_numerals(self, items: list, op: str) -> list:
        if "fold" not in self.ctx.families:
            return items
        nums = [t for t in items if isinstance(t, ir.Num)]
        if len(nums) < 2 and not (nums and len(items) > 1 and nums[0].value == (0 if op == "+" else 1)):
            return items
        acc = 0.0 if op == "+" else 1.0
        for t in nums:
            acc = acc + t.value if op == "+" else acc * t.value
        rest = [t for t in items if not isinstance(t, ir.Num)]
        if op == "*" and acc == 0:
            return items  # x·0 is left to the mul-zero rule (it is the one that shows in explain)
        ty = _folded_type(nums, op)
        neutral = 0.0 if op == "+" else 1.0
        # a neutral numeral with a unit (n · 1B) carries the product's dimension: it stays
        if acc == neutral and rest and (op == "+" or ty is None or ty.dimensionless):
            out = rest
        else:
            out = rest + [ir.Num(acc, ty=ty)]
        if self.record and len(out) != len(items):
            self.steps.append(Step("fold-const", _chain(items, op), _chain(out, op)))
        return out


def _folded_type(nums: list, op: str):
    """The type of the numeral that replaces ``nums`` folded by ``op``: their product's dimension
    for ``·`` (``2 · 1B`` is ``2B``), their common one for ``+``; None when a numeral has no type
    yet (a pass built it: :func:`tlop.ir.typecheck.annotate` fills it in later)."""
    types = [t.ty for t in nums]
    if any(t is None or not getattr(t, "is_num", False) for t in types):
        return None
    if op == "+":
        out = types[0].real()
        return types[0] if all(t.integer for t in types) else out
    out = types[0]
    for t in types[1:]:
        out = out * t
    return out


def _is_pure_val(v: ir.Expr, ctx: Context) -> bool:
    from tlop.analysis.rules.core import is_pure
    return is_pure(v, ctx.program)


# ----------------------------------------------------------------------------- pass manager

@dataclass
class PassRecord:
    name: str
    seconds: float
    nodes_before: int
    nodes_after: int
    rewrites: int


@dataclass
class SimplifyResult:
    """The simplified expression, the steps that produced it and per-pass timings."""
    expr: ir.Expr
    original: ir.Expr
    steps: list = field(default_factory=list)
    passes: list = field(default_factory=list)
    refused: int = 0
    families: frozenset = frozenset()

    @property
    def assumptions(self) -> tuple:
        """The model assumptions the result rests on: the axioms of the model rules its steps
        applied (side conditions are decided without model assumptions), sorted."""
        rules = _rules_by_name()
        return tuple(sorted({a for s in self.steps for a in (rules[s.rule].axioms if s.rule in rules else ())}))


_RULE_INDEX: dict = {}


def _rules_by_name() -> dict:
    if not _RULE_INDEX:
        _RULE_INDEX.update(rules_by_name())
    return _RULE_INDEX


class PassManager:
    """Runs named passes in order, timing each; ``dump`` (a callable ``(pass_name, expr)``) is
    called after every pass named in ``dump_after`` (or after all with ``"all"``)."""

    PASSES = (
        ("fold", "constant folding and atomic let bindings", {"fold", "arith"}),
        ("parcomp", "parallel compositions reduced by lock-step A2/A3", {"fold", "arith", "A2", "A3"}),
        ("rewrite", "every enabled rule to a fixpoint", None),
    )

    def __init__(self, ctx: Context, dump: Optional[Callable] = None, dump_after=(), rules=None):
        self.ctx = ctx
        self.dump = dump
        self.dump_after = set(dump_after)
        self.rules = rules

    def run(self, e: ir.Expr) -> SimplifyResult:
        """Every pass's output is typed again (:func:`tlop.ir.typecheck.annotate`) from the types
        the input's variables carry, so that printers and the verifier see a typed IR."""
        from tlop.ir.typecheck import annotate

        env = {n.name: n.ty for n in ir.walk(e) if isinstance(n, ir.Var) and n.ty is not None}
        res = SimplifyResult(expr=e, original=e, families=self.ctx.families)
        for name, _, fams in self.PASSES:
            fam = self.ctx.families if fams is None else (self.ctx.families & fams)
            sub = Context(self.ctx.program, int_vars=self.ctx.int_vars, facts=self.ctx.facts, families=fam,
                          timeout_ms=self.ctx.timeout_ms, _cache=self.ctx._cache)
            s = Simplifier(sub, self.rules)
            t0 = time.perf_counter()
            before = ir.node_count(res.expr)
            out = s.run(res.expr)
            if e.ty is not None:
                out = annotate(out, self.ctx.program, env, e.ty)
            dt = time.perf_counter() - t0
            res.passes.append(PassRecord(name, dt, before, ir.node_count(out), s.rewrites))
            res.steps.extend(s.steps)
            res.refused += s.refused
            res.expr = out
            if self.dump is not None and (name in self.dump_after or "all" in self.dump_after):
                self.dump(name, out)
        return res


def _stage_order(e: ir.Expr) -> list:
    """The distinct stages of ``e`` in the order they are written (first occurrences; a shared
    sub-expression is visited once, a stage's items not at all)."""
    out, seen_nodes, seen_stages = [], set(), set()
    stack = [e]
    while stack:
        n = stack.pop()
        if id(n) in seen_nodes:
            continue
        seen_nodes.add(id(n))
        if isinstance(n, ir.Stage):
            if n not in seen_stages:
                seen_stages.add(n)
                out.append(n)
            continue
        stack.extend(reversed(ir.children(n)))
    return out


def _keep_stage_order(before: ir.Expr, after: ir.Expr) -> ir.Expr:
    """``after`` unless it writes ``before``'s stages in another order, else ``before``: stages
    run one after another, so even where the cost is the same (τ-Lop adds stage costs, and
    ``a + b = b + a``) a reordered sum describes another algorithm.  Folding equal stages
    (``stage + stage = 2·stage``) keeps the order and is allowed."""
    if after is before:
        return after
    order = _stage_order(before)
    if not order:
        return after
    return after if _stage_order(after) == order else before


def _dataflow_program(e: ir.Expr, ctx: Context) -> bool:
    """Whether ``e`` composes schedules in a dataflow model (LogGP, pLogP): a ``+``, ``*`` or ``sum``
    holding a stage, whose terms run one after another on carried-over clocks — reordering them
    (``a + b = b + a``) or folding repetitions (``Σ stage = n·stage`` is a repetition there, but
    ``2·(a + b) = 2a + 2b`` is not) would change the cost, so the simplifier leaves such a node
    as it is (its children are still simplified)."""
    from tlop.backends.dataflow import DATAFLOW_MODELS, holds_stage

    prog = ctx.program
    return (prog is not None and getattr(prog, "model", None) in DATAFLOW_MODELS
            and isinstance(e, (ir.Bin, ir.Reduce)) and holds_stage(e))


def simplify(e: ir.Expr, program: Optional[ir.Program] = None, *, ctx: Optional[Context] = None,
             families=DEFAULT_FAMILIES, assume=(), int_vars=(), dump=None, dump_after=()) -> SimplifyResult:
    """Simplify ``e`` (see the module docstring); ``families`` selects the rule families."""
    if ctx is None:
        ctx = Context(program, int_vars=int_vars, facts=tuple(assume), families=families)
    return PassManager(ctx, dump=dump, dump_after=dump_after).run(e)
