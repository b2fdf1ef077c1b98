"""Native code for schedule programs in LogGP, pLogP and LogGPH: the dataflow meaning, compiled.

What it does: :class:`DataflowGen` emits, inside the cost function
:class:`tlop.backends.jit.codegen.CodeGen` is building, the code of one *schedule program* (a
stage, or stages joined by ``+``, ``sum``, ``n * …``, through ``let`` and ``if``) with the meaning
:mod:`tlop.backends.dataflow` gives it — the interpreter is the oracle, and the property tests
check the two agree to 1e-12, errors included.  Event by event, as the interpreter:

* per-rank clocks ``cpu``, ``next_send`` (0) and ``last_recv`` (−∞) in a scratch buffer of 3·P
  doubles that carries over from stage to stage; the program costs the largest ``cpu`` plus its
  plain cost terms;
* a stage is enumerated in native loops (``par``/``seq`` with their phase counters, every
  element checked as :class:`tlop.backends.enumeration.StageEnumerator` checks it: the walk
  :mod:`tlop.backends.jit.loopgen` shares with the τ-Lop stages); each send's
  four platform functions (``send_overhead``, ``send_gap``, ``delivery``, ``recv_overhead``,
  compiled from the platform's algorithms like any algorithm body, on the send's channel for a
  LogGPH platform) are computed and checked (finite, ``>= 0``) as it is placed;
* the interpreter's tie-break between elements is the order its lane-vectorised enumerator
  *placed* them, which is not the order of a nested loop: ``par i: { seq j in 0 .. i: send …;
  send … }`` places every lane's ``j = 0`` send before any lane's second item.  That order is
  reproduced exactly by a key per element — the items' indices in their blocks and the values
  of the enclosing ``seq`` loops, outermost first, then the values of the enclosing ``par``
  loops (the lane) — compared word by word;
* the elements then run in (phase, key) order (sorted with ``qsort`` only when the enumeration
  did not already produce that order): a send at ``t = max(cpu, next_send)`` arrives at
  ``t + delivery``, keeps its rank busy until ``t + send_overhead`` and allows the next send at
  ``t + send_gap``; a computation at phase k first receives, in order of (arrival, key), the
  messages to its rank of a phase below k, then adds its cost; after the stage every rank
  receives its remaining messages in order of (arrival, key) (``max(arrival, cpu +
  recv_overhead, last_recv + send_gap)``).  Messages are kept per receiver (bucketed by a count
  of the stage's destinations: O(sends) per stage, not O(P));
* a stage that nested loops enumerate in (phase, key) order whatever the values, and that has no
  computation (:func:`_in_order`: no ``seq`` or block of several items inside a ``par``; a ring,
  a tree, a pairwise exchange), runs each send as it is placed and keeps only its message; a rank
  with one message receives it at once.

This module holds the program's composition, the enumeration's hooks and the pricing of each
send; the element and message records, their order and the execution on the clocks are
:mod:`tlop.backends.jit.dataflowexec`'s.  Running in (phase, key) order across ranks is the
interpreter's result: ranks only interact
through messages, a computation waits only for messages of lower phases (all sent before it in
this order), and each rank's own elements run in (phase, key) order in both.

Loops poll for Ctrl-C (:meth:`CodeGen.poll`) and stop on the first error; ``sum`` and ``n * …``
obey the interpreter's bounds (``n`` a whole number in 0 … MAX_TERMS), and the whole-evaluation
term budget is the cost function's (:mod:`tlop.backends.budget`).  Scratch memory comes from the
C library and is freed before the program's code ends; a failed allocation is an evaluation
error.

What it does not do: report messages (an evaluation error flags the point; the evaluator re-runs
the interpreter on it), compile a composition the interpreter refuses
(:func:`tlop.backends.dataflow.check_composition` is run when the code is generated, and
:func:`tlop.backends.jit.codegen.check_compilable` refuses such an algorithm), weights (checked,
then ignored, as in the interpreter), or closed forms (none are derived for dataflow models).
"""

from __future__ import annotations

import math

from llvmlite import ir

from tlop import ir as tir
from tlop.backends.dataflow_names import DATAFLOW_FUNCTIONS
from tlop.backends.enumeration import MAX_ELEMENTS
from tlop.backends.interp import MAX_TERMS
from tlop.ir.taulop import schedule_channels

from tlop.backends.jit.llvmutil import Env
from tlop.backends.jit.dataflowexec import _EL_HEAD, _MINUS1, _MSG_HEAD, DataflowEvents
from tlop.backends.jit.loopgen import NativeLoops
from tlop.backends.jit.tables import F64, I1, I64, I8

__all__ = ["DataflowGen", "composition_problem"]

_PTR = I8.as_pointer()
_I64P = I64.as_pointer()
_F64P = F64.as_pointer()
_ZERO = ir.Constant(F64, 0.0)
_INF = ir.Constant(F64, math.inf)
_NAN = ir.Constant(F64, math.nan)


def _c(v: int):
    return ir.Constant(I64, v)


def composition_problem(alg: tir.Algorithm, model: str):
    """The interpreter's error for a composition the dataflow meaning cannot price, or None."""
    from tlop.backends.dataflow import check_composition
    from tlop.runtime.diagnostics import TlopError

    body = alg.body
    if getattr(alg, "requires", None) is not None:
        body = tir.Cond(alg.requires, body, tir.Num(math.nan))
    try:
        check_composition(body, model)
    except TlopError as err:
        return err
    return None


def _key_width(item, places: int = 0, lanes: int = 0) -> int:
    """The widest key of an element of ``item`` (placement words + lane words)."""
    if isinstance(item, (tir.Send, tir.Compute)):
        return places + lanes
    if isinstance(item, tir.Block):
        return max([_key_width(it, places + 1, lanes) for it in item.items] or [0])
    if isinstance(item, tir.Loop):
        if item.kind == "par":
            return _key_width(item.body, places, lanes + 1)
        return _key_width(item.body, places + 1, lanes)
    return places + lanes


def _phase_free(item) -> bool:
    """Every element of ``item`` is placed at the phase its lane starts at."""
    if isinstance(item, (tir.Send, tir.Compute)):
        return True
    if isinstance(item, tir.Block):
        return len(item.items) <= 1 and all(_phase_free(it) for it in item.items)
    if isinstance(item, tir.Loop):
        return item.kind == "par" and _phase_free(item.body)
    return False


def _sequential(item) -> bool:
    """``item`` runs on one lane except inside ``par`` loops that are phase-free: then nested
    loops place its elements in (phase, key) order."""
    if isinstance(item, (tir.Send, tir.Compute)):
        return True
    if isinstance(item, tir.Block):
        return all(_sequential(it) for it in item.items)
    if isinstance(item, tir.Loop):
        return _phase_free(item.body) if item.kind == "par" else _sequential(item.body)
    return False


def _in_order(stage) -> bool:
    """Whether native nested loops enumerate ``stage`` in (phase, key) order whatever the values,
    and it has no computation (nothing waits for a receive): one item that is sequential outside
    its phase-free ``par`` loops, or items that are all phase-free (all at phase 0)."""
    if any(isinstance(n, tir.Compute) for n in tir.walk(stage)):
        return False
    items = stage.items
    if len(items) == 1:
        return _sequential(items[0])
    return all(_phase_free(it) for it in items)


class _Program:
    """The scratch state of one program's code (allocas, created in the entry block)."""


class _Stage:
    """The allocas and values of one stage's code."""


class DataflowGen(NativeLoops, DataflowEvents):
    """Emits dataflow schedule programs for one :class:`~tlop.backends.jit.codegen.CodeGen`."""

    def __init__(self, cg):
        cg.require_mapping()
        super().__init__(cg)
        self.model = cg.program.model
        algs = self.program.algorithms
        funcs = [algs.get(f) for f in DATAFLOW_FUNCTIONS]
        # the interpreter's checks of the platform (Dataflow._function): else every program fails
        self.ok = all(a is not None for a in funcs) and all(
            len(a.params) == 1 or (len(a.params) == 2 and a.params[1].type == "channel") for a in funcs) and \
            len({len(a.params) for a in funcs}) == 1
        self.funcs = dict(zip(DATAFLOW_FUNCTIONS, funcs))
        self.per_channel = self.ok and len(funcs[0].params) == 2
        if self.per_channel:
            within, between, problem = schedule_channels(self.program)
            if problem is not None:
                self.chan_ok = False
            else:
                self.chan_ok = True
                chans = self.program.channels
                self.ci, self.cx = chans.index(within[0]), chans.index(between[0])
        self.problem = composition_problem(cg.alg, self.model)
        self._cmps: dict = {}

    # ================================================================== a program
    def cost(self, e, env, conc):
        """The cost of the schedule program ``e`` (the outermost ``+``/``sum``/``*``/stage
        holding a stage), as :meth:`tlop.backends.dataflow.Dataflow.cost`."""
        cg, b = self.cg, self.b
        P = env.get(tir.RANKS)
        if P is None or self.cg.mapping_kind is None or not self.ok or self.problem is not None:
            return cg.fail()
        st = _Program()
        st.err = self.var(I1, ir.Constant(I1, 0), "df_err")
        placed = self.placeable(P)
        with b.if_then(b.not_(placed), likely=False):
            self._fail(st.err)
        st.P = P
        st.Pi = b.fptosi(b.select(placed, P, ir.Constant(F64, 1.0)), I64)
        Pi = st.Pi
        # clocks: cpu | next_send | last_recv (doubles); per rank: messages received in this stage |
        # fill | done | the receivers' list | its latest element + 1 (i64)
        # (calloc: all zero, which is every initial value — last_recv is kept xor the bits of −∞ —
        # and the pages of large arrays are only touched where ranks are)
        st.clk = self.var(_F64P, b.bitcast(b.call(self.calloc, [b.mul(Pi, _c(3)), _c(8)]), _F64P), "df_clk")
        st.rcv = self.var(_I64P, b.bitcast(b.call(self.calloc, [b.mul(Pi, _c(5)), _c(8)]), _I64P), "df_rcv")
        st.el = self.var(_PTR, b.call(self.malloc, [_c(4096)]), "df_el")
        st.elcap = self.var(I64, _c(4096), "df_elcap")  # bytes
        st.msg = self.var(_PTR, b.call(self.malloc, [_c(4096)]), "df_msg")
        st.msgcap = self.var(I64, _c(4096), "df_msgcap")  # bytes
        # a second element buffer (the counting sort's output) and the phases' counts
        st.tmp = self.var(_PTR, b.call(self.malloc, [_c(4096)]), "df_tmp")
        st.tmpcap = self.var(I64, _c(4096), "df_tmpcap")
        st.phc = self.var(_PTR, b.call(self.malloc, [_c(4096)]), "df_phc")
        st.phccap = self.var(I64, _c(4096), "df_phccap")
        # the last send's size and channel, and its four function values (reused for the next
        # send of the same size: the same code on the same inputs gives the same values)
        st.memo_m = self.var(F64, _NAN, "df_memo_m")
        st.memo_c = self.var(I1, ir.Constant(I1, 0), "df_memo_c")
        st.memo = [self.var(F64, _ZERO, f"df_memo_{f}") for f in DATAFLOW_FUNCTIONS]
        for p in (st.clk, st.rcv, st.el, st.msg, st.tmp, st.phc):
            self.null_fails(b.load(p), st.err)
        out = self.var(F64, _NAN, "df_out")
        with b.if_then(b.not_(b.load(st.err))):
            clk = b.load(st.clk)

            extra = self._run(e, env, st)
            fin = self.var(F64, ir.Constant(F64, -math.inf), "df_fin")

            def finish(i):
                v, m = b.load(b.gep(clk, [i])), b.load(fin)
                # numpy's max: NaN propagates
                b.store(b.select(b.or_(b.fcmp_ordered(">=", v, m), b.fcmp_unordered("uno", v, v)), v, m), fin)
            self.plain_loop(_c(0), b.sub(Pi, _c(1)), finish)
            b.store(b.fadd(b.load(fin), extra), out)
        for p in (st.clk, st.rcv, st.el, st.msg, st.tmp, st.phc):
            b.call(self.free, [b.bitcast(b.load(p), _PTR)])
        with b.if_then(b.load(st.err)):
            cg.flag_error()
            b.store(_NAN, out)
        return b.load(out)

    def _run(self, e, env, st):
        """Run ``e`` on the clocks; its plain cost terms (Dataflow._program)."""
        cg, b = self.cg, self.b
        if isinstance(e, tir.Stage):
            self._stage(e, env, st)
            return _ZERO
        from tlop.backends.dataflow import holds_stage

        if not holds_stage(e):
            return cg.gen(e, env, None)
        if isinstance(e, tir.Bin) and e.op == "*":
            body, count = (e.lhs, e.rhs) if holds_stage(e.lhs) else (e.rhs, e.lhs)
            n = cg.gen(count, env, None)
            whole = b.fcmp_ordered("==", b.call(self.intrinsic("llvm.floor"), [n]), n)
            ok = b.and_(whole, b.and_(b.fcmp_ordered(">=", n, _ZERO),
                                      b.fcmp_ordered("<=", n, ir.Constant(F64, float(MAX_TERMS)))))
            acc = self.var(F64, _ZERO, "df_rep")
            with b.if_else(ok) as (then, otherwise):
                with otherwise:
                    self._fail(st.err)
                with then:
                    stop = b.sub(b.fptosi(b.select(ok, n, _ZERO), I64), _c(1))
                    def again(i):
                        v = self._run(body, env, st)
                        b.store(b.fadd(b.load(acc), v), acc)
                    self.loop(_c(0), stop, again, "df_times", st.err)
            return b.load(acc)
        if isinstance(e, tir.Bin):  # '+'
            x = self._run(e.lhs, env, st)
            y = self._run(e.rhs, env, st)
            return b.fadd(x, y)
        if isinstance(e, tir.Reduce):  # 'sum'
            lo, hi = cg.gen(e.lo, env, None), cg.gen(e.hi, env, None)
            ok = self.range_ok(lo, hi)
            acc = self.var(F64, _ZERO, "df_sum")
            with b.if_else(ok) as (then, otherwise):
                with otherwise:
                    self._fail(st.err)
                with then:
                    start, stop = self.range_ends(ok, lo, hi)

                    def body(i):
                        inner = Env(env)
                        inner[e.var] = b.sitofp(i, F64)
                        v = self._run(e.body, inner, st)
                        b.store(b.fadd(b.load(acc), v), acc)
                    self.loop(start, stop, body, "df_sumk", st.err)
            return b.load(acc)
        if isinstance(e, tir.Let):
            inner = Env(env)
            inner.update([(name, cg.gen(v, env, None)) for name, v in e.bindings])
            return self._run(e.body, inner, st)
        if isinstance(e, tir.Cond):
            out = self.var(F64, _ZERO, "df_if")
            with b.if_else(cg._truth(cg.gen(e.test, env, None))) as (then, otherwise):
                with then:
                    b.store(self._run(e.then_, env, st), out)
                with otherwise:
                    b.store(self._run(e.else_, env, st), out)
            return b.load(out)
        self._fail(st.err)  # check_composition refused it already (self.problem)
        return _NAN

    # ================================================================== one stage
    def _stage(self, e, env, st):
        b = self.b
        s = _Stage()
        s.K = max(1, max([_key_width(it, 1, 0) for it in e.items] or [1]))
        s.W = _EL_HEAD + s.K  # words of an element
        s.M = _MSG_HEAD + s.K  # words of a message
        s.n = self.var(I64, _c(0), "dfs_n")
        s.nsend = self.var(I64, _c(0), "dfs_ns")
        s.nrecv = self.var(I64, _c(0), "dfs_nrecv")
        s.maxph = self.var(I64, _c(0), "dfs_maxph")
        s.unsorted = self.var(I1, ir.Constant(I1, 0), "dfs_unsorted")
        s.d, _ = self.mapping(st.P)
        # a stage whose enumeration is in (phase, key) order by construction and has no
        # computation runs each send as it is placed (no element records)
        s.fast = _in_order(e)
        with b.if_then(b.not_(b.load(st.err))):
            self.walk_stage(e, env, None, st.err,
                            lambda ph, src, dst, size, w, key: self._send(ph, src, dst, size, w, s, st, key),
                            lambda ph, rank, cost, key: self._compute(ph, rank, cost, s, st, key), stop_on_error=True)
        n = b.load(s.n)
        if s.fast:
            with b.if_then(b.and_(b.not_(b.load(st.err)), b.icmp_signed(">", n, _c(0)))):
                self._receive_all(s, st, n)
            return
        with b.if_then(b.and_(b.not_(b.load(st.err)), b.icmp_signed(">", n, _c(0)))):
            self._order(s, st, n)
            self._ensure(st.msg, st.msgcap, b.mul(b.load(s.nsend), _c(8 * s.M)), st.err)
            with b.if_then(b.not_(b.load(st.err))):
                self._execute(s, st, n)

    # ------------------------------------------------------------------ elements
    def _count(self, s, st):
        """Count one element (at most MAX_ELEMENTS per stage)."""
        b = self.b
        n = b.add(b.load(s.n), _c(1))
        with b.if_then(b.icmp_signed(">", n, _c(MAX_ELEMENTS)), likely=False):
            self._fail(st.err)

    def _send(self, ph, src, dst, size, w, s, st, key):
        b = self.b
        self._count(s, st)
        ok = self.send_ok(src, dst, size, w, st.P)
        if self.per_channel and not self.chan_ok:
            ok = ir.Constant(I1, 0)
        with b.if_else(ok) as (then, otherwise):
            with otherwise:
                self._fail(st.err)
            with then:
                if self.per_channel and not self.chan_ok:
                    return
                slots = [self.var(F64, _ZERO, f"df_{f}") for f in DATAFLOW_FUNCTIONS]

                bits = b.bitcast(size, I64)

                def price(chan):
                    flag = ir.Constant(I1, int(chan == getattr(self, "ci", None)))
                    hit = b.and_(b.icmp_signed("==", bits, b.bitcast(b.load(st.memo_m), I64)),
                                 b.icmp_signed("==", b.load(st.memo_c), flag))
                    with b.if_else(hit) as (again, fresh):
                        with again:
                            for m, slot in zip(st.memo, slots):
                                b.store(b.load(m), slot)
                        with fresh:
                            for f, slot, m in zip(DATAFLOW_FUNCTIONS, slots, st.memo):
                                v = self._function(f, size, chan)
                                good = b.and_(b.fcmp_ordered(">=", v, _ZERO), b.fcmp_ordered("<", v, _INF))
                                with b.if_then(b.not_(good), likely=False):
                                    self._fail(st.err)
                                b.store(v, slot)
                                b.store(v, m)
                            b.store(size, st.memo_m)
                            b.store(flag, st.memo_c)

                if self.per_channel:
                    sn, dn = self.node_of(src, s.d), self.node_of(dst, s.d)
                    with b.if_else(b.icmp_signed("==", sn, dn)) as (same, other):
                        with same:
                            price(self.ci)
                        with other:
                            price(self.cx)
                else:
                    price(None)
                b.store(b.add(b.load(s.nsend), _c(1)), s.nsend)
                if s.fast:
                    self._send_now(s, st, ph, b.fptosi(src, I64), b.fptosi(dst, I64), [b.load(x) for x in slots], key)
                else:
                    self._push(s, st, ph, b.fptosi(src, I64), b.fptosi(dst, I64), [b.load(x) for x in slots], key)

    def _compute(self, ph, rank, cost, s, st, key):
        b = self.b
        self._count(s, st)
        ok = self.compute_ok(rank, cost, st.P)
        with b.if_else(ok) as (then, otherwise):
            with otherwise:
                self._fail(st.err)
            with then:
                self._push(s, st, ph, b.fptosi(rank, I64), _MINUS1, [cost, _ZERO, _ZERO, _ZERO], key)

    def _function(self, name, size, chan):
        """The platform's function ``name`` of a send of ``size`` bytes (on channel ``chan``)."""
        alg = self.funcs[name]
        env = Env({alg.params[0].name: size})
        if chan is not None:
            env[alg.params[1].name] = ir.Constant(F64, float(chan))
        return self.cg.gen(alg.body, env, None)

