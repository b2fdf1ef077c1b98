"""The inter-cluster broadcast schedulers of paper 001 §5, one problem at a time.

What it does: :func:`schedule` runs one heuristic on a :class:`~.problem.Problem` and returns its
schedule, the list of (sender cluster, receiver cluster) in the order the heuristic chose them.
Set A holds the clusters that have the message (at first the root's), B the others; each round
moves one cluster from B to A.  The ready time RT_i of a cluster in A is when its coordinator can
start its next send: the arrival of its message, then g_ij(m) after each send it starts.  With
G_ij = g_ij(m) + L_ij:

==========  =====================================================================================
Flat tree   the root sends to the clusters of B in their order (5.1)
FEF         the pair (i ∈ A, j ∈ B) with the smallest edge weight, the latency L_ij (5.2)
ECEF        the pair minimising RT_i + G_ij, the earliest completion (5.3)
ECEF-LA     … + F_j, F_j = min_{k ∈ B, k ≠ j} G_jk (5.4)
ECEF-LAt    … + F_j, F_j = min_{k ∈ B, k ≠ j} (G_jk + T_k) (5.5)
ECEF-LAT    … + F_j, F_j = max_{k ∈ B, k ≠ j} (G_jk + T_k) (5.6)
BottomUp    the receiver j maximising min_{i ∈ A} (G_ij + T_j), then its sender i minimising
            RT_i + G_ij: the slowest cluster, reached as early as possible (5.7)
==========  =====================================================================================

F_j is 0 when j is the last cluster of B.  Ties go to the smallest (i, j) in lexicographic order.
Our readings: 001 names FEF's edge weight "usually the communication latency", which is what
is used; 001's BottomUp formula chooses the receiver, and its sender is the one that reaches it
first (RT included), as the text says.

What it does not do: price the schedule (:mod:`.pricing`, which adds the intra-cluster times),
or run many problems at once (:mod:`.simulate` does, vectorised, and is tested against this).
"""

from __future__ import annotations

import math

__all__ = ["HEURISTICS", "schedule"]

#: the heuristics, in 001's order
HEURISTICS = ("Flat tree", "FEF", "ECEF", "ECEF-LA", "ECEF-LAt", "ECEF-LAT", "BottomUp")


def _lookahead(kind, p, j, B):
    others = [k for k in B if k != j]
    if not others or kind is None:
        return 0.0
    if kind == "LA":
        return min(p.g[j, k] + p.L[j, k] for k in others)
    vals = [p.g[j, k] + p.L[j, k] + p.T[k] for k in others]
    return min(vals) if kind == "LAt" else max(vals)


def schedule(problem, heuristic: str) -> list:
    """The (sender, receiver) pairs ``heuristic`` (one of :data:`HEURISTICS`) chooses, in order."""
    if heuristic not in HEURISTICS:
        raise ValueError(f"unknown heuristic '{heuristic}'; expected one of {', '.join(HEURISTICS)}")
    p = problem
    C = p.clusters
    A = [p.root]
    B = [j for j in range(C) if j != p.root]
    RT = [0.0] * C
    out = []
    look = {"ECEF-LA": "LA", "ECEF-LAt": "LAt", "ECEF-LAT": "LAT"}.get(heuristic)
    while B:
        if heuristic == "Flat tree":
            i, j = p.root, B[0]
        elif heuristic == "FEF":
            i, j = min(((i, j) for i in sorted(A) for j in B), key=lambda ij: p.L[ij])
        elif heuristic == "BottomUp":
            j = max(B, key=lambda j: (min(p.g[i, j] + p.L[i, j] for i in A) + p.T[j], -j))
            i = min(sorted(A), key=lambda i: RT[i] + p.g[i, j] + p.L[i, j])
        else:
            F = {j: _lookahead(look, p, j, B) for j in B}
            best, i, j = math.inf, None, None
            for a in sorted(A):
                for b in B:
                    c = RT[a] + p.g[a, b] + p.L[a, b] + F[b]
                    if c < best:
                        best, i, j = c, a, b
        start = RT[i]
        RT[i] = start + p.g[i, j]
        RT[j] = start + p.g[i, j] + p.L[i, j]
        A.append(j)
        B.remove(j)
        out.append((i, j))
    return out
