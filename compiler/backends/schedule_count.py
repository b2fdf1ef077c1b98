"""The counting reduction of an enumerated schedule stage: the oracle's result without its sort.

What it does: :func:`count_reduce` reduces the members of a stage's contention groups (the rows
:meth:`tlop.backends.schedule.StageEvaluator._members` builds, after the same checks) to the
stage's cost, exactly as the oracle (:meth:`~tlop.backends.schedule.StageEvaluator.sorted_group_sums`
then :func:`~tlop.backends.schedule.phase_total`) does, but by counting instead of sorting:

* every member gets its group's number by arithmetic on (phase, code, key) when that key space
  is small (``numpy.bincount`` over it), else by ``numpy.unique``;
* per group, ``bincount`` gives the total weight ``W`` and, for computations, the sum of costs;
* a group whose sends all have the same size ``m`` — the common case: a ring, a tree, every
  collective sending one block — is merged into one member of weight ``W`` (a pre-pass: under
  A2 its first member carries every weight, the others add a zero increment), and the merged
  members go through the one rule, :func:`tlop.ir.taulop.reduce_groups` (``W ‖ T^c(m)``, or 0
  when ``m = 0``).  Equal
  sizes are found by one global comparison when every send of the stage has the same size, else
  by per-group minimum and maximum;
* each distinct transmission (channel, m, W) is evaluated once, in one array call per channel;
* only the groups with unequal sizes go through the oracle's sort, restricted to their members.

The phases' maxima and their sum are :func:`tlop.ir.taulop.phase_sum`, shared with the oracle.  ``tests/test_schedule_count.py`` checks this path against the oracle on generated
schedules (shifts, xor partners, trees, unequal sizes, weights, computations, the three kinds of
mapping and every contention key) to 1e-12 relative, errors included.

What it does not do: enumerate (the stage evaluator does), check ranks, sizes or weights (checked
before, by the evaluator, identically for both reductions), or derive closed forms.
"""

from __future__ import annotations

import numpy as np

from tlop.backends.schedule import SEND_TRANSMISSION
from tlop.ir.taulop import NumericGroups, phase_sum, reduce_groups

__all__ = ["count_reduce"]

#: the largest dense (phase, code, key) space counted directly, relative to the member count
_DENSE_FACTOR = 4
_DENSE_MIN = 4096


def _group_ids(phase, code, key, ncodes):
    """(group number per member, number of groups, phase of each group, code of each group,
    whether the group numbers follow (phase, code, key) order)."""
    n = len(phase)
    K = int(key.max()) + 1 if n else 1
    nph = int(phase.max()) + 1 if n else 1
    space = nph * ncodes * K
    raw = (phase * ncodes + code) * K + key
    if space <= max(_DENSE_FACTOR * n, _DENSE_MIN):
        used = np.bincount(raw, minlength=space) > 0
        dense = np.cumsum(used) - 1
        live = np.flatnonzero(used)
        return dense[raw], len(live), live // (ncodes * K), (live // K) % ncodes
    live, gid = np.unique(raw, return_inverse=True)
    return gid, len(live), live // (ncodes * K), (live // K) % ncodes


def _distinct_transmit(ev, stage, channel: str, conc):
    """``transmit(idx, carried, d)`` for :class:`~tlop.ir.taulop.NumericGroups` on ``channel``:
    ``carried ‖ T^channel(d)`` evaluated once per distinct (d, carried) pair."""
    def transmit(idx, w, m):
        if m.min() == m.max() and w.min() == w.max():
            v = ev.interp.transmit(SEND_TRANSMISSION, channel, float(m[0]), np.multiply(float(w[0]), conc), stage.span)
            return np.broadcast_to(np.asarray(v, dtype=float), (len(m),))
        pairs, back = np.unique(np.stack([m, w]), axis=1, return_inverse=True)
        v = ev.interp.transmit(SEND_TRANSMISSION, channel, pairs[0], np.multiply(pairs[1], conc), stage.span)
        return np.broadcast_to(v, (pairs.shape[1],))[back.ravel()]

    return transmit


def count_reduce(ev, stage, rows, conc) -> float:
    """The cost of a stage from its members ``rows`` (see the module docstring); ``ev`` is the
    :class:`tlop.backends.schedule.StageEvaluator` (its interpreter evaluates transmissions and
    its oracle reduces the groups whose sizes differ)."""
    phase, code, key, size, weight, channel, seq = rows
    chans = ev.program.channels
    nch = len(chans)
    gid, ng, gphase, gcode = _group_ids(phase, code, key, nch + 1)
    wsum = np.bincount(gid, weights=weight, minlength=ng)
    gsum = np.zeros(ng)
    is_comp = gcode == nch
    if is_comp.any():  # computations of one rank in one phase run one after another
        csum = np.bincount(gid, weights=np.where(channel < 0, size, 0.0), minlength=ng)
        gsum[is_comp] = csum[is_comp]
    is_send = ~is_comp
    send_members = channel >= 0
    s = size[send_members]
    if len(s) and s.min() == s.max():
        uniform = is_send
        gsize = np.full(ng, s[0])
    else:
        gmin = np.full(ng, np.inf)
        gmax = np.full(ng, -np.inf)
        np.minimum.at(gmin, gid[send_members], s)
        np.maximum.at(gmax, gid[send_members], s)
        uniform = is_send & (gmin == gmax)
        gsize = gmin
    # uniform groups: merged into one member each (size m, weight W), then the one rule, whose A2
    # gives W ‖ T^c(m) (0 when m = 0); one evaluation per distinct (channel, m, W)
    for c in np.unique(gcode[uniform]).tolist():
        sel = np.flatnonzero(uniform & (gcode == c))
        k = np.arange(len(sel))
        merged = NumericGroups(gsize[sel], wsum[sel], k, k, _distinct_transmit(ev, stage, chans[c], conc))
        gsum[sel] = reduce_groups(merged)
    # groups of unequal sizes: the oracle's reduction on their members only
    rest = is_send & ~uniform
    if rest.any():
        members = np.flatnonzero(rest[gid])
        sub = tuple(a[members] for a in rows)
        _, sums = ev.sorted_group_sums(stage, sub, conc)
        # the oracle's groups come in (phase, code, key) order, as the group numbers do
        gsum[np.flatnonzero(rest)] = sums
    return phase_sum(gphase, gsum)
