"""The schedule patterns closed forms recognise, and their transfer counts per contention group.

What it does: :class:`_Deriver` walks an algorithm's cost, replaces each ``Stage`` of a recognised
pattern (shift, recursive doubling, binomial-tree pairs: see :mod:`tlop.lower.closedform`) by the
count of transfers per node and channel, priced by the one τ-Lop rule on uniform groups and
grouped by the one contention table (:mod:`tlop.ir.taulop`), and collects the side conditions.
What it does not do: type, simplify or guard the result (:mod:`tlop.lower.closedform.derive`).
"""

from __future__ import annotations

from fractions import Fraction

from tlop import ir
from tlop.ir.taulop import UniformGroups, key_of, per_node_group, reduce_groups, schedule_channels
from tlop.lower.closedform.base import _ONE, _ZERO, NoClosedForm, _b, _num
from tlop.lower.closedform.normal import _coeff_of, _from_linear, _padd, _pconst, _pmul, _tidy, _uses, poly
from tlop.lower.closedform.peval import _cond, _nonneg, _peval, _strip_mod, _subst

class _Deriver:
    def __init__(self, program: ir.Program, alg: ir.Algorithm, kind: str, q: str, describe):
        self.program, self.alg, self.kind, self.q = program, alg, kind, q
        self.describe = describe  # (expression, program) -> text, for the side conditions
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
            self.need(_b(">=", size, _ZERO), f"{self.describe(size, self.program)} ≥ 0")
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
        self.need(_b("==", _b("%", root, Q), _ZERO), f"{self.describe(root, self.program)} is a multiple of {self.q}")
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
