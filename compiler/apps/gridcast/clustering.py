"""Lowekamp's greedy network clustering (001 §4.1.2, Algorithm 1) and 001 Table 4.

What it does: :func:`lowekamp` partitions the nodes of a symmetric latency matrix into subnets
exactly as Algorithm 1 does, with the tolerance ρ as a parameter (the paper prints 1.20, i.e.
ρ = 20 %; its GRID5000 run used 30 %): edges are visited by nondecreasing weight; an edge (a, b)
merges the subnets of a and b unless a and b are already together, or its weight exceeds
(1 + ρ) times the smallest edge incident on a or on b, or (1 + ρ) times the smallest edge of a's
or b's subnet; the merged subnet's smallest edge is the minimum of the three.  A node no edge
merged is a subnet of its own.  :data:`TABLE4` is 001 Table 4 (latencies in µs between and
inside six GRID5000 clusters of 88 machines) and :func:`table4_latency_matrix` expands it into the
88 × 88 machine matrix it summarises, the example input whose clustering gives back the six
clusters.

What it does not do: measure latencies, or use bandwidth (001 clusters by latency only).
"""

from __future__ import annotations

import numpy as np

__all__ = ["lowekamp", "TABLE4", "table4_latency_matrix"]

#: 001 Table 4: (name, machines) per cluster and the latency matrix in µs (None: a one-machine
#: cluster has no intra-cluster latency)
TABLE4 = {
    "clusters": [("Orsay", 31), ("Orsay", 29), ("IDPOT", 6), ("IDPOT", 1), ("IDPOT", 1), ("Toulouse", 20)],
    "latency_us": [
        [47.56, 62.10, 12181.52, 12187.24, 12197.49, 5210.99],
        [62.10, 47.92, 12181.52, 12198.03, 12195.22, 5211.47],
        [12181.52, 12181.52, 35.52, 60.08, 60.08, 5388.49],
        [12187.24, 12198.03, 60.08, None, 242.47, 5393.98],
        [12197.49, 12195.22, 60.08, 242.47, None, 5394.10],
        [5210.99, 5211.47, 5388.49, 5393.98, 5394.10, 27.53],
    ],
}


def table4_latency_matrix() -> tuple:
    """``(matrix, cluster_of)``: the 88 × 88 machine latency matrix (µs, 0 on the diagonal) in
    which two machines have their clusters' Table 4 latency, and each machine's cluster index."""
    sizes = [n for _, n in TABLE4["clusters"]]
    cluster_of = np.repeat(np.arange(len(sizes)), sizes)
    lat = np.array([[np.nan if v is None else v for v in row] for row in TABLE4["latency_us"]])
    w = lat[cluster_of][:, cluster_of]
    np.fill_diagonal(w, 0.0)
    return w, cluster_of


def lowekamp(w, rho: float = 0.2) -> list:
    """The subnets of Algorithm 1 for the symmetric latency matrix ``w`` (diagonal ignored;
    NaN or infinite entries are missing edges): a list of sorted node lists, ordered by their
    smallest node."""
    w = np.asarray(w, dtype=float)
    n = w.shape[0]
    if w.shape != (n, n):
        raise ValueError(f"the latency matrix must be square, got shape {w.shape}")
    if rho < 0:
        raise ValueError(f"rho must be >= 0, got {rho}")
    factor = 1.0 + rho
    iu = np.triu_indices(n, 1)
    weights = w[iu]
    ok = np.isfinite(weights)
    a_idx, b_idx, weights = iu[0][ok], iu[1][ok], weights[ok]
    node_min = np.full(n, np.inf)
    np.minimum.at(node_min, a_idx, weights)
    np.minimum.at(node_min, b_idx, weights)
    subnet = list(range(n))          # node -> representative (no subnet yet: itself, alone)
    members = {i: [i] for i in range(n)}
    in_subnet = [False] * n
    subnet_min = {}
    for k in np.argsort(weights, kind="stable"):
        a, b, e = int(a_idx[k]), int(b_idx[k]), float(weights[k])
        ra, rb = subnet[a], subnet[b]
        if ra == rb:
            continue
        if e > factor * node_min[a] or e > factor * node_min[b]:
            continue
        if in_subnet[a] and e > factor * subnet_min[ra]:
            continue
        if in_subnet[b] and e > factor * subnet_min[rb]:
            continue
        new_min = min(e, subnet_min.get(ra, np.inf), subnet_min.get(rb, np.inf))
        for x in members[rb]:
            subnet[x] = ra
        members[ra] += members.pop(rb)
        subnet_min.pop(rb, None)
        subnet_min[ra] = new_min
        for x in members[ra]:
            in_subnet[x] = True
    return sorted((sorted(m) for m in members.values()), key=lambda m: m[0])
