"""The Z3 meaning of cost IR: one function from IR expressions to Z3 real terms.

What it does: :class:`Encoder` maps an IR expression (evaluated under a concurrency factor,
exactly as :mod:`tlop.backends.interp` does) to a Z3 ``Real`` term and collects, on the side, the facts
that make the uninterpreted parts sound, grouped by what they rest on (:meth:`Encoder.fact_groups`:
true mathematics, or a named model assumption, so that a proof can report which it used):

* **tables** are uninterpreted functions ``tbl_<name>(channel, args…)``; their declared axioms
  are added as ground instances over the applications that occur: non-negative (``nonneg``);
  monotone in τ and ``L(m,τ) ≤ L(m,A·τ) ≤ A·L(m,τ)`` for A ≥ 1 (``monotone``; for pairs whose
  τ values are numerals, so the fact stays linear).  With the *linearity* family on, each
  transfer-table application ``L(m, τ)`` gets the ground fact ``L(m, τ) = m · unit(τ)`` (group
  ``linearity``) — exactly ``L(A·m, τ) = A·L(m, τ)`` — and is non-negative where ``m ≥ 0``.
* **transmissions** ``A ‖ T^c(m)`` are uninterpreted functions ``T(c, m, conc)`` (the notation
  keeps them whole), non-negative and monotone in the concurrency; with *A1* on, additive in the
  size for a fixed concurrency (ground instances over pairs of occurring applications).  With
  the program known and the channel a numeral, each application also equals one of the
  channel's declarations of that transmission (``T[shm](m) = o[shm](m) + 2·L[shm](m, 1)``; a
  choice, the same for every application on that channel, when the profile's channel kind picks
  among ``via`` variants): the program's own definition, a ``math`` fact.
* **stages** of a schedule are uninterpreted functions of their free variables, of the
  algorithm's process count ``P`` in scope (the engines bind the mapping's count
  :data:`tlop.ir.RANKS` to it) and of the concurrency factor; a stage costs at least 0 (group
  ``nonneg``: it is a maximum of sums of transmissions).
* **parallel compositions** are encoded through the one τ-Lop reduction the engines evaluate
  (:func:`tlop.ir.taulop.expand_parcomp`): lock-step phases, A2 within a channel in rank form
  (``If`` terms for orders not known), A3 (max) across channels.
* ``floor`` is exact (``to_int``), ``ceil x = −floor(−x)``; ``x^k`` for a small integer numeral
  ``k`` is a product; ``2^x`` and ``log2`` are uninterpreted functions with sound ground facts
  (``2^0 = 1``, ``2^(t+1) = 2·2^t`` for integer t, positivity, monotonicity, ``log2(2^t) = t``,
  ``2^(log2 x) = x`` for x > 0); other powers, ``sqrt``, ``exp`` and ``ln`` are uninterpreted
  (with positivity facts).  Every fact is true of the real function, so a proof is sound.
* **reductions** with numeral bounds are unrolled (up to :data:`UNROLL_LIMIT` terms); with
  symbolic bounds they are either unrolled to ``bound`` terms under the recorded assumption that
  the range is no longer (``sum_mode="bounded"``), abstracted as an uninterpreted function of
  their bounds and free variables (``"abstract"``), or supplied by the caller (``"hook"``, used
  by the induction proofs of :mod:`tlop.analysis.prove`).

What it does not do: decide anything (that is :mod:`tlop.analysis.prove`), or know about rewrite rules.
Integer-typed variables are Z3 ``Int`` constants converted to reals; everything else is real.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import z3

from tlop import ir
from tlop.ir.taulop import expand_parcomp
from tlop.ir.visitor import ExprFunctor
from tlop.runtime.diagnostics import TlopError
from tlop.analysis.smt_facts import GroundFacts, _num

__all__ = ["Encoder", "ModelAxioms", "UNROLL_LIMIT", "UNROLL_BUDGET", "UnrollBudgetExceeded", "CostVar", "z3_value"]

#: reductions with numeral bounds are unrolled up to this many terms, else abstracted
UNROLL_LIMIT = 512
#: at most this many reduction terms are instantiated in one encoding, counted over nested
#: reductions (three nested sums unrolled to 64 terms each are 262,144 instantiations, which
#: takes Python and Z3 hours): beyond it the encoding stops with :class:`UnrollBudgetExceeded`
UNROLL_BUDGET = 20_000


class UnrollBudgetExceeded(TlopError):
    """An encoding would instantiate more than :data:`UNROLL_BUDGET` reduction terms."""


@dataclass(frozen=True)
class ModelAxioms:
    """Which model-assumption families the encoding may rely on."""
    linearity: bool = True   # L(A·m, τ) = A·L(m, τ) for transfer tables
    a1: bool = True          # A‖T(m1) + A‖T(m2) = A‖T(m1 + m2)

    def names(self) -> tuple:
        """The fact groups an encoding with these axioms may use (see :meth:`Encoder.fact_groups`)."""
        out = ["math", "nonneg", "params", "monotone"]
        if self.linearity:
            out.append("linearity")
        if self.a1:
            out.append("A1")
        return tuple(out)


@dataclass
class CostVar:
    """A schematic cost term (a pattern variable standing for any sub-expression): its value is
    an uninterpreted function of the concurrency factor."""
    fn: z3.FuncDeclRef
    deps: tuple = ()   # names of reduction indices the term may depend on

    def at(self, conc, env=None):
        args = [env[d] for d in self.deps] if self.deps else []
        return self.fn(*args, conc)


def z3_value(v) -> float:
    """A Z3 numeral (rational or algebraic) as a Python float."""
    if z3.is_int_value(v):
        return float(v.as_long())
    if z3.is_rational_value(v):
        return float(v.numerator_as_long()) / float(v.denominator_as_long())
    if z3.is_algebraic_value(v):
        return float(v.approx(20).as_fraction())
    return float(str(v))


def fresh_context() -> None:
    """Make the next Z3 terms live in a new main context.  Z3's search depends on the history of
    the context it runs in (the order its terms were created): in one process the same claim
    proved in ~5 s alone took 113 s after two other instances of it, and a CLI ``--for`` loop
    turned it "unknown" at its timeout.  A proof started in a fresh context takes the same time
    and gives the same verdict whatever ran before it (terms of earlier proofs keep their own
    context alive; nothing here is shared between proofs)."""
    z3.z3._main_ctx = None


class Encoder(GroundFacts, ExprFunctor):
    """Encodes IR of one program into Z3; one instance per proof obligation (it accumulates
    facts).  ``int_vars`` names the variables of integer type; ``tables`` adds schematic table
    signatures (rules use names like ``?L``) to the program's."""

    def __init__(self, program: Optional[ir.Program] = None, *, axioms: ModelAxioms = ModelAxioms(),
                 int_vars=(), tables: Optional[dict] = None, sum_mode: str = "abstract",
                 bound: int = 64, reduce_hook: Optional[Callable] = None, prefix: str = ""):
        self.program = program
        self.axioms = axioms
        self.int_vars = set(int_vars)
        self.tables = dict(program.tables) if program is not None else {}
        if tables:
            self.tables.update(tables)
        self.sum_mode = sum_mode
        self.bound = bound
        self.reduce_hook = reduce_hook
        self.prefix = prefix
        self.facts: list = []            # side facts true of the real functions (definitions)
        self.linear_facts: list = []     # ground instances of linearity (model assumption)
        self.assumptions: list = []      # conditions the result relies on (bounded unrolling)
        self.unrolled = 0                # reduction terms instantiated so far (UNROLL_BUDGET)
        self._xmit_seen: dict = {}       # (name, channel) -> ids of the transmission terms in _xmit_apps
        self.vars: dict = {}             # name -> z3 const (free variables met)
        self._funcs: dict = {}
        self._table_apps: dict = {}      # (table, channel-key) -> list of (args, term)
        self._xmit_apps: dict = {}       # (name, channel) -> list of (size, conc, term)
        self._pow2: dict = {}            # str(arg) -> (arg, term, is_int)
        self._log2: dict = {}
        self._fresh = 0
        self._linear_apps: list = []     # (m, term) of tables encoded under linearity
        self._abstract: dict = {}        # (kind, index, body) -> function id
        self._abstract_fv: dict = {}     # (kind, index, body) -> its free variables, or None (schematic)
        self._abstract_next = 0
        self._congruence = [0]           # sub-proofs tried (shared with nested encoders)
        self._stage_terms: list = []     # stage applications (non-negative)
        self._time_params: list = []     # applications of scalar parameters of type time
        self._defining: set = set()      # transmissions whose definition is being encoded

    # ------------------------------------------------------------------ variables and functions
    def var(self, name: str):
        """The Z3 real term of free variable ``name`` (an Int converted to Real if integer)."""
        if name not in self.vars:
            if name in self.int_vars:
                self.vars[name] = z3.ToReal(z3.Int(self.prefix + name))
            else:
                self.vars[name] = z3.Real(self.prefix + name)
        return self.vars[name]

    def func(self, name: str, arity: int):
        key = (name, arity)
        if key not in self._funcs:
            self._funcs[key] = z3.Function(self.prefix + name, *([z3.RealSort()] * arity), z3.RealSort())
        return self._funcs[key]

    def fresh(self, hint: str, integer=False):
        self._fresh += 1
        n = f"{self.prefix}{hint}!{self._fresh}"
        return z3.ToReal(z3.Int(n)) if integer else z3.Real(n)

    def cost_var(self, name: str) -> CostVar:
        return CostVar(self.func("cost_" + name, 1))

    # ------------------------------------------------------------------ entry points
    def encode(self, e: ir.Expr, env: Optional[dict] = None, conc=None):
        """The Z3 term of ``e`` under the concurrency factor ``conc`` (default 1).  ``env`` maps
        names to Z3 terms or :class:`CostVar`; unknown names become free variables."""
        return self._e(e, dict(env or {}), z3.RealVal(1) if conc is None else conc)

    def all_facts(self) -> list:
        """The collected side facts plus every ground axiom instance (call once, at the end)."""
        return [f for group in self.fact_groups().values() for f in group]

    def fact_groups(self) -> dict:
        """Every fact, by what it rests on (call once, at the end):

        * ``math`` — true of the real functions and of the IR's semantics (``floor``, ``2^x``,
          ``log2``, an empty sum is 0): always safe to use;
        * ``nonneg`` — tables and transmissions are ≥ 0 (profiles reject negative table values
          and interpolate with ``max(·, 0)``, but a profile may switch that off);
        * ``params`` — scalar parameters of type time or time per byte (LogGP's ``L``, ``o``,
          ``g``, ``G``) are ≥ 0 (the
          models' meaning; a profile's scalars are not checked);
        * ``monotone`` — tables grow with τ and ``L(m, A·τ) ≤ A·L(m, τ)``, transmissions grow
          with their concurrency: τ-Lop model assumptions, not checked on profiles;
        * ``linearity``, ``A1`` — the model-assumption families of the same names (present only
          when :class:`ModelAxioms` enables them).

        Groups other than ``math`` are model assumptions: a proof that uses one holds only on
        tables that satisfy it (see :data:`ASSUMPTIONS`)."""
        table_nonneg, table_mono = self._table_axioms()
        xmit_nonneg, xmit_mono, a1 = self._xmit_axioms()
        groups = {"math": list(self.facts) + self._pow_log_axioms(),
                  "nonneg": table_nonneg + xmit_nonneg + [t >= 0 for t in self._stage_terms],
                  "monotone": table_mono + xmit_mono}
        if self._time_params:
            groups["params"] = [t >= 0 for t in self._time_params]
        if self.axioms.linearity:
            groups["linearity"] = list(self.linear_facts)
        if self.axioms.a1:
            groups["A1"] = a1
        return groups

    # ------------------------------------------------------------------ core
    visit_prefix = "_e_"
    _e = ExprFunctor.visit

    def _e_Num(self, e, env, conc):
        v = e.value
        if float(v).is_integer():
            return z3.RealVal(int(v))
        return z3.RealVal(repr(float(v))) if abs(v) > 1e-300 else z3.RealVal(0)

    def _e_Var(self, e, env, conc):
        if e.name in env:
            v = env[e.name]
            if isinstance(v, CostVar):
                return v.at(conc, env)
            return v
        return self.var(e.name)

    def _e_Neg(self, e, env, conc):
        return -self._e(e.operand, env, conc)

    def _e_Not(self, e, env, conc):
        return z3.If(self._e(e.operand, env, conc) == 0, z3.RealVal(1), z3.RealVal(0))

    def _bool(self, t):
        return t != 0

    def _e_Bin(self, e, env, conc):
        a = self._e(e.lhs, env, conc)
        b = self._e(e.rhs, env, conc)
        op = e.op
        one, zero = z3.RealVal(1), z3.RealVal(0)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b
        if op == "%":
            return a - b * self._floor(a / b)
        if op == "^":
            return self._pow(e, a, b)
        if op in ("<", "<=", ">", ">=", "==", "!="):
            c = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]
            return z3.If(c, one, zero)
        if op == "and":
            return z3.If(z3.And(a != 0, b != 0), one, zero)
        if op == "or":
            return z3.If(z3.Or(a != 0, b != 0), one, zero)
        if op == "div":
            return self._floor(a / b)
        if op == "<<":
            return a * self.pow2(b)
        if op == ">>":
            return self._floor(a / self.pow2(b))
        if op in ("xor", "&"):
            # bitwise operations are left uninterpreted: a proof that uses them holds for every
            # function in their place (so for the real one); nothing is claimed about their values
            return self.func("bitxor" if op == "xor" else "bitand", 2)(a, b)
        raise TlopError(f"cannot encode operator '{op}'", e.span)

    def _floor(self, x):
        return z3.ToReal(z3.ToInt(x))

    def _pow(self, e, a, b):
        kb = _num(b)
        ka = _num(a)
        if kb is not None and float(kb).is_integer() and abs(kb) <= 16:
            k = int(kb)
            out = z3.RealVal(1)
            for _ in range(abs(k)):
                out = out * a
            return out if k >= 0 else 1 / out
        if ka == 2:
            return self.pow2(b)
        f = self.func("pow", 2)
        t = f(a, b)
        self.facts.append(z3.Implies(a > 0, t > 0))
        return t

    def pow2(self, x):
        """``2^x`` as an uninterpreted function with ground facts (see the module docstring)."""
        key = str(z3.simplify(x))
        if key not in self._pow2:
            t = self.func("pow2", 1)(x)
            self._pow2[key] = (x, t)
        return self._pow2[key][1]

    def log2(self, x):
        key = str(z3.simplify(x))
        if key not in self._log2:
            t = self.func("log2", 1)(x)
            self._log2[key] = (x, t)
        return self._log2[key][1]

    def _e_Fn(self, e, env, conc):
        args = [self._e(a, env, conc) for a in e.args]
        n = e.name
        if n == "floor":
            return self._floor(args[0])
        if n == "ceil":
            return -self._floor(-args[0])
        if n == "abs":
            return z3.If(args[0] >= 0, args[0], -args[0])
        if n in ("min", "max"):
            out = args[0]
            for a in args[1:]:
                out = z3.If(a < out, a, out) if n == "min" else z3.If(a > out, a, out)
            return out
        if n == "log2":
            return self.log2(args[0])
        if n == "sqrt":
            t = self.func("sqrt", 1)(args[0])
            self.facts.append(z3.Implies(args[0] >= 0, z3.And(t >= 0, t * t == args[0])))
            return t
        if n == "exp":
            t = self.func("exp", 1)(args[0])
            self.facts.append(t > 0)
            return t
        if n == "ln":
            return self.func("ln", 1)(args[0])
        raise TlopError(f"cannot encode function '{n}'", e.span)

    def _e_Cond(self, e, env, conc):
        t = self._e(e.test, env, conc)
        return z3.If(t != 0, self._e(e.then_, env, conc), self._e(e.else_, env, conc))

    def _e_Let(self, e, env, conc):
        vals = [(n, self._e(v, env, conc)) for n, v in e.bindings]
        inner = dict(env)
        inner.update(vals)
        return self._e(e.body, inner, conc)

    # ------------------------------------------------------------------ reductions
    def body_fn(self, e: ir.Reduce, env, conc):
        """``i ↦`` the term of the body of ``e`` with its index bound to ``i`` (an Int term)."""
        def at(i):
            inner = dict(env)
            inner[e.var] = z3.ToReal(i) if z3.is_int(i) else i
            return self._e(e.body, inner, conc)
        return at

    def _count_unrolled(self, n: int) -> None:
        self.unrolled += n
        if self.unrolled > UNROLL_BUDGET:
            raise UnrollBudgetExceeded(f"too large to check by unrolling: more than {UNROLL_BUDGET:,} reduction "
                                       f"terms (nested sums or maxima unrolled to {self.bound} terms each)")

    def _e_Reduce(self, e, env, conc):
        lo = self._e(e.lo, env, conc)
        hi = self._e(e.hi, env, conc)
        if self.reduce_hook is not None:
            got = self.reduce_hook(self, e, env, conc, lo, hi)
            if got is not None:
                return got
        klo, khi = _num(lo), _num(hi)
        body = self.body_fn(e, env, conc)
        if klo is not None and khi is not None:
            import math
            start, stop = math.ceil(klo), math.floor(khi)
            n = stop - start + 1
            if n <= 0:
                if e.kind == "sum":
                    return z3.RealVal(0)
                self.facts.append(z3.BoolVal(False)) if False else None
                return self._abstract_reduce(e, env, conc, lo, hi)
            if n <= UNROLL_LIMIT:
                self._count_unrolled(n)
                return self._combine(e.kind, [body(z3.RealVal(i)) for i in range(start, stop + 1)])
        if self.sum_mode == "bounded":
            # the index runs from ⌈lo⌉ as in the interpreter; unroll ``bound`` terms under the
            # assumption that the range is no longer
            ilo = -z3.ToInt(-lo)
            terms = []
            self.assumptions.append(hi - lo + 1 <= self.bound)
            self._count_unrolled(self.bound)
            for j in range(self.bound):
                i = z3.ToReal(ilo + j)
                inside = i <= hi
                v = body(i)
                if e.kind == "sum":
                    terms.append(z3.If(inside, v, z3.RealVal(0)))
                else:
                    terms.append((inside, v))
            if e.kind == "sum":
                return z3.Sum(terms) if terms else z3.RealVal(0)
            self.assumptions.append(hi >= lo)
            out = terms[0][1]
            for inside, v in terms[1:]:
                better = v > out if e.kind == "max" else v < out
                out = z3.If(z3.And(inside, better), v, out)
            return out
        return self._abstract_reduce(e, env, conc, lo, hi)

    def _combine(self, kind, vals):
        if kind == "sum":
            return z3.Sum(vals) if len(vals) > 1 else vals[0]
        out = vals[0]
        for v in vals[1:]:
            out = z3.If(v > out, v, out) if kind == "max" else z3.If(v < out, v, out)
        return out

    def _abstract_reduce(self, e, env, conc, lo, hi):
        """An uninterpreted function of the reduction's identity (kind, index, body) applied to
        its bounds, the values of its body's free variables and the concurrency factor."""
        free = sorted(ir.free_vars(e.body) - {e.var})
        fv = [v for v in free if not isinstance(env.get(v), CostVar)]  # schematic terms are part of the key
        key = (e.kind, e.var, e.body)
        if key not in self._abstract:
            schematic = len(fv) != len(free)
            self._abstract_fv[key] = None if schematic else frozenset(fv)
            self._abstract[key] = self._same_reduction(e, frozenset(fv)) if not schematic else None
            if self._abstract[key] is None:
                self._abstract[key] = self._abstract_next
                self._abstract_next += 1
        f = self.func(f"{e.kind}{self._abstract[key]}", 3 + len(fv))
        args = [lo, hi, conc] + [self._e(ir.Var(v), env, conc) for v in fv]
        t = f(*args)
        if e.kind == "sum":
            self.facts.append(z3.Implies(hi < lo, t == 0))
        return t

    # ------------------------------------------------------------------ profile access
    def _channel_key(self, ch_term):
        k = _num(ch_term)
        return k if k is not None else str(ch_term)

    def _e_Lookup(self, e, env, conc):
        sig = self.tables.get(e.table)
        args = [self._e(a, env, conc) for a in e.args]
        ch = self._e(e.channel, env, conc) if e.channel is not None else None
        tau_i = sig.tau_index if sig is not None else None
        if tau_i is not None:
            args[tau_i] = args[tau_i] * conc
        if tau_i is not None and self.axioms.linearity and len(args) == 2:
            # the table stays an uninterpreted application; linearity is a separate (tracked)
            # ground fact L(m, τ) = m·unit(τ), and non-negativity holds where m ≥ 0
            m, tau = args[1 - tau_i], args[tau_i]
            full = ([ch] if ch is not None else []) + list(args)
            t = self.func("tbl_" + e.table, len(full))(*full)
            unit = self._table_app(e.table + "_unit", ch, [tau], tau_pos=0)
            fact = t == m * unit
            if not any(z3.eq(fact, f) for f in self.linear_facts):
                self.linear_facts.append(fact)
                self._linear_apps.append((m, t))
            return t
        return self._table_app(e.table, ch, args, tau_pos=tau_i)

    def _table_app(self, name, ch, args, tau_pos):
        full = ([ch] if ch is not None else []) + list(args)
        f = self.func("tbl_" + name, len(full))
        t = f(*full)
        key = (name, None if ch is None else self._channel_key(ch))
        apps = self._table_apps.setdefault(key, [])
        if not any(z3.eq(t, x[1]) for x in apps):
            apps.append((list(args), t, tau_pos))
        return t

    def _e_Scalar(self, e, env, conc):
        if e.channel is None:
            t = z3.Real(self.prefix + "param_" + e.name)
        else:
            t = self.func("param_" + e.name, 1)(self._e(e.channel, env, conc))
        sig = self.program.scalars.get(e.name) if self.program is not None else None
        ty = getattr(sig, "ty", None)
        if getattr(ty, "kind", None) == "num" and getattr(ty, "time", 0) > 0 and not any(z3.eq(t, x) for x in self._time_params):
            self._time_params.append(t)
        return t

    def _e_Conc(self, e, env, conc):
        f = self._e(e.factor, env, conc)
        return self._e(e.body, env, conc * f)

    def transmit(self, name, ch, size, conc):
        f = self.func("xmit_" + name, 3)
        t = f(ch, size, conc)
        key = (name, self._channel_key(ch))
        apps = self._xmit_apps.setdefault(key, [])
        seen = self._xmit_seen.setdefault(key, set())
        if t.get_id() not in seen:  # Z3 hash-conses terms: equal terms have one id (z3.eq, in O(1))
            seen.add(t.get_id())
            apps.append((size, conc, t))
            self._define_transmission(name, ch, size, conc, t)
        return t

    def _define_transmission(self, name, ch, size, conc, t) -> None:
        """The program's declarations of transmission ``name`` on a numeral channel ``ch``: ``t``
        equals one of them (the profile's channel kind picks the ``via`` variant), a ``math``
        fact.  Nothing for a symbolic channel, without a program, or inside its own definition."""
        k = _num(ch)
        if self.program is None or k is None or not float(k).is_integer() or name in self._defining:
            return
        variants = self.program.variants(name, int(k))
        if not variants:
            return
        self._defining.add(name)
        try:
            bodies = [self._e(v.body, {v.param: size}, conc) for v in variants]
        finally:
            self._defining.discard(name)
        if len(bodies) == 1:
            self.facts.append(t == bodies[0])
            return
        # the profile's channel kind picks one variant for every application on this channel
        sel = z3.Int(f"{self.prefix}via!{name}!{int(k)}")
        self.facts.append(z3.And(sel >= 0, sel < len(bodies)))
        self.facts.append(z3.And(*[z3.Implies(sel == i, t == b) for i, b in enumerate(bodies)]))

    def _e_Transmit(self, e, env, conc):
        return self.transmit(e.name, self._e(e.channel, env, conc), self._e(e.size, env, conc), conc)

    # ------------------------------------------------------------------ schedules
    def _e_Stage(self, e, env, conc):
        """A stage as an uninterpreted function of its free variables, the process count of the
        evaluation and the concurrency factor, one function per distinct stage: equal stages are
        equal and cost at least 0, nothing else is claimed (the mapping is one per evaluation).
        The process count is the ``P`` in scope — the parameter of the algorithm the stage
        belongs to, which the engines bind :data:`tlop.ir.RANKS` to — so that an internal name
        never appears in a counterexample."""
        import hashlib

        free = sorted(ir.free_vars(e) - {ir.RANKS})
        args = [self._e(ir.Var(n), env, conc) for n in free] + [self._e(ir.Var("P"), env, conc)]
        key = "stage_" + hashlib.sha256(repr(e).encode()).hexdigest()[:16]
        t = self.func(key, len(args) + 1)(*args, conc)
        self._stage_terms.append(t)
        return t

    def _e_NodeOf(self, e, env, conc):
        """``node(p)``: an uninterpreted function of the rank and the process count (the ``P`` in
        scope, as for stages)."""
        return self.func("node_of", 2)(self._e(e.rank, env, conc), self._e(ir.Var("P"), env, conc))

    def _e_ConfigRef(self, e, env, conc):
        """``partition.x[p]``: an uninterpreted function of the index (and of nothing for
        ``partition.N``), one per configuration field."""
        key = f"config_{e.config}_{e.field}"
        if e.index is None:
            return self.func(key, 0)()
        return self.func(key, 1)(self._e(e.index, env, conc))

    def _e_PerRankArg(self, e, env, conc):
        """``counts[r]``: an uninterpreted function of the index, one per per-rank parameter."""
        return self.func(f"per_rank_{e.name}", 1)(self._e(e.index, env, conc))

    def _e_item(self, e, env, conc):
        raise TlopError(f"a schedule item ({type(e).__name__.lower()}) outside a stage", e.span)

    _e_Loop = _e_Send = _e_Compute = _e_Block = _e_item

    def _e_Xmit(self, e, env, conc):
        raise TlopError("a concurrent transmission item outside a parallel composition", e.span)

    def _e_ParComp(self, e, env, conc):
        """The shared τ-Lop reduction (:func:`tlop.ir.taulop.expand_parcomp`), encoded like any
        other expression: its residual ``if`` tests become ``z3.If`` terms."""
        return self._e(expand_parcomp(e).expr, env, conc)
