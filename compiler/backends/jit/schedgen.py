"""Native code for schedule stages in τ-Lop: enumerate, group by contention, reduce.

What it does: :class:`StageGen` emits, inside the cost function :class:`tlop.backends.jit.codegen.CodeGen`
is building, the code of one :class:`tlop.ir.Stage` (and of ``node(p)``), with the meaning
:mod:`tlop.backends.schedule` gives it (the interpreter is the oracle; the property tests check
the two agree to 1e-12, errors included):

1. **Enumeration** in native loops (:meth:`tlop.backends.jit.loopgen.NativeLoops.walk_stage`,
   shared with the dataflow generator): ``par`` and ``seq`` are counted loops over their bindings
   (``where`` tested per binding, NaN true), each sequence carrying its phase counter — a send
   or computation is placed at its sequence's phase, which then advances; ``seq`` and blocks
   run their parts in order; a ``par`` continues after its longest binding; the items at the top
   of the stage start at phase 0.  Every element is checked as the enumerator checks it (ranks
   whole numbers in 0 … P−1, sizes ≥ 0, weights positive and finite, costs ≥ 0, at most
   :data:`~tlop.backends.enumeration.MAX_ELEMENTS` elements); a failure is an evaluation error
   whose message the interpreter gives.
2. **Grouping.**  The mapping (:mod:`tlop.backends.jit.mapgen`: its kind is compiled in; Q, the
   node count and a layout's table are run-time data, see :data:`~tlop.backends.jit.mapgen.MAP_WORDS`) gives each end's node; a send within a node takes
   the platform's ``within node`` channel, any other its ``between nodes`` channel, and joins the
   contention groups (phase, channel, key) its channel's ``contention`` key names — the one table
   of :mod:`tlop.ir.taulop.contention`, applied to LLVM values; a computation is its own group per (phase, rank).  A
   group is identified by one integer, ``(phase · codes + code) · K + key``.  Consecutive members
   of one group are accumulated on the fly into a *run* (weight sum, smallest and largest size,
   computation cost); runs are then merged per group — through a dense table (only the slots a
   stage touches are set and cleared: O(runs) per stage) when the key space
   is small compared to the number of runs, else by sorting the runs (``qsort``) — in (phase,
   code, key) order.
3. **Reduction** (:mod:`tlop.backends.jit.schedreduce`: the one rule on LLVM).  A group whose
   sends all have one size m costs ``W ‖ T^c(m)`` (W its weight
   sum; 0 when m = 0), with the last value per channel remembered (the ring's 1,024 groups need
   two transmissions); a computation group costs the sum of its computations.  A stage that had
   a group of several sizes the last time it ran (a byte per stage site in the module) also
   records its first :data:`_REC_CAP` members (group, size, weight, order) in a buffer during the
   enumeration; if some group has sends of different sizes, the members — those recorded, or,
   when there were none or more, every member from a second run of the same enumeration code — are
   sorted by (group, size, order) and reduced by A2 exactly as the oracle does
   (:func:`tlop.ir.taulop.reduce_groups`: ``Σ_j (w_j + … + w_n) ‖ T^c(m_j − m_{j−1})``,
   increments ≤ 0 dropped).  A3 takes each phase's largest group; the stage costs the sum of
   its phases, in phase order.

Scratch memory comes from the C library (``malloc``/``calloc``/``realloc``): buffers kept for
the whole evaluation of a point, grown by the stages that need more and freed when the cost
function returns; a failed allocation is an evaluation error.  Loops poll for Ctrl-C
(:mod:`tlop.backends.jit.interrupt`).

What it does not do: build loops, check ranks or read the mapping (:mod:`tlop.backends.jit.loopgen`
and :mod:`tlop.backends.jit.mapgen`, shared with the dataflow generator), price schedules in
LogGP/pLogP/LogGPH (their dataflow meaning is compiled by :mod:`tlop.backends.jit.dataflowgen`), detect stages that
do not depend on a ``sum``'s index (the code generator's ``sum`` does), or report messages
(the evaluator re-runs the interpreter on a failing point).
"""

from __future__ import annotations

import math

from llvmlite import ir

from tlop import ir as tir
from tlop.backends.enumeration import MAX_ELEMENTS
from tlop.ir.taulop import key_of, schedule_channels

from tlop.backends.jit.loopgen import NativeLoops, three_way
from tlop.backends.jit.mapgen import MAP_WORDS, MAPPING_KINDS  # noqa: F401 - their old home (re-exported)
from tlop.backends.jit.schedreduce import _MEMBER, _MEMBER_BYTES, _RUN, _RUN_BYTES, StageReduction
from tlop.backends.jit.tables import F64, I1, I32, I64, I8

__all__ = ["StageGen", "MAP_WORDS", "MAPPING_KINDS"]

_PTR = I8.as_pointer()
#: members recorded during the first enumeration of a stage: initial buffer, and the most kept
#: (beyond it, a stage with groups of several sizes is enumerated a second time)
_REC_INIT, _REC_CAP = 64, 1 << 16
_INF = ir.Constant(F64, math.inf)
_ZERO = ir.Constant(F64, 0.0)
_NAN = ir.Constant(F64, math.nan)


def _c(v: int):
    return ir.Constant(I64, v)


class _LlvmKeyOps:
    """:class:`tlop.ir.taulop.KeyOps` on LLVM i64 node numbers."""

    def __init__(self, b, gen):
        self.b = b
        self.gen = gen  # the stage generator (its mapping code: the nodes per rack)

    def const(self, like, value):
        return _c(value)

    def floordiv(self, x, k):
        return self.b.sdiv(x, _c(k))  # node numbers are >= 0: truncation is floor

    def rack(self, x):
        return self.b.sdiv(x, self.gen.nodes_per_rack())


class _State:
    """The allocas of one stage's code (created in the function's entry block)."""


class StageGen(NativeLoops, StageReduction):
    """Emits stages and ``node(…)`` for one :class:`~tlop.backends.jit.codegen.CodeGen`."""

    def __init__(self, cg):
        super().__init__(cg)
        chans = self.program.channels
        within, between, problem = schedule_channels(self.program)
        self.channels_ok = problem is None
        if self.channels_ok:
            self.ci, self.cx = chans.index(within[0]), chans.index(between[0])
            # the contention keys of the two channels (the one table, on LLVM values)
            self.key_i = key_of(self.program, within[0])
            self.key_x = key_of(self.program, between[0])
        self.nch = len(chans)
        self.ncodes = self.nch + 1  # the channels, then computations
        self.cmp_runs = self._comparator("runs")
        self.cmp_members = self._comparator("members")

    # ================================================================== small helpers
    def _comparator(self, which):
        name = f"{self.cg.sym}_cmp_{which}"
        fn = self.module.globals.get(name)
        if fn is not None:
            return fn
        fn = ir.Function(self.module, ir.FunctionType(I32, [_PTR, _PTR]), name)
        fn.linkage = "internal"
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        ty = _RUN if which == "runs" else _MEMBER
        x = b.bitcast(fn.args[0], ty.as_pointer())
        y = b.bitcast(fn.args[1], ty.as_pointer())

        def field(p, k):
            return b.load(b.gep(p, [_c(0), ir.Constant(I32, k)]))

        def emit(less, greater):
            three_way(b, less, greater)

        px, py = field(x, 0), field(y, 0)
        emit(b.icmp_signed("<", px, py), b.icmp_signed(">", px, py))
        if which == "members":
            sx, sy = field(x, 1), field(y, 1)
            emit(b.fcmp_ordered("<", sx, sy), b.fcmp_ordered(">", sx, sy))
            ox, oy = field(x, 3), field(y, 3)
            emit(b.icmp_signed("<", ox, oy), b.icmp_signed(">", ox, oy))
        b.ret(ir.Constant(I32, 0))
        return fn

    # ================================================================== a stage
    def gen_Stage(self, e, env, conc):
        cg = self.cg
        P = self.ranks(env)
        if P is None:
            return cg.fail()
        b = self.b
        s = _State()
        s.P = P
        s.conc = conc
        s.span = e.span
        s.has_compute = any(isinstance(n, tir.Compute) for n in tir.walk(e))
        s.d, nnodes = self.mapping(P)
        Pi = b.fptosi(P, I64)
        nn = b.fptosi(nnodes, I64)
        s.K = b.select(b.icmp_signed(">", Pi, nn), Pi, nn) if s.has_compute else nn
        s.err = self.var(I1, ir.Constant(I1, 0), "st_err")
        s.count = self.var(I64, _c(0), "st_count")
        s.maxph = self.var(I64, _c(0), "st_maxph")
        s.cur = self.var(I64, _c(-1), "st_cur")
        s.cw, s.cmn, s.cmx, s.cc = (self.var(F64, _ZERO, n) for n in ("st_w", "st_mn", "st_mx", "st_c"))
        s.nruns = self.var(I64, _c(0), "st_nruns")
        s.runs, s.cap = self._scratch("runs", 64, _RUN_BYTES)
        s.nmem = self.var(I64, _c(0), "st_nmem")
        s.mem, s.memcap = self._scratch("members", _REC_INIT, _MEMBER_BYTES)
        s.nonuni = self.var(I1, ir.Constant(I1, 0), "st_nonuni")
        s.result = self.var(F64, _ZERO, "st_result")
        s.runs_on = self.var(I1, ir.Constant(I1, 1), "st_runs_on")  # pass 1: accumulate runs
        # record members in pass 1 (up to _REC_CAP) when this stage had groups of several sizes
        # the last time it ran (a hint kept per stage in the module: stages of one size, the
        # ring's, never pay for recording; either way the result is the same)
        hint = self._mixed_hint()
        s.rec = self.var(I1, b.icmp_unsigned("!=", b.load_atomic(hint, "monotonic", 1), ir.Constant(I8, 0)),
                         "st_rec")
        again = self.var(I1, ir.Constant(I1, 0), "st_again")
        self._null_is_error(b.load(s.runs), s)
        self._null_is_error(b.load(s.mem), s)
        with b.if_then(b.not_(self.placeable(P)), likely=False):
            b.store(ir.Constant(I1, 1), s.err)
        # one copy of the enumeration, run once (runs, and the members while they fit in
        # _REC_CAP) or, when some group has several sizes and the members did not fit, twice
        # (the second time recording every member)
        pass_bb = b.append_basic_block("st_pass")
        done_bb = b.append_basic_block("st_done")
        b.branch(pass_bb)
        b.position_at_end(pass_bb)
        b.store(ir.Constant(I1, 0), again)
        with b.if_then(b.not_(b.load(s.err))):
            self._enumerate(e, env, s)
        with b.if_else(b.load(s.runs_on)) as (first, second):
            with first:
                self._flush(s)
                with b.if_then(b.not_(b.load(s.err))):
                    with b.if_then(b.icmp_signed(">", b.load(s.nruns), _c(0))):
                        self._reduce_runs(s)
                        b.store_atomic(b.zext(b.load(s.nonuni), I8), hint, "monotonic", 1)
                        with b.if_then(b.and_(b.load(s.nonuni), b.not_(b.load(s.err)))):
                            # some group has several sizes: the oracle's reduction of every member
                            with b.if_else(b.load(s.rec)) as (complete, overflowed):
                                with complete:
                                    self._reduce_members(s)
                                with overflowed:  # enumerate again, recording every member
                                    # (not recorded, or more than _REC_CAP members)
                                    b.store(ir.Constant(I1, 0), s.runs_on)
                                    b.store(ir.Constant(I1, 1), s.rec)
                                    b.store(_c(0), s.count)
                                    b.store(_c(0), s.nmem)
                                    b.store(ir.Constant(I1, 1), again)
            with second:
                with b.if_then(b.not_(b.load(s.err))):
                    self._reduce_members(s)
        b.cbranch(b.load(again), pass_bb, done_bb)
        b.position_at_end(done_bb)
        self._keep_scratch("runs", s.runs, s.cap)
        self._keep_scratch("members", s.mem, s.memcap)
        out = self.var(F64, _ZERO, "st_out")
        b.store(b.load(s.result), out)
        with b.if_then(b.load(s.err)):
            cg.flag_error()
            b.store(_NAN, out)
        return b.load(out)

    def _persistent(self, which):
        """(pointer, capacity) slots of the evaluation's ``which`` buffer (entry-block allocas:
        null and 0 until a stage first needs it; freed by :meth:`release`)."""

        def make(b_):
            p = b_.alloca(_PTR, name=f"keep_{which}")
            b_.store(ir.Constant(_PTR, None), p)
            c = b_.alloca(I64, name=f"keep_{which}_cap")
            b_.store(_c(0), c)
            return p, c

        slots = self.cg.at_entry(("stage scratch", which), make)
        self._kept = getattr(self, "_kept", {})
        self._kept[which] = slots
        return slots

    def _scratch(self, which, initial, nbytes):
        """A stage's ``which`` buffer and its capacity (records): the evaluation's buffer, kept
        from stage to stage (a big stage grows it once, not at every stage), made of ``initial``
        records on first use."""
        b = self.b
        ptr, cap = self._persistent(which)
        with b.if_then(b.icmp_signed("==", b.load(cap), _c(0)), likely=False):
            raw = b.call(self.malloc, [_c(initial * nbytes)])
            b.store(raw, ptr)
            b.store(b.select(b.icmp_unsigned("==", b.ptrtoint(raw, I64), _c(0)), _c(0), _c(initial)), cap)
        return self.var(_PTR, b.load(ptr), f"st_{which}"), self.var(I64, b.load(cap), f"st_{which}_cap")

    def _keep_scratch(self, which, ptr, cap):
        """Hand the stage's (possibly grown) buffer back to the evaluation."""
        b = self.b
        kp, kc = self._kept[which]
        p = b.load(ptr)
        b.store(p, kp)
        b.store(b.select(b.icmp_unsigned("==", b.ptrtoint(p, I64), _c(0)), _c(0), b.load(cap)), kc)

    def _mixed_hint(self):
        """A byte of this module per stage site: 1 when the stage's last evaluation had a group
        of several sizes (read and written atomically: batches run on several threads)."""
        self._sites = getattr(self, "_sites", 0) + 1
        g = ir.GlobalVariable(self.module, I8, f"{self.cg.sym}_stage{self._sites}_mixed")
        g.linkage = "internal"
        g.initializer = ir.Constant(I8, 0)
        return g

    def _null_is_error(self, ptr, s):
        self.null_fails(ptr, s.err)

    # ------------------------------------------------------------------ enumeration
    def _enumerate(self, e, env, s):
        self.walk_stage(e, env, s.conc, s.err,
                        lambda ph, src, dst, size, w, key: self._send(ph, src, dst, size, w, s),
                        lambda ph, rank, cost, key: self._compute(ph, rank, cost, s), stop_on_error=False)

    def _place(self, s):
        """Count one element (at most MAX_ELEMENTS per stage)."""
        b = self.b
        n = b.add(b.load(s.count), _c(1))
        b.store(n, s.count)
        with b.if_then(b.icmp_signed(">", n, _c(MAX_ELEMENTS)), likely=False):
            b.store(ir.Constant(I1, 1), s.err)

    def _send(self, ph, src, dst, size, w, s):
        b = self.b
        self._place(s)
        ok = self.send_ok(src, dst, size, w, s.P)
        if not self.channels_ok:
            ok = ir.Constant(I1, 0)
        with b.if_else(ok) as (then, otherwise):
            with otherwise:
                b.store(ir.Constant(I1, 1), s.err)
            with then:
                if not self.channels_ok:
                    return
                sn, dn = self.node_of(src, s.d), self.node_of(dst, s.d)
                # the channel of the send (tlop.ir.taulop.send_channel), as a branch; then the
                # groups its contention key puts it in
                ops = _LlvmKeyOps(b, self)
                with b.if_else(b.icmp_signed("==", sn, dn)) as (same, other):
                    with same:
                        for key in self.key_i.groups(sn, dn, True, ops):
                            self._member(ph, self.ci, key, size, w, None, s)
                    with other:
                        for key in self.key_x.groups(sn, dn, False, ops):
                            self._member(ph, self.cx, key, size, w, None, s)

    def _compute(self, ph, rank, cost, s):
        b = self.b
        self._place(s)
        ok = self.compute_ok(rank, cost, s.P)
        with b.if_else(ok) as (then, otherwise):
            with otherwise:
                b.store(ir.Constant(I1, 1), s.err)
            with then:
                self._member(ph, self.nch, b.fptosi(rank, I64), cost, ir.Constant(F64, 1.0), cost, s)

    def _member(self, ph, code, key, size, w, cost, s):
        b = self.b
        packed = b.add(b.mul(b.add(b.mul(ph, _c(self.ncodes)), _c(code)), s.K), key)
        with b.if_then(b.load(s.runs_on)):
            mx = b.load(s.maxph)
            b.store(b.select(b.icmp_signed(">", ph, mx), ph, mx), s.maxph)
            with b.if_then(b.icmp_signed("!=", packed, b.load(s.cur)), likely=False):
                self._flush(s)
                b.store(packed, s.cur)
                b.store(_ZERO, s.cw)
                b.store(_INF, s.cmn)
                b.store(ir.Constant(F64, -math.inf), s.cmx)
                b.store(_ZERO, s.cc)
            b.store(b.fadd(b.load(s.cw), w), s.cw)
            if cost is None:
                m0, m1 = b.load(s.cmn), b.load(s.cmx)
                b.store(b.select(b.fcmp_ordered("<", size, m0), size, m0), s.cmn)
                b.store(b.select(b.fcmp_ordered(">", size, m1), size, m1), s.cmx)
            else:
                b.store(b.fadd(b.load(s.cc), cost), s.cc)
        with b.if_then(b.load(s.rec)):
            # pass 1 records at most _REC_CAP members (then the stage enumerates again if it must)
            full = b.and_(b.load(s.runs_on), b.icmp_signed(">=", b.load(s.nmem), _c(_REC_CAP)))
            with b.if_else(full, likely=False) as (stop, go):
                with stop:
                    b.store(ir.Constant(I1, 0), s.rec)
                with go:
                    self._push_member(packed, size, w, s)

    def _grow(self, ptr, n, cap, nbytes, s):
        """Make room for one more record in the buffer ``ptr`` (``n`` used of ``cap``)."""
        b = self.b
        with b.if_then(b.icmp_signed(">=", b.load(n), b.load(cap)), likely=False):
            newcap = b.mul(b.load(cap), _c(2))
            p = b.call(self.realloc, [b.load(ptr), b.mul(newcap, _c(nbytes))])
            with b.if_else(b.icmp_unsigned("==", b.ptrtoint(p, I64), _c(0))) as (bad, good):
                with bad:
                    b.store(ir.Constant(I1, 1), s.err)
                    b.store(_c(0), n)  # nothing more is stored; the stage fails
                with good:
                    b.store(p, ptr)
                    b.store(newcap, cap)

    def _flush(self, s):
        b = self.b
        with b.if_then(b.icmp_signed(">=", b.load(s.cur), _c(0))):
            self._grow(s.runs, s.nruns, s.cap, _RUN_BYTES, s)
            base = b.bitcast(b.load(s.runs), _RUN.as_pointer())
            rec = b.gep(base, [b.load(s.nruns)])
            for k, v in enumerate((b.load(s.cur), b.load(s.cw), b.load(s.cmn), b.load(s.cmx), b.load(s.cc))):
                b.store(v, b.gep(rec, [_c(0), ir.Constant(I32, k)]))
            b.store(b.add(b.load(s.nruns), _c(1)), s.nruns)
            b.store(_c(-1), s.cur)

    def _push_member(self, packed, size, w, s):
        b = self.b
        self._grow(s.mem, s.nmem, s.memcap, _MEMBER_BYTES, s)
        with b.if_then(b.not_(b.load(s.err))):
            base = b.bitcast(b.load(s.mem), _MEMBER.as_pointer())
            n = b.load(s.nmem)
            rec = b.gep(base, [n])
            for k, v in enumerate((packed, size, w, n)):
                b.store(v, b.gep(rec, [_c(0), ir.Constant(I32, k)]))
            b.store(b.add(n, _c(1)), s.nmem)
