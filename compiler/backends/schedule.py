"""The meaning of a schedule stage in τ-Lop: enumerate it with concrete values, then reduce it.

What it does: :class:`StageEvaluator` evaluates one :class:`tlop.ir.Stage` for one point (scalar
arguments), for the reference interpreter, in two steps.

1. **Enumeration.**  The items are run over *lanes* — one lane per sequence being built — with
   numpy arrays over the lanes (a ``par`` over 4096 ranks is one array operation, not 4096
   evaluations).  Each lane carries its *phase counter*: a send or a computation is placed at
   its lane's counter, which then advances; ``seq`` and blocks run their parts in order on the
   same lanes; ``par`` forks one lane per binding whose ``where`` holds, starting at the
   parent's counter, and the parent continues after the longest child; the items at the top of
   a stage each start at phase 0 (they are concurrent).  Every expression is evaluated by the
   interpreter (:mod:`tlop.backends.interp`) with the lanes' values as arrays.
2. **Reduction.**  Ranks are checked (whole numbers in ``0 … P−1``), sizes (``>= 0``), weights
   (``> 0``) and computation costs (``>= 0``), each error naming the send or computation and
   the offending values.  The mapping gives every rank's node; a send whose ends share a node
   goes through the platform's ``within node`` channel, any other through its ``between nodes``
   channel; its contention group is (phase, channel, the node its channel's ``contention`` key
   names), and a computation is a group of its own per (phase, rank).  The members are sorted
   and reduced by the one τ-Lop rule, :func:`tlop.ir.taulop.reduce_groups`, instantiated on
   numpy arrays (:class:`tlop.ir.taulop.NumericGroups`); each member's transmission is the
   transmission ``T`` on its channel evaluated by the interpreter under the concurrency factor
   (the weights it carries times the factor in force), exactly as ``A ‖ T[c](m)``.  The stage
   costs the sum of its phases' maxima.

Contention keys: ``node`` (all transfers inside one node; on a channel between nodes it counts a
transfer in the groups of both its nodes, like ``either``), ``dst_node``, ``src_node``, and
``either`` (the transfer is a member of the group of its source node and of the group of its
destination node; the phase's maximum then takes the larger of the two).

**Recording.**  An evaluator made with a ``recorder`` (a callable) passes it, for every stage it
evaluates, a :class:`StageDetail`: the sends and computations, every member of every contention
group in the reduction's order with its ≺-predecessor's increment, carried weight and term, and
each group's and phase's cost — the very arrays the reduction computed, nothing re-derived
(``tlop explain`` with point arguments, :mod:`tlop.analysis.stages`).  Without a recorder nothing
is kept.

What it does not do: evaluate array arguments (the interpreter calls it once per point),
detect stages that do not depend on a stage variable (the interpreter's ``sum`` does), or know
other models than τ-Lop (LogGP/pLogP dataflow meaning is not here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from tlop import ir
from tlop.ir.taulop import NumericGroups, reduce_groups

__all__ = ["StageEvaluator", "StageDetail", "SEND_TRANSMISSION", "MAX_ELEMENTS"]

SEND_TRANSMISSION = ir.SEND_TRANSMISSION
#: the most elements (sends and computations) one stage may hold, in every engine
MAX_ELEMENTS = 10_000_000


class _Batch:
    """Elements placed by one send or computation item on a set of lanes."""
    __slots__ = ("node", "phase", "a", "b", "c", "d")

    def __init__(self, node, phase, a, b=None, c=None, d=None):
        self.node, self.phase, self.a, self.b, self.c, self.d = node, phase, a, b, c, d


def _lanes(v, n):
    return np.broadcast_to(np.asarray(v, dtype=float), (n,))


def _fmt(v: float) -> str:
    return f"{v:.17g}" if not float(v).is_integer() else str(int(v))


@dataclass(frozen=True)
class StageDetail:
    """One evaluated stage, as its reduction saw it (given to a :class:`StageEvaluator`'s recorder).

    ``env``: the point (scalar values of every variable in scope, the stage's own included);
    ``conc``: the concurrency factor in force; ``P``; ``channels``: the program's channel names.
    Sends, in enumeration order: ``send_phase``, ``send_src``, ``send_dst``, ``send_size``,
    ``send_weight``, ``send_channel`` (index into ``channels``).  Computations: ``comp_phase``,
    ``comp_rank``, ``comp_cost``.  Members of the contention groups, in the reduction's order
    (phase, group, size): ``phase``, ``channel`` (−1 for a computation), ``key`` (the node the
    channel's contention key names, or the computing rank), ``size`` (a computation's: its cost),
    ``weight``, ``element`` (index into the sends, or ``len(sends) + k`` for computation k; a send
    between nodes under contention ``node``/``either`` is a member of two groups), ``carried``
    (the weights it and its group's later members carry, before ``conc``), ``prev`` (its
    ≺-predecessor's size, 0 for the first) and ``term`` (its contribution: 0 when its increment
    is ≤ 0).  ``group_start``/``group_cost``: each group's first member and the sum of its terms;
    ``phase_start``/``phase_cost``: each phase's first group and the maximum of its groups.
    ``cost``: the stage's cost, the sum of ``phase_cost``."""
    stage: ir.Stage
    env: dict
    conc: float
    P: int
    channels: tuple
    send_phase: np.ndarray
    send_src: np.ndarray
    send_dst: np.ndarray
    send_size: np.ndarray
    send_weight: np.ndarray
    send_channel: np.ndarray
    comp_phase: np.ndarray
    comp_rank: np.ndarray
    comp_cost: np.ndarray
    phase: np.ndarray
    channel: np.ndarray
    key: np.ndarray
    size: np.ndarray
    weight: np.ndarray
    element: np.ndarray
    carried: np.ndarray
    prev: np.ndarray
    term: np.ndarray
    group_start: np.ndarray
    group_cost: np.ndarray
    phase_start: np.ndarray
    phase_cost: np.ndarray
    cost: float


class StageEvaluator:
    """Evaluates stages for one interpreter (its program, profile and mapping); ``recorder``,
    when given, receives a :class:`StageDetail` for every stage evaluated."""

    def __init__(self, interp, recorder: Optional[Callable[[StageDetail], None]] = None):
        self.interp = interp
        self.recorder = recorder
        self.program = interp.program
        info = self.program.channel_info
        self.within = [c for c in self.program.channels if info.get(c) and info[c].placement == "within"]
        self.between = [c for c in self.program.channels if info.get(c) and info[c].placement == "between"]

    # ------------------------------------------------------------------ entry
    def cost(self, stage: ir.Stage, env: dict, conc) -> float:
        """The cost of ``stage`` for scalar ``env`` (which holds the process count under
        :data:`tlop.ir.RANKS`) and a scalar concurrency factor ``conc``."""
        from tlop.backends.interp import EvalError

        P = env.get(ir.RANKS)
        mapping = self.interp.mapping
        if P is None or mapping is None:
            raise EvalError("a schedule needs a process mapping: evaluate the algorithm with one "
                            "(--mapping sequential(8), or mapping=tlop.sequential(8))", stage.span)
        sends, computes = [], []
        self._count = 0
        for item in stage.items:
            self._run(item, dict(env), 1, np.zeros(1, dtype=np.int64), conc, sends, computes)
        if not sends and not computes:
            if self.recorder is not None:
                self._record(stage, env, conc, int(P), sends, computes, None)
            return 0.0
        return self._reduce(stage, int(P), mapping, sends, computes, conc, env)

    # ------------------------------------------------------------------ enumeration
    def _eval(self, e, env, n, conc):
        return _lanes(self.interp._eval(e, env, conc), n)

    def _place(self, n, node):
        from tlop.backends.interp import EvalError

        self._count += n
        if self._count > MAX_ELEMENTS:
            raise EvalError(f"the stage has more than {MAX_ELEMENTS:,} sends and computations, more than "
                            f"tlop evaluates", node.span)

    def _run(self, item, env, n, ph, conc, sends, computes):
        """Run ``item`` on ``n`` lanes whose phase counters are ``ph``; the counters after it."""
        if isinstance(item, ir.Send):
            self._place(n, item)
            sends.append(_Batch(item, ph, *(self._eval(x, env, n, conc)
                                            for x in (item.src, item.dst, item.size, item.weight))))
            return ph + 1
        if isinstance(item, ir.Compute):
            self._place(n, item)
            computes.append(_Batch(item, ph, self._eval(item.rank, env, n, conc),
                                   self._eval(item.cost, env, n, conc)))
            return ph + 1
        if isinstance(item, ir.Block):
            for it in item.items:
                ph = self._run(it, env, n, ph, conc, sends, computes)
            return ph
        if isinstance(item, ir.Loop):
            return (self._par if item.kind == "par" else self._seq)(item, env, n, ph, conc, sends, computes)
        from tlop.backends.interp import EvalError

        raise EvalError(f"{type(item).__name__} is not an item of a stage", getattr(item, "span", None))

    def _bounds(self, loop, env, n, conc):
        """Per lane: the first and last binding of ``loop`` (checked as a reduction's bounds)."""
        from tlop.backends.interp import check_reduce_bounds

        lo = self._eval(loop.lo, env, n, conc)
        hi = self._eval(loop.hi, env, n, conc)
        start = np.empty(n, dtype=np.int64)
        stop = np.empty(n, dtype=np.int64)
        for k in range(n) if n <= 64 else ():
            start[k], stop[k] = check_reduce_bounds(loop.kind, float(lo[k]), float(hi[k]), loop.span)
        if n > 64:
            ok = np.isfinite(lo) & np.isfinite(hi) & (np.abs(lo) <= 2.0 ** 53) & (np.abs(hi) <= 2.0 ** 53)
            if not ok.all():
                k = int(np.flatnonzero(~ok)[0])
                check_reduce_bounds(loop.kind, float(lo[k]), float(hi[k]), loop.span)
            start[:] = np.ceil(lo)
            stop[:] = np.floor(hi)
        return start, stop

    @staticmethod
    def _pick(env, idx):
        return {k: (v[idx] if isinstance(v, np.ndarray) and v.ndim > 0 else v) for k, v in env.items()}

    def _where(self, loop, env, m, conc):
        if isinstance(loop.where, ir.Num):
            return np.full(m, loop.where.value != 0)
        return np.broadcast_to(np.not_equal(self.interp._eval(loop.where, env, conc), 0), (m,))

    def _par(self, loop, env, n, ph, conc, sends, computes):
        from tlop.backends.interp import EvalError

        start, stop = self._bounds(loop, env, n, conc)
        counts = np.maximum(stop - start + 1, 0)
        total = int(counts.sum())
        if total > MAX_ELEMENTS:
            raise EvalError(f"par over {total:,} bindings is more than tlop evaluates", loop.span)
        if total == 0:
            return ph
        parent = np.repeat(np.arange(n), counts)
        offsets = np.cumsum(counts) - counts
        values = (start[parent] + (np.arange(total) - offsets[parent])).astype(float)
        inner = self._pick(env, parent)
        inner[loop.var] = values
        keep = self._where(loop, inner, total, conc)
        if not keep.all():
            sel = np.flatnonzero(keep)
            if not len(sel):
                return ph
            inner = self._pick(inner, sel)
            parent = parent[sel]
            total = len(sel)
        child = self._run(loop.body, inner, total, ph[parent], conc, sends, computes)
        out = ph.copy()
        np.maximum.at(out, parent, child)
        return out

    def _seq(self, loop, env, n, ph, conc, sends, computes):
        from tlop.backends.interp import MAX_TERMS, EvalError

        start, stop = self._bounds(loop, env, n, conc)
        live = stop >= start
        if not live.any():
            return ph
        first, last = int(start[live].min()), int(stop[live].max())
        if last - first + 1 > MAX_TERMS:
            raise EvalError(f"seq over {last - first + 1:,} bindings is more than tlop evaluates", loop.span)
        ph = ph.copy()
        for i in range(first, last + 1):
            active = np.flatnonzero((start <= i) & (i <= stop))
            if not len(active):
                continue
            inner = self._pick(env, active) if len(active) < n else dict(env)
            inner[loop.var] = float(i)
            keep = self._where(loop, inner, len(active), conc)
            if not keep.all():
                active = active[keep]
                if not len(active):
                    continue
                inner = self._pick(inner, np.flatnonzero(keep))
            ph[active] = self._run(loop.body, inner, len(active), ph[active], conc, sends, computes)
        return ph

    # ------------------------------------------------------------------ checks
    @staticmethod
    def _first_bad(bad):
        return int(np.flatnonzero(bad)[0])

    def _check_ranks(self, batch, label, ranks_list, P):
        from tlop.backends.interp import EvalError

        for what, r in ranks_list:
            bad = ~(np.isfinite(r) & (np.floor(r) == r) & (r >= 0) & (r < P))
            if bad.any():
                k = self._first_bad(bad)
                raise EvalError(f"{label(k)}: the {what} rank {_fmt(r[k])} is outside 0 … {P - 1} (P = {P})",
                                batch.node.span)

    def _checked(self, sends, computes, P):
        from tlop.backends.interp import EvalError

        for b in sends:
            def label(k, b=b):
                return f"send {_fmt(b.a[k])} -> {_fmt(b.b[k])} : {_fmt(b.c[k])} B"
            self._check_ranks(b, label, (("source", b.a), ("destination", b.b)), P)
            bad = ~(b.c >= 0)
            if bad.any():
                k = self._first_bad(bad)
                raise EvalError(f"{label(k)}: the size {_fmt(b.c[k])} B is negative" if b.c[k] < 0 else
                                f"{label(k)}: the size is not a number", b.node.span)
            bad = ~((b.d > 0) & np.isfinite(b.d))
            if bad.any():
                k = self._first_bad(bad)
                raise EvalError(f"{label(k)}: the weight {_fmt(b.d[k])} must be a positive number", b.node.span)
        for b in computes:
            def label(k, b=b):
                return f"computation on rank {_fmt(b.a[k])}"
            self._check_ranks(b, label, (("", b.a),), P)
            bad = ~(b.b >= 0)
            if bad.any():
                k = self._first_bad(bad)
                raise EvalError(f"{label(k)}: the cost {b.b[k]!r} s is negative or not a number", b.node.span)

    def _channels(self, stage):
        from tlop.backends.interp import EvalError

        for kind, found in (("within node", self.within), ("between nodes", self.between)):
            if len(found) != 1:
                what = "no channel" if not found else f"{len(found)} channels ({', '.join(found)})"
                raise EvalError(f"a schedule needs exactly one platform channel declared '{kind}'; the platform "
                                f"declares {what} (e.g. 'channel shm within node contention node')", stage.span)
        return self.within[0], self.between[0]

    # ------------------------------------------------------------------ reduction
    def _reduce(self, stage, P, mapping, sends, computes, conc, env=None):
        self._checked(sends, computes, P)
        chans = self.program.channels
        nch = len(chans)
        info = self.program.channel_info
        rows = []  # (phase, code, key, size, weight, channel, order) per member
        order = 0
        if sends:
            intra, inter = self._channels(stage)
            ph = np.concatenate([b.phase for b in sends])
            src = np.concatenate([b.a for b in sends]).astype(np.int64)
            dst = np.concatenate([b.b for b in sends]).astype(np.int64)
            size = np.concatenate([b.c for b in sends])
            weight = np.concatenate([b.d for b in sends])
            sn = np.asarray(mapping.node_of(src, P), dtype=np.int64)
            dn = np.asarray(mapping.node_of(dst, P), dtype=np.int64)
            same = sn == dn
            ci, cx = chans.index(intra), chans.index(inter)
            ch = np.where(same, ci, cx)
            seqno = np.arange(len(size))
            for c, name in ((ci, intra), (cx, inter)):
                sel = np.flatnonzero(ch == c)
                if not len(sel):
                    continue
                rule = info[name].contention or ("node" if name == intra else "dst_node")
                if rule == "dst_node":
                    keys = [(sel, dn[sel])]
                elif rule == "src_node":
                    keys = [(sel, sn[sel])]
                else:  # node / either: the group of the source node, and of the destination node
                    two = sel[sn[sel] != dn[sel]]
                    keys = [(sel, sn[sel]), (two, dn[two])]
                for members, key in keys:
                    if len(members):
                        rows.append((ph[members], np.full(len(members), c), key, size[members], weight[members],
                                     np.full(len(members), c), seqno[members] + order))
            order += len(size)
        if computes:
            ph = np.concatenate([b.phase for b in computes])
            rank = np.concatenate([b.a for b in computes]).astype(np.int64)
            cost = np.concatenate([b.b for b in computes])
            # a computation is a member of the group (phase, rank) with a fixed contribution
            rows.append((ph, np.full(len(cost), nch), rank, cost, np.ones(len(cost)), np.full(len(cost), -1),
                         np.arange(len(cost)) + order))
        phase, code, key, size, weight, channel, seq = (np.concatenate(col) for col in zip(*rows))
        perm = np.lexsort((seq, size, key, code, phase))
        phase, code, key, size, weight, channel = (a[perm] for a in (phase, code, key, size, weight, channel))
        n = len(size)
        new_group = np.ones(n, dtype=bool)
        new_group[1:] = (phase[1:] != phase[:-1]) | (code[1:] != code[:-1]) | (key[1:] != key[:-1])
        group_start = np.flatnonzero(new_group)
        gphase = phase[group_start]
        new_phase = np.ones(len(group_start), dtype=bool)
        new_phase[1:] = gphase[1:] != gphase[:-1]
        phase_start = np.flatnonzero(new_phase)
        fixed = channel < 0

        def transmit(idx, carried, d):
            out = np.empty(len(idx))
            comp = fixed[idx]
            out[comp] = size[idx[comp]]  # a computation costs what it costs
            for c in np.unique(channel[idx[~comp]]):
                sel = np.flatnonzero((channel[idx] == c) & ~comp)
                out[sel] = self.interp._transmit(SEND_TRANSMISSION, chans[int(c)], d[sel],
                                                 np.multiply(carried[sel], conc), stage.span)
            return out

        alg = _WithFixed(size, weight, group_start, phase_start, transmit, fixed)
        maxima = reduce_groups(alg)
        total = 0.0
        for v in maxima.tolist():  # in phase order, one after another
            total += v
        if self.recorder is not None:
            self._record(stage, env, conc, P, sends, computes,
                         (phase, channel, key, size, weight, seq[perm], alg, group_start, phase_start, maxima))
        return total

    def _record(self, stage, env, conc, P, sends, computes, reduced):
        """Give the recorder this stage's :class:`StageDetail` (``reduced``: the reduction's
        sorted members and results, None for an empty stage)."""
        def cat(batches, attr, dtype=float):
            return (np.concatenate([getattr(b, attr) for b in batches]) if batches else np.zeros(0)).astype(dtype)

        chans = self.program.channels
        src, dst = cat(sends, "a", np.int64), cat(sends, "b", np.int64)
        if sends:
            same = np.asarray(self.interp.mapping.node_of(src, P)) == np.asarray(self.interp.mapping.node_of(dst, P))
            intra, inter = self._channels(stage)
            send_channel = np.where(same, chans.index(intra), chans.index(inter))
        else:
            send_channel = np.zeros(0, dtype=np.int64)
        empty_i, empty_f = np.zeros(0, dtype=np.int64), np.zeros(0)
        if reduced is None:
            phase = channel = key = element = group_start = phase_start = empty_i
            size = weight = carried = prev = term = group_cost = phase_cost = empty_f
        else:
            phase, channel, key, size, weight, element, alg, group_start, phase_start, phase_cost = reduced
            carried, prev, term, group_cost = alg.carried_, alg.prev_, alg.terms_, alg.sums_
        self.recorder(StageDetail(
            stage=stage, env=dict(env or {}), conc=float(conc), P=P, channels=tuple(chans),
            send_phase=cat(sends, "phase", np.int64), send_src=src, send_dst=dst, send_size=cat(sends, "c"),
            send_weight=cat(sends, "d"), send_channel=send_channel,
            comp_phase=cat(computes, "phase", np.int64), comp_rank=cat(computes, "a", np.int64),
            comp_cost=cat(computes, "b"), phase=phase, channel=channel, key=key, size=size, weight=weight,
            element=element, carried=carried, prev=np.maximum(prev, 0.0), term=term, group_start=group_start,
            group_cost=group_cost, phase_start=phase_start, phase_cost=phase_cost,
            cost=float(sum(np.asarray(phase_cost).tolist()))))


class _WithFixed(NumericGroups):
    """NumericGroups where some members (computations) contribute their own cost whatever their
    increment: their "size" holds the cost, and they are never dropped as a zero increment."""

    def __init__(self, size, weight, group_start, phase_start, transmit, fixed):
        super().__init__(size, weight, group_start, phase_start, transmit)
        self.fixed = fixed

    def increment(self, prev, carried):
        out = super().increment(np.where(self.fixed, -math.inf, prev), carried)
        self.prev_, self.carried_, self.terms_ = prev, carried, out  # for a recorder (StageDetail)
        return out

    def group_sums(self, terms):
        self.sums_ = super().group_sums(terms)
        return self.sums_
