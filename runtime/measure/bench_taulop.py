"""τ-Lop kernels: ping-pong (eager and synchronous) and Ring_τ (000 §5.2).

What it does: returns timed kernels (``kernel(n) -> n per-iteration times``, see
:mod:`.engine`) for

* :func:`pingpong` — ranks 0 and 1 of a 2-rank group bounce ``m`` bytes; a sample is half the
  round trip measured at rank 0, i.e. one transmission T^c(m) with one transfer at a time
  (Ring_1).  With ``m = 0`` this is the eager overhead o^c (L(0, τ) = 0); with ``sync=True``
  (``MPI_Ssend``) and ``m = 0`` it is the rendezvous overhead (the handshake of a synchronous
  send);
* :func:`ring` — τ ranks each send ``m`` bytes to rank+1 and receive from rank−1
  (``MPI_Sendrecv``); a barrier precedes every iteration and the sample is the maximum over
  ranks (reduce_max), i.e. one transmission with τ concurrent transfers.

What it does not do: derive o or L (:mod:`.fit` does), repeat adaptively (:mod:`.engine`).
"""

from __future__ import annotations

import numpy as np

from tlop.runtime.measure.buffers import message

__all__ = ["pingpong", "ring"]

_TAG = 17


def pingpong(comm, m: int, wtime, sync: bool = False):
    """Half round trip of ``m`` bytes between group ranks 0 and 1 (reduce on rank 0 only)."""
    rank = comm.Get_rank()
    sbuf, rbuf = message(m, 1), message(m, 0)
    send = comm.Ssend if sync else comm.Send
    recv = comm.Recv
    peer = 1 - rank

    def kernel(n: int) -> np.ndarray:
        t = np.zeros(n)
        if rank == 0:
            for i in range(n):
                t0 = wtime()
                send(sbuf, peer, _TAG)
                recv(rbuf, peer, _TAG)
                t[i] = (wtime() - t0) * 0.5
        elif rank == 1:
            for i in range(n):
                recv(rbuf, peer, _TAG)
                send(sbuf, peer, _TAG)
        return t

    return kernel


def ring(comm, m: int, wtime):
    """One Ring_τ step on all τ = comm.size ranks (barrier, then max over ranks)."""
    rank, size = comm.Get_rank(), comm.Get_size()
    sbuf, rbuf = message(m, 1), message(m, 0)
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    sendrecv, barrier = comm.Sendrecv, comm.Barrier

    def kernel(n: int) -> np.ndarray:
        t = np.empty(n)
        for i in range(n):
            barrier()
            t0 = wtime()
            sendrecv(sbuf, nxt, _TAG, rbuf, prv, _TAG)
            t[i] = wtime() - t0
        return t

    return kernel
