"""Closed forms of schedules: the cost of a stage for symbolic ``P`` and ranks per node ``Q``.

What it does: :func:`derive` replaces every ``Stage`` of an algorithm's cost by an expression of
ordinary cost IR — transmissions ``W ‖ T[c](s)`` on the platform's channels, with the number of
transfers per contention group counted in closed form — for a mapping *kind*, ``sequential`` or
``round_robin``, with ``Q`` (ranks per node) a variable and ``P`` the algorithm's process count.
The ``sum``/``stages``/``let`` around the stages are kept (a stage that does not depend on its
stage variable then sums to ``(b − a + 1)·stage`` in the simplifier).  The result is typed
(:func:`tlop.ir.typecheck.annotate`) and holds no schedule node, so every engine — the JIT
included — evaluates it.  :func:`closed_form` is the small API the fast paths use.

Recognised stages (one ``par`` whose body is one ``send``, size and weight independent of the
``par`` variable; index expressions are normalised exactly as sums of ``c · x^k · 2^(linear)``
terms, ``<<`` included, so equal indices are recognised whatever their spelling):

``par p in 0 .. P−1: send p -> (p + d) % P : s``  (shift; ``d`` may depend on the stage variable)
    ``sequential(Q)``, with ``d' = d mod P``, ``r = d' mod Q``, ``q = d' div Q``: every node keeps
    ``[q = 0]·(Q − r) + [q = P/Q − 1]·r`` of its ``Q`` sends inside (the rest leave it, and as
    many enter it); ``round_robin(Q)`` (``P/Q`` nodes, ``p mod (P/Q)``): all ``Q`` inside when
    ``P/Q`` divides ``d``, else all cross.  For ``d = ±1`` (the ring) the cases are written out:
    ``Q = 1``, ``Q = P`` and ``1 < Q < P``.
binomial-tree pairs ``send (a·t + b) % P -> (a·t + b + δ) % P`` with ``a = 2δ``,
``where a·t + δ < P``, ``t in 0 .. h`` with ``(h + 1)·a = 2^S`` and ``S = ⌈log2 P⌉`` (MPICH's
binomial broadcast, ``taulop/bcast binomial``)
    ``sequential(Q)``, when ``Q`` is a power of two and ``b mod Q = 0``: a stage with
    ``δ < Q`` is ``Q/a`` shared-memory transfers per node, one with ``δ ≥ Q`` one network transfer
    per node.  ``round_robin(Q)``, when ``P/Q`` (the node count M) is a power of two, any root: a
    stage with ``δ ≥ M`` is ``⌈(P − δ)/a⌉`` shared-memory transfers in the root's node, one with
    ``δ < M`` is ``Q`` network transfers into (and out of) each of ``M/a`` nodes.

``par p in 0 .. P−1 [where p < (p xor d)]: send p -> p xor d : s``  (recursive doubling, ``d`` a
power of two, possibly depending on the stage variable)
    for ``P`` a power of two (a condition; then ``Q`` is one too): the partner shares the node
    when ``d < Q`` (``sequential``) or ``d ≥ P/Q`` (``round_robin``): ``Q`` transfers per node
    inside (``Q/2`` with the ``where``), else ``Q`` entering and leaving each node.  A ``let``
    bound to ``P − 2^⌊log2 P⌋`` (the fold of MPICH's recursive doubling for other P, as in
    ``taulop/allgather rda``) is 0 under that condition: it is substituted, the index and size
    expressions are folded (:func:`_peval`), and the fold's ``if r > 0 then stage … else 0``
    stages vanish.

Each channel's group size follows the platform's declared contention key (``node``/``either``
on a channel between nodes counts a transfer in both of its nodes' groups).  All members of a
group have the same size, so A2 is ``W ‖ T[c](s)`` with ``W`` the summed weights, and A3 the
``max`` across channels; a stage of size ``s ≤ 0`` costs 0 (the increment is dropped), written
``if s <= 0 then 0 else …`` and hoisted out of ``sum`` and ``let`` when it does not depend on
them.

Side conditions: ``Q ≥ 1`` and ``Q | P`` always (and the binomial's two above); they are returned
explicitly (:attr:`Derivation.conditions`).  :func:`closed_form` returns ``if conditions then
closed form else the schedule``, which is correct everywhere.

What it does not do: guess.  A stage that matches none of the patterns (several items, ``seq``,
computations, sizes that depend on the rank, layouts) gives no closed form and a reason
(:attr:`Derivation.reason`); such schedules are evaluated by enumeration.  It does not prove
the derivations: the tests check every closed form against enumeration for P ≤ 64 and Q ∈
{1, 2, 4, 8} on every bundled profile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

from tlop import ir
from tlop.ir.taulop import UniformGroups, key_of, per_node_group, reduce_groups, schedule_channels

__all__ = ["Derivation", "derive", "closed_form", "KINDS", "parse_kind", "expand_transmissions"]

#: the mapping kinds a closed form is derived for
KINDS = ("sequential", "round_robin")
_ALIASES = {"sequential": "sequential", "seq": "sequential", "round_robin": "round_robin", "rr": "round_robin"}

_ZERO, _ONE = ir.Num(0.0), ir.Num(1.0)


def parse_kind(text: str) -> Optional[str]:
    """``sequential`` / ``round_robin`` (or ``seq`` / ``rr``) → the kind; None otherwise."""
    return _ALIASES.get(text.strip())


@dataclass
class Derivation:
    """The outcome of :func:`derive`.  ``expr`` is None when there is no closed form (``reason``
    says why).  ``q`` is the name of the ranks-per-node variable; ``conditions`` (a bool IR
    expression over the parameters and ``q``) is where ``expr`` equals the schedule."""
    kind: str
    q: str = "Q"
    expr: Optional[ir.Expr] = None
    conditions: ir.Expr = _ONE
    condition_text: list = field(default_factory=list)
    #: the conditions one by one (IR, untyped), in the order of ``condition_text``
    condition_parts: list = field(default_factory=list)
    reason: str = ""
    patterns: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.expr is not None


class NoClosedForm(Exception):
    """A stage that no pattern recognises (the message says which and why)."""


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

def _b(op, a, b):
    return ir.Bin(op, a, b)


def _num(v):
    return ir.Num(float(v))


def _subst(e: ir.Expr, name: str, value: ir.Expr) -> ir.Expr:
    """``e`` with free ``name`` replaced by ``value`` (``value`` is closed or uses outer names)."""
    if isinstance(e, ir.Var):
        return value if e.name == name else e
    if isinstance(e, ir.Let):
        binds = tuple((n, _subst(v, name, value)) for n, v in e.bindings)
        body = e.body if any(n == name for n, _ in e.bindings) else _subst(e.body, name, value)
        return ir.Let(binds, body, span=e.span)
    kids = list(ir.children(e))
    bnd = ir.binder(e)
    for i, k in enumerate(kids):
        if bnd is not None and bnd[0] == name and i >= bnd[1]:
            continue
        kids[i] = _subst(k, name, value)
    return ir.rebuild(e, tuple(kids))


def _strip_mod(e: ir.Expr, P: str, rename):
    """``(inner, modded)``: ``inner`` of ``inner % P``, or ``e`` itself."""
    if isinstance(e, ir.Bin) and e.op == "%" and isinstance(e.rhs, ir.Var) and rename.get(e.rhs.name, e.rhs.name) == P:
        return e.lhs, True
    return e, False


def _cond(test, then_, else_):
    if isinstance(test, ir.Num):
        return then_ if test.value else else_
    return ir.Cond(test, then_, else_)


def _and(*parts):
    out = None
    for p in parts:
        if isinstance(p, ir.Num) and p.value:
            continue
        out = p if out is None else _b("and", out, p)
    return out if out is not None else _ONE


def _nonneg(e: ir.Expr, nonneg: set) -> bool:
    """Whether ``e`` is >= 0 for integer variables ``nonneg`` >= 0 (a syntactic check)."""
    if isinstance(e, ir.Num):
        return e.value >= 0
    if isinstance(e, ir.Var):
        return e.name in nonneg
    if isinstance(e, ir.Bin) and e.op in ("+", "*", "<<", ">>", "xor", "&", "div"):
        return _nonneg(e.lhs, nonneg) and _nonneg(e.rhs, nonneg)
    return False


def _nonpos(e: ir.Expr, nonneg: set) -> bool:
    if isinstance(e, ir.Num):
        return e.value <= 0
    return isinstance(e, ir.Bin) and e.op == "-" and _nonpos(e.lhs, nonneg) and _nonneg(e.rhs, nonneg)


def _peval(e: ir.Expr, known: dict, nonneg: set) -> ir.Expr:
    """``e`` with the names of ``known`` replaced by their values and the little folding that
    follows (numbers, ``x + 0``, ``x − 0``, ``x · 1``, an ``if`` on a known test, ``v < 0`` false
    for ``v >= 0``, ``min(v, 0) = 0`` and ``max(0, −v) = 0``); every ``let`` is inlined.  Exact:
    each step is an identity on the integers the index expressions hold."""
    from tlop.ir import ops

    if isinstance(e, ir.Var):
        return known.get(e.name, e)
    if isinstance(e, ir.Let):
        body = e.body
        for n, v in reversed(e.bindings):
            body = _subst(body, n, v)
        return _peval(body, known, nonneg)
    if ir.binder(e) is not None:
        return e
    kids = tuple(_peval(k, known, nonneg) for k in ir.children(e))
    e = ir.rebuild(e, kids)
    if isinstance(e, ir.Bin):
        a, b = e.lhs, e.rhs
        if isinstance(a, ir.Num) and isinstance(b, ir.Num) and e.op in ops.BINARY:
            return _num(float(ops.BINARY[e.op](a.value, b.value)))
        if e.op in ("+", "-", "xor", "<<", ">>") and b == _ZERO:
            return a
        if e.op in ("+", "xor") and a == _ZERO:
            return b
        if e.op == "*" and b == _ONE:
            return a
        if e.op == "*" and a == _ONE:
            return b
        if e.op == "<" and b == _ZERO and _nonneg(a, nonneg):
            return _ZERO
        return e
    if isinstance(e, ir.Cond) and isinstance(e.test, ir.Num):
        return e.then_ if e.test.value else e.else_
    if isinstance(e, ir.Fn) and e.name == "min" and len(e.args) == 2:
        a, b = e.args
        if (b == _ZERO and _nonneg(a, nonneg)) or (a == _ZERO and _nonneg(b, nonneg)):
            return _ZERO
    if isinstance(e, ir.Fn) and e.name == "max" and len(e.args) == 2:
        a, b = e.args
        if a == _ZERO and _nonpos(b, nonneg):
            return _ZERO
        if b == _ZERO and _nonpos(a, nonneg):
            return _ZERO
    return e


# ----------------------------------------------------------------------------- derivation

class _Deriver:
    def __init__(self, program: ir.Program, alg: ir.Algorithm, kind: str, q: str):
        self.program, self.alg, self.kind, self.q = program, alg, kind, q
        self.P = "P"
        self.rename = {ir.RANKS: "P"}
        within, between, problem = schedule_channels(program)
        if problem is not None:
            raise NoClosedForm("the platform does not declare exactly one channel within nodes and one between")
        self.shm, self.net = within[0], between[0]
        # the contention keys (the one table): closed forms count a node's group, so a key whose
        # groups are not per node has none
        self.shm_key, self.net_key = key_of(program, self.shm), key_of(program, self.net)
        for key, inside in ((self.shm_key, True), (self.net_key, False)):
            if per_node_group(key, 1, 1, within=inside) is None:
                raise NoClosedForm(f"contention '{key.name}' ({key.doc}) has no closed form yet: its groups are "
                                   f"not one per node")
        self.conditions = []   # (IR, text)
        self.patterns = []
        self.lets = {}         # let-bound names in scope -> their IR
        self.known = {}        # let-bound names whose value the conditions fix (the fold's r = 0)
        self.nonneg = set()    # variables in scope known to be >= 0 (stage and par variables)

    # the per-node group size of the between-nodes channel when ``cross`` transfers leave and as
    # many enter every node (node/either count a transfer in both of its nodes' groups)
    def net_group(self, out_cross, in_cross, disjoint=False):
        return per_node_group(self.net_key, out_cross, in_cross, within=False, disjoint=disjoint,
                              add=lambda a, b: _b("+", a, b))

    def need(self, cond, text):
        if all(text != t for _, t in self.conditions):
            self.conditions.append((cond, text))

    # ------------------------------------------------------------------ walk
    def walk(self, e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Stage):
            return self.stage(e)
        if isinstance(e, ir.NodeOf):
            raise NoClosedForm("node(…) outside a stage depends on the mapping's placement of one rank")
        if isinstance(e, ir.ConfigRef):
            raise NoClosedForm(f"{e.config}.{e.field} reads a configuration's table")
        if isinstance(e, ir.PerRankArg):
            raise NoClosedForm(f"{e.name}[…] reads a per-rank argument")
        if isinstance(e, ir.Let):
            binds = tuple((n, self.walk(v)) for n, v in e.bindings)
            saved, saved_known = dict(self.lets), dict(self.known)
            self.lets.update({n: v for n, v in e.bindings})
            for n, v in e.bindings:
                self.known.pop(n, None)
                if self._power_of_two_rest(v):
                    # r = P − 2^⌊log2 P⌋ (the fold of recursive doubling): 0 when P is a power of two
                    self.need(_b("==", _b("&", ir.Var("P"), _b("-", ir.Var("P"), _ONE)), _ZERO), "P is a power of two")
                    self.known[n] = _ZERO
            body = self.walk(e.body)
            self.lets, self.known = saved, saved_known
            return ir.Let(binds, body, span=e.span)
        if isinstance(e, ir.Cond) and self.known:
            test = _peval(e.test, self.known, self.nonneg)
            if isinstance(test, ir.Num):
                return self.walk(e.then_ if test.value else e.else_)
        if isinstance(e, ir.Reduce):
            lo = self.walk(e.lo)
            hi = self.walk(e.hi)
            saved = set(self.nonneg)
            if _nonneg(_peval(e.lo, self.known, self.nonneg), self.nonneg):
                self.nonneg.add(e.var)
            else:
                self.nonneg.discard(e.var)
            body = self.walk(e.body)
            self.nonneg = saved
            return ir.rebuild(e, (lo, hi, body))
        kids = tuple(self.walk(k) for k in ir.children(e))
        return ir.rebuild(e, kids)

    def _resolve(self, e: ir.Expr, depth: int = 8) -> ir.Expr:
        """``e`` with the let-bound names in scope replaced by their values (a few levels)."""
        for _ in range(depth):
            names = ir.free_vars(e) & set(self.lets)
            if not names:
                break
            for n in names:
                e = _subst(e, n, self.lets[n])
        return _subst(e, ir.RANKS, ir.Var("P"))

    def _power_of_two_rest(self, v: ir.Expr) -> bool:
        """Whether ``v`` is ``P − 2^⌊log2 P⌋`` (spelled with ``<<`` or ``^``, through lets)."""
        r = self._resolve(v)
        S = ir.Fn("floor", (ir.Fn("log2", (ir.Var("P"),)),))
        return r in (_b("-", ir.Var("P"), _b("<<", _ONE, S)), _b("-", ir.Var("P"), _b("^", _num(2), S)))

    def _full_range(self, lo, hi) -> bool:
        """Whether ``lo .. hi`` is ``0 .. P − 1`` (or ``0 .. 2^⌊log2 P⌋ − 1``, the same under the
        condition that P is a power of two, which the caller adds)."""
        if not (isinstance(lo, ir.Num) and lo.value == 0):
            return False
        h = self._resolve(hi)
        S = ir.Fn("floor", (ir.Fn("log2", (ir.Var("P"),)),))
        return h in (_b("-", ir.Var("P"), _ONE), _b("-", _b("<<", _ONE, S), _ONE), _b("-", _b("^", _num(2), S), _ONE))

    def stage(self, st: ir.Stage) -> ir.Expr:
        if len(st.items) != 1 or not isinstance(st.items[0], ir.Loop) or st.items[0].kind != "par" \
                or not isinstance(st.items[0].body, ir.Send):
            raise NoClosedForm("a stage that is not one 'par' over one 'send' (several items, seq, "
                               "computations) is not recognised")
        loop, send = st.items[0], st.items[0].body
        t = loop.var
        if self.known:
            nonneg = self.nonneg | ({t} if _nonneg(loop.lo, self.nonneg) else set())
            send = ir.Send(*(_peval(x, self.known, nonneg) for x in (send.src, send.dst, send.size, send.weight)),
                           span=send.span)
            loop = ir.Loop(loop.kind, t, _peval(loop.lo, self.known, self.nonneg),
                           _peval(loop.hi, self.known, self.nonneg), _peval(loop.where, self.known, nonneg),
                           send, span=loop.span)
        for what, x in (("size", send.size), ("weight", send.weight)):
            if t in ir.free_vars(x) or ir.has_schedule(x):
                raise NoClosedForm(f"the {what} of a send depends on the rank")
        pair = self.xor(loop, send)
        if pair is not None:
            return self.guard(send.size, pair)
        src, _ = _strip_mod(send.src, self.P, self.rename)
        dst, dmod = _strip_mod(send.dst, self.P, self.rename)
        ps, pd = poly(src, self.rename), poly(dst, self.rename)
        plo, phi = poly(loop.lo, self.rename), poly(loop.hi, self.rename)
        if None in (ps, pd, plo, phi):
            raise NoClosedForm("a send's ranks are not sums of products and powers of two of the variables")
        shift = self.shift(loop, send, src, dst, dmod, ps, pd, plo, phi)
        if shift is not None:
            return self.guard(send.size, shift)
        tree = self.binomial(loop, send, src, dst, ps, pd, plo, phi)
        if tree is not None:
            return self.guard(send.size, tree)
        raise NoClosedForm("the send pattern is neither a shift p -> (p + d) % P over all ranks, nor "
                           "partners p -> p xor d, nor binomial-tree pairs")

    def guard(self, size, cost):
        lo = self.alg_bound(size)
        if lo is not None and lo > 0:
            return cost
        if not self.declared_nonneg(size):
            # a negative size is an error of the schedule (the interpreter's E022): the closed
            # form holds only where the size is not negative, the schedule reports the rest
            if not ir.free_vars(size) <= {p.name for p in self.alg.params} - set(self.lets):
                raise NoClosedForm("a send's size may be negative and depends on a stage variable")
            self.need(_b(">=", size, _ZERO), f"{_text(size, self.program)} ≥ 0")
        return ir.Cond(_b("<=", size, _ZERO), _ZERO, cost)

    def declared_nonneg(self, e) -> bool:
        """Whether a size is >= 0 by the declarations alone: numerals >= 0 and parameters whose
        declared (or bytes' implicit) lower bound is >= 0, under ``+``, ``·`` and ``/``."""
        if isinstance(e, ir.Num):
            return e.value >= 0
        if isinstance(e, ir.Var):
            if e.name in self.nonneg:
                return True
            if e.name in self.lets:  # a let may shadow a parameter: its value, not the declaration
                return False
            p = next((p for p in self.alg.params if p.name == e.name), None)
            return p is not None and bool(p.constraint) and p.constraint[0] in (">=", ">") \
                and isinstance(p.constraint[1], ir.Num) and p.constraint[1].value >= 0
        if isinstance(e, ir.Bin) and e.op in ("+", "*", "/", "div", "<<", ">>"):
            return self.declared_nonneg(e.lhs) and self.declared_nonneg(e.rhs)
        if isinstance(e, ir.Bin) and e.op == "^":
            return self.declared_nonneg(e.lhs)
        return False

    def alg_bound(self, size):
        """The declared strict lower bound of a size that is a parameter (None otherwise; a
        ``let`` of the same name shadows the parameter)."""
        if isinstance(size, ir.Var) and size.name not in self.lets:
            for p in self.alg.params:
                if p.name == size.name and p.constraint and p.constraint[0] == ">" \
                        and isinstance(p.constraint[1], ir.Num):
                    return p.constraint[1].value + 1e-300
                if p.name == size.name and p.constraint and p.constraint[0] == ">=" \
                        and isinstance(p.constraint[1], ir.Num) and p.constraint[1].value > 0:
                    return p.constraint[1].value
        return None

    def cost(self, counts, send):
        """The one rule (:func:`tlop.ir.taulop.reduce_groups`) on uniform groups: one phase whose
        groups are the channels' per-node groups of ``n`` transfers of the send's size, each
        ``(n·w) ‖ T[c](s)`` (zero counts have no group); A3 is their ``max``.  A size ``<= 0``
        is not dropped here: the stage's ``if s <= 0 then 0 else …`` is written once around it."""
        groups = []
        for ch, n in counts:
            if isinstance(n, ir.Num) and n.value == 0:
                continue
            w = n if (isinstance(send.weight, ir.Num) and send.weight.value == 1) else _b("*", n, send.weight)
            groups.append((ch, w, send.size))

        def term(ch, w, size):
            tx = ir.Transmit(ir.SEND_TRANSMISSION, _num(self.program.channels.index(ch)), size)
            return tx if isinstance(w, ir.Num) and w.value == 1 else ir.Conc(w, tx)

        alg = UniformGroups([groups], term, dropped=lambda m: False, guard=None, zero=_ZERO,
                            plus=lambda a, b: _b("+", a, b), maximum=lambda ts: ir.Fn("max", tuple(ts)))
        return reduce_groups(alg)[0]

    # ------------------------------------------------------------------ shift
    def shift(self, loop, send, src, dst, dmod, ps, pd, plo, phi):
        t = loop.var
        P = {((("P", 1),), ()): Fraction(1)}
        if not (plo == {} and phi == _padd(P, _pconst(-1)) and isinstance(loop.where, ir.Num)
                and loop.where.value == 1 and dmod and ps == {(((t, 1),), ()): Fraction(1)}):
            return None
        dp = _padd(pd, ps, -1)
        if _uses(dp, t):
            return None
        Pv, Q = ir.Var("P"), ir.Var(self.q)
        self.patterns.append("shift p -> (p + d) % P")
        unit = dp in (_pconst(1), _pconst(-1), _padd(P, _pconst(-1)))
        if unit:
            one_node = _b("==", Q, Pv)
            if self.kind == "sequential":
                inner = self.cost([(self.shm, _b("-", Q, _ONE)), (self.net, self.net_group(_ONE, _ONE))], send)
                return _cond(_b("==", Q, _ONE), self.cost([(self.net, self.net_group(_ONE, _ONE))], send),
                             _cond(one_node, self.cost([(self.shm, Pv)], send), inner))
            return _cond(one_node, self.cost([(self.shm, Pv)], send),
                         self.cost([(self.net, self.net_group(Q, Q))], send))
        d = _subst(dst, t, _ZERO)
        dd = _b("%", d, Pv)
        M = _b("div", Pv, Q)
        if self.kind == "sequential":
            r, qq = _b("%", dd, Q), _b("div", dd, Q)
            intra = _b("+", ir.Cond(_b("==", qq, _ZERO), _b("-", Q, r), _ZERO),
                       ir.Cond(_b("==", qq, _b("-", M, _ONE)), r, _ZERO))
        else:
            intra = ir.Cond(_b("==", _b("%", dd, M), _ZERO), Q, _ZERO)
        cross = _b("-", Q, intra)
        inside = self.cost([(self.shm, intra)], send)
        both = self.cost([(self.shm, intra), (self.net, self.net_group(cross, cross))], send)
        outside = self.cost([(self.net, self.net_group(Q, Q))], send)
        return ir.Cond(_b("==", intra, Q), inside, ir.Cond(_b("==", intra, _ZERO), outside, both))

    # ------------------------------------------------------------------ xor partners
    def xor(self, loop, send):
        """``par p in 0 .. P − 1 [where p < (p xor d)]: send p -> p xor d`` with d a power of two
        (recursive doubling), for P a power of two (then Q, which divides P, is one too).  Under
        ``sequential(Q)`` the partner is on the same node exactly when d < Q, under
        ``round_robin(Q)`` (node p mod P/Q) when d ≥ P/Q.  Inside: Q transfers per node (Q/2 with
        the ``where``, which keeps the lower rank of each pair); across: every node's Q ranks
        exchange with one partner node, so Q transfers enter (and leave) each node — the source
        and destination nodes are disjoint with the ``where``, otherwise a node is both (contention
        ``node``/``either``: 2Q)."""
        t = loop.var
        Tv = ir.Var(t)
        if not (isinstance(send.src, ir.Var) and send.src.name == t and isinstance(send.dst, ir.Bin)
                and send.dst.op == "xor"):
            return None
        a, d = send.dst.lhs, send.dst.rhs
        if not (isinstance(a, ir.Var) and a.name == t) and isinstance(d, ir.Var) and d.name == t:
            a, d = d, a
        if not (isinstance(a, ir.Var) and a.name == t) or t in ir.free_vars(d):
            return None
        pd = poly(d, self.rename)
        if pd is None or len(pd) != 1:
            return None
        ((dm, _), dc), = pd.items()
        if dm or dc <= 0 or dc.denominator != 1 or (dc.numerator & (dc.numerator - 1)):
            return None
        if not self._full_range(loop.lo, loop.hi):
            return None
        w = loop.where
        filtered = w == _b("<", Tv, send.dst) or w == _b("<", Tv, _b("xor", d, Tv))
        if not (filtered or (isinstance(w, ir.Num) and w.value == 1)):
            return None
        self.patterns.append("partners p -> p xor d, d a power of two")
        self.need(_b("==", _b("&", ir.Var("P"), _b("-", ir.Var("P"), _ONE)), _ZERO), "P is a power of two")
        Q, Pv = ir.Var(self.q), ir.Var("P")
        d_ir = _subst(d, ir.RANKS, Pv)
        inside_count = _b("/", Q, _num(2)) if filtered else Q
        inside = self.cost([(self.shm, inside_count)], send)
        across = self.cost([(self.net, self.net_group(Q, Q, disjoint=filtered))], send)
        if self.kind == "sequential":
            return ir.Cond(_b("<", d_ir, Q), inside, across)
        return ir.Cond(_b(">=", d_ir, _b("div", Pv, Q)), inside, across)

    # ------------------------------------------------------------------ binomial tree
    def binomial(self, loop, send, src, dst, ps, pd, plo, phi):
        t = loop.var
        cs, bs = _coeff_of(ps, t) or (None, None)
        if cs is None or not cs or plo != {}:
            return None
        delta = _padd(pd, ps, -1)
        if _uses(delta, t) or cs != _pmul(_pconst(2), delta):
            return None
        # where a·t + δ < P
        w = loop.where
        if not (isinstance(w, ir.Bin) and w.op == "<" and isinstance(w.rhs, ir.Var)
                and self.rename.get(w.rhs.name, w.rhs.name) == "P"):
            return None
        pw = poly(w.lhs, self.rename)
        if pw != _padd(_pmul(cs, {(((t, 1),), ()): Fraction(1)}), delta):
            return None
        # the range covers every t with (2t + 1)·δ < P: (h + 1)·a = 2^S with S = ⌈log2 P⌉
        cover = _pmul(_padd(phi, _pconst(1)), cs)
        if len(cover) != 1:
            return None
        ((mono, expo), c), = cover.items()
        if mono or c != 1 or len(expo) != 1 or expo[0][1] != 1:
            return None
        S = expo[0][0]
        bound = self.lets.get(S)
        want = ir.Fn("ceil", (ir.Fn("log2", (ir.Var("P"),)),))
        if bound is None or _subst(bound, ir.RANKS, ir.Var("P")) != want:
            return None
        # δ must be one power of two: c·2^(linear) with c a power of two
        if len(delta) != 1:
            return None
        ((dm, de), dc), = delta.items()
        if dm or dc <= 0 or (dc.numerator & (dc.numerator - 1)) or (dc.denominator & (dc.denominator - 1)):
            return None
        self.patterns.append("binomial-tree pairs (r, r + δ), r a multiple of 2δ")
        Q = ir.Var(self.q)
        root = _from_linear(bs)
        params = {p.name for p in self.alg.params}
        if root is None or not ir.free_vars(root) <= params:
            raise NoClosedForm("the binomial tree's root is not a linear expression of the parameters")
        d_ir = _b("-", dst, src)
        a_ir = _b("*", _num(2), d_ir)
        d_ir = _subst(d_ir, t, _ZERO)
        a_ir = _subst(a_ir, t, _ZERO)
        d_ir, a_ir = _tidy(d_ir, delta), _tidy(a_ir, cs)
        if self.kind == "round_robin":
            return self.binomial_round_robin(send, d_ir, a_ir)
        self.need(_b("==", _b("&", Q, _b("-", Q, _ONE)), _ZERO), f"{self.q} is a power of two")
        self.need(_b("==", _b("%", root, Q), _ZERO), f"{_text(root, self.program)} is a multiple of {self.q}")
        return ir.Cond(_b("<", d_ir, Q), self.cost([(self.shm, _b("/", Q, a_ir))], send),
                       self.cost([(self.net, self.net_group(_ONE, _ONE, disjoint=True))], send))


    def binomial_round_robin(self, send, d_ir, a_ir):
        """Binomial-tree pairs under ``round_robin(Q)``: ``M = P/Q`` nodes, rank p on node p mod M.
        With M a power of two (the condition), a pair (r, r + δ) stays inside a node exactly when
        M divides δ, i.e. δ ≥ M; then every pair of the stage is inside the root's node (the
        sources are root + multiples of 2δ), ``⌈(P − δ)/(2δ)⌉`` transfers in one group.  Otherwise
        (δ < M, so 2δ divides M and P) there are P/(2δ) pairs whose sources — and destinations —
        fall on M/(2δ) nodes, Q per node, disjoint: Q ‖ T^net on every contention key.  The
        root may be any rank (it shifts the nodes, not the counts)."""
        Q, Pv = ir.Var(self.q), ir.Var("P")
        M = _b("div", Pv, Q)
        self.need(_b("==", _b("&", M, _b("-", M, _ONE)), _ZERO), f"P/{self.q} is a power of two")
        pairs = ir.Fn("ceil", (_b("/", _b("-", Pv, d_ir), a_ir),))
        return ir.Cond(_b(">=", d_ir, M), self.cost([(self.shm, pairs)], send),
                       self.cost([(self.net, self.net_group(Q, Q, disjoint=True))], send))


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


def _text(e, program) -> str:
    from tlop.backends.notation import format_text
    return format_text(e, program)


def _hoist(e: ir.Expr, alg: ir.Algorithm) -> ir.Expr:
    """Move ``if s <= 0 then 0 else …`` guards out of ``sum``, ``let`` and products by a
    stage-independent factor when the test does not use the bound names."""
    kids = tuple(_hoist(k, alg) for k in ir.children(e))
    e = ir.rebuild(e, kids)
    if isinstance(e, ir.Reduce) and e.kind == "sum" and e.var not in ir.free_vars(e.body):
        # a stage that does not depend on its stage variable: (hi − lo + 1) times (hi >= lo)
        n = poly(_b("+", _b("-", e.hi, e.lo), _ONE))
        n_ir = _from_linear(n) if n is not None else None
        if n_ir is not None:
            body = e.body
            if _zero_guard(body):
                return ir.Cond(body.test, _ZERO, _times(n_ir, body.else_, alg))
            return _times(n_ir, body, alg)
    if isinstance(e, ir.Reduce) and e.kind == "sum" and _zero_guard(e.body):
        g = e.body
        if e.var not in ir.free_vars(g.test):
            return ir.Cond(g.test, _ZERO, ir.Reduce(e.kind, e.var, e.lo, e.hi, g.else_, span=e.span))
    if isinstance(e, ir.Let) and _zero_guard(e.body):
        g = e.body
        if not ir.free_vars(g.test) & {n for n, _ in e.bindings}:
            return ir.Cond(g.test, _ZERO, ir.Let(e.bindings, g.else_, span=e.span))
    if isinstance(e, ir.Bin) and e.op == "*" and _zero_guard(e.rhs):
        return ir.Cond(e.rhs.test, _ZERO, _b("*", e.lhs, e.rhs.else_))
    return e


def _times(n: ir.Expr, body: ir.Expr, alg: ir.Algorithm) -> ir.Expr:
    """``max(n, 0)·body`` (an empty range sums to 0), written ``n·body`` when ``n`` is a numeral
    or ``x + c`` with ``x`` a parameter whose declared lower bound keeps it non-negative."""
    if isinstance(n, ir.Num):
        return _b("*", _num(max(n.value, 0)), body)
    lin = _linear(poly(n))
    if lin is not None and len(lin[0]) == 1:
        (v, c), = lin[0].items()
        p = next((p for p in alg.params if p.name == v), None)
        if c == 1 and p is not None and p.constraint and p.constraint[0] in (">=", ">") \
                and isinstance(p.constraint[1], ir.Num) and p.constraint[1].value + float(lin[1]) >= 0:
            return _b("*", n, body)
    return _b("*", ir.Fn("max", (n, _ZERO)), body)


def _zero_guard(e) -> bool:
    return isinstance(e, ir.Cond) and isinstance(e.then_, ir.Num) and e.then_.value == 0 \
        and isinstance(e.test, ir.Bin) and e.test.op == "<="


def _q_name(alg: ir.Algorithm) -> str:
    names = {p.name for p in alg.params}
    for q in ("Q", "Q_node", "Q_ranks"):
        if q not in names:
            return q
    return "%Q"


def derive(program: ir.Program, alg: ir.Algorithm, kind: str, *, simplify: bool = True) -> Derivation:
    """The closed form of ``alg``'s cost under mapping ``kind`` (see the module docstring)."""
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
        d = _Deriver(program, alg, kind, out.q)
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
    if simplify:
        body = _simplified(program, alg, body, out.q)
    out.expr = _typed(program, alg, body, out.q)
    out.conditions = _typed(program, alg, out.conditions, out.q, bool_=True)
    return out


def _with_q(program, alg, q):
    params = tuple(alg.params) + (ir.ParamSig(q, "int", None, (">=", _ONE)),)
    return ir.Algorithm(alg.name, params, alg.body, alg.doc, alg.model, over=None)


def _simplified(program, alg, body, q):
    from tlop.analysis.simplify import PassManager, context_for

    a = _with_q(program, alg, q)
    a = ir.Algorithm(a.name, a.params, body, a.doc, a.model)
    return PassManager(context_for(program, a)).run(_typed(program, alg, body, q)).expr


def _typed(program, alg, e, q, bool_=False):
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


def closed_form(program: ir.Program, alg: ir.Algorithm, mapping_kind: str) -> Optional[ir.Expr]:
    """The cost of ``alg`` under ``mapping_kind`` with the ranks per node a variable (named by
    :attr:`Derivation.q`, ``Q`` unless the algorithm has a parameter of that name), as
    ``if conditions then closed form else the schedule`` — None when no closed form is derived.
    Engines that cannot run a schedule use :func:`derive` and test ``conditions`` themselves."""
    d = derive(program, alg, mapping_kind)
    if not d.ok:
        return None
    if isinstance(d.conditions, ir.Num) and d.conditions.value:
        return d.expr
    return _typed(program, alg, ir.Cond(d.conditions, d.expr, alg.body), d.q)


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
    e = _typed(program, alg, e, d.q)
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
