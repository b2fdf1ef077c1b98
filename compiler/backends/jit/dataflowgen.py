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
  element checked as :class:`tlop.backends.enumeration.StageEnumerator` checks it); each send's
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

Running in (phase, key) order across ranks is the interpreter's result: ranks only interact
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
from tlop.backends.interp import BOUND_LIMIT, MAX_TERMS
from tlop.ir.taulop import schedule_channels

from tlop.backends.jit.tables import F64, I1, I32, I64, I8

__all__ = ["DataflowGen", "composition_problem"]

_PTR = I8.as_pointer()
_I64P = I64.as_pointer()
_F64P = F64.as_pointer()
_ZERO = ir.Constant(F64, 0.0)
_INF = ir.Constant(F64, math.inf)
_NAN = ir.Constant(F64, math.nan)
_MINUS1 = ir.Constant(I64, -1)
#: words of an element record before its key: phase, owner, destination (−1: a computation),
#: then four doubles (send: overhead, gap, delivery, receive overhead; computation: its cost)
_EL_HEAD = 7
#: words of a message record before its key: arrival, receive overhead, gap (doubles), phase
_MSG_HEAD = 4


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


class DataflowGen:
    """Emits dataflow schedule programs for one :class:`~tlop.backends.jit.codegen.CodeGen`."""

    def __init__(self, cg):
        self.cg = cg
        self.program = cg.program
        self.model = cg.program.model
        self.module = cg.module
        self.sg = cg.stages()  # the τ-Lop stage generator's helpers: loops, ranks, the mapping, libc
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

    @property
    def b(self) -> ir.IRBuilder:
        return self.cg.b

    # ================================================================== helpers
    def _loop(self, start, stop, body, err, name="df"):
        """``for i in start .. stop`` (i64, inclusive) while no error and no Ctrl-C: ``body(i)``."""
        b = self.b
        i = self.sg.var(I64, start, f"{name}_i")
        head = b.append_basic_block(f"{name}_head")
        blk = b.append_basic_block(f"{name}_body")
        done = b.append_basic_block(f"{name}_done")
        b.branch(head)
        b.position_at_end(head)
        iv = b.load(i)
        go = b.and_(b.icmp_signed("<=", iv, stop), b.not_(b.or_(b.load(self.cg.stop), b.load(err))))
        b.cbranch(go, blk, done)
        b.position_at_end(blk)
        body(iv)
        self.cg.poll()
        b.store(b.add(b.load(i), _c(1)), i)
        b.branch(head)
        b.position_at_end(done)

    def _fail(self, err):
        self.b.store(ir.Constant(I1, 1), err)

    def _null_fails(self, ptr, err):
        b = self.b
        with b.if_then(b.icmp_unsigned("==", b.ptrtoint(ptr, I64), _c(0)), likely=False):
            self._fail(err)

    def _word(self, base, idx):
        """Pointer to i64 word ``idx`` of ``base`` (an i64*)."""
        return self.b.gep(base, [idx])

    def _fword(self, base, idx):
        return self.b.bitcast(self.b.gep(base, [idx]), _F64P)

    # ================================================================== a program
    def cost(self, e, env, conc):
        """The cost of the schedule program ``e`` (the outermost ``+``/``sum``/``*``/stage
        holding a stage), as :meth:`tlop.backends.dataflow.Dataflow.cost`."""
        cg, b = self.cg, self.b
        P = env.get(tir.RANKS)
        if P is None or self.cg.mapping_kind is None or not self.ok or self.problem is not None:
            return cg.fail()
        st = _Program()
        st.err = self.sg.var(I1, ir.Constant(I1, 0), "df_err")
        placed = self.sg.placeable(P)
        with b.if_then(b.not_(placed), likely=False):
            self._fail(st.err)
        st.P = P
        st.Pi = b.fptosi(b.select(placed, P, ir.Constant(F64, 1.0)), I64)
        Pi = st.Pi
        # clocks: cpu | next_send | last_recv (doubles); per rank: messages received in this stage |
        # fill | done | the receivers' list | its latest element + 1 (i64)
        # (calloc: all zero, which is every initial value — last_recv is kept xor the bits of −∞ —
        # and the pages of large arrays are only touched where ranks are)
        st.clk = self.sg.var(_F64P, b.bitcast(b.call(self.sg.calloc, [b.mul(Pi, _c(3)), _c(8)]), _F64P), "df_clk")
        st.rcv = self.sg.var(_I64P, b.bitcast(b.call(self.sg.calloc, [b.mul(Pi, _c(5)), _c(8)]), _I64P), "df_rcv")
        st.el = self.sg.var(_PTR, b.call(self.sg.malloc, [_c(4096)]), "df_el")
        st.elcap = self.sg.var(I64, _c(4096), "df_elcap")  # bytes
        st.msg = self.sg.var(_PTR, b.call(self.sg.malloc, [_c(4096)]), "df_msg")
        st.msgcap = self.sg.var(I64, _c(4096), "df_msgcap")  # bytes
        # a second element buffer (the counting sort's output) and the phases' counts
        st.tmp = self.sg.var(_PTR, b.call(self.sg.malloc, [_c(4096)]), "df_tmp")
        st.tmpcap = self.sg.var(I64, _c(4096), "df_tmpcap")
        st.phc = self.sg.var(_PTR, b.call(self.sg.malloc, [_c(4096)]), "df_phc")
        st.phccap = self.sg.var(I64, _c(4096), "df_phccap")
        # the last send's size and channel, and its four function values (reused for the next
        # send of the same size: the same code on the same inputs gives the same values)
        st.memo_m = self.sg.var(F64, _NAN, "df_memo_m")
        st.memo_c = self.sg.var(I1, ir.Constant(I1, 0), "df_memo_c")
        st.memo = [self.sg.var(F64, _ZERO, f"df_memo_{f}") for f in DATAFLOW_FUNCTIONS]
        for p in (st.clk, st.rcv, st.el, st.msg, st.tmp, st.phc):
            self._null_fails(b.load(p), st.err)
        out = self.sg.var(F64, _NAN, "df_out")
        with b.if_then(b.not_(b.load(st.err))):
            clk = b.load(st.clk)

            extra = self._run(e, env, st)
            fin = self.sg.var(F64, ir.Constant(F64, -math.inf), "df_fin")

            def finish(i):
                v, m = b.load(b.gep(clk, [i])), b.load(fin)
                # numpy's max: NaN propagates
                b.store(b.select(b.or_(b.fcmp_ordered(">=", v, m), b.fcmp_unordered("uno", v, v)), v, m), fin)
            self._plain_loop(_c(0), b.sub(Pi, _c(1)), finish)
            b.store(b.fadd(b.load(fin), extra), out)
        for p in (st.clk, st.rcv, st.el, st.msg, st.tmp, st.phc):
            b.call(self.sg.free, [b.bitcast(b.load(p), _PTR)])
        with b.if_then(b.load(st.err)):
            cg.flag_error()
            b.store(_NAN, out)
        return b.load(out)

    def _plain_loop(self, start, stop, body):
        """A counted loop without polling or early exit (O(P) set-up and reductions)."""
        b = self.b
        i = self.sg.var(I64, start, "dfp_i")
        head = b.append_basic_block("dfp_head")
        blk = b.append_basic_block("dfp_body")
        done = b.append_basic_block("dfp_done")
        b.branch(head)
        b.position_at_end(head)
        iv = b.load(i)
        b.cbranch(b.icmp_signed("<=", iv, stop), blk, done)
        b.position_at_end(blk)
        body(iv)
        b.store(b.add(b.load(i), _c(1)), i)
        b.branch(head)
        b.position_at_end(done)

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
            whole = b.fcmp_ordered("==", b.call(self.sg.intrinsic("llvm.floor"), [n]), n)
            ok = b.and_(whole, b.and_(b.fcmp_ordered(">=", n, _ZERO),
                                      b.fcmp_ordered("<=", n, ir.Constant(F64, float(MAX_TERMS)))))
            acc = self.sg.var(F64, _ZERO, "df_rep")
            with b.if_else(ok) as (then, otherwise):
                with otherwise:
                    self._fail(st.err)
                with then:
                    stop = b.sub(b.fptosi(b.select(ok, n, _ZERO), I64), _c(1))
                    def again(i):
                        v = self._run(body, env, st)
                        b.store(b.fadd(b.load(acc), v), acc)
                    self._loop(_c(0), stop, again, st.err, "df_times")
            return b.load(acc)
        if isinstance(e, tir.Bin):  # '+'
            x = self._run(e.lhs, env, st)
            y = self._run(e.rhs, env, st)
            return b.fadd(x, y)
        if isinstance(e, tir.Reduce):  # 'sum'
            from tlop.backends.jit.codegen import _Env

            lo, hi = cg.gen(e.lo, env, None), cg.gen(e.hi, env, None)
            fabs, floor, ceil = (self.sg.intrinsic(n) for n in ("llvm.fabs", "llvm.floor", "llvm.ceil"))
            lim = ir.Constant(F64, BOUND_LIMIT)
            ok = b.and_(b.fcmp_ordered("<=", b.call(fabs, [lo]), lim), b.fcmp_ordered("<=", b.call(fabs, [hi]), lim))
            span = b.fsub(b.call(floor, [hi]), b.call(ceil, [lo]))
            ok = b.and_(ok, b.fcmp_ordered("<", span, ir.Constant(F64, float(MAX_TERMS))))
            acc = self.sg.var(F64, _ZERO, "df_sum")
            with b.if_else(ok) as (then, otherwise):
                with otherwise:
                    self._fail(st.err)
                with then:
                    start = b.fptosi(b.call(ceil, [b.select(ok, lo, _ZERO)]), I64)
                    stop = b.fptosi(b.call(floor, [b.select(ok, hi, _ZERO)]), I64)

                    def body(i):
                        inner = _Env(env)
                        inner[e.var] = b.sitofp(i, F64)
                        v = self._run(e.body, inner, st)
                        b.store(b.fadd(b.load(acc), v), acc)
                    self._loop(start, stop, body, st.err, "df_sumk")
            return b.load(acc)
        if isinstance(e, tir.Let):
            from tlop.backends.jit.codegen import _Env

            inner = _Env(env)
            inner.update([(name, cg.gen(v, env, None)) for name, v in e.bindings])
            return self._run(e.body, inner, st)
        if isinstance(e, tir.Cond):
            out = self.sg.var(F64, _ZERO, "df_if")
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
        s.n = self.sg.var(I64, _c(0), "dfs_n")
        s.nsend = self.sg.var(I64, _c(0), "dfs_ns")
        s.nrecv = self.sg.var(I64, _c(0), "dfs_nrecv")
        s.maxph = self.sg.var(I64, _c(0), "dfs_maxph")
        s.unsorted = self.sg.var(I1, ir.Constant(I1, 0), "dfs_unsorted")
        s.d, _ = self.sg.mapping(st.P)
        # a stage whose enumeration is in (phase, key) order by construction and has no
        # computation runs each send as it is placed (no element records)
        s.fast = _in_order(e)
        with b.if_then(b.not_(b.load(st.err))):
            for k, item in enumerate(e.items):
                self._item(item, env, _c(0), s, st, [_c(k)], [])
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

    # ------------------------------------------------------------------ enumeration
    def _item(self, item, env, ph, s, st, places, lanes):
        cg, b = self.cg, self.b
        if isinstance(item, tir.Send):
            src, dst, size, w = (cg.gen(x, env, None) for x in (item.src, item.dst, item.size, item.weight))
            self._send(ph, src, dst, size, w, s, st, places + lanes)
            return b.add(ph, _c(1))
        if isinstance(item, tir.Compute):
            r = cg.gen(item.rank, env, None)
            cost = cg.gen(item.cost, env, None)
            self._compute(ph, r, cost, s, st, places + lanes)
            return b.add(ph, _c(1))
        if isinstance(item, tir.Block):
            for k, it in enumerate(item.items):
                ph = self._item(it, env, ph, s, st, places + [_c(k)], lanes)
            return ph
        if isinstance(item, tir.Loop):
            return self._loop_item(item, env, ph, s, st, places, lanes)
        self._fail(st.err)  # pragma: no cover - the verifier admits no other item
        return ph

    def _loop_item(self, loop, env, ph, s, st, places, lanes):
        from tlop.backends.jit.codegen import _Env

        cg, b = self.cg, self.b
        lo = cg.gen(loop.lo, env, None)
        hi = cg.gen(loop.hi, env, None)
        fabs, floor, ceil = (self.sg.intrinsic(n) for n in ("llvm.fabs", "llvm.floor", "llvm.ceil"))
        lim = ir.Constant(F64, BOUND_LIMIT)
        ok = b.and_(b.fcmp_ordered("<=", b.call(fabs, [lo]), lim), b.fcmp_ordered("<=", b.call(fabs, [hi]), lim))
        span = b.fsub(b.call(floor, [hi]), b.call(ceil, [lo]))
        ok = b.and_(ok, b.fcmp_ordered("<", span, ir.Constant(F64, float(MAX_TERMS))))
        acc = self.sg.var(I64, ph, f"df_{loop.kind}_ph")
        with b.if_else(ok) as (then, otherwise):
            with otherwise:
                self._fail(st.err)
            with then:
                start = b.fptosi(b.call(ceil, [b.select(ok, lo, _ZERO)]), I64)
                stop = b.fptosi(b.call(floor, [b.select(ok, hi, _ZERO)]), I64)

                def body(i):
                    inner = _Env(env)
                    inner[loop.var] = b.sitofp(i, F64)
                    if isinstance(loop.where, tir.Num):
                        keep = ir.Constant(I1, int(loop.where.value != 0))
                    else:
                        keep = cg._truth(cg.gen(loop.where, inner, None))
                    with b.if_then(keep):
                        if loop.kind == "par":
                            child = self._item(loop.body, inner, ph, s, st, places, lanes + [i])
                            cur = b.load(acc)
                            b.store(b.select(b.icmp_signed(">", child, cur), child, cur), acc)
                        else:
                            b.store(self._item(loop.body, inner, b.load(acc), s, st, places + [i], lanes), acc)

                self._loop(start, stop, body, st.err, f"df_{loop.kind}")
        return b.load(acc)

    def _count(self, s, st):
        """Count one element (at most MAX_ELEMENTS per stage)."""
        b = self.b
        n = b.add(b.load(s.n), _c(1))
        with b.if_then(b.icmp_signed(">", n, _c(MAX_ELEMENTS)), likely=False):
            self._fail(st.err)

    def _ensure(self, ptr, cap, need, err):
        """Grow the buffer ``*ptr`` (``*cap`` bytes) to hold ``need`` bytes."""
        b = self.b
        with b.if_then(b.icmp_signed(">", need, b.load(cap)), likely=False):
            c2 = b.mul(b.load(cap), _c(2))
            newcap = b.select(b.icmp_signed(">", need, c2), need, c2)
            p = b.call(self.sg.realloc, [b.load(ptr), newcap])
            with b.if_else(b.icmp_unsigned("==", b.ptrtoint(p, I64), _c(0))) as (bad, good):
                with bad:
                    self._fail(err)
                with good:
                    b.store(p, ptr)
                    b.store(newcap, cap)

    def _push(self, s, st, ph, owner, dst, vals, key):
        """Append an element record (``dst`` −1 for a computation, ``vals`` its four doubles);
        note whether the records are still in (phase, key) order, the largest phase, and count
        the messages of each receiver (listing the receivers)."""
        b = self.b
        n = b.load(s.n)
        self._ensure(st.el, st.elcap, b.mul(b.add(n, _c(1)), _c(8 * s.W)), st.err)
        with b.if_then(b.not_(b.load(st.err))):
            base = b.bitcast(b.load(st.el), _I64P)
            rec = b.gep(base, [b.mul(n, _c(s.W))])
            words = [ph] + [key[k] if k < len(key) else _c(0) for k in range(s.K)]
            with b.if_then(b.and_(b.icmp_signed(">", n, _c(0)), b.not_(b.load(s.unsorted)))):
                prev = b.gep(base, [b.mul(b.sub(n, _c(1)), _c(s.W))])
                self._note_order(prev, words, s)
            mx = b.load(s.maxph)
            b.store(b.select(b.icmp_signed(">", ph, mx), ph, mx), s.maxph)
            b.store(ph, self._word(rec, _c(0)))
            b.store(owner, self._word(rec, _c(1)))
            b.store(dst, self._word(rec, _c(2)))
            for k, v in enumerate(vals):
                b.store(v, self._fword(rec, _c(3 + k)))
            for k in range(s.K):
                b.store(words[1 + k], self._word(rec, _c(_EL_HEAD + k)))
            b.store(b.add(n, _c(1)), s.n)
            if dst is not _MINUS1:
                cnt = b.load(st.rcv)
                lst = b.gep(cnt, [b.mul(st.Pi, _c(3))])
                c = b.load(b.gep(cnt, [dst]))
                with b.if_then(b.icmp_signed("==", c, _c(0))):
                    k = b.load(s.nrecv)
                    b.store(dst, b.gep(lst, [k]))
                    b.store(b.add(k, _c(1)), s.nrecv)
                b.store(b.add(c, _c(1)), b.gep(cnt, [dst]))

    def _send_now(self, s, st, ph, r, dst, vals, key):
        """A send of a stage in order (:func:`_in_order`): run it now on its rank's clocks and
        keep its message (a message record, then its destination)."""
        b = self.b
        os_, gap, dl, or_ = vals
        MW = s.M + 1
        n = b.load(s.n)
        self._ensure(st.msg, st.msgcap, b.mul(b.add(n, _c(1)), _c(8 * MW)), st.err)
        with b.if_then(b.not_(b.load(st.err))):
            clk = b.load(st.clk)
            cpu, nxt = b.gep(clk, [r]), b.gep(clk, [b.add(r, st.Pi)])
            t = _max(b, b.load(cpu), b.load(nxt))
            b.store(b.fadd(t, os_), cpu)
            b.store(b.fadd(t, gap), nxt)
            m = b.gep(b.bitcast(b.load(st.msg), _I64P), [b.mul(n, _c(MW))])
            b.store(b.fadd(t, dl), self._fword(m, _c(0)))
            b.store(or_, self._fword(m, _c(1)))
            b.store(gap, self._fword(m, _c(2)))
            b.store(ph, self._word(m, _c(3)))
            for k in range(s.K):
                b.store(key[k] if k < len(key) else _c(0), self._word(m, _c(_MSG_HEAD + k)))
            b.store(dst, self._word(m, _c(s.M)))
            b.store(b.add(n, _c(1)), s.n)
            cnt = b.load(st.rcv)
            lst = b.gep(cnt, [b.mul(st.Pi, _c(3))])
            c = b.load(b.gep(cnt, [dst]))
            with b.if_then(b.icmp_signed("==", c, _c(0))):
                k = b.load(s.nrecv)
                b.store(dst, b.gep(lst, [k]))
                b.store(b.add(k, _c(1)), s.nrecv)
            b.store(b.add(c, _c(1)), b.gep(cnt, [dst]))

    def _receive_all(self, s, st, n):
        """The receives of a stage in order: a rank with one message receives it at once, the
        others' messages are bucketed (in the order they were sent) and received in order of
        (arrival, key)."""
        b = self.b
        MW = s.M + 1
        Pi = st.Pi
        rcv = b.load(st.rcv)
        cnt, fill, done, lst = rcv, b.gep(rcv, [Pi]), b.gep(rcv, [b.mul(Pi, _c(2))]), b.gep(rcv, [b.mul(Pi, _c(3))])
        clk = b.load(st.clk)
        last = b.bitcast(b.gep(clk, [b.mul(Pi, _c(2))]), _I64P)
        nrecv = b.load(s.nrecv)
        off = self.sg.var(I64, _c(0), "dff_off")

        def starts(j):
            d = b.load(b.gep(lst, [j]))
            c = b.load(b.gep(cnt, [d]))
            with b.if_then(b.icmp_signed(">", c, _c(1))):
                o = b.load(off)
                b.store(o, b.gep(fill, [d]))
                b.store(o, b.gep(done, [d]))
                b.store(b.add(o, c), off)
        self._plain_loop(_c(0), b.sub(nrecv, _c(1)), starts)
        self._ensure(st.tmp, st.tmpcap, b.mul(b.load(off), _c(8 * MW)), st.err)
        with b.if_then(b.not_(b.load(st.err))):
            msg = b.bitcast(b.load(st.msg), _I64P)
            tmp = b.bitcast(b.load(st.tmp), _I64P)

            def route(j):
                m = b.gep(msg, [b.mul(j, _c(MW))])
                d = b.load(self._word(m, _c(s.M)))
                with b.if_else(b.icmp_signed("==", b.load(b.gep(cnt, [d])), _c(1))) as (single, many):
                    with single:
                        self._receive_one(m, d, clk, last)
                    with many:
                        slot = b.gep(fill, [d])
                        j2 = b.load(slot)
                        b.store(b.add(j2, _c(1)), slot)
                        to = b.gep(tmp, [b.mul(j2, _c(MW))])
                        for w in range(MW):
                            b.store(b.load(b.gep(m, [_c(w)])), b.gep(to, [_c(w)]))
            self._loop(_c(0), b.sub(n, _c(1)), route, st.err, "dff_route")

            def rest(j):
                d = b.load(b.gep(lst, [j]))
                with b.if_then(b.icmp_signed(">", b.load(b.gep(cnt, [d])), _c(1))):
                    self._receive_range(tmp, MW, b.load(b.gep(done, [d])), b.load(b.gep(fill, [d])), d, clk, last,
                                        s.K)
                b.store(_c(0), b.gep(cnt, [d]))
            self._plain_loop(_c(0), b.sub(nrecv, _c(1)), rest)

    def _receive_one(self, m, r, clk, last):
        """Rank ``r`` receives the message at ``m``: max(arrival, cpu + or, last_recv + gap)."""
        b = self.b
        arrive = b.load(self._fword(m, _c(0)))
        or_ = b.load(self._fword(m, _c(1)))
        gap = b.load(self._fword(m, _c(2)))
        cpu = b.gep(clk, [r])
        lr = _unkey(b, b.load(b.gep(last, [r])))
        end = _max(b, _max(b, arrive, b.fadd(b.load(cpu), or_)), b.fadd(lr, gap))
        b.store(end, cpu)
        b.store(_key(b, end), b.gep(last, [r]))

    def _receive_range(self, base, width, lo, hi, r, clk, last, K):
        """Rank ``r`` receives the messages [lo, hi) of ``base`` (records of ``width`` words) in
        order of (arrival, key): sorted with ``qsort`` unless they already are."""
        b = self.b

        def rec(j):
            return b.gep(base, [b.mul(j, _c(width))])
        k = b.sub(hi, lo)
        with b.if_then(b.icmp_signed(">", k, _c(1))):
            cmp = self._comparator("msg", K)
            unsorted = self.sg.var(I1, ir.Constant(I1, 0), "dfr_unsorted")

            def check(j):
                with b.if_then(b.icmp_signed(">", b.call(cmp, [b.bitcast(rec(b.sub(j, _c(1))), _PTR),
                                                              b.bitcast(rec(j), _PTR)]), ir.Constant(I32, 0))):
                    b.store(ir.Constant(I1, 1), unsorted)
            self._plain_loop(b.add(lo, _c(1)), b.sub(hi, _c(1)), check)
            with b.if_then(b.load(unsorted)):
                b.call(self.sg.qsort, [b.bitcast(rec(lo), _PTR), k, _c(8 * width), cmp])
        self._plain_loop(lo, b.sub(hi, _c(1)), lambda j: self._receive_one(rec(j), r, clk, last))

    def _note_order(self, prev, words, s):
        """``s.unsorted`` when the record at ``prev`` comes after ``words`` (phase, key…)."""
        b = self.b
        done = b.append_basic_block("dfo_done")
        for k, w in enumerate(words):
            pw = b.load(self._word(prev, _c(0 if k == 0 else _EL_HEAD + k - 1)))
            bad = b.append_basic_block("dfo_bad")
            nxt = b.append_basic_block("dfo_next")
            b.cbranch(b.icmp_signed(">", pw, w), bad, nxt)
            b.position_at_end(bad)
            b.store(ir.Constant(I1, 1), s.unsorted)
            b.branch(done)
            b.position_at_end(nxt)
            if k < len(words) - 1:
                more = b.append_basic_block("dfo_more")
                b.cbranch(b.icmp_signed("<", pw, w), done, more)
                b.position_at_end(more)
        b.branch(done)
        b.position_at_end(done)

    def _send(self, ph, src, dst, size, w, s, st, key):
        b, sg = self.b, self.sg
        self._count(s, st)
        ok = b.and_(sg.is_rank(src, st.P), sg.is_rank(dst, st.P))
        ok = b.and_(ok, b.fcmp_ordered(">=", size, _ZERO))
        ok = b.and_(ok, b.and_(b.fcmp_ordered(">", w, _ZERO), b.fcmp_ordered("<", w, _INF)))
        if self.per_channel and not self.chan_ok:
            ok = ir.Constant(I1, 0)
        with b.if_else(ok) as (then, otherwise):
            with otherwise:
                self._fail(st.err)
            with then:
                if self.per_channel and not self.chan_ok:
                    return
                slots = [self.sg.var(F64, _ZERO, f"df_{f}") for f in DATAFLOW_FUNCTIONS]

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
                    sn, dn = sg.node_of(src, s.d), sg.node_of(dst, s.d)
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
        ok = b.and_(self.sg.is_rank(rank, st.P), b.fcmp_ordered(">=", cost, _ZERO))
        with b.if_else(ok) as (then, otherwise):
            with otherwise:
                self._fail(st.err)
            with then:
                self._push(s, st, ph, b.fptosi(rank, I64), _MINUS1, [cost, _ZERO, _ZERO, _ZERO], key)

    def _function(self, name, size, chan):
        """The platform's function ``name`` of a send of ``size`` bytes (on channel ``chan``)."""
        from tlop.backends.jit.codegen import _Env

        alg = self.funcs[name]
        env = _Env({alg.params[0].name: size})
        if chan is not None:
            env[alg.params[1].name] = ir.Constant(F64, float(chan))
        return self.cg.gen(alg.body, env, None)

    # ------------------------------------------------------------------ order
    def _comparator(self, which, K):
        """``int cmp(const void*, const void*)`` for qsort: elements by (phase, key), messages
        by (arrival, key)."""
        got = self._cmps.get((which, K))
        if got is not None:
            return got
        fn = ir.Function(self.module, ir.FunctionType(I32, [_PTR, _PTR]), f"{self.cg.sym}_dfcmp_{which}{K}")
        fn.linkage = "internal"
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        x = b.bitcast(fn.args[0], _I64P)
        y = b.bitcast(fn.args[1], _I64P)

        def emit(less, greater):
            lt = b.append_basic_block("lt")
            nx = b.append_basic_block("next")
            gt = b.append_basic_block("gt")
            after = b.append_basic_block("after")
            b.cbranch(less, lt, nx)
            b.position_at_end(lt)
            b.ret(ir.Constant(I32, -1))
            b.position_at_end(nx)
            b.cbranch(greater, gt, after)
            b.position_at_end(gt)
            b.ret(ir.Constant(I32, 1))
            b.position_at_end(after)

        if which == "el":
            px, py = b.load(b.gep(x, [_c(0)])), b.load(b.gep(y, [_c(0)]))
            emit(b.icmp_signed("<", px, py), b.icmp_signed(">", px, py))
            head = _EL_HEAD
        else:
            ax = b.load(b.bitcast(b.gep(x, [_c(0)]), _F64P))
            ay = b.load(b.bitcast(b.gep(y, [_c(0)]), _F64P))
            emit(b.fcmp_ordered("<", ax, ay), b.fcmp_ordered(">", ax, ay))
            head = _MSG_HEAD
        for k in range(K):
            kx, ky = b.load(b.gep(x, [_c(head + k)])), b.load(b.gep(y, [_c(head + k)]))
            emit(b.icmp_signed("<", kx, ky), b.icmp_signed(">", kx, ky))
        b.ret(ir.Constant(I32, 0))
        self._cmps[(which, K)] = fn
        return fn

    def _order(self, s, st, n):
        """Put the elements in an order the execution may take: by phase, and within a phase
        each rank's elements by key (ranks do not interact within a phase).  Nothing to do when
        the enumeration produced (phase, key) order; else a stable counting sort by phase, and
        ``qsort`` by (phase, key) only when some rank's elements of a phase are then out of
        key order."""
        b = self.b
        with b.if_then(b.load(s.unsorted)):
            W = s.W
            nph = b.add(b.load(s.maxph), _c(1))
            self._ensure(st.tmp, st.tmpcap, b.mul(n, _c(8 * W)), st.err)
            self._ensure(st.phc, st.phccap, b.mul(b.add(nph, _c(1)), _c(8)), st.err)
            with b.if_then(b.not_(b.load(st.err))):
                src = b.bitcast(b.load(st.el), _I64P)
                dst = b.bitcast(b.load(st.tmp), _I64P)
                phc = b.bitcast(b.load(st.phc), _I64P)
                self._plain_loop(_c(0), nph, lambda k: b.store(_c(0), b.gep(phc, [k])))

                def tally(i):
                    ph = b.load(b.gep(src, [b.mul(i, _c(W))]))
                    slot = b.gep(phc, [b.add(ph, _c(1))])
                    b.store(b.add(b.load(slot), _c(1)), slot)
                self._plain_loop(_c(0), b.sub(n, _c(1)), tally)

                def prefix(k):
                    here = b.gep(phc, [k])
                    b.store(b.add(b.load(here), b.load(b.gep(phc, [b.sub(k, _c(1))]))), here)
                self._plain_loop(_c(1), nph, prefix)

                def place(i):
                    r = b.gep(src, [b.mul(i, _c(W))])
                    slot = b.gep(phc, [b.load(r)])
                    j = b.load(slot)
                    b.store(b.add(j, _c(1)), slot)
                    to = b.gep(dst, [b.mul(j, _c(W))])
                    for w in range(W):
                        b.store(b.load(b.gep(r, [_c(w)])), b.gep(to, [_c(w)]))
                self._plain_loop(_c(0), b.sub(n, _c(1)), place)
                # the sorted copy becomes the element buffer
                el, cap = b.load(st.el), b.load(st.elcap)
                b.store(b.load(st.tmp), st.el)
                b.store(b.load(st.tmpcap), st.elcap)
                b.store(el, st.tmp)
                b.store(cap, st.tmpcap)
                # within a phase, is every rank's sequence in key order?  last[r]: r's latest
                # element (valid when it is before i, of rank r and of this phase)
                base = b.bitcast(b.load(st.el), _I64P)
                last = b.gep(b.load(st.rcv), [b.mul(st.Pi, _c(4))])
                bad = self.sg.var(I1, ir.Constant(I1, 0), "dfo_resort")

                def check(i):
                    r = b.gep(base, [b.mul(i, _c(W))])
                    ph, own = b.load(b.gep(r, [_c(0)])), b.load(b.gep(r, [_c(1)]))
                    j = b.sub(b.load(b.gep(last, [own])), _c(1))  # stored + 1: 0 is none
                    valid = b.and_(b.icmp_signed(">=", j, _c(0)), b.icmp_signed("<", j, i))
                    with b.if_then(valid):
                        q = b.gep(base, [b.mul(j, _c(W))])
                        same = b.and_(b.icmp_signed("==", b.load(b.gep(q, [_c(0)])), ph),
                                      b.icmp_signed("==", b.load(b.gep(q, [_c(1)])), own))
                        with b.if_then(same):
                            with b.if_then(b.icmp_signed(">", b.call(self._comparator("el", s.K),
                                                                       [b.bitcast(q, _PTR), b.bitcast(r, _PTR)]),
                                                         ir.Constant(I32, 0))):
                                b.store(ir.Constant(I1, 1), bad)
                    b.store(b.add(i, _c(1)), b.gep(last, [own]))
                self._plain_loop(_c(0), b.sub(n, _c(1)), check)
                with b.if_then(b.load(bad)):
                    b.call(self.sg.qsort, [b.load(st.el), n, _c(8 * W), self._comparator("el", s.K)])

    # ------------------------------------------------------------------ execution
    def _execute(self, s, st, n):
        b = self.b
        Pi = st.Pi
        el = b.bitcast(b.load(st.el), _I64P)
        msg = b.bitcast(b.load(st.msg), _I64P)
        rcv = b.load(st.rcv)
        clk = b.load(st.clk)
        cnt, fill, done, lst = rcv, b.gep(rcv, [Pi]), b.gep(rcv, [b.mul(Pi, _c(2))]), b.gep(rcv, [b.mul(Pi, _c(3))])
        cpu, nxt = clk, b.gep(clk, [Pi])
        last = b.bitcast(b.gep(clk, [b.mul(Pi, _c(2))]), _I64P)  # last_recv, xor the bits of −∞
        last_i = b.sub(n, _c(1))

        def rec(i):
            return b.gep(el, [b.mul(i, _c(s.W))])

        # the receivers and their message counts were noted as the elements were placed
        nrecv = s.nrecv
        off = self.sg.var(I64, _c(0), "dfs_off")

        def starts(j):
            d = b.load(b.gep(lst, [j]))
            o = b.load(off)
            b.store(o, b.gep(fill, [d]))
            b.store(o, b.gep(done, [d]))
            b.store(b.add(o, b.load(b.gep(cnt, [d]))), off)
        self._plain_loop(_c(0), b.sub(b.load(nrecv), _c(1)), starts)

        def mrec(j):
            return b.gep(msg, [b.mul(j, _c(s.M))])

        def receive(r, upto):
            """Rank ``r`` receives its pending messages [done, upto) in (arrival, key) order."""
            lo = b.load(b.gep(done, [r]))
            k = b.sub(upto, lo)
            with b.if_then(b.icmp_signed(">", k, _c(1))):
                # sorted already (messages are kept in the order they were sent)?  else qsort
                cmp = self._comparator("msg", s.K)
                unsorted = self.sg.var(I1, ir.Constant(I1, 0), "dfr_unsorted")

                def check(j):
                    with b.if_then(b.icmp_signed(">", b.call(cmp, [b.bitcast(mrec(b.sub(j, _c(1))), _PTR),
                                                                  b.bitcast(mrec(j), _PTR)]), ir.Constant(I32, 0))):
                        b.store(ir.Constant(I1, 1), unsorted)
                self._plain_loop(b.add(lo, _c(1)), b.sub(upto, _c(1)), check)
                with b.if_then(b.load(unsorted)):
                    b.call(self.sg.qsort, [b.bitcast(mrec(lo), _PTR), k, _c(8 * s.M), cmp])

            def one(j):
                m = mrec(j)
                arrive = b.load(self._fword(m, _c(0)))
                or_ = b.load(self._fword(m, _c(1)))
                gap = b.load(self._fword(m, _c(2)))
                c = b.load(b.gep(cpu, [r]))
                lr = _unkey(b, b.load(b.gep(last, [r])))
                end = _max(b, _max(b, arrive, b.fadd(c, or_)), b.fadd(lr, gap))
                b.store(end, b.gep(cpu, [r]))
                b.store(_key(b, end), b.gep(last, [r]))
            self._plain_loop(lo, b.sub(upto, _c(1)), one)
            b.store(upto, b.gep(done, [r]))

        def step(i):
            p = rec(i)
            ph = b.load(self._word(p, _c(0)))
            r = b.load(self._word(p, _c(1)))
            d = b.load(self._word(p, _c(2)))
            with b.if_else(b.icmp_signed(">=", d, _c(0))) as (is_send, is_comp):
                with is_send:
                    os_, gap, dl, or_ = (b.load(self._fword(p, _c(3 + k))) for k in range(4))
                    t = _max(b, b.load(b.gep(cpu, [r])), b.load(b.gep(nxt, [r])))
                    b.store(b.fadd(t, os_), b.gep(cpu, [r]))
                    b.store(b.fadd(t, gap), b.gep(nxt, [r]))
                    j = b.load(b.gep(fill, [d]))
                    b.store(b.add(j, _c(1)), b.gep(fill, [d]))
                    m = mrec(j)
                    b.store(b.fadd(t, dl), self._fword(m, _c(0)))
                    b.store(or_, self._fword(m, _c(1)))
                    b.store(gap, self._fword(m, _c(2)))
                    b.store(ph, self._word(m, _c(3)))
                    for k in range(s.K):
                        b.store(b.load(self._word(p, _c(_EL_HEAD + k))), self._word(m, _c(_MSG_HEAD + k)))
                with is_comp:
                    cost = b.load(self._fword(p, _c(3)))
                    # a computation first receives what was sent to its rank in lower phases
                    self._wait(r, ph, done, fill, cnt, mrec, receive)
                    b.store(b.fadd(b.load(b.gep(cpu, [r])), cost), b.gep(cpu, [r]))
        self._loop(_c(0), last_i, step, st.err, "dfs_step")

        # every receiver's remaining messages, in order of arrival; its count back to 0
        def rest(j):
            d = b.load(b.gep(lst, [j]))
            receive(d, b.load(b.gep(fill, [d])))
            b.store(_c(0), b.gep(cnt, [d]))
        self._plain_loop(_c(0), b.sub(b.load(nrecv), _c(1)), rest)

    def _wait(self, r, ph, done, fill, cnt, mrec, receive):
        """Rank ``r``'s computation at phase ``ph``: receive its pending messages of lower phases
        (a prefix of the messages sent to it so far, which are in phase order)."""
        b = self.b
        with b.if_then(b.icmp_signed(">", b.load(b.gep(cnt, [r])), _c(0))):  # r receives in this stage
            lo = b.load(b.gep(done, [r]))
            hi = b.load(b.gep(fill, [r]))
            j = self.sg.var(I64, lo, "dfw_j")
            b.store(lo, j)
            head = b.append_basic_block("dfw_head")
            blk = b.append_basic_block("dfw_body")
            nxt_bb = b.append_basic_block("dfw_next")
            out = b.append_basic_block("dfw_done")
            b.branch(head)
            b.position_at_end(head)
            jv = b.load(j)
            b.cbranch(b.icmp_signed("<", jv, hi), blk, out)
            b.position_at_end(blk)
            below = b.icmp_signed("<", b.load(self._word(mrec(jv), _c(3))), ph)
            b.cbranch(below, nxt_bb, out)
            b.position_at_end(nxt_bb)
            b.store(b.add(jv, _c(1)), j)
            b.branch(head)
            b.position_at_end(out)
            receive(r, b.load(j))


_NEG_INF_BITS = ir.Constant(I64, -(1 << 52))  # 0xFFF0000000000000, the bits of −∞


def _key(b, x):
    """A double stored so that all-zero bits mean −∞ (last_recv in calloc'd memory)."""
    return b.xor(b.bitcast(x, I64), _NEG_INF_BITS)


def _unkey(b, w):
    return b.bitcast(b.xor(w, _NEG_INF_BITS), F64)


def _max(b, x, y):
    """numpy.maximum (NaN propagates)."""
    return b.select(b.or_(b.fcmp_ordered(">=", x, y), b.fcmp_unordered("uno", x, x)), x, y)
