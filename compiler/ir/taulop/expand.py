"""The τ-Lop reduction of a parallel composition, written once: ``ParComp`` to core IR.

What it does: :func:`expand_parcomp` rewrites ``x1 ‖ x2 ‖ …`` (a :class:`tlop.ir.ParComp`) into
an expression of core nodes only — ``Transmit``, ``Conc``, ``Cond``, comparisons, ``and``,
``not``, ``max``, ``+``, ``-`` and ``Let`` — that *is* its meaning.  The interpreter, the LLVM
code generator, the Z3 encoder and the simplifier's lock-step rule all consume this one
expansion, so they cannot disagree about A2 and A3.

The semantics (000 eq. 6, 8, 9; docs/semantics.rst):

* Operands run in **lock step**: phase k holds the k-th item ``w ‖ X^c(m)`` of every operand
  that has one; the cost is the sum over phases.
* Within a phase, items are grouped by **channel** (the value of ``c``, whatever the
  transmission's name).  On one channel, A2 in **rank form**: with the strict total order
  ``k ≺ i`` iff ``m_k < m_i``, or ``m_k == m_i`` and ``k < i`` (so ``k ≺ i`` is ``m_k <= m_i`` for
  ``k < i`` and ``m_k < m_i`` for ``k > i``), item i contributes

      ``if d_i <= 0 then 0 else W_i ‖ X_i(d_i)``

  where ``prev_i = max(0, max{m_k : k ≺ i on i's channel})``, ``d_i = m_i − prev_i`` and
  ``W_i = Σ {w_k : k on i's channel, not k ≺ i}`` (i itself included).  With sizes sorted this
  is ``Σ_j (w_j + … + w_n) ‖ X(m_j − m_{j−1})`` with ``m_0 = 0``; a size below zero counts as 0.
  The test is written ``d <= 0`` (not ``d > 0``) so that a NaN size reaches the transmission
  and makes the result NaN (an evaluation error) instead of silently costing nothing.
* **Mixed names on one channel**: each increment is carried by the item's *own* transmission
  ``X_i`` (the one of the item whose size ends the increment).  When the transmissions of a
  channel have equal definitions this equals the single-name result; ``T[c](m) ‖ U[c](m)``
  is ``2 ‖ T[c](m)``.
* A3: a channel's cost is the sum of its items' contributions, and the phase costs the
  **maximum over channels** (as ``max`` over the items i of the cost of i's channel when the
  channels are only known at run time).

What is decided at expansion time: channel identities, size orders and signs that are constant
(numerals, structurally equal expressions) or that the optional ``decide`` callback settles
(the simplifier passes its fact-aware decision procedure; the code generator passes constant
evaluation under specialised channel arguments).  Decided structure is folded away, so the
usual case — constant channels — gives small expressions: one sum per channel and one ``max``
across channels, with a residual ``if`` only for orders and signs unknown until run time.  Only
channels unknown at expansion time cost O(n²) terms per phase.  Decisions are asked once per pair
of structurally *distinct* channel (size) expressions, not per pair of items, and integer weights
are summed in one pass, so a phase of n items of k distinct expressions costs O(n log n + k²):
``T‖T‖…‖T`` is linear (issue 22 item 12; tests/test_parallel_chain.py checks that the result is
the pairwise one).

**One rule, two representations.**  The A2/A3 rule itself — each member's increment over its
≺-predecessor in its group, carried by the weights of the members from it on, summed within the
group, maximum across groups — is written once, by :func:`tlop.ir.taulop.rule.reduce_groups`, over a
small *algebra* of the operations it needs (:class:`~tlop.ir.taulop.rule.GroupAlgebra`).  Two algebras instantiate it:
building IR (the groups of a phase whose channels and size order are decided at expansion time,
the usual case) and numpy arrays (:class:`NumericGroups`: the concrete, already grouped and
sorted members of every group of every phase of a schedule stage, which the interpreter
enumerates).  When channels or orders are only known at run time, the expansion uses the rank
form above, which is the same rule with each "≺-predecessor" and "from it on" written as a
run-time condition; the test suite checks that the two forms agree (tests/test_schedule_reduction.py).

What it does not do: expand transmissions (the engines do, through the profile's channel
decomposition), check types, or choose between the lock-step bound and eq. 7's overlap
refinement (it gives the lock-step upper bound).  Item counts, channels and sizes are all
evaluated (bound once by ``Let`` when ``share``), as the items of a composition always were.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass
from typing import Callable, Optional

from tlop.ir import nodes as ir
from tlop.ir.constfold import const_value
from tlop.ir.taulop.rule import reduce_groups
from tlop.ir.visitor import ExprMutator

__all__ = ["Expansion", "expand_parcomp", "ExpandParComps", "Decide"]

#: a decision procedure for a pure IR condition: True, False, or None when unknown
Decide = Callable[[ir.Expr], Optional[bool]]

_ZERO = ir.Num(0.0)
#: the value of ``x op x`` (structurally equal operands are equal values)
_REFLEXIVE = {"<=": True, "<": False, "==": True, ">=": True, ">": False, "!=": False}


@dataclass(frozen=True)
class Expansion:
    """The core-IR meaning of a parallel composition.  ``static`` is true when every channel
    identity, size order and increment sign was decided at expansion time (no ``if`` of the
    reduction is left for run time)."""
    expr: ir.Expr
    static: bool


def _atomic(e: ir.Expr) -> bool:
    return isinstance(e, (ir.Num, ir.Var))


class _Decider:
    """Decides conditions: numerals by constant folding, structurally equal operands by
    reflexivity, the rest by the caller's ``decide``."""

    def __init__(self, decide: Optional[Decide]):
        self.decide = decide
        # answers by condition (IR nodes are values: equal conditions get equal answers); a phase
        # of n items asks n² of them, mostly the same few (``T‖T‖…‖T``: one)
        self._memo: dict = {}

    def __call__(self, cond: ir.Expr) -> Optional[bool]:
        try:
            return self._memo[cond]
        except KeyError:
            pass
        except TypeError:  # an unhashable operand: decide it every time
            return self._decide(cond)
        out = self._memo[cond] = self._decide(cond)
        return out

    def _decide(self, cond: ir.Expr) -> Optional[bool]:
        v = const_value(cond)
        if v is not None:
            return v != 0
        if isinstance(cond, ir.Bin) and cond.op in _REFLEXIVE and cond.lhs == cond.rhs:
            return _REFLEXIVE[cond.op]
        if self.decide is None:
            return None
        return self.decide(cond)


def _plus(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(a, ir.Num) and isinstance(b, ir.Num):
        return ir.Num(float(const_value(ir.Bin("+", a, b))))
    if isinstance(a, ir.Num) and a.value == 0:
        return b
    if isinstance(b, ir.Num) and b.value == 0:
        return a
    return ir.Bin("+", a, b)


def _integer_suffix_sums(ws: list) -> Optional[list]:
    """``[w_j + w_{j+1} + … + w_n for each j]`` as :func:`_plus` folds it left to right, in
    linear time, when every weight is a numeral with an integer value and the sums stay below
    2⁵³ (then every partial sum is exact, in whatever order it is added); None otherwise (the
    caller folds each sum itself).  The last member keeps its own numeral, as the fold does."""
    total = 0
    for w in ws:
        if not isinstance(w, ir.Num) or not math.isfinite(w.value) or w.value != int(w.value):
            return None
        total += abs(int(w.value))
    if total >= 2 ** 53:
        return None
    out = [ws[-1]] if ws else []
    acc = float(ws[-1].value) if ws else 0.0
    for w in reversed(ws[:-1]):
        acc = float(w.value) + acc  # exact; a sum of zeros is −0 only when all are, either way
        out.append(ir.Num(acc))
    out.reverse()
    return out


def _sum(terms) -> ir.Expr:
    out = None
    for t in terms:
        out = t if out is None else ir.Bin("+", out, t)
    return _ZERO if out is None else out


def _and(parts) -> Optional[ir.Expr]:
    """The conjunction of residual conditions (None when there is none)."""
    out = None
    for p in parts:
        out = p if out is None else ir.Bin("and", out, p)
    return out


class _IRGroups:
    """:class:`GroupAlgebra` building IR, for a phase of a composition whose groups (channels)
    and orders are decided: members are item indices of ``phase``, groups lists of them in ≺
    order."""

    def __init__(self, phase: "_Phase", groups: list):
        self.phase = phase
        self.groups = groups

    def previous(self):
        return [[g[j - 1] if j else None for j in range(len(g))] for g in self.groups]

    def carried(self):
        items = self.phase.items
        out = []
        for g in self.groups:
            exact = _integer_suffix_sums([items[i].rw for i in g])
            if exact is not None:
                out.append(exact)
                continue
            ws = []
            for j, i in enumerate(g):
                w = items[i].rw
                for k in g[j + 1:]:
                    w = _plus(w, items[k].rw)
                ws.append(w)
            out.append(ws)
        return out

    def increment(self, prev, carried):
        ph = self.phase
        out = []
        for g, pg, wg in zip(self.groups, prev, carried):
            terms = []
            for i, p, w in zip(g, pg, wg):
                it = ph.items[i]
                if p is None:
                    terms.append(ph.signed(i, it.rm, it.m, w))
                    continue
                pm = ph.items[p]
                if pm.m == it.m:
                    terms.append(None)  # the predecessor has the same size: no increment
                elif ph.decide(ir.Bin(">=", pm.m, _ZERO)) is True:
                    terms.append(ph.signed(i, _minus(it.rm, pm.rm), ir.Bin("-", it.m, pm.m), w))
                else:
                    terms.append(ph.signed(i, _minus(it.rm, ir.Fn("max", (_ZERO, pm.rm))),
                                           ir.Bin("-", it.m, ir.Fn("max", (_ZERO, pm.m))), w))
            out.append(terms)
        return out

    def group_sums(self, terms):
        return [_sum(t for t in g if t is not None) for g in terms]

    def across(self, sums):
        return sums[0] if len(sums) == 1 else ir.Fn("max", tuple(sums))


class _Item:
    __slots__ = ("w", "name", "c", "m", "span", "rw", "rc", "rm")

    def __init__(self, x: ir.Xmit):
        self.w, self.name, self.c, self.m, self.span = x.count, x.name, x.channel, x.size, x.span
        self.rw, self.rc, self.rm = self.w, self.c, self.m  # references (Let-bound names when shared)


class _Phase:
    """The expansion of one lock-step phase."""

    def __init__(self, items: list, decide: _Decider, zero_size_free: bool, share: bool, fresh: str):
        self.items = items
        self.share = share
        self.fresh = fresh
        self.n = len(items)
        self.decide = decide
        self.zero_size_free = zero_size_free
        self.static = True
        # Items whose channel (size) expressions are structurally equal form one class: every
        # decision about a pair of items is a decision about the pair of their classes (the
        # decider answers equal conditions alike), so it is asked once per pair of classes —
        # ``T‖T‖…‖T`` asks one question where it asked n².
        self._cc, self._c_first, self._c_second, self._c_last = _classes([it.c for it in items])
        self._mc = _classes([it.m for it in items])[0]
        self._same_cls: dict = {}
        self._prec_cls: dict = {}

    def same(self, i: int, j: int):
        """Items i and j are on one channel: True/False when decided, else the residual
        condition (on references)."""
        if i == j:
            return True
        lo, hi = (i, j) if i < j else (j, i)
        key = (self._cc[lo], self._cc[hi])
        try:
            d = self._same_cls[key]
        except KeyError:
            d = self._same_cls[key] = self.decide(ir.Bin("==", self.items[lo].c, self.items[hi].c))
        return d if d is not None else ir.Bin("==", self.items[lo].rc, self.items[hi].rc)

    def _prec_decided(self, k: int, i: int) -> Optional[bool]:
        """The decision of ``k ≺ i`` (None when unknown), asked once per pair of size classes
        and operator."""
        op = "<=" if k < i else "<"
        key = (self._mc[k], self._mc[i], op)
        try:
            return self._prec_cls[key]
        except KeyError:
            out = self._prec_cls[key] = self.decide(ir.Bin(op, self.items[k].m, self.items[i].m))
            return out

    def prec(self, k: int, i: int):
        """``k ≺ i``: True/False when decided, else the residual condition."""
        d = self._prec_decided(k, i)
        if d is not None:
            return d
        return ir.Bin("<=" if k < i else "<", self.items[k].rm, self.items[i].rm)

    def _channel_static(self) -> bool:
        """Every pair of items decided to share a channel or not (asked once per pair of classes
        that has an item of the first before an item of the second)."""
        first, second, last = self._c_first, self._c_second, self._c_last
        for a in range(len(first)):
            for b in range(len(first)):
                if a == b:
                    pair = (first[a], second[a]) if second[a] is not None else None
                else:
                    pair = (first[a], last[b]) if first[a] < last[b] else None
                if pair is not None and not isinstance(self.same(*pair), bool):
                    return False
        return True

    def term(self, i: int, group: list) -> Optional[ir.Expr]:
        """Item i's contribution (None when it is decided to be zero).  ``group`` lists the
        items that may share i's channel, in the order their weights are added."""
        it = self.items[i]
        others = [k for k in group if k != i]
        # prev_i = max(0, max{m_k : k ≺ i on i's channel})
        cands, residual = [], []
        for k in others:
            s, p = self.same(i, k), self.prec(k, i)
            if s is False or p is False:
                continue
            conds = [c for c in (s, p) if c is not True]
            if conds:
                residual.append(ir.Cond(_and(conds), self.items[k].rm, _ZERO))
            else:
                cands.append(k)
        d_orig = None
        if residual:
            self.static = False
            prev = ir.Fn("max", tuple([_ZERO] + [self.items[k].rm for k in cands] + residual))
        elif not cands:
            prev = None
            d_orig = it.m
        else:
            # every candidate decided: the ≺-largest one is the sorted predecessor
            p = self._greatest(cands)
            if p is None:
                self.static = False
                prev = ir.Fn("max", tuple([_ZERO] + [self.items[k].rm for k in cands]))
            elif self.items[p].m == it.m:
                return None  # the predecessor has the same size: no increment
            else:
                pm = self.items[p]
                if self.decide(ir.Bin(">=", pm.m, _ZERO)) is True:
                    prev = pm.rm
                    d_orig = ir.Bin("-", it.m, pm.m)
                else:
                    prev = ir.Fn("max", (_ZERO, pm.rm))
                    d_orig = ir.Bin("-", it.m, ir.Fn("max", (_ZERO, pm.m)))
        d = it.rm if prev is None else _minus(it.rm, prev)
        # W_i = w_i + Σ {w_k : same channel, not k ≺ i}
        w = it.rw
        for k in others:
            s, p = self.same(i, k), self.prec(k, i)
            if s is False or p is True:
                continue
            conds = [c for c in (s,) if c is not True] + ([ir.Not(p)] if p is not True and p is not False else [])
            wk = self.items[k].rw
            if conds:
                self.static = False
                w = ir.Bin("+", w, ir.Cond(_and(conds), wk, _ZERO))
            else:
                w = _plus(w, wk)
        return self.signed(i, d, d_orig, w)

    def signed(self, i: int, d: ir.Expr, d_orig: Optional[ir.Expr], w: ir.Expr) -> Optional[ir.Expr]:
        """Item i's contribution ``if d <= 0 then 0 else w ‖ X_i(d)`` with the test decided
        where it can be (None when the increment is decided to be zero); ``d`` is written on
        references, ``d_orig`` (None when unknown) on the items' own expressions."""
        it = self.items[i]

        def cost(size):
            x = ir.Transmit(it.name, it.rc, size, span=it.span)
            return x if isinstance(w, ir.Num) and w.value == 1 else ir.Conc(w, x, span=it.span)

        if isinstance(d, ir.Num):
            return None if d.value <= 0 else cost(d)
        nonpos = self.decide(ir.Bin("<=", d_orig, _ZERO)) if d_orig is not None else None
        if nonpos is True:
            return None
        if nonpos is False:
            return cost(d)
        if self.zero_size_free and d_orig is not None and self.decide(ir.Bin(">=", d_orig, _ZERO)) is True:
            return cost(d)  # X(0) = 0 under A1, so the increment needs no test
        self.static = False
        if self.share and not _atomic(d):
            name = f"{self.fresh}d{i}"
            return ir.Let(((name, d),), ir.Cond(ir.Bin("<=", ir.Var(name), _ZERO), _ZERO, cost(ir.Var(name))))
        return ir.Cond(ir.Bin("<=", d, _ZERO), _ZERO, cost(d))

    def _greatest(self, cands: list) -> Optional[int]:
        """The ≺-largest of ``cands`` when the order among them is decided, else None."""
        best = cands[0]
        for k in cands[1:]:
            p = self.prec(best, k)
            if p is True:
                best = k
            elif p is not False:
                return None
        return best

    def _sorted(self, group: list) -> Optional[list]:
        """``group`` in ≺ order when every comparison is decided, else None.

        An item's rank is the number of items ≺ it.  Counted per pair of size classes: from a
        class A, an item i of class B gets ``lo·[A ≤ B] + hi·[A < B]`` with lo (hi) the items
        of A before (after) i — each decision asked once per pair of classes, so a group of
        items of one size costs linear time (the order among distinct sizes, one question per
        pair of distinct size expressions)."""
        members: dict = {}  # size class -> its items in the group, by index
        for i in sorted(group):
            members.setdefault(self._mc[i], []).append(i)
        ranks = dict.fromkeys(group, 0)
        for b, bs in members.items():
            for a, as_ in members.items():
                if a == b:
                    if len(bs) < 2:
                        continue
                    le = self._prec_decided(bs[0], bs[1])  # an item before i:  m <= m
                    lt = self._prec_decided(bs[1], bs[0])  # an item after i:   m < m
                    if not (isinstance(le, bool) and isinstance(lt, bool)):
                        return None
                    for pos, i in enumerate(bs):
                        ranks[i] += pos * le + (len(bs) - 1 - pos) * lt
                    continue
                le = lt = None
                if as_[0] < bs[-1]:  # some item of A before some item of B
                    le = self._prec_decided(as_[0], bs[-1])
                    if not isinstance(le, bool):
                        return None
                if as_[-1] > bs[0]:  # some item of A after some item of B
                    lt = self._prec_decided(as_[-1], bs[0])
                    if not isinstance(lt, bool):
                        return None
                if le is not None and le == lt:
                    for i in bs:
                        ranks[i] += len(as_) * le
                    continue
                for i in bs:
                    lo = bisect_left(as_, i)
                    ranks[i] += (lo * le if lo else 0) + ((len(as_) - lo) * lt if len(as_) - lo else 0)
        return sorted(group, key=lambda i: ranks[i])

    def expr(self) -> tuple:
        """(phase cost expression, term bindings to share) of this phase."""
        n = self.n
        if self._channel_static():
            # item i joins the first group whose first item is decided to share its channel; the
            # answer depends on the two items' classes only, so each class scans each group once
            groups: list = []
            joined: dict = {}   # class -> the group its items join
            scanned: dict = {}  # class -> how many groups are known not to be its group
            for i in range(n):
                c = self._cc[i]
                gi = joined.get(c)
                if gi is None:
                    for g in range(scanned.get(c, 0), len(groups)):
                        if self.same(groups[g][0], i) is True:
                            gi = joined[c] = g
                            break
                    else:
                        scanned[c] = len(groups)
                if gi is None:
                    groups.append([i])
                else:
                    groups[gi].append(i)
            orders = [self._sorted(g) for g in groups]
            if all(o is not None for o in orders):
                return reduce_groups(_IRGroups(self, orders)), ()  # the rule, decided
            costs = []
            for g, order in zip(groups, orders):
                order = order or g
                terms = [t for t in (self.term(i, order) for i in order) if t is not None]
                costs.append(_sum(terms))
            return (costs[0] if len(costs) == 1 else ir.Fn("max", tuple(costs))), ()
        # channels only known at run time: each item's term once, and for each item i the sum
        # of the terms on i's channel; the phase is the largest of those sums
        self.static = False
        everyone = list(range(n))
        terms = [self.term(i, everyone) for i in everyone]
        bindings = []
        refs = []
        for i, t in enumerate(terms):
            if t is None:
                refs.append(None)
            elif self.share and not _atomic(t):
                name = f"{self.fresh}t{i}"
                bindings.append((name, t))
                refs.append(ir.Var(name))
            else:
                refs.append(t)
        per_item = []
        for i in everyone:
            parts = []
            for j in everyone:
                if refs[j] is None:
                    continue
                s = self.same(i, j)
                if s is True:
                    parts.append(refs[j])
                elif s is not False:
                    parts.append(ir.Cond(s, refs[j], _ZERO))
            per_item.append(_sum(parts))
        return ir.Fn("max", tuple(per_item)) if n > 1 else per_item[0], tuple(bindings)


def _classes(exprs: list) -> tuple:
    """(class of each expression, first, second and last index of each class): structurally
    equal expressions share a class; with an unhashable expression every item is its own."""
    ids: dict = {}
    try:
        cls = [ids.setdefault(e, len(ids)) for e in exprs]
    except TypeError:
        cls = list(range(len(exprs)))
    k = max(cls) + 1 if cls else 0
    first, second, last = [None] * k, [None] * k, [None] * k
    for i, c in enumerate(cls):
        if first[c] is None:
            first[c] = i
        elif second[c] is None:
            second[c] = i
        last[c] = i
    return cls, first, second, last


def _minus(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(a, ir.Num) and isinstance(b, ir.Num):
        return ir.Num(float(const_value(ir.Bin("-", a, b))))
    return ir.Bin("-", a, b)


def expand_parcomp(e: ir.ParComp, decide: Optional[Decide] = None, *, zero_size_free: bool = False,
                   share: bool = True) -> Expansion:
    """The core-IR expression of parallel composition ``e`` (see the module docstring).

    ``decide`` settles conditions on the items' original expressions (channel equalities,
    size comparisons, increment signs); ``zero_size_free`` lets an increment known to be
    ``>= 0`` skip its ``if`` (valid when ``X(0) = 0``, which A1 implies).  With ``share``, item
    expressions that are not numerals or variables are bound once by a ``Let`` (fresh names
    starting with ``%``, which no ``.tlop`` name can); without it they are repeated (for rules,
    whose output a reader sees)."""
    dec = _Decider(decide)
    phases = max(len(op) for op in e.operands)
    total = None
    static = True
    for k in range(phases):
        items = [_Item(op[k]) for op in e.operands if k < len(op)]
        bindings = []
        if share:
            for i, it in enumerate(items):
                for attr, ref in (("w", "rw"), ("c", "rc"), ("m", "rm")):
                    v = getattr(it, attr)
                    if not _atomic(v):
                        name = f"%{attr}{k}_{i}"
                        bindings.append((name, v))
                        setattr(it, ref, ir.Var(name))
        ph = _Phase(items, dec, zero_size_free, share, f"%{k}_")
        cost, term_bindings = ph.expr()
        static = static and ph.static
        if term_bindings:
            cost = ir.Let(term_bindings, cost)
        if bindings:
            cost = ir.Let(tuple(bindings), cost)
        total = cost if total is None else ir.Bin("+", total, cost)
    return Expansion(total, static)


class ExpandParComps(ExprMutator):
    """The pass form: every ParComp of an expression replaced by its expansion (no ``decide``)."""

    def visit_ParComp(self, e):
        kids = tuple(self.visit(k) for k in ir.children(e))
        return expand_parcomp(ir.rebuild(e, kids)).expr
