"""The A2/A3 rule of a τ-Lop stage, written once over a :class:`GroupAlgebra`.

What it does: :func:`reduce_groups` is the τ-Lop reduction of the members of contention groups
(000 eq. 8–9): A2 inside each group — sizes sorted ``m_1 ≤ … ≤ m_n``,
``Σ_j (w_j + … + w_n) ‖ X_j(m_j − m_{j−1})`` with ``m_0 = 0`` and increments ``<= 0`` dropped
(a NaN increment is kept, so that it reaches the transmission and makes the result NaN) — then
A3, the maximum across the groups of a phase; :func:`phase_sum` adds the phases one after another.
Every engine is an instance of the algebra:

* IR building for a decided phase of a parallel composition (:mod:`tlop.ir.taulop.expand`);
* numpy arrays (:class:`NumericGroups`: every member of every group of a stage, sorted), the
  reference interpreter's schedule stages (:mod:`tlop.backends.schedule`);
* uniform groups (:class:`UniformGroups`: groups whose members all have one size, so a group is
  ``(channel, summed weight, size)``), which the counting reduction
  (:mod:`tlop.backends.schedule_count`) and the closed forms (:mod:`tlop.analysis.closedform`)
  produce, in numpy or in IR;
* LLVM: the code generator (:mod:`tlop.backends.jit.schedgen`) emits the same steps in native
  loops (its uniform-group fast path and its sorted members), documented against this module and
  property-tested against it.

What it does not do: decide which members share a group (the contention keys and the channel of a
send: :mod:`tlop.ir.taulop.contention`), enumerate schedules, or evaluate transmissions (each
algebra's ``increment`` is handed the engine's own transmission).
"""

from __future__ import annotations

from typing import Callable, Protocol

import numpy as np

__all__ = ["GroupAlgebra", "reduce_groups", "NumericGroups", "UniformGroups", "phase_sum"]


class GroupAlgebra(Protocol):
    """The operations of the A2/A3 rule over one representation of the members of the contention
    groups of a phase (or of several phases), grouped, and sorted by ≺ inside each group."""

    def previous(self):
        """Per member: its ≺-predecessor in its group (the algebra's own handle), or none."""

    def carried(self):
        """Per member j of a group of n: ``w_j + w_{j+1} + … + w_n`` (j and every later member)."""

    def increment(self, prev, carried):
        """Per member: 0 when ``d = m_j − max(0, m_prev)`` is ``<= 0`` (``m_j`` when there is
        no predecessor), else ``carried_j ‖ X_j(d)`` with ``X_j`` the member's own transmission."""

    def group_sums(self, terms):
        """Per group: the sum of its members' terms, in ≺ order."""

    def across(self, sums):
        """Per phase: the maximum of its groups' sums (A3)."""


def reduce_groups(alg: GroupAlgebra):
    """The τ-Lop reduction of grouped, sorted members (000 eq. 8–9): A2 in each group — sizes
    ``m_1 ≤ … ≤ m_n``, ``Σ_j (w_j + … + w_n) ‖ X_j(m_j − m_{j−1})`` with ``m_0 = 0`` and
    increments ``<= 0`` dropped — then A3, the maximum across the groups of a phase."""
    prev = alg.previous()
    carried = alg.carried()
    return alg.across(alg.group_sums(alg.increment(prev, carried)))


class NumericGroups:
    """:class:`GroupAlgebra` over numpy arrays: the members of every group of every phase of a
    schedule stage, with concrete sizes and weights.

    ``size``, ``weight``: float arrays in group order (the members of one group contiguous and
    sorted by size, ties in sequence order); ``group_start``: the index of each group's first
    member (increasing); ``phase_start``: the index, into the groups, of each phase's first
    group; ``transmit(idx, carried, d)``: the cost of members ``idx`` transmitting ``d`` bytes
    under concurrency ``carried`` (arrays), through each member's own channel — a computation
    member returns its cost whatever ``carried`` and ``d``."""

    def __init__(self, size, weight, group_start, phase_start, transmit):
        self.size = np.asarray(size, dtype=float)
        self.weight = np.asarray(weight, dtype=float)
        self.group_start = np.asarray(group_start, dtype=np.int64)
        self.phase_start = np.asarray(phase_start, dtype=np.int64)
        self.transmit = transmit
        n = len(self.size)
        self.group_of = np.zeros(n, dtype=np.int64)
        if n:
            marks = np.zeros(n, dtype=np.int64)
            marks[self.group_start[1:]] = 1
            self.group_of = np.cumsum(marks)

    def previous(self):
        prev = np.empty_like(self.size)
        if len(prev):
            prev[1:] = self.size[:-1]
            prev[self.group_start] = 0.0
        return prev

    def carried(self):
        # suffix sums of the weights inside each group: (sum from j to the end of the array)
        # minus (sum from the next group's first member on)
        tail = np.concatenate([np.cumsum(self.weight[::-1])[::-1], [0.0]])
        ends = np.concatenate([self.group_start[1:], [len(self.weight)]])
        return tail[:-1] - tail[ends[self.group_of]]

    def increment(self, prev, carried):
        d = self.size - np.maximum(prev, 0.0)
        out = np.zeros_like(self.size)
        idx = np.flatnonzero(~(d <= 0))  # NaN reaches the transmission, as in the IR rule
        if len(idx):
            out[idx] = self.transmit(idx, carried[idx], d[idx])
        return out

    def group_sums(self, terms):
        if not len(terms):
            return terms
        return np.add.reduceat(terms, self.group_start)

    def across(self, sums):
        if not len(sums):
            return sums
        return np.maximum.reduceat(sums, self.phase_start)


class UniformGroups:
    """:class:`GroupAlgebra` over groups whose members all have one size: A2 of a group of
    total weight ``W`` and size ``m`` is the single term ``W ‖ X(m)`` (its first member carries
    every weight; the others add a zero increment), or 0 when ``m <= 0``.

    ``groups``: per phase, a list of ``(handle, W, m)``; ``term(handle, W, m)`` is the engine's
    ``W ‖ X(m)`` (IR or a number); ``dropped(m)`` is True/False when the engine knows whether
    ``m <= 0`` (then the term is dropped or kept), None when it must write the test, which
    ``guard(m, term)`` does; ``zero``, ``plus`` and ``maximum`` are the engine's 0, + and max."""

    def __init__(self, groups, term: Callable, *, dropped: Callable, guard: Callable, zero, plus: Callable,
                 maximum: Callable):
        self.groups = groups
        self.term, self.dropped, self.guard = term, dropped, guard
        self.zero, self.plus, self.maximum = zero, plus, maximum

    def previous(self):
        return [[None for _ in phase] for phase in self.groups]

    def carried(self):
        return [[w for _, w, _ in phase] for phase in self.groups]

    def increment(self, prev, carried):
        out = []
        for phase, wph in zip(self.groups, carried):
            terms = []
            for (h, _, m), w in zip(phase, wph):
                d = self.dropped(m)
                if d is True:
                    terms.append(None)
                elif d is False:
                    terms.append(self.term(h, w, m))
                else:
                    terms.append(self.guard(m, self.term(h, w, m)))
            out.append(terms)
        return out

    def group_sums(self, terms):
        return [[self.zero if t is None else t for t in phase] for phase in terms]

    def across(self, sums):
        return [self.zero if not phase else phase[0] if len(phase) == 1 else self.maximum(phase) for phase in sums]


def phase_sum(gphase, gsum) -> float:
    """A stage's cost from its groups' phases (non-decreasing) and sums, in numpy: A3, the
    maximum over the groups of each phase, then the phases one after another, in phase order."""
    if not len(gsum):
        return 0.0
    new_phase = np.ones(len(gphase), dtype=bool)
    new_phase[1:] = gphase[1:] != gphase[:-1]
    maxima = np.maximum.reduceat(gsum, np.flatnonzero(new_phase))
    total = 0.0
    for v in maxima.tolist():  # in phase order, one after another
        total += v
    return total
