"""The reduction of a native schedule stage: the one τ-Lop rule on the stage's groups, in LLVM.

What it does: :class:`StageReduction` (mixed into :class:`tlop.backends.jit.schedgen.StageGen`)
reduces the groups a stage's enumeration recorded — the *runs* (members merged per group: weight
sum, smallest and largest size, computation cost; merged through a dense table of the key space
whose touched slots alone are set and cleared, so a stage costs O(its runs), or a sort) and,
when a group has several sizes, every *member* sorted by (group, size, order) — by
:func:`tlop.ir.taulop.reduce_groups` on :class:`_NativeGroups`, the rule's algebra emitting LLVM
passes over those buffers; transmissions are evaluated through the two schedule channels, the
last value per channel remembered for runs.  Record layouts (:data:`_RUN`, :data:`_MEMBER`)
are defined here for both modules.

What it does not do: enumerate, group or check (:mod:`tlop.backends.jit.schedgen`), or decide
the rule (:mod:`tlop.ir.taulop.rule`).
"""

from __future__ import annotations

import math

from llvmlite import ir

from tlop.ir.taulop import reduce_groups

from tlop.backends.jit.tables import F64, I1, I32, I64, I8, _np_max

__all__ = ["StageReduction"]

_RUN = ir.LiteralStructType([I64, F64, F64, F64, F64])  # packed group, weight sum, min, max, cost
_RUN_BYTES = 40
_MEMBER = ir.LiteralStructType([I64, F64, F64, I64])  # packed group, size (cost), weight, order
_MEMBER_BYTES = 32
#: the dense table is used when the key space is at most FACTOR · runs + MIN slots (8 bytes each,
#: zeroed once per evaluation: a stage touches only its own slots)
_DENSE_FACTOR, _DENSE_MIN = 4, 1 << 16
#: after merging, the t groups are read back in key order when the key space is at most
#: FACTOR · t + MIN slots (a pass over the slots), else sorted (qsort: t log t comparisons)
_SCAN_FACTOR, _SCAN_MIN = 8, 64
_ZERO = ir.Constant(F64, 0.0)
_PTR = I8.as_pointer()
_NAN = ir.Constant(F64, math.nan)


def _c(v: int):
    return ir.Constant(I64, v)


class StageReduction:
    """The reduction methods of :class:`~tlop.backends.jit.schedgen.StageGen` (which provides
    ``b``, ``var``, ``loop``, ``cg``, ``nch``, ``ci``/``cx``, ``calloc``/``free``/``qsort`` and the
    comparators)."""

    def _transmit(self, code, d, tau, s):
        """``T^code(d)`` under concurrency ``tau``: a switch over the two schedule channels."""
        cg, b = self.cg, self.b
        out = self.var(F64, _NAN, "xmit")
        done = b.append_basic_block("xmit_done")
        other = b.append_basic_block("xmit_bad")
        sw = b.switch(code, other)
        for c in sorted({self.ci, self.cx}):
            bb = b.append_basic_block(f"xmit{c}")
            sw.add_case(_c(c), bb)
            b.position_at_end(bb)
            conc = tau if s.conc is None else b.fmul(tau, s.conc)
            from tlop.ir import SEND_TRANSMISSION

            v = cg._transmit(SEND_TRANSMISSION, c, d, conc, s.span)
            b.store(v, out)
            b.branch(done)
        b.position_at_end(other)
        b.store(ir.Constant(I1, 1), s.err)
        b.branch(done)
        b.position_at_end(done)
        return b.load(out)

    def _phase_reset(self, s):
        s.ph_cur = self.var(I64, _c(-1), "ph_cur")
        s.ph_max = self.var(F64, _ZERO, "ph_max")
        s.total = self.var(F64, _ZERO, "ph_total")

    def _phase_add(self, phase, v, s):
        """A group of ``phase`` costing ``v`` (groups come in phase order)."""
        b = self.b
        cur = b.load(s.ph_cur)
        with b.if_else(b.icmp_signed("!=", phase, cur)) as (new, same):
            with new:
                with b.if_then(b.icmp_signed(">=", cur, _c(0))):
                    b.store(b.fadd(b.load(s.total), b.load(s.ph_max)), s.total)
                b.store(phase, s.ph_cur)
                b.store(v, s.ph_max)
            with same:
                b.store(_np_max(b, b.load(s.ph_max), v), s.ph_max)

    def _phase_end(self, s):
        b = self.b
        with b.if_then(b.icmp_signed(">=", b.load(s.ph_cur), _c(0))):
            b.store(b.fadd(b.load(s.total), b.load(s.ph_max)), s.total)
        return b.load(s.total)

    def _split(self, packed, s):
        b = self.b
        g = b.sdiv(packed, s.K)
        return b.sdiv(g, _c(self.ncodes)), b.srem(g, _c(self.ncodes))

    def _reduce_runs(self, s):
        """Merge the runs per group (dense table or sort), then reduce groups of one size."""
        b = self.b
        n = b.load(s.nruns)
        space = b.mul(b.mul(b.add(b.load(s.maxph), _c(1)), _c(self.ncodes)), s.K)
        dense = b.icmp_signed("<=", space, b.add(b.mul(n, _c(_DENSE_FACTOR)), _c(_DENSE_MIN)))
        runs = b.bitcast(b.load(s.runs), _RUN.as_pointer())
        with b.if_else(dense) as (then, otherwise):
            with then:
                self._merge_dense(space, runs, n, s)
            with otherwise:
                b.call(self.qsort, [b.load(s.runs), n, _c(_RUN_BYTES), self.cmp_runs])
        with b.if_then(b.not_(b.load(s.err))):
            self._groups_of_runs(s)

    def _dense_table(self, space, s):
        """The dense table: ``space`` i64 slots, all 0 (a group's slot holds the index + 1 of
        its merged run while a stage merges).  One table per evaluation of the cost function,
        made on first use and grown (never shrunk) by later stages; each stage sets only the
        slots of its groups and clears them again, so a stage costs O(runs), not O(key space).
        Freed by :meth:`release` when the evaluation ends.  A null pointer is an error."""
        b = self.b

        def make(b_):
            p = b_.alloca(_PTR, name="dense_tab")
            b_.store(ir.Constant(_PTR, None), p)
            c = b_.alloca(I64, name="dense_cap")
            b_.store(_c(0), c)
            return p, c

        self._dense = ptr, cap = self.cg.at_entry(("dense table",), make)
        with b.if_then(b.icmp_signed("<", b.load(cap), space), likely=False):
            old = b.load(cap)
            twice = b.mul(old, _c(2))
            newcap = b.select(b.icmp_signed(">", twice, space), twice, space)
            b.call(self.free, [b.load(ptr)])
            raw = b.call(self.calloc, [newcap, _c(8)])
            b.store(raw, ptr)
            b.store(b.select(b.icmp_unsigned("==", b.ptrtoint(raw, I64), _c(0)), _c(0), newcap), cap)
            self._null_is_error(raw, s)
        return b.bitcast(b.load(ptr), I64.as_pointer())

    def release(self):
        """Free the evaluation's scratch buffers (at the end of the cost function; free(NULL)
        for those no stage made)."""
        if getattr(self, "_dense", None) is not None:
            self.b.call(self.free, [self.b.load(self._dense[0])])
        for ptr, _ in getattr(self, "_kept", {}).values():  # the stages' run and member buffers
            self.b.call(self.free, [self.b.load(ptr)])

    def _merge_dense(self, space, runs, n, s):
        """Merge the ``n`` runs per group through the dense table: the first run of a group is
        moved to the next merged slot of ``runs`` (in place: that slot's run was read already),
        the later ones are added to it; then the ``t`` merged runs are put in group order — read
        back slot by slot when the groups fill the key space densely (clearing each slot), else
        the touched slots are cleared and the runs sorted (``qsort``)."""
        b = self.b
        tab = self._dense_table(space, s)
        with b.if_then(b.not_(b.load(s.err))):
            out = self.var(I64, _c(0), "dense_n")

            def rfield(i, k):
                return b.gep(runs, [i, ir.Constant(I32, k)])

            def add(i):
                vals = [b.load(rfield(i, k)) for k in range(5)]
                slot = b.gep(tab, [vals[0]])
                at = b.load(slot)
                with b.if_else(b.icmp_signed("==", at, _c(0))) as (first, later):
                    with first:
                        k = b.load(out)
                        b.store(b.add(k, _c(1)), slot)
                        for f, v in enumerate(vals):
                            b.store(v, rfield(k, f))
                        b.store(b.add(k, _c(1)), out)
                    with later:
                        j = b.sub(at, _c(1))
                        _, w, mn, mx, c = vals
                        b.store(b.fadd(b.load(rfield(j, 1)), w), rfield(j, 1))
                        om, ox = b.load(rfield(j, 2)), b.load(rfield(j, 3))
                        b.store(b.select(b.fcmp_ordered("<=", om, mn), om, mn), rfield(j, 2))
                        b.store(b.select(b.fcmp_ordered(">=", ox, mx), ox, mx), rfield(j, 3))
                        b.store(b.fadd(b.load(rfield(j, 4)), c), rfield(j, 4))

            self.loop(_c(0), b.sub(n, _c(1)), add, "dense_add")
            t = b.load(out)
            b.store(t, s.nruns)
            scan = b.icmp_signed("<=", space, b.add(b.mul(t, _c(_SCAN_FACTOR)), _c(_SCAN_MIN)))
            with b.if_else(scan) as (in_order, sort):
                with in_order:
                    # the groups fill the key space densely: read them back in key order (clearing
                    # each slot) into a new buffer, instead of sorting
                    raw = b.call(self.malloc, [b.mul(b.add(t, _c(1)), _c(_RUN_BYTES))])
                    self._null_is_error(raw, s)
                    with b.if_then(b.not_(b.load(s.err))):
                        dst = b.bitcast(raw, _RUN.as_pointer())
                        k = self.var(I64, _c(0), "dense_k")

                        def back(j):
                            slot = b.gep(tab, [j])
                            at = b.load(slot)
                            with b.if_then(b.icmp_signed("!=", at, _c(0))):
                                i = b.sub(at, _c(1))
                                kk = b.load(k)
                                for f in range(5):
                                    b.store(b.load(rfield(i, f)), b.gep(dst, [kk, ir.Constant(I32, f)]))
                                b.store(_c(0), slot)
                                b.store(b.add(kk, _c(1)), k)

                        self.loop(_c(0), b.sub(space, _c(1)), back, "dense_back")
                        b.call(self.free, [b.load(s.runs)])
                        b.store(raw, s.runs)
                        b.store(b.add(t, _c(1)), s.cap)
                with sort:
                    def clear(j):
                        b.store(_c(0), b.gep(tab, [b.load(rfield(j, 0))]))

                    self.loop(_c(0), b.sub(t, _c(1)), clear, "dense_clear")
                    with b.if_then(b.icmp_signed(">", t, _c(1))):
                        b.call(self.qsort, [b.load(s.runs), t, _c(_RUN_BYTES), self.cmp_runs])

    def _groups_of_runs(self, s):
        """The merged runs (one per group, in (phase, code, key) order) reduced by the one rule
        (:func:`tlop.ir.taulop.reduce_groups` on :class:`_NativeGroups`); a group of several
        sizes sets ``s.nonuni`` (the stage is then reduced member by member)."""
        b = self.b
        memo = [(self.var(F64, _NAN, f"memo_m{c}"), self.var(F64, _NAN, f"memo_w{c}"), self.var(F64, _ZERO, f"memo_v{c}"))
                for c in range(self.nch)]
        alg = _NativeGroups(self, s, b.bitcast(b.load(s.runs), _RUN.as_pointer()), b.load(s.nruns), memo)
        b.store(reduce_groups(alg), s.result)

    def _memo_transmit(self, code, m, w, memo, s):
        """``w ‖ T^code(m)``, remembering the last value per channel."""
        b = self.b
        out = self.var(F64, _ZERO, "memo_out")
        done = b.append_basic_block("memo_done")
        other = b.append_basic_block("memo_other")
        sw = b.switch(code, other)
        for c in sorted({self.ci, self.cx}):
            bb = b.append_basic_block(f"memo{c}")
            sw.add_case(_c(c), bb)
            b.position_at_end(bb)
            lm, lw, lv = memo[c]
            hit = b.and_(b.fcmp_ordered("==", b.load(lm), m), b.fcmp_ordered("==", b.load(lw), w))
            with b.if_else(hit) as (yes, no):
                with yes:
                    b.store(b.load(lv), out)
                with no:
                    v = self._transmit(_c(c), m, w, s)
                    b.store(m, lm)
                    b.store(w, lw)
                    b.store(v, lv)
                    b.store(v, out)
            b.branch(done)
        b.position_at_end(other)
        b.store(ir.Constant(I1, 1), s.err)
        b.branch(done)
        b.position_at_end(done)
        return b.load(out)

    def _reduce_members(self, s):
        """The oracle's reduction of every member: sort by (group, size, order), then the one
        rule (:func:`tlop.ir.taulop.reduce_groups` on :class:`_NativeGroups`)."""
        b = self.b
        n = b.load(s.nmem)
        b.call(self.qsort, [b.load(s.mem), n, _c(_MEMBER_BYTES), self.cmp_members])
        alg = _NativeGroups(self, s, b.bitcast(b.load(s.mem), _MEMBER.as_pointer()), n, None)
        b.store(reduce_groups(alg), s.result)

class _NativeGroups:
    """:class:`tlop.ir.taulop.GroupAlgebra` emitting LLVM over a buffer of records sorted by
    group (the packed (phase, code, key) in field 0); each step is a pass over the buffer.

    Members (``memo`` None): records ``(group, size, weight, order)``, sorted by size inside each
    group; a member's ≺-predecessor is the record before it in its group.  Runs (``memo``: the
    per-channel memo of the last transmission): records ``(group, weight sum, smallest size,
    largest size, computation cost)``, one per group, each the merge of the group's members — a
    group of one size ``m`` is one member of weight ``W`` (A2 then gives ``W ‖ T(m)``); a group of
    several sizes sets ``s.nonuni`` and contributes nothing here.  A computation group
    contributes its cost."""

    def __init__(self, gen, s, buf, n, memo):
        self.g, self.s, self.buf, self.n, self.memo = gen, s, buf, n, memo
        self.size_f, self.weight_f = (2, 1) if memo is not None else (1, 2)

    def _f(self, i, k):
        return self.g.b.gep(self.buf, [i, ir.Constant(I32, k)])

    def _load(self, i, k):
        return self.g.b.load(self._f(i, k))

    def _first(self, i):
        """Whether record ``i`` starts its group."""
        b = self.g.b
        j = b.select(b.icmp_signed(">", i, _c(0)), b.sub(i, _c(1)), _c(0))
        return b.or_(b.icmp_signed("==", i, _c(0)), b.icmp_signed("!=", self._load(j, 0), self._load(i, 0)))

    def _last(self, i):
        """Whether record ``i`` ends its group."""
        b = self.g.b
        last = b.sub(self.n, _c(1))
        j = b.select(b.icmp_signed("<", i, last), b.add(i, _c(1)), last)
        return b.or_(b.icmp_signed("==", i, last), b.icmp_signed("!=", self._load(j, 0), self._load(i, 0)))

    def previous(self):
        b = self.g.b
        if self.memo is not None:
            return lambda i: _ZERO  # one (merged) member per group: no predecessor

        def prev(i):
            j = b.select(b.icmp_signed(">", i, _c(0)), b.sub(i, _c(1)), _c(0))
            return b.select(self._first(i), _ZERO, self._load(j, self.size_f))
        return prev

    def carried(self):
        b = self.g.b
        if self.memo is None:
            # one pass from the end: w_j + … + w_n within each group, stored over the weights
            n = self.n

            def back(k):
                i = b.sub(b.sub(n, _c(1)), k)
                j = b.select(b.icmp_signed("<", b.add(i, _c(1)), n), b.add(i, _c(1)), i)
                later = b.select(self._last(i), _ZERO, self._load(j, self.weight_f))
                b.store(b.fadd(later, self._load(i, self.weight_f)), self._f(i, self.weight_f))

            self.g.loop(_c(0), b.sub(n, _c(1)), back, "carry")
        return lambda i: self._load(i, self.weight_f)  # a merged member carries its group's weights

    def increment(self, prev, carried):
        g, b, s = self.g, self.g.b, self.s

        def term(i):
            _, code = g._split(self._load(i, 0), s)
            out = g.var(F64, _ZERO, "m_term")
            with b.if_else(b.icmp_signed("==", code, _c(g.nch))) as (comp, send):
                with comp:  # a computation costs what it costs
                    b.store(self._load(i, 4 if self.memo is not None else 1), out)
                with send:
                    if self.memo is not None:
                        mn, mx = self._load(i, 2), self._load(i, 3)
                        with b.if_else(b.fcmp_ordered("!=", mn, mx)) as (mixed, one):
                            with mixed:
                                b.store(ir.Constant(I1, 1), s.nonuni)
                            with one:
                                with b.if_then(b.fcmp_unordered("!=", mn, _ZERO)):  # d = m − 0 > 0 (sizes >= 0)
                                    b.store(g._memo_transmit(code, mn, carried(i), self.memo, s), out)
                    else:
                        pv = prev(i)
                        d = b.fsub(self._load(i, self.size_f), b.select(b.fcmp_ordered(">", pv, _ZERO), pv, _ZERO))
                        with b.if_then(b.not_(b.fcmp_ordered("<=", d, _ZERO))):
                            b.store(g._transmit(code, d, carried(i), s), out)
            return b.load(out)
        return term

    def group_sums(self, terms):
        return terms  # summed group by group, in ≺ order, by the one pass of :meth:`across`

    def across(self, terms):
        """One pass: each group's sum (its first term starts it, as numpy's ``reduceat``), and at
        each group's end A3 (the phase's largest group) and the phases one after another."""
        g, b, s = self.g, self.g.b, self.s
        g._phase_reset(s)
        gsum = g.var(F64, _ZERO, "m_gsum")

        def each(i):
            v = b.fadd(b.select(self._first(i), ir.Constant(F64, -0.0), b.load(gsum)), terms(i))
            b.store(v, gsum)
            with b.if_then(self._last(i)):
                phase, _ = g._split(self._load(i, 0), s)
                g._phase_add(phase, v, s)

        g.loop(_c(0), b.sub(self.n, _c(1)), each, "groups")
        return g._phase_end(s)
