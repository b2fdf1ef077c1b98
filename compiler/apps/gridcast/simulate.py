"""The Monte-Carlo study of paper 001 §6: random grids, every heuristic, mean completion time.

What it does: :func:`random_problems` draws R problems of C clusters with 001 Table 3's ranges —
L ∈ [1, 15] ms, g ∈ [100, 600] ms, T ∈ [20, 3000] ms, uniform; one L and one g per pair of
clusters (a link is the same both ways), one T per cluster, root cluster 0.  :func:`makespans`
runs one heuristic on all R problems at once (numpy over the runs; C − 1 rounds) and returns each
run's completion time; it makes the same choices as :func:`.heuristics.schedule` and prices as
:func:`.pricing.price` (a test checks both on random problems).  :func:`simulate` averages every
heuristic over the runs for each cluster count, calling ``progress`` as it goes.

How it stays fast: the column minima ``min_{i∈A}(RT_i + G_ij)`` are kept up to date instead of
recomputed — a new member of A can only lower them, and only the columns whose minimum was the
round's sender (whose RT grew) are recomputed; the lookahead F_j walks each row of G (+ T)
sorted once, skipping clusters that have left B.  A run costs O(C²) on average.

What it does not do: break exact ties as the scalar version does (it takes the smallest j, then
the i of the column's minimum; with continuous random parameters ties have probability 0).
"""

from __future__ import annotations

import numpy as np

from tlop.apps.gridcast.heuristics import HEURISTICS

__all__ = ["TABLE3", "random_problems", "makespans", "simulate", "CHUNK_RUNS", "MAX_CLUSTERS"]

#: runs simulated at a time (fewer for many clusters: see :data:`CHUNK_ELEMENTS`)
CHUNK_RUNS = 500
#: at most this many matrix entries (runs × C × C) per array of a chunk, ~20 MB: a chunk of
#: 500 runs up to 70 clusters, one run of 1000 clusters
CHUNK_ELEMENTS = 2_500_000
#: the most clusters :func:`simulate` takes (a run holds several C × C matrices)
MAX_CLUSTERS = 1000

#: 001 Table 3, seconds: parameter -> (minimum, maximum)
TABLE3 = {"L": (1e-3, 15e-3), "g": (100e-3, 600e-3), "T": (20e-3, 3000e-3)}


def _symmetric(rng, R, C, lo, hi):
    a = rng.uniform(lo, hi, size=(R, C, C))
    a = np.triu(a, 1)
    return a + a.transpose(0, 2, 1)


def random_problems(rng, runs: int, clusters: int, ranges: dict = TABLE3) -> tuple:
    """``(g, L, T)`` of shapes (R, C, C), (R, C, C), (R, C) drawn from ``ranges``."""
    g = _symmetric(rng, runs, clusters, *ranges["g"])
    L = _symmetric(rng, runs, clusters, *ranges["L"])
    T = rng.uniform(*ranges["T"], size=(runs, clusters))
    return g, L, T


class _ColumnMin:
    """min over i ∈ A of (base_i + W_ij) per run and column j, with its argmin, kept current."""

    def __init__(self, W, base, inA):
        self.W, self.R = W, np.arange(W.shape[0])
        self.WT = np.ascontiguousarray(W.transpose(0, 2, 1))  # columns as contiguous rows
        self.val = base[:, 0, None] + W[:, 0, :]
        self.arg = np.zeros(self.val.shape, dtype=np.int64)
        self.base = base
        self.inA = inA

    def add_row(self, j):
        cand = self.base[self.R, j][:, None] + self.W[self.R, j, :]
        better = cand < self.val
        self.val = np.where(better, cand, self.val)
        self.arg = np.where(better, j[:, None], self.arg)

    def raised(self, i, inB):
        rr, jj = np.nonzero((self.arg == i[:, None]) & inB)
        if len(rr) == 0:
            return
        vals = self.base[rr, :] + self.WT[rr, jj, :]
        vals = np.where(self.inA[rr, :], vals, np.inf)
        k = np.argmin(vals, axis=1)
        self.val[rr, jj] = vals[np.arange(len(rr)), k]
        self.arg[rr, jj] = k


class _Lookahead:
    """F_j = min (or max) over k ∈ B, k ≠ j of W_jk, 0 when there is no such k: a pointer per
    (run, j) into row j of W sorted once; when a cluster leaves B only the pointers resting on
    it move on."""

    def __init__(self, W, largest: bool, inB):
        R, C, _ = W.shape
        self.C = C
        self.order = np.argsort(-W if largest else W, axis=2, kind="stable").reshape(-1)
        self.Wflat = W.reshape(-1)
        self.ptr = np.zeros(R * C, dtype=np.int64)      # per (run, j), flattened
        self.k = np.zeros(R * C, dtype=np.int64)        # the cluster the pointer rests on
        self.w = np.zeros(R * C)                        # F_j (0 past the end)
        self.inB = inB.reshape(-1)                      # a view: follows the caller's updates
        self._advance(np.arange(R * C))

    def _advance(self, rj):
        """Move the pointers of the (run, j) entries ``rj`` to the next k in B other than j."""
        C = self.C
        run_base = (rj // C) * C
        jj = rj % C
        while len(rj):
            p = self.ptr[rj]
            live = p < C
            k = self.order[rj * C + np.minimum(p, C - 1)]
            bad = live & (~self.inB[run_base + k] | (k == jj))
            done = ~bad
            d = rj[done]
            self.k[d] = k[done]
            self.w[d] = np.where(live[done], self.Wflat[d * C + k[done]], 0.0)
            rj, run_base, jj = rj[bad], run_base[bad], jj[bad]
            self.ptr[rj] += 1

    def left_B(self, j):
        """Cluster j (one per run) has just left B."""
        C = self.C
        R = len(j)
        hit = (self.k.reshape(R, C) == j[:, None]) & (self.ptr.reshape(R, C) < C)
        self._advance(np.flatnonzero(hit))

    def values(self):
        return self.w.reshape(-1, self.C)


def makespans(heuristic: str, g, L, T) -> np.ndarray:
    """Each run's completion time under ``heuristic`` (root cluster 0)."""
    if heuristic not in HEURISTICS:
        raise ValueError(f"unknown heuristic '{heuristic}'; expected one of {', '.join(HEURISTICS)}")
    R, C = T.shape
    runs = np.arange(R)
    inA = np.zeros((R, C), dtype=bool)
    inA[:, 0] = True
    inB = ~inA
    RT = np.zeros((R, C))
    G = g + L
    zero = np.zeros((R, C))
    cols = look = None
    if heuristic == "FEF":
        cols = _ColumnMin(L, zero, inA)
    elif heuristic == "BottomUp":
        cols = _ColumnMin(G, zero, inA)
    elif heuristic != "Flat tree":
        cols = _ColumnMin(G, RT, inA)
        if heuristic == "ECEF-LA":
            look = _Lookahead(G, False, inB)
        elif heuristic in ("ECEF-LAt", "ECEF-LAT"):
            look = _Lookahead(G + T[:, None, :], heuristic == "ECEF-LAT", inB)
    for _ in range(C - 1):
        if heuristic == "Flat tree":
            i = np.zeros(R, dtype=np.int64)
            j = np.argmax(inB, axis=1)
        elif heuristic == "BottomUp":
            j = np.argmax(np.where(inB, cols.val + T, -np.inf), axis=1)
            i = np.argmin(np.where(inA, RT + G[runs, :, j], np.inf), axis=1)
        else:
            score = cols.val + (look.values() if look is not None else 0.0)
            j = np.argmin(np.where(inB, score, np.inf), axis=1)
            i = cols.arg[runs, j]
        start = RT[runs, i]
        RT[runs, i] = start + g[runs, i, j]
        RT[runs, j] = start + g[runs, i, j] + L[runs, i, j]
        inA[runs, j] = True
        inB[runs, j] = False
        if look is not None:
            look.left_B(j)
        if cols is not None:
            cols.add_row(j)
            if cols.base is RT:
                cols.raised(i, inB)
    return (RT + T).max(axis=1)


def simulate(cluster_counts, runs: int = 10_000, seed: int = 0, heuristics=HEURISTICS,
             progress=None, chunk: int = CHUNK_RUNS) -> dict:
    """``{heuristic: [mean completion time per cluster count]}``; every heuristic sees the same
    random problems for a given count.  Runs are drawn and simulated ``chunk`` at a time (the
    arrays of a chunk stay in cache); ``progress(runs_done)`` is called after each chunk of each
    heuristic, ``runs_done`` counting up to ``len(cluster_counts) * runs * len(heuristics)``."""
    if max(cluster_counts, default=2) > MAX_CLUSTERS:
        raise ValueError(f"at most {MAX_CLUSTERS} clusters, got {max(cluster_counts)}")
    rng = np.random.default_rng(seed)
    out = {h: [] for h in heuristics}
    done = 0
    for C in cluster_counts:
        sums = dict.fromkeys(heuristics, 0.0)
        left = runs
        while left > 0:
            n = min(chunk, left, max(1, CHUNK_ELEMENTS // (int(C) * int(C))))
            g, L, T = random_problems(rng, n, int(C))
            for h in heuristics:
                sums[h] += float(makespans(h, g, L, T).sum())
                done += n
                if progress is not None:
                    progress(done)
            left -= n
        for h in heuristics:
            out[h].append(sums[h] / runs)
    return out
