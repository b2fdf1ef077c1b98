"""The meaning of a schedule stage in τ-Lop: enumerate it with concrete values, then reduce it.

What it does: :class:`StageEvaluator` evaluates one :class:`tlop.ir.Stage` for one point (scalar
arguments), for the reference interpreter, in two steps.

1. **Enumeration** (shared with every model: :class:`tlop.backends.enumeration.StageEnumerator`):
   every send and computation with concrete values and its lane's phase, checked.
2. **Reduction.**  The mapping gives every rank's node; a send whose ends share a node
   goes through the platform's ``within node`` channel, any other through its ``between nodes``
   channel; its contention group is (phase, channel, the node its channel's ``contention`` key
   names), and a computation is a group of its own per (phase, rank).  The members are sorted
   and reduced by the one τ-Lop rule, :func:`tlop.ir.taulop.reduce_groups`, instantiated on
   numpy arrays (:class:`tlop.ir.taulop.NumericGroups`); each member's transmission is the
   transmission ``T`` on its channel evaluated by the interpreter under the concurrency factor
   (the weights it carries times the factor in force), exactly as ``A ‖ T[c](m)``.  The stage
   costs the sum of its phases' maxima (:func:`phase_total`).  This sort is the oracle
   (``reduction="sort"``); ``reduction="count"`` hands the same members to
   :func:`tlop.backends.schedule_count.count_reduce`, which counts instead of sorting and is
   property-tested against it.

Channels and contention keys are those of :mod:`tlop.ir.taulop.contention` (the one table every
engine reads): this module applies them to numpy arrays of nodes.

**Recording.**  An evaluator made with a ``recorder`` (a callable) passes it, for every stage it
evaluates, a :class:`StageDetail`: the sends and computations, every member of every contention
group in the reduction's order with its ≺-predecessor's increment, carried weight and term, and
each group's and phase's cost — the very arrays the reduction computed, nothing re-derived
(``tlop explain`` with point arguments, :mod:`tlop.analysis.stages`).  Without a recorder nothing
is kept.

What it does not do: evaluate array arguments (the interpreter calls it once per point),
detect stages that do not depend on a stage variable (the interpreter's ``sum`` does), or know
other models than τ-Lop (LogGP/pLogP: :mod:`tlop.backends.dataflow`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from tlop import ir
from tlop.backends.enumeration import MAX_ELEMENTS, StageEnumerator
from tlop.ir.taulop import NumericGroups, numpy_ops, key_of, phase_sum, reduce_groups, schedule_channels, \
    send_channel

__all__ = ["StageEvaluator", "StageDetail", "SEND_TRANSMISSION", "MAX_ELEMENTS"]

SEND_TRANSMISSION = ir.SEND_TRANSMISSION


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
    ``cost``: the stage's cost, the sum of ``phase_cost``.  ``send_exchange``/``comp_exchange``:
    which sends and computations an ``exchange`` item made (:attr:`ir.Send.exchange`; no cost
    reads them)."""
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
    send_exchange: np.ndarray = None
    comp_exchange: np.ndarray = None


class StageEvaluator(StageEnumerator):
    """Evaluates stages in τ-Lop for one interpreter (its program, profile and mapping);
    ``recorder``, when given, receives a :class:`StageDetail` for every stage evaluated."""

    def __init__(self, interp, reduction: str = "sort", recorder: Optional[Callable[[StageDetail], None]] = None):
        super().__init__(interp)
        #: "sort": the oracle's reduction (:meth:`sorted_group_sums`); "count": the counting
        #: reduction of :mod:`tlop.backends.schedule_count`, checked against it.  A recorder
        #: always gets the oracle's reduction.
        self.reduction = reduction
        self.recorder = recorder
        self.within, self.between, self._channel_problem = schedule_channels(self.program)

    # ------------------------------------------------------------------ entry
    def cost(self, stage: ir.Stage, env: dict, conc) -> float:
        """The cost of ``stage`` for scalar ``env`` (which holds the process count under
        :data:`tlop.ir.RANKS`) and a scalar concurrency factor ``conc``."""
        el = self.enumerate(stage, env, conc)
        if not el.sends and not el.computes:
            if self.recorder is not None:
                self._record(stage, env, conc, el.P, el.sends, el.computes, None)
            return 0.0
        return self._reduce(stage, el.P, self.interp.mapping, el.sends, el.computes, conc, env)

    def _channels(self, stage):
        from tlop.backends.interp import EvalError

        if self._channel_problem is not None:
            raise EvalError(self._channel_problem, stage.span)
        return self.within[0], self.between[0]

    # ------------------------------------------------------------------ reduction
    def _reduce(self, stage, P, mapping, sends, computes, conc, env=None):
        rows = self._members(stage, P, mapping, sends, computes)
        if self.reduction == "count" and self.recorder is None:
            from tlop.backends.schedule_count import count_reduce

            return count_reduce(self, stage, rows, conc)
        gphase, gsum = self.sorted_group_sums(stage, rows, conc)
        total = phase_total(gphase, gsum)
        if self.recorder is not None:
            self._record(stage, env, conc, P, sends, computes, self._sorted + (gphase, gsum, total))
        return total

    def _members(self, stage, P, mapping, sends, computes):
        """The members of the contention groups: ``(phase, code, key, size, weight, channel,
        order)`` arrays, one entry per member (a send in two groups is two members); ``code`` is
        the channel's index for a send and ``len(channels)`` for a computation, whose
        ``channel`` is −1 and whose ``size`` holds its cost."""
        chans = self.program.channels
        nch = len(chans)
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
            ch = send_channel(same, ci, cx)
            ops = numpy_ops(mapping)
            seqno = np.arange(len(size))
            for c, name in ((ci, intra), (cx, inter)):
                sel = np.flatnonzero(ch == c)
                if not len(sel):
                    continue
                # the groups the channel's contention key puts each send in (one or two)
                keys = [(sel, np.asarray(k, dtype=np.int64))
                        for k in key_of(self.program, name).groups(sn[sel], dn[sel], c == ci, ops)]
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
        return tuple(np.concatenate(col) for col in zip(*rows))

    def sorted_group_sums(self, stage, rows, conc):
        """The oracle's reduction of the members ``rows`` (:meth:`_members`): one ``lexsort`` by
        (phase, group, size, order), then the one τ-Lop rule :func:`tlop.ir.taulop.reduce_groups`
        on numpy arrays.  Returns each group's phase and A2 sum, in (phase, group) order."""
        chans = self.program.channels
        phase, code, key, size, weight, channel, seq = rows
        perm = np.lexsort((seq, size, key, code, phase))
        phase, code, key, size, weight, channel = (a[perm] for a in (phase, code, key, size, weight, channel))
        n = len(size)
        new_group = np.ones(n, dtype=bool)
        new_group[1:] = (phase[1:] != phase[:-1]) | (code[1:] != code[:-1]) | (key[1:] != key[:-1])
        group_start = np.flatnonzero(new_group)
        fixed = channel < 0

        def transmit(idx, carried, d):
            out = np.empty(len(idx))
            comp = fixed[idx]
            out[comp] = size[idx[comp]]  # a computation costs what it costs
            for c in np.unique(channel[idx[~comp]]):
                sel = np.flatnonzero((channel[idx] == c) & ~comp)
                out[sel] = self.interp.transmit(SEND_TRANSMISSION, chans[int(c)], d[sel],
                                                 np.multiply(carried[sel], conc), stage.span)
            return out

        # every group its own "phase": reduce_groups' A3 step then returns the groups' sums
        alg = _WithFixed(size, weight, group_start, np.arange(len(group_start)), transmit, fixed)
        sums = reduce_groups(alg)
        if self.recorder is not None:
            self._sorted = (phase, channel, key, size, weight, seq[perm], alg, group_start)
        return phase[group_start], sums

    def _record(self, stage, env, conc, P, sends, computes, reduced):
        """Give the recorder this stage's :class:`StageDetail` (``reduced``: the reduction's
        sorted members and results, None for an empty stage)."""
        def cat(batches, attr, dtype=float):
            return (np.concatenate([getattr(b, attr) for b in batches]) if batches else np.zeros(0)).astype(dtype)

        def marks(batches):
            return (np.concatenate([np.full(len(b.a), bool(getattr(b.node, "exchange", False))) for b in batches])
                    if batches else np.zeros(0, dtype=bool))

        chans = self.program.channels
        src, dst = cat(sends, "a", np.int64), cat(sends, "b", np.int64)
        if sends:
            same = np.asarray(self.interp.mapping.node_of(src, P)) == np.asarray(self.interp.mapping.node_of(dst, P))
            intra, inter = self._channels(stage)
            send_chan = send_channel(same, chans.index(intra), chans.index(inter))
        else:
            send_chan = np.zeros(0, dtype=np.int64)
        empty_i, empty_f = np.zeros(0, dtype=np.int64), np.zeros(0)
        if reduced is None:
            phase = channel = key = element = group_start = phase_start = empty_i
            size = weight = carried = prev = term = group_cost = phase_cost = empty_f
        else:
            phase, channel, key, size, weight, element, alg, group_start, gphase, group_cost, total = reduced
            carried, prev, term = alg.carried_, alg.prev_, alg.terms_
            new_phase = np.ones(len(gphase), dtype=bool)
            new_phase[1:] = gphase[1:] != gphase[:-1]
            phase_start = np.flatnonzero(new_phase)
            phase_cost = np.maximum.reduceat(group_cost, phase_start)
        self.recorder(StageDetail(
            stage=stage, env=dict(env or {}), conc=float(conc), P=P, channels=tuple(chans),
            send_phase=cat(sends, "phase", np.int64), send_src=src, send_dst=dst, send_size=cat(sends, "c"),
            send_weight=cat(sends, "d"), send_channel=send_chan,
            comp_phase=cat(computes, "phase", np.int64), comp_rank=cat(computes, "a", np.int64),
            comp_cost=cat(computes, "b"), phase=phase, channel=channel, key=key, size=size, weight=weight,
            element=element, carried=carried, prev=np.maximum(prev, 0.0), term=term, group_start=group_start,
            group_cost=group_cost, phase_start=phase_start, phase_cost=phase_cost,
            cost=0.0 if reduced is None else float(total), send_exchange=marks(sends),
            comp_exchange=marks(computes)))


#: a stage's cost from its groups' phases and sums (A3 then the phases in order): the one rule's
phase_total = phase_sum


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

