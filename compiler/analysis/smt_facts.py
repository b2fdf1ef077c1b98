"""The facts the Z3 encoder (:mod:`tlop.analysis.smt`) adds beside its terms.

What it does: :class:`GroundFacts`, a part of :class:`tlop.analysis.smt.Encoder`, instantiates the
model's axioms over the applications an encoding met (tables: non-negative, monotone in τ,
``L(m, A·τ) ≤ A·L(m, τ)``; transmissions: non-negative, monotone in the concurrency, A1 when
enabled; ``2^x`` and ``log2``: their defining facts), and decides when two abstracted reductions
may share one uninterpreted function (their bodies proved equal at every index).

What it does not do: encode expressions (the encoder does; these methods read what it recorded),
or decide a claim (:mod:`tlop.analysis.prove`).
"""

from __future__ import annotations

import itertools
from typing import Optional

import z3

from tlop import ir
from tlop.analysis.solver_time import solver_timeout_ms
from tlop.runtime.diagnostics import TlopError

#: monotonicity axioms are instantiated for every pair of applications of one table or
#: transmission while there are at most this many (about 80,000 pairs); beyond, none are
PAIR_AXIOM_LIMIT = 400
#: abstracted reductions whose bodies differ (the simplifier reordered a sum inside) share one
#: function when their bodies are proved equal at every index (:meth:`Encoder._same_reduction`):
#: at most this many such sub-proofs per encoding, each within this many milliseconds
CONGRUENCE_ATTEMPTS = 64
CONGRUENCE_TIMEOUT_MS = 10_000


def _num(e: z3.ArithRef):
    """The Python Fraction-ish value of a simplified numeral term, or None."""
    s = z3.simplify(e)
    if z3.is_rational_value(s):
        return s.numerator_as_long() / s.denominator_as_long() if s.denominator_as_long() != 1 \
            else s.numerator_as_long()
    if z3.is_int_value(s):
        return s.as_long()
    return None


class GroundFacts:
    """Axiom instances and reduction congruence, over the state of an :class:`Encoder`."""

    def _same_reduction(self, e: ir.Reduce, fv: frozenset) -> Optional[int]:
        """The function id of an already abstracted reduction that ``e`` equals: the same kind,
        the same free variables, and a body proved equal to ``e``'s at every integer index
        (:meth:`_bodies_equal`) — then, for equal bounds, concurrency and free variables, the
        two reductions are equal, and one uninterpreted function may stand for both.  None when
        there is none (or the sub-proofs' budget, :data:`CONGRUENCE_ATTEMPTS`, is spent)."""
        if self.reduce_hook is not None:
            return None
        for (kind, var, body), ident in list(self._abstract.items()):
            if kind != e.kind or self._abstract_fv.get((kind, var, body)) != fv or ident is None:
                continue
            if self._congruence[0] >= CONGRUENCE_ATTEMPTS:
                return None
            self._congruence[0] += 1
            if self._bodies_equal(var, body, e.var, e.body):
                return ident
        return None

    def _bodies_equal(self, v1: str, b1: ir.Expr, v2: str, b2: ir.Expr) -> bool:
        """``∀ i ∈ ℤ, ∀ free variables, ∀ concurrency: b1[v1 := i] = b2[v2 := i]``, proved by Z3
        from the math facts alone (no model assumption) in a separate encoding, whose own
        reductions are abstracted the same way (nested sums of reordered bodies)."""
        sub = type(self)(self.program, axioms=self.axioms, int_vars=self.int_vars, tables=self.tables,
                      sum_mode="abstract", bound=self.bound, prefix=self.prefix)
        sub._congruence = self._congruence
        i = z3.ToReal(z3.Int(f"{self.prefix}congruence!i{self._congruence[0]}"))
        conc = z3.Real(f"{self.prefix}congruence!conc{self._congruence[0]}")
        try:
            a = sub.encode(b1, {v1: i}, conc)
            c = sub.encode(b2, {v2: i}, conc)
        except (TlopError, z3.Z3Exception):
            return False
        s = z3.Solver()
        s.set("timeout", solver_timeout_ms(CONGRUENCE_TIMEOUT_MS))  # scaled like every other limit
        s.add(*sub.fact_groups()["math"])
        s.add(a != c)
        return s.check() == z3.unsat

    # ------------------------------------------------------------------ axioms (ground instances)
    def _table_axioms(self):
        """``(non-negativity, monotonicity)`` ground instances over the table applications met."""
        nonneg, out = [], []
        for m, t in self._linear_apps:
            nonneg.append(z3.Implies(m >= 0, t >= 0))
        for (name, _), apps in self._table_apps.items():
            for args, t, tau_pos in apps:
                nonneg.append(t >= 0)
            pairs = itertools.combinations(apps, 2) if len(apps) <= PAIR_AXIOM_LIMIT else ()  # as below
            for (a1, t1, tp), (a2, t2, _) in pairs:
                if tp is None or len(a1) != len(a2):
                    continue
                rest_eq = [x == y for i, (x, y) in enumerate(zip(a1, a2)) if i != tp]
                x1, x2 = a1[tp], a2[tp]
                same = z3.And(*rest_eq) if rest_eq else z3.BoolVal(True)
                # monotone in τ
                out.append(z3.Implies(z3.And(same, x1 <= x2), t1 <= t2))
                out.append(z3.Implies(z3.And(same, x2 <= x1), t2 <= t1))
                # L(m, A·τ) ≤ A·L(m, τ) for A ≥ 1, kept linear: only numeral τ pairs
                k1, k2 = _num(x1), _num(x2)
                if k1 is not None and k2 is not None and k1 > 0 and k2 > 0:
                    lo_t, hi_t, lo_v, hi_v = (t1, t2, k1, k2) if k1 <= k2 else (t2, t1, k2, k1)
                    out.append(z3.Implies(same, hi_t <= z3.RealVal(hi_v) / z3.RealVal(lo_v) * lo_t))
        return nonneg, out

    def _xmit_axioms(self):
        """``(non-negativity, monotonicity in the concurrency, A1)`` ground instances over the
        transmission applications met (A1 empty unless enabled)."""
        nonneg, out, a1 = [], [], []
        for key, apps in list(self._xmit_apps.items()):
            base = list(apps)
            for size, c, t in base:
                nonneg.append(t >= 0)
            # ground pairs grow quadratically: beyond PAIR_AXIOM_LIMIT applications of one
            # transmission they are left out (fewer assumptions: a proof may then come out
            # unknown, never wrong)
            pairs = itertools.combinations(base, 2) if len(base) <= PAIR_AXIOM_LIMIT else ()
            for (s1, c1, t1), (s2, c2, t2) in pairs:
                out.append(z3.Implies(z3.And(s1 == s2, c1 <= c2), t1 <= t2))
                out.append(z3.Implies(z3.And(s1 == s2, c2 <= c1), t2 <= t1))
            if self.axioms.a1:
                f = self.func("xmit_" + key[0], 3)
                ch_term = base[0][2].arg(0)
                for (s1, c1, t1), (s2, c2, t2) in itertools.combinations_with_replacement(base, 2):
                    joined = f(ch_term, s1 + s2, c1)
                    a1.append(z3.Implies(c1 == c2, t1 + t2 == joined))
                    nonneg.append(joined >= 0)
        return nonneg, out, a1

    def _pow_log_axioms(self):
        out = []
        p2 = self.func("pow2", 1)
        lg = self.func("log2", 1)
        # link log2 and pow2 first (may add pow2 terms)
        for key, (x, t) in list(self._log2.items()):
            out.append(z3.Implies(x > 0, p2(t) == x))
            self.pow2(t)
            if z3.is_app(x) and x.decl().name() == self.prefix + "pow2":
                out.append(t == x.arg(0))
        for key, (x, t) in list(self._pow2.items()):
            out.append(lg(t) == x)
        items = list(self._pow2.values())
        out.append(p2(z3.RealVal(0)) == 1)
        for x, t in items:
            out.append(t > 0)
            kx = _num(x)
            if kx is not None and float(kx).is_integer() and abs(kx) <= 64:
                out.append(t == z3.RealVal(2) ** int(kx) if kx >= 0 else t == 1 / z3.RealVal(2 ** int(-kx)))
            isint = z3.IsInt(x)
            out.append(z3.Implies(isint, p2(x + 1) == 2 * t))
            out.append(z3.Implies(z3.And(isint, x >= 0), t >= 1))
            out.append(z3.Implies(z3.And(isint, x >= 0), t >= x + 1))
        for (x1, t1), (x2, t2) in itertools.combinations(items, 2):
            out.append(z3.Implies(x1 < x2, t1 < t2))
            out.append(z3.Implies(x2 < x1, t2 < t1))
        logs = list(self._log2.values())
        for (x1, t1), (x2, t2) in itertools.combinations(logs, 2):
            out.append(z3.Implies(z3.And(x1 > 0, x1 < x2), t1 < t2))
            out.append(z3.Implies(z3.And(x2 > 0, x2 < x1), t2 < t1))
        for x, t in logs:
            kx = _num(x)
            if kx is not None and kx > 0:
                from tlop.analysis.rules.computed import _exact_log2
                k, exact = _exact_log2(kx)
                out.append(t == k if exact else z3.And(t > k, t < k + 1))
            out.append(z3.Implies(x >= 1, t >= 0))
            out.append(z3.Implies(x > 0, t < x))
        return out
