"""The event IR of a native dataflow program: element and message records, their order, and the execution on per-rank clocks.

What it does: :class:`DataflowEvents` (mixed into :class:`tlop.backends.jit.dataflowgen.DataflowGen`)
keeps a stage's elements as records (:data:`_EL_HEAD` words — phase, owner, destination, four
doubles — then the key), noting as they are appended whether they are still in (phase, key)
order; puts them in that order when they are not (a stable counting sort by phase, then
``qsort`` by (phase, key) only when some rank's elements of a phase are out of key order); and
runs them on the per-rank clocks ``cpu``, ``next_send``, ``last_recv``: a send at ``t = max(cpu,
next_send)`` arrives at ``t + delivery``, keeps its rank busy until ``t + send_overhead`` and
allows the next send at ``t + send_gap``; a computation first receives the messages to its rank
of lower phases; after the stage every rank receives its remaining messages, in order of
(arrival, key), each at ``max(arrival, cpu + recv_overhead, last_recv + send_gap)``.  Messages
are records too (:data:`_MSG_HEAD` words — arrival, receive overhead, gap, phase — then the key),
bucketed per receiver.  A stage in order by construction (:func:`tlop.backends.jit.dataflowgen._in_order`)
runs each send as it is placed (:meth:`DataflowEvents._send_now`) and receives at the end
(:meth:`DataflowEvents._receive_all`).  This is :mod:`tlop.backends.dataflow`'s meaning, event by event.

What it does not do: enumerate or check elements, or price a send (the platform's four
functions are computed by :mod:`tlop.backends.jit.dataflowgen`), or hold the program's
composition (``+``, ``sum``, ``n * …``).
"""

from __future__ import annotations

from llvmlite import ir

from tlop.backends.jit.loopgen import three_way
from tlop.backends.jit.tables import F64, I1, I32, I64, I8

__all__ = ["DataflowEvents"]

_PTR = I8.as_pointer()
_I64P = I64.as_pointer()
_F64P = F64.as_pointer()
_MINUS1 = ir.Constant(I64, -1)
#: words of an element record before its key: phase, owner, destination (−1: a computation),
#: then four doubles (send: overhead, gap, delivery, receive overhead; computation: its cost)
_EL_HEAD = 7
#: words of a message record before its key: arrival, receive overhead, gap (doubles), phase
_MSG_HEAD = 4


def _c(v: int):
    return ir.Constant(I64, v)


class DataflowEvents:
    """Records, order and execution of a dataflow stage; needs :class:`tlop.backends.jit.loopgen.NativeLoops`."""

    def _fail(self, err):
        self.b.store(ir.Constant(I1, 1), err)

    def _word(self, base, idx):
        """Pointer to i64 word ``idx`` of ``base`` (an i64*)."""
        return self.b.gep(base, [idx])

    def _fword(self, base, idx):
        return self.b.bitcast(self.b.gep(base, [idx]), _F64P)

    def _ensure(self, ptr, cap, need, err):
        """Grow the buffer ``*ptr`` (``*cap`` bytes) to hold ``need`` bytes."""
        b = self.b
        with b.if_then(b.icmp_signed(">", need, b.load(cap)), likely=False):
            c2 = b.mul(b.load(cap), _c(2))
            newcap = b.select(b.icmp_signed(">", need, c2), need, c2)
            p = b.call(self.realloc, [b.load(ptr), newcap])
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
                self._note_receiver(s, st, dst)

    def _send_now(self, s, st, ph, r, dst, vals, key):
        """A send of a stage in order (:func:`_in_order`): run it now on its rank's clocks and
        keep its message (a message record, then its destination)."""
        b = self.b
        MW = s.M + 1
        n = b.load(s.n)
        self._ensure(st.msg, st.msgcap, b.mul(b.add(n, _c(1)), _c(8 * MW)), st.err)
        with b.if_then(b.not_(b.load(st.err))):
            clk = b.load(st.clk)
            cpu, nxt = b.gep(clk, [r]), b.gep(clk, [b.add(r, st.Pi)])
            m = b.gep(b.bitcast(b.load(st.msg), _I64P), [b.mul(n, _c(MW))])
            self._run_send(cpu, nxt, vals, ph, m)
            for k in range(s.K):
                b.store(key[k] if k < len(key) else _c(0), self._word(m, _c(_MSG_HEAD + k)))
            b.store(dst, self._word(m, _c(s.M)))
            b.store(b.add(n, _c(1)), s.n)
            self._note_receiver(s, st, dst)

    def _note_receiver(self, s, st, dst):
        """Count a message to ``dst`` (i64) in the stage, listing ``dst`` among its receivers
        on its first one."""
        b = self.b
        cnt = b.load(st.rcv)
        lst = b.gep(cnt, [b.mul(st.Pi, _c(3))])
        c = b.load(b.gep(cnt, [dst]))
        with b.if_then(b.icmp_signed("==", c, _c(0))):
            k = b.load(s.nrecv)
            b.store(dst, b.gep(lst, [k]))
            b.store(b.add(k, _c(1)), s.nrecv)
        b.store(b.add(c, _c(1)), b.gep(cnt, [dst]))

    def _run_send(self, cpu, nxt, vals, ph, m):
        """A send on its rank's clocks (``cpu``, ``next_send``: pointers), its four function
        values ``vals`` (overhead, gap, delivery, receive overhead): it starts at ``t = max(cpu,
        next_send)``, keeps the rank busy until ``t + overhead``, allows the next send at ``t +
        gap``; its message's head (arrival ``t + delivery``, receive overhead, gap, phase ``ph``)
        is written at ``m``."""
        b = self.b
        os_, gap, dl, or_ = vals
        t = _max(b, b.load(cpu), b.load(nxt))
        b.store(b.fadd(t, os_), cpu)
        b.store(b.fadd(t, gap), nxt)
        b.store(b.fadd(t, dl), self._fword(m, _c(0)))
        b.store(or_, self._fword(m, _c(1)))
        b.store(gap, self._fword(m, _c(2)))
        b.store(ph, self._word(m, _c(3)))

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
        off = self.var(I64, _c(0), "dff_off")

        def starts(j):
            d = b.load(b.gep(lst, [j]))
            c = b.load(b.gep(cnt, [d]))
            with b.if_then(b.icmp_signed(">", c, _c(1))):
                o = b.load(off)
                b.store(o, b.gep(fill, [d]))
                b.store(o, b.gep(done, [d]))
                b.store(b.add(o, c), off)
        self.plain_loop(_c(0), b.sub(nrecv, _c(1)), starts)
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
            self.loop(_c(0), b.sub(n, _c(1)), route, "dff_route", st.err)

            def rest(j):
                d = b.load(b.gep(lst, [j]))
                with b.if_then(b.icmp_signed(">", b.load(b.gep(cnt, [d])), _c(1))):
                    self._receive_range(tmp, MW, b.load(b.gep(done, [d])), b.load(b.gep(fill, [d])), d, clk, last,
                                        s.K)
                b.store(_c(0), b.gep(cnt, [d]))
            self.plain_loop(_c(0), b.sub(nrecv, _c(1)), rest)

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
            unsorted = self.var(I1, ir.Constant(I1, 0), "dfr_unsorted")

            def check(j):
                with b.if_then(b.icmp_signed(">", b.call(cmp, [b.bitcast(rec(b.sub(j, _c(1))), _PTR),
                                                              b.bitcast(rec(j), _PTR)]), ir.Constant(I32, 0))):
                    b.store(ir.Constant(I1, 1), unsorted)
            self.plain_loop(b.add(lo, _c(1)), b.sub(hi, _c(1)), check)
            with b.if_then(b.load(unsorted)):
                b.call(self.qsort, [b.bitcast(rec(lo), _PTR), k, _c(8 * width), cmp])
        self.plain_loop(lo, b.sub(hi, _c(1)), lambda j: self._receive_one(rec(j), r, clk, last))

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
            three_way(b, less, greater)

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
                self.plain_loop(_c(0), nph, lambda k: b.store(_c(0), b.gep(phc, [k])))

                def tally(i):
                    ph = b.load(b.gep(src, [b.mul(i, _c(W))]))
                    slot = b.gep(phc, [b.add(ph, _c(1))])
                    b.store(b.add(b.load(slot), _c(1)), slot)
                self.plain_loop(_c(0), b.sub(n, _c(1)), tally)

                def prefix(k):
                    here = b.gep(phc, [k])
                    b.store(b.add(b.load(here), b.load(b.gep(phc, [b.sub(k, _c(1))]))), here)
                self.plain_loop(_c(1), nph, prefix)

                def place(i):
                    r = b.gep(src, [b.mul(i, _c(W))])
                    slot = b.gep(phc, [b.load(r)])
                    j = b.load(slot)
                    b.store(b.add(j, _c(1)), slot)
                    to = b.gep(dst, [b.mul(j, _c(W))])
                    for w in range(W):
                        b.store(b.load(b.gep(r, [_c(w)])), b.gep(to, [_c(w)]))
                self.plain_loop(_c(0), b.sub(n, _c(1)), place)
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
                bad = self.var(I1, ir.Constant(I1, 0), "dfo_resort")

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
                self.plain_loop(_c(0), b.sub(n, _c(1)), check)
                with b.if_then(b.load(bad)):
                    b.call(self.qsort, [b.load(st.el), n, _c(8 * W), self._comparator("el", s.K)])

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
        off = self.var(I64, _c(0), "dfs_off")

        def starts(j):
            d = b.load(b.gep(lst, [j]))
            o = b.load(off)
            b.store(o, b.gep(fill, [d]))
            b.store(o, b.gep(done, [d]))
            b.store(b.add(o, b.load(b.gep(cnt, [d]))), off)
        self.plain_loop(_c(0), b.sub(b.load(nrecv), _c(1)), starts)

        def mrec(j):
            return b.gep(msg, [b.mul(j, _c(s.M))])

        def receive(r, upto):
            """Rank ``r`` receives its pending messages [done, upto) in (arrival, key) order."""
            self._receive_range(msg, s.M, b.load(b.gep(done, [r])), upto, r, clk, last, s.K)
            b.store(upto, b.gep(done, [r]))

        def step(i):
            p = rec(i)
            ph = b.load(self._word(p, _c(0)))
            r = b.load(self._word(p, _c(1)))
            d = b.load(self._word(p, _c(2)))
            with b.if_else(b.icmp_signed(">=", d, _c(0))) as (is_send, is_comp):
                with is_send:
                    vals = [b.load(self._fword(p, _c(3 + k))) for k in range(4)]
                    j = b.load(b.gep(fill, [d]))
                    b.store(b.add(j, _c(1)), b.gep(fill, [d]))
                    m = mrec(j)
                    self._run_send(b.gep(cpu, [r]), b.gep(nxt, [r]), vals, ph, m)
                    for k in range(s.K):
                        b.store(b.load(self._word(p, _c(_EL_HEAD + k))), self._word(m, _c(_MSG_HEAD + k)))
                with is_comp:
                    cost = b.load(self._fword(p, _c(3)))
                    # a computation first receives what was sent to its rank in lower phases
                    self._wait(r, ph, done, fill, cnt, mrec, receive)
                    b.store(b.fadd(b.load(b.gep(cpu, [r])), cost), b.gep(cpu, [r]))
        self.loop(_c(0), last_i, step, "dfs_step", st.err)

        # every receiver's remaining messages, in order of arrival; its count back to 0
        def rest(j):
            d = b.load(b.gep(lst, [j]))
            receive(d, b.load(b.gep(fill, [d])))
            b.store(_c(0), b.gep(cnt, [d]))
        self.plain_loop(_c(0), b.sub(b.load(nrecv), _c(1)), rest)

    def _wait(self, r, ph, done, fill, cnt, mrec, receive):
        """Rank ``r``'s computation at phase ``ph``: receive its pending messages of lower phases
        (a prefix of the messages sent to it so far, which are in phase order)."""
        b = self.b
        with b.if_then(b.icmp_signed(">", b.load(b.gep(cnt, [r])), _c(0))):  # r receives in this stage
            lo = b.load(b.gep(done, [r]))
            hi = b.load(b.gep(fill, [r]))
            j = self.var(I64, lo, "dfw_j")
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
