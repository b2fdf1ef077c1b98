"""The meaning of a schedule in LogGP and pLogP: a dataflow program, priced event by event.

What it does: :class:`Dataflow` prices a *schedule program* — a stage, or stages joined by ``+``
and ``sum`` (through ``let`` and ``if``) — for one point (scalar arguments), for the reference
interpreter, when the module's model is one of :data:`DATAFLOW_MODELS`.  Each stage is enumerated
by the shared :class:`tlop.backends.enumeration.StageEnumerator` (the τ-Lop meaning reads the same
enumeration); the stages then run one after another on per-rank clocks that carry over from stage
to stage — there is no global barrier between stages:

* every rank has a processor clock ``cpu`` (when it is free and everything it received in earlier
  stages has arrived), the earliest start of its next send ``next_send`` and the end of its last
  receive ``last_recv``; all start at 0 (``last_recv`` at −∞);
* in a stage, each rank first runs its own elements in order (phase, then the order the items
  ran): a send of m bytes starts at ``t = max(cpu, next_send)``, keeps the processor busy until
  ``t + send_overhead(m)`` and allows the next send at ``t + send_gap(m)``; a computation runs
  from ``cpu`` for its cost;
* then each rank receives the messages sent to it in this stage, in order of arrival: a message
  sent at ``t`` is received (its receive overhead done) at
  ``max(t + delivery(m), cpu + recv_overhead(m), last_recv + send_gap(m))`` — the network
  delivers it, the processor must be free for its receive overhead, and consecutive receives
  are separated by the gap too;
* except that a computation *waits for the receives before it*: a computation of rank r at phase
  k first receives (as above, in order of arrival) the messages of this stage to r whose send has
  a phase below k — ``{ send q -> r : m  reduce r : m }`` combines what has arrived, and in
  ``seq k …: { send P - k -> 0 : m  reduce 0 : m }`` rank 0 receives and combines one message
  after another.  Sends do not wait for receives of the same stage (they are posted first, as
  non-blocking sends), only through a computation or a later stage.  Without such a computation
  the two steps above are the whole stage; with one, the elements run in order of phase across
  all ranks (a send's phase is below every computation that waits for it, so every message such a
  computation receives has been sent);
* the program costs the time the last rank finishes (the largest ``cpu``), plus the plain cost
  terms added to it (``stage {…} + 2us``).

A program is a stage, ``+`` of programs, ``sum k in a .. b: program`` (``stages``), ``n * program``
or ``program * n`` (the program ``n`` times in a row, ``n`` a whole number ``>= 0`` — not ``n``
times its cost: the clocks carry over), through ``let`` bodies and ``if`` branches.

The four functions of the message size are the platform's: algorithms named
:data:`DATAFLOW_FUNCTIONS` declared by the model's platform file (``stdlib/loggp/platform.tlop``:
``send_overhead = o``, ``send_gap = max(o, g + (m − 1)G)``, ``delivery = o + L + (m − 1)G + o``,
``recv_overhead = o``; ``stdlib/plogp/platform.tlop``: ``os(m)``, ``g(m)``, ``g(m) + L``,
``or(m)``), evaluated by the interpreter on the stage's sizes.

Channels: a platform whose four functions take a second parameter, the channel
(``algorithm delivery(m: bytes, c: channel)``, LogGPH: ``stdlib/loggph/platform.tlop``, one LogGP
parameter set per channel, 002), prices each send on its channel: the platform's channel
declared ``within node`` when the mapping puts both ends on one node, the one declared
``between nodes`` otherwise.

This is the reference meaning: the JIT compiles the same event-by-event rules
(:mod:`tlop.backends.jit.dataflowgen`), and its tests hold the two together to 1e-12, errors
included.  The order of elements that breaks ties (a rank's elements of one phase, messages that
arrive at the same time) is the order the shared enumerator *placed* them, lane by lane
(``order`` below), which the compiled code reproduces with a key per element.

What it does not do: know nodes or channels when the functions take only m (a mapping is
accepted and checked, but LogGP and pLogP have one network: the placement does not change the
cost), weights (τ-Lop's ``weight``
has no meaning here and is ignored), contention, or array arguments (the interpreter calls it
once per point; the compiled code prices batches).  A composition it cannot price — a schedule under ``max``, ``‖``, ``/``, a
product of two schedules, a ``let`` binding or an ``if`` test — is an error at that node
(:func:`check_composition`).
"""

from __future__ import annotations

import math

import numpy as np

from tlop import ir
from tlop.backends.dataflow_names import DATAFLOW_FUNCTIONS, DATAFLOW_MODELS
from tlop.backends.enumeration import StageEnumerator
from tlop.ir.taulop import schedule_channels, send_channel

__all__ = ["Dataflow", "DATAFLOW_MODELS", "DATAFLOW_FUNCTIONS", "check_composition", "holds_stage"]



def holds_stage(e: ir.Expr) -> bool:
    """Whether ``e`` contains a :class:`tlop.ir.Stage`."""
    return any(isinstance(n, ir.Stage) for n in ir.walk(e))


def _describe(e) -> str:
    if isinstance(e, ir.Bin):
        return f"'{e.op}'"
    if isinstance(e, ir.Fn):
        return f"'{e.name}(…)'"
    if isinstance(e, ir.Reduce):
        return f"'{e.kind}'"
    if isinstance(e, ir.Conc):
        return "'||'"
    if isinstance(e, ir.Neg):
        return "a negation"
    return f"'{type(e).__name__.lower()}'"


def check_composition(e: ir.Expr, model: str) -> None:
    """Raise EvalError at the first node of ``e`` that holds a stage in a place the dataflow
    meaning cannot price: stages compose with ``+``, ``sum`` and a repetition ``n * …`` only
    (through a ``let`` body and the branches of an ``if``)."""
    from tlop.backends.interp import EvalError

    def bad(node, why):
        raise EvalError(f"{model} cannot price a schedule under {why}: in {model} a schedule is a dataflow "
                        f"program whose stages run one after another ('stage {{…}} + stage {{…}}', "
                        f"'sum k in a .. b: stage {{…}}', 'stages', 'n * stage {{…}}'), and its cost is when "
                        f"the last rank finishes", getattr(node, "span", None))

    def visit(n):
        if isinstance(n, ir.Stage) or not holds_stage(n):
            return
        if isinstance(n, ir.Bin) and n.op == "+":
            visit(n.lhs), visit(n.rhs)
        elif isinstance(n, ir.Bin) and n.op == "*" and holds_stage(n.lhs) != holds_stage(n.rhs):
            visit(n.lhs if holds_stage(n.lhs) else n.rhs)  # a repetition: n * program
        elif isinstance(n, ir.Reduce) and n.kind == "sum":
            if holds_stage(n.lo) or holds_stage(n.hi):
                bad(n, "the bounds of a 'sum'")
            visit(n.body)
        elif isinstance(n, ir.Let):
            for _, v in n.bindings:
                if holds_stage(v):
                    bad(v, "a 'let' binding")
            visit(n.body)
        elif isinstance(n, ir.Cond):
            if holds_stage(n.test):
                bad(n, "the test of an 'if'")
            visit(n.then_), visit(n.else_)
        else:
            bad(n, _describe(n))

    visit(e)


class _Clocks:
    """The per-rank state of a dataflow program."""
    __slots__ = ("cpu", "next_send", "last_recv")

    def __init__(self, P: int):
        self.cpu = np.zeros(P)
        self.next_send = np.zeros(P)
        self.last_recv = np.full(P, -math.inf)


def _positions(owner: np.ndarray) -> np.ndarray:
    """For ``owner`` sorted, each element's index among the elements of its owner."""
    n = len(owner)
    first = np.ones(n, dtype=bool)
    first[1:] = owner[1:] != owner[:-1]
    starts = np.flatnonzero(first)
    return np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))


class Dataflow(StageEnumerator):
    """Prices schedule programs in a dataflow model for one interpreter."""

    def __init__(self, interp):
        super().__init__(interp)
        self.model = self.program.model
        self._functions = None

    # ------------------------------------------------------------------ the platform's functions
    def _function(self, span):
        from tlop.backends.interp import EvalError

        if self._functions is None:
            missing = [f for f in DATAFLOW_FUNCTIONS if f not in self.program.algorithms]
            if missing:
                raise EvalError(
                    f"a schedule in {self.model} needs the platform to say how a send is priced: it must declare "
                    f"{', '.join(f'algorithm {f}(m: bytes)' for f in missing)} (see stdlib/{self.model}/platform.tlop)",
                    span)
            out = {}
            for f in DATAFLOW_FUNCTIONS:
                alg = self.program.algorithms[f]
                if not (len(alg.params) == 1 or (len(alg.params) == 2 and alg.params[1].type == "channel")):
                    raise EvalError(f"'{f}' must take the message size m: bytes and, optionally, the send's "
                                    f"channel c: channel", alg.span)
                out[f] = alg
            arities = {len(a.params) for a in out.values()}
            if len(arities) != 1:
                raise EvalError(f"the platform's {', '.join(DATAFLOW_FUNCTIONS)} must all take a channel or none do",
                                out[DATAFLOW_FUNCTIONS[0]].span)
            self._functions = out
        return self._functions

    def _per_channel(self, span) -> bool:
        return len(self._function(span)[DATAFLOW_FUNCTIONS[0]].params) == 2

    def _send_channels(self, src, dst, P, span):
        """The channel index of each send: the platform's ``within node`` channel when the mapping
        puts both ends on one node, its ``between nodes`` channel otherwise."""
        from tlop.backends.interp import EvalError

        within, between, problem = schedule_channels(self.program)
        if problem is not None:
            raise EvalError(problem.replace("a schedule needs", "a schedule priced per channel needs"), span)
        mapping = self.interp.mapping
        same = np.asarray(mapping.node_of(src, P)) == np.asarray(mapping.node_of(dst, P))
        chans = self.program.channels
        return send_channel(same, chans.index(within[0]), chans.index(between[0])).astype(float)

    def _apply(self, name, sizes, span, channels=None):
        from tlop.backends.interp import EvalError

        alg = self._function(span)[name]
        if len(alg.params) == 2:
            v = np.empty(sizes.shape)
            for c in np.unique(channels):
                mask = channels == c
                v[mask] = np.broadcast_to(np.asarray(self.interp.evaluate(
                    alg.body, {alg.params[0].name: sizes[mask], alg.params[1].name: float(c)}, 1.0), dtype=float),
                    (int(mask.sum()),))
        else:
            v = np.broadcast_to(np.asarray(self.interp.evaluate(alg.body, {alg.params[0].name: sizes}, 1.0),
                                           dtype=float), sizes.shape)
        bad = ~(np.isfinite(v) & (v >= 0))
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise EvalError(f"{name}({sizes[k]:g} B) = {v[k]!r} s: a send's {name.replace('_', ' ')} must be a "
                            f"time >= 0 (check the profile's parameters)", span)
        return v

    # ------------------------------------------------------------------ programs
    def cost(self, e: ir.Expr, env: dict) -> float:
        """The cost of the schedule program ``e`` for scalar ``env`` (holding :data:`tlop.ir.RANKS`)."""
        from tlop.backends.interp import EvalError

        P = env.get(ir.RANKS)
        if P is None or self.interp.mapping is None:
            raise EvalError("a schedule needs a process mapping: evaluate the algorithm with one "
                            "(--mapping sequential(8), or mapping=tlop.sequential(8))", e.span)
        clocks = _Clocks(int(P))
        extra = self._program(e, dict(env), clocks)
        finish = float(clocks.cpu.max()) if len(clocks.cpu) else 0.0
        return finish + extra

    def _program(self, e, env, clocks) -> float:
        """Run ``e`` on ``clocks``; the plain cost terms it adds."""
        from tlop.backends.interp import check_reduce_bounds

        if isinstance(e, ir.Stage):
            self._stage(e, env, clocks)
            return 0.0
        if not self.interp.holds_stage(e):
            return float(self.interp.evaluate(e, env, 1.0))
        if isinstance(e, ir.Bin) and e.op == "*":  # a repetition (check_composition ran)
            body, count = (e.lhs, e.rhs) if self.interp.holds_stage(e.lhs) else (e.rhs, e.lhs)
            n = self._repetitions(float(self.interp.evaluate(count, env, 1.0)), count.span or e.span)
            extra = 0.0
            for _ in range(n):
                extra += self._program(body, env, clocks)
            return extra
        if isinstance(e, ir.Bin):  # '+' (check_composition ran)
            return self._program(e.lhs, env, clocks) + self._program(e.rhs, env, clocks)
        if isinstance(e, ir.Reduce):  # 'sum'
            start, stop = check_reduce_bounds(e.kind, float(self.interp.evaluate(e.lo, env, 1.0)),
                                              float(self.interp.evaluate(e.hi, env, 1.0)), e.span)
            inner = dict(env)
            extra = 0.0
            for i in range(start, stop + 1):
                inner[e.var] = float(i)
                extra += self._program(e.body, inner, clocks)
            return extra
        if isinstance(e, ir.Let):
            inner = dict(env)
            inner.update([(name, self.interp.evaluate(v, env, 1.0)) for name, v in e.bindings])
            return self._program(e.body, inner, clocks)
        if isinstance(e, ir.Cond):
            return self._program(e.then_ if float(self.interp.evaluate(e.test, env, 1.0)) != 0 else e.else_, env, clocks)
        check_composition(e, self.model)  # raises
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _repetitions(n: float, span) -> int:
        """A repetition count: a whole number ``>= 0`` (at most the interpreter's term limit)."""
        from tlop.backends.interp import MAX_TERMS, EvalError

        if not (math.isfinite(n) and n == math.floor(n) and n >= 0):
            raise EvalError(f"a schedule repeated {n:g} times: in a dataflow model 'n * stage {{…}}' runs the "
                            f"stage n times in a row, so n must be a whole number >= 0", span)
        if n > MAX_TERMS:
            raise EvalError(f"a schedule repeated {n:,.0f} times is more than tlop evaluates", span)
        return int(n)

    # ------------------------------------------------------------------ one stage
    def _stage(self, stage, env, clocks):
        el = self.enumerate(stage, env, 1.0)
        if not el.sends and not el.computes:
            return
        n_s = sum(len(b.a) for b in el.sends)
        n_c = sum(len(b.a) for b in el.computes)
        # one row per element, in the order the items ran: owner, phase, is_send, index
        owner = np.concatenate([b.a for b in el.sends] + [b.a for b in el.computes]).astype(np.int64)
        phase = np.concatenate([b.phase for b in el.sends] + [b.phase for b in el.computes])
        order = np.concatenate([b.first + np.arange(len(b.a)) for b in el.sends + el.computes])
        is_send = np.arange(n_s + n_c) < n_s
        recv = _Receives(self, el, stage, clocks, order[:n_s], phase[:n_s], owner[:n_s])
        work = np.concatenate([b.b for b in el.computes]) if n_c else np.zeros(0)
        # a computation that waits for a receive: a message to its rank of a lower phase
        waits = np.zeros(n_s + n_c, dtype=bool)
        if n_s and n_c:
            lowest = np.full(el.P, np.inf)
            np.minimum.at(lowest, recv.dst, phase[:n_s])
            waits[n_s:] = phase[n_s:] > lowest[owner[n_s:]]
        # 1. every rank's own elements, in (phase, order); by phase across ranks when a computation
        #    waits for a receive (its messages are then all sent), else all at once
        rounds = phase if waits.any() else np.zeros_like(phase)
        cpu, next_send = clocks.cpu, clocks.next_send
        for k in np.unique(rounds):
            sel = np.flatnonzero(rounds == k)
            perm = sel[np.lexsort((order[sel], phase[sel], owner[sel]))]
            pos = _positions(owner[perm])
            for j in range(int(pos.max()) + 1):
                rows = perm[pos == j]  # at most one per rank
                s_rows = rows[is_send[rows]]
                if len(s_rows):
                    r = owner[s_rows]
                    t = np.maximum(cpu[r], next_send[r])
                    recv.sent(s_rows, t)
                    cpu[r] = t + recv.os[s_rows]
                    next_send[r] = t + recv.gap[s_rows]
                c_rows = rows[~is_send[rows]]
                if len(c_rows):
                    late = c_rows[waits[c_rows]]
                    if len(late):
                        recv.deliver(owner[late], phase[late])
                    r = owner[c_rows]
                    cpu[r] = cpu[r] + work[c_rows - n_s]
        # 2. every rank's remaining receives of this stage, in order of arrival
        recv.deliver(None, None)


class _Receives:
    """The messages of one stage as their receivers see them: sent (``sent``), then received in
    order of arrival (``deliver``), each once."""

    def __init__(self, flow, el, stage, clocks, order, phase, src):
        self.clocks, self.order, self.phase = clocks, order, phase
        n = len(order)
        self.dst = (np.concatenate([b.b for b in el.sends]) if n else np.zeros(0)).astype(np.int64)
        size = np.concatenate([b.c for b in el.sends]) if n else np.zeros(0)
        if n:
            # LogGPH: each send priced with its channel's parameters (None: one network)
            ch = flow._send_channels(src, self.dst, el.P, stage.span) if flow._per_channel(stage.span) else None
            self.os = flow._apply("send_overhead", size, stage.span, ch)
            self.gap = flow._apply("send_gap", size, stage.span, ch)
            dl, self.or_ = flow._apply("delivery", size, stage.span, ch), flow._apply("recv_overhead", size, stage.span, ch)
        else:
            dl = self.or_ = self.os = self.gap = np.zeros(0)
        self.dl = dl
        self.arrive = np.full(n, np.nan)
        self.done = np.zeros(n, dtype=bool)

    def sent(self, rows, t):
        self.arrive[rows] = t + self.dl[rows]

    def deliver(self, ranks, below):
        """Receive the pending messages to ``ranks`` whose send's phase is below ``below`` (one
        value per rank), or every pending message (``ranks`` None)."""
        if ranks is None:
            sel = np.flatnonzero(~self.done)
        else:
            limit = np.full(len(self.clocks.cpu), -np.inf)
            limit[ranks] = below
            sel = np.flatnonzero(~self.done & (self.phase < limit[self.dst]))
        if not len(sel):
            return
        self.done[sel] = True
        cpu, last_recv = self.clocks.cpu, self.clocks.last_recv
        dst, arrive = self.dst[sel], self.arrive[sel]
        perm = sel[np.lexsort((self.order[sel], arrive, dst))]
        pos = _positions(self.dst[perm])
        for k in range(int(pos.max()) + 1):
            rows = perm[pos == k]
            d = self.dst[rows]
            end = np.maximum(np.maximum(self.arrive[rows], cpu[d] + self.or_[rows]), last_recv[d] + self.gap[rows])
            cpu[d] = end
            last_recv[d] = end
