"""Collective timings for validating predictions: the MPI library's collectives and the
project's own point-to-point versions of the stdlib algorithms, per (P, m).

What it does: :func:`collective` returns a timed kernel (barrier before each iteration, the
sample is the maximum over ranks) for one algorithm of :data:`tlop.runtime.measure.plan.COLLECTIVES`
on all P ranks of ``comm``, root 0.  Sizes: ``m`` is the whole message of a broadcast and the
block each process contributes or receives in scatter, allgather and all-to-all.  The p2p
algorithms:

* ``binomial_bcast`` — ⌈log2 P⌉ rounds; in round i ranks r < 2^i send to r + 2^i (000 eq. 4);
* ``flat_bcast`` — the root sends to every rank in turn; ``chain_bcast`` — rank r receives from
  r − 1 and forwards to r + 1; ``segmented_chain_bcast`` — the chain in segments of ``segment``
  bytes (pipelined);
* ``binomial_scatter`` — halving: the holder of a subtree sends the far half's blocks;
* ``rd_allgather`` — recursive doubling (P a power of two; otherwise the point is skipped);
* ``ring_allgather`` — P − 1 steps of sendrecv to r + 1 / from r − 1;
* ``pairwise_alltoall`` — P − 1 steps exchanging with r ± i.

The library's collectives run as ``impl = "mpi"`` (the library's own choice of algorithm) or
``impl = "mpi:<algorithm>"`` — the same call in a launch whose environment forces that
algorithm (:data:`tlop.runtime.measure.plan.FORCED`; e.g. MPICH
``MPIR_CVAR_BCAST_INTRA_ALGORITHM=binomial``).

What it does not do: set the forcing variables (they must be in the environment before
MPI_Init: the launcher does that, :mod:`.cli`), or check results beyond the run itself.
"""

from __future__ import annotations

import numpy as np

from tlop.runtime.measure.buffers import message

__all__ = ["collective", "supported"]

_TAG = 31


def supported(alg: str, P: int) -> bool:
    """Whether the p2p algorithm ``alg`` runs on P ranks."""
    if alg == "rd_allgather":
        return P >= 2 and P & (P - 1) == 0
    return P >= 2


def _timed(comm, wtime, body):
    def kernel(n: int) -> np.ndarray:
        t = np.empty(n)
        for i in range(n):
            comm.Barrier()
            t0 = wtime()
            body()
            t[i] = wtime() - t0
        return t
    return kernel


def collective(comm, alg: str, impl: str, m: int, wtime, segment: int = 8192):
    from mpi4py import MPI

    rank, P = comm.Get_rank(), comm.Get_size()
    B = MPI.BYTE
    whole = np.ones(max(m * P, 1), dtype=np.uint8)
    other = np.zeros(max(m * P, 1), dtype=np.uint8)
    blk = message(m, 1)
    rblk = message(m, 0)
    buf = message(m, 1 if rank == 0 else 0)

    if impl == "mpi" or impl.startswith("mpi:"):
        bodies = {
            "bcast": lambda: comm.Bcast(buf, root=0),
            "scatter": lambda: comm.Scatter([whole, m, B], rblk, root=0),
            "allgather": lambda: comm.Allgather(blk, [other, m, B]),
            "alltoall": lambda: comm.Alltoall([whole, m, B], [other, m, B]),
        }
        return _timed(comm, wtime, bodies[alg])

    def binomial_bcast():
        step = 1
        while step < P:
            if rank < step and rank + step < P:
                comm.Send(buf, rank + step, _TAG)
            elif step <= rank < 2 * step:
                comm.Recv(buf, rank - step, _TAG)
            step *= 2

    def flat_bcast():
        if rank == 0:
            for r in range(1, P):
                comm.Send(buf, r, _TAG)
        else:
            comm.Recv(buf, 0, _TAG)

    def chain_bcast():
        if rank > 0:
            comm.Recv(buf, rank - 1, _TAG)
        if rank < P - 1:
            comm.Send(buf, rank + 1, _TAG)

    seg = max(1, min(segment, m)) if m > 0 else 1
    offsets = list(range(0, max(m, 1), seg)) if m > 0 else [0]
    arr = buf[0]

    def segmented_chain_bcast():
        for off in offsets:
            count = min(seg, m - off) if m > 0 else 0
            view = [arr[off:off + max(count, 1)], count, B]
            if rank > 0:
                comm.Recv(view, rank - 1, _TAG)
            if rank < P - 1:
                comm.Send(view, rank + 1, _TAG)

    def binomial_scatter():
        # the blocks of ranks [lo, hi) sit in `whole`/`other` at rank lo's holder; halve each round
        lo, hi = 0, P
        data = whole if rank == 0 else other
        while hi - lo > 1:
            mid = lo + (hi - lo + 1) // 2
            if rank == lo:
                comm.Send([data[(mid - lo) * m:(hi - lo) * m or 1], (hi - mid) * m, B], mid, _TAG)
            elif rank == mid:
                comm.Recv([data[0:(hi - mid) * m or 1], (hi - mid) * m, B], lo, _TAG)
            if rank < mid:
                hi = mid
            else:
                lo = mid

    def rd_allgather():
        other[rank * m:(rank + 1) * m] = 1
        dist = 1
        while dist < P:
            partner = rank ^ dist
            mine = (rank // dist) * dist
            theirs = (partner // dist) * dist
            comm.Sendrecv([other[mine * m:(mine + dist) * m or 1], dist * m, B], partner, _TAG,
                          [other[theirs * m:(theirs + dist) * m or 1], dist * m, B], partner, _TAG)
            dist *= 2

    def ring_allgather():
        nxt, prv = (rank + 1) % P, (rank - 1) % P
        for i in range(P - 1):
            sb = (rank - i) % P
            rb = (rank - i - 1) % P
            comm.Sendrecv([other[sb * m:(sb + 1) * m or 1], m, B], nxt, _TAG,
                          [other[rb * m:(rb + 1) * m or 1], m, B], prv, _TAG)

    def pairwise_alltoall():
        for i in range(1, P):
            dst, src = (rank + i) % P, (rank - i) % P
            comm.Sendrecv([whole[dst * m:(dst + 1) * m or 1], m, B], dst, _TAG,
                          [other[src * m:(src + 1) * m or 1], m, B], src, _TAG)

    bodies = {
        "binomial_bcast": binomial_bcast, "flat_bcast": flat_bcast, "chain_bcast": chain_bcast,
        "segmented_chain_bcast": segmented_chain_bcast, "binomial_scatter": binomial_scatter,
        "rd_allgather": rd_allgather, "ring_allgather": ring_allgather,
        "pairwise_alltoall": pairwise_alltoall,
    }
    return _timed(comm, wtime, bodies[alg])
