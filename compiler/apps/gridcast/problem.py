"""An inter-cluster broadcast problem of paper 001 (§4.5), and the intra-cluster times T_j.

What it does: :class:`Problem` holds, for C clusters, the gap ``g[i][j]`` of the broadcast
message between the coordinators of clusters i and j (g_ij(m), seconds), the latency
``L[i][j]``, each cluster's intra-cluster broadcast time ``T[j]`` and the root cluster, checked
(square, finite, non-negative).  :func:`intra_cluster_times` computes T_j as 001 does — the
cheapest broadcast strategy of each cluster — from the stdlib pLogP broadcasts
(``plogp/bcast``: every closed-form row of 001/004 Table 1; segmented ones with the segment-size
search of 004 §3, s = m/2^i) priced on a pLogP profile at the cluster's size.
:func:`measured_problem` builds the whole problem the way 001 §4.1.3 acquires it: one pLogP
profile measured inside each subnet (for T_j) and one measured between the coordinators of each
pair of subnets, whose g(m) at the broadcast's size and L are g_ij(m) and L_ij — a gap and a
latency of the pair's own, evaluated at m (a pair measured one way serves both ways, as 001 says
symmetric links halve the C·(C − 1) measurements).

What it does not do: schedule (:mod:`.heuristics`), price a schedule (:mod:`.pricing`), or read a
grid description file (``tlop grid-bcast schedule --grid``, :mod:`tlop.cli.gridbcast`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["Problem", "intra_cluster_times", "link_parameters", "measured_problem"]


@dataclass(frozen=True, eq=False)
class Problem:
    """C clusters: ``g`` and ``L`` (C × C, seconds), ``T`` (C,), the root cluster, names."""
    g: np.ndarray
    L: np.ndarray
    T: np.ndarray
    root: int = 0
    names: tuple = ()

    def __post_init__(self):
        g, L, T = (np.asarray(x, dtype=float) for x in (self.g, self.L, self.T))
        C = len(T)
        if g.shape != (C, C) or L.shape != (C, C):
            raise ValueError(f"g and L must be {C} x {C} (one row and column per cluster); got {g.shape}, {L.shape}")
        off = ~np.eye(C, dtype=bool)
        for name, a in (("g", g[off]), ("L", L[off]), ("T", T)):
            if not np.all(np.isfinite(a)) or np.any(a < 0):
                raise ValueError(f"{name} must be finite and >= 0")
        if not 0 <= self.root < C:
            raise ValueError(f"root {self.root} is not a cluster (0 .. {C - 1})")
        object.__setattr__(self, "g", g)
        object.__setattr__(self, "L", L)
        object.__setattr__(self, "T", T)
        if not self.names:
            object.__setattr__(self, "names", tuple(f"cluster {i}" for i in range(C)))

    @property
    def clusters(self) -> int:
        return len(self.T)


def _segment_sizes(m: float) -> list:
    """004 §3: s = m/2^i for i = 0 .. log2 m (at least 1 byte)."""
    out, s = [], float(m)
    while s >= 1:
        out.append(s)
        s /= 2
    return out or [1.0]


def intra_cluster_times(sizes, m: float, profile) -> tuple:
    """``(T, chosen)``: for each cluster size P_j, the cheapest stdlib pLogP broadcast of m bytes
    on ``profile`` and its cost (0 and ``"-"`` for a one-machine cluster)."""
    from tlop.api import load

    mod = load("plogp/bcast")
    algs = [mod[a] for a in mod.own_algorithms if mod[a].ir.over is None]
    times, chosen = [], []
    for P in sizes:
        if int(P) < 2:
            times.append(0.0)
            chosen.append("-")
            continue
        best = (np.inf, "-")
        for h in algs:
            names = {p.name for p in h.params}
            if "seg" in names:
                for seg in _segment_sizes(m):
                    best = min(best, (float(h.evaluate(profile, P=int(P), m=m, seg=seg)), f"{h.name}(seg={seg:g})"))
            else:
                best = min(best, (float(h.evaluate(profile, P=int(P), m=m)), h.name))
        times.append(best[0])
        chosen.append(best[1])
    return np.array(times), chosen


_LINK_SOURCE = ('model plogp\nimport "plogp/platform.tlop"\n'
                "algorithm gap(m: bytes) = g(m)\nalgorithm latency() = L\n")


@lru_cache(maxsize=1)
def _link_module():
    from tlop.api import loads

    return loads(_LINK_SOURCE, "gridcast-link.tlop")


def link_parameters(profile, m: float) -> tuple:
    """``(g(m), L)`` of one pLogP profile: the gap of an m-byte message (the profile's table,
    interpolated as profiles are) and the latency."""
    mod = _link_module()
    return float(mod["gap"].evaluate(profile, m=m)), float(mod["latency"].evaluate(profile))


def measured_problem(m: float, sizes, intra, links: dict, root: int = 0, names=()) -> tuple:
    """``(problem, chosen)`` for an m-byte broadcast over C subnets of ``sizes`` machines:
    ``intra[j]`` is the pLogP profile measured inside subnet j (T_j, the cheapest stdlib
    broadcast, and ``chosen[j]`` its name); ``links[(i, j)]`` the profile measured between the
    coordinators of subnets i and j (g_ij(m) and L_ij), ``links[(j, i)]`` defaulting to it.  A
    pair with no profile either way is an error naming it."""
    C = len(sizes)
    if len(intra) != C:
        raise ValueError(f"one intra-subnet profile per subnet: {C} subnets, {len(intra)} profiles")
    g = np.zeros((C, C))
    L = np.zeros((C, C))
    memo: dict = {}
    for i in range(C):
        for j in range(C):
            if i == j:
                continue
            prof = links.get((i, j), links.get((j, i)))
            if prof is None:
                who = f"'{names[i]}' and '{names[j]}'" if names else f"{i} and {j}"
                raise ValueError(f"no pLogP profile for the link between subnets {who}")
            if id(prof) not in memo:
                memo[id(prof)] = link_parameters(prof, m)
            g[i, j], L[i, j] = memo[id(prof)]
    T = np.zeros(C)
    chosen = []
    for j in range(C):
        t, c = intra_cluster_times([sizes[j]], m, intra[j])
        T[j] = t[0]
        chosen.append(c[0])
    return Problem(g, L, T, root, tuple(names)), chosen
