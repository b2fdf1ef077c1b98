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
   costs the sum of its phases' maxima.

Contention keys: ``node`` (all transfers inside one node; on a channel between nodes it counts a
transfer in the groups of both its nodes, like ``either``), ``dst_node``, ``src_node``, and
``either`` (the transfer is a member of the group of its source node and of the group of its
destination node; the phase's maximum then takes the larger of the two).

What it does not do: evaluate array arguments (the interpreter calls it once per point),
detect stages that do not depend on a stage variable (the interpreter's ``sum`` does), or know
other models than τ-Lop (LogGP/pLogP: :mod:`tlop.backends.dataflow`).
"""

from __future__ import annotations

import math

import numpy as np

from tlop import ir
from tlop.backends.enumeration import MAX_ELEMENTS, StageEnumerator
from tlop.ir.taulop import NumericGroups, reduce_groups

__all__ = ["StageEvaluator", "SEND_TRANSMISSION", "MAX_ELEMENTS"]

SEND_TRANSMISSION = ir.SEND_TRANSMISSION


class StageEvaluator(StageEnumerator):
    """Evaluates stages in τ-Lop for one interpreter (its program, profile and mapping)."""

    def __init__(self, interp):
        super().__init__(interp)
        info = self.program.channel_info
        self.within = [c for c in self.program.channels if info.get(c) and info[c].placement == "within"]
        self.between = [c for c in self.program.channels if info.get(c) and info[c].placement == "between"]

    # ------------------------------------------------------------------ entry
    def cost(self, stage: ir.Stage, env: dict, conc) -> float:
        """The cost of ``stage`` for scalar ``env`` (which holds the process count under
        :data:`tlop.ir.RANKS`) and a scalar concurrency factor ``conc``."""
        el = self.enumerate(stage, env, conc)
        if not el.sends and not el.computes:
            return 0.0
        return self._reduce(stage, el.P, self.interp.mapping, el.sends, el.computes, conc)

    def _channels(self, stage):
        from tlop.backends.interp import EvalError

        for kind, found in (("within node", self.within), ("between nodes", self.between)):
            if len(found) != 1:
                what = "no channel" if not found else f"{len(found)} channels ({', '.join(found)})"
                raise EvalError(f"a schedule needs exactly one platform channel declared '{kind}'; the platform "
                                f"declares {what} (e.g. 'channel shm within node contention node')", stage.span)
        return self.within[0], self.between[0]

    # ------------------------------------------------------------------ reduction
    def _reduce(self, stage, P, mapping, sends, computes, conc):
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

        maxima = reduce_groups(_WithFixed(size, weight, group_start, phase_start, transmit, fixed))
        total = 0.0
        for v in maxima.tolist():  # in phase order, one after another
            total += v
        return total


class _WithFixed(NumericGroups):
    """NumericGroups where some members (computations) contribute their own cost whatever their
    increment: their "size" holds the cost, and they are never dropped as a zero increment."""

    def __init__(self, size, weight, group_start, phase_start, transmit, fixed):
        super().__init__(size, weight, group_start, phase_start, transmit)
        self.fixed = fixed

    def increment(self, prev, carried):
        out = super().increment(np.where(self.fixed, -math.inf, prev), carried)
        return out
