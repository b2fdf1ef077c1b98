"""Max-rate kernel: the injection limit R_N from N concurrent pairs (Gropp, Olson, Samfass 2016;
paper 003).

What it does: :func:`stream` times N pairs streaming at once.  The group has 2N ranks; rank i
of the first half (one node group) sends ``count`` non-blocking messages of ``m`` bytes to rank
i + N (the other node group), which receives them all and acknowledges with 0 bytes.  A barrier
precedes every iteration and the sample is the maximum over ranks, so N·count·m / sample is the
aggregate rate of N pairs (computed by :mod:`.fit`).

What it does not do: fit R_N or R_b (:func:`tlop.runtime.measure.fit.max_rate`).
"""

from __future__ import annotations

import numpy as np

from tlop.runtime.measure.buffers import message

__all__ = ["stream"]

_TAG = 29


def stream(comm, m: int, count: int, wtime):
    from mpi4py import MPI

    rank, size = comm.Get_rank(), comm.Get_size()
    half = size // 2
    sender = rank < half
    peer = rank + half if sender else rank - half
    bufs = [message(m, 1 if sender else 0) for _ in range(count)]
    ack_s, ack_r = message(0), message(0)

    def kernel(n: int) -> np.ndarray:
        t = np.zeros(n)
        for i in range(n):
            comm.Barrier()
            t0 = wtime()
            if rank < 2 * half:
                if sender:
                    reqs = [comm.Isend(b, peer, _TAG) for b in bufs]
                    MPI.Request.Waitall(reqs)
                    comm.Recv(ack_r, peer, _TAG)
                else:
                    reqs = [comm.Irecv(b, peer, _TAG) for b in bufs]
                    MPI.Request.Waitall(reqs)
                    comm.Send(ack_s, peer, _TAG)
            t[i] = wtime() - t0
        return t

    return kernel
