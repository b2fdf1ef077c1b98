"""pLogP and LogGP kernels: the MPI LogP benchmark's os, or, g and netgauge's PRTT(n, d, s).

What it does: returns timed kernels (see :mod:`.engine`) between ranks 0 and 1 of a group.

* :func:`send_overhead` — os(m): the time rank 0 spends inside ``MPI_Send`` of m bytes; rank 1
  answers every message with 0 bytes, so each send starts on an idle channel (Kielmann et al.).
* :func:`recv_overhead` — or(m): rank 1 busy-waits ``delay`` seconds (longer than a round trip,
  so the message has arrived) and then times ``MPI_Recv``; the sample is rank 1's time
  (reduce_max with rank 0 contributing zeros); a 0-byte reply closes the iteration.  The
  caller picks ``delay`` from a typical round trip (the worker: twice the m-byte round trip of
  the ping-pong median): nothing here can check that the message had arrived, and a delay far
  longer than needed only gives the scheduler of a loaded machine time to deschedule a rank,
  after which the timed Recv includes waiting for the message (the assembler flags or(m)
  above the round trip).
* :func:`gap` — g(m): a burst of k back-to-back sends followed by a 0-byte acknowledgement,
  and a burst of 1 likewise, in the same iteration; the sample is (T_k − T_1)/(k − 1), the
  steady-state time per message with the end-to-end latency cancelled.
* :func:`prtt` — PRTT(n, d, s): rank 0 sends n messages of s bytes, busy-waiting d seconds
  after each but the last, and then receives one s-byte reply; the sample is the whole time
  (netgauge's LogGP method: PRTT(1,0,s) = 2·T(s); (PRTT(n,0,s) − PRTT(1,0,s))/(n−1) = g + (s−1)G;
  (PRTT(n,d,s) − PRTT(1,0,s))/(n−1) − d = o, for d above the gap).

What it does not do: derive L, g(m), G (:mod:`.fit` does).
"""

from __future__ import annotations

import numpy as np

from tlop.runtime.measure.buffers import message
from tlop.runtime.measure.engine import busy_wait

__all__ = ["send_overhead", "recv_overhead", "gap", "prtt"]

_TAG = 23


def send_overhead(comm, m: int, wtime):
    rank = comm.Get_rank()
    sbuf, rbuf = message(m, 1), message(m, 0)
    ack_s, ack_r = message(0), message(0)

    def kernel(n: int) -> np.ndarray:
        t = np.zeros(n)
        if rank == 0:
            for i in range(n):
                t0 = wtime()
                comm.Send(sbuf, 1, _TAG)
                t[i] = wtime() - t0
                comm.Recv(ack_r, 1, _TAG)
        elif rank == 1:
            for i in range(n):
                comm.Recv(rbuf, 0, _TAG)
                comm.Send(ack_s, 0, _TAG)
        return t

    return kernel


def recv_overhead(comm, m: int, wtime, delay: float):
    rank = comm.Get_rank()
    sbuf, rbuf = message(m, 1), message(m, 0)
    ack_s, ack_r = message(0), message(0)

    def kernel(n: int) -> np.ndarray:
        t = np.zeros(n)
        if rank == 0:
            for i in range(n):
                comm.Send(sbuf, 1, _TAG)
                comm.Recv(ack_r, 1, _TAG)
        elif rank == 1:
            for i in range(n):
                busy_wait(wtime, delay)
                t0 = wtime()
                comm.Recv(rbuf, 0, _TAG)
                t[i] = wtime() - t0
                comm.Send(ack_s, 0, _TAG)
        return t

    return kernel


def gap(comm, m: int, wtime, k: int):
    rank = comm.Get_rank()
    sbuf, rbuf = message(m, 1), message(m, 0)
    ack_s, ack_r = message(0), message(0)
    k = max(2, int(k))

    def burst(count: int) -> float:
        t0 = wtime()
        for _ in range(count):
            comm.Send(sbuf, 1, _TAG)
        comm.Recv(ack_r, 1, _TAG)
        return wtime() - t0

    def drain(count: int) -> None:
        for _ in range(count):
            comm.Recv(rbuf, 0, _TAG)
        comm.Send(ack_s, 0, _TAG)

    def kernel(n: int) -> np.ndarray:
        t = np.zeros(n)
        if rank == 0:
            for i in range(n):
                t1 = burst(1)
                tk = burst(k)
                t[i] = (tk - t1) / (k - 1)
        elif rank == 1:
            for i in range(n):
                drain(1)
                drain(k)
        return t

    return kernel


def prtt(comm, s: int, wtime, n_msgs: int, delay: float):
    rank = comm.Get_rank()
    sbuf, rbuf = message(s, 1), message(s, 0)

    def kernel(n: int) -> np.ndarray:
        t = np.zeros(n)
        if rank == 0:
            for i in range(n):
                t0 = wtime()
                for j in range(n_msgs):
                    comm.Send(sbuf, 1, _TAG)
                    if delay > 0 and j < n_msgs - 1:
                        busy_wait(wtime, delay)
                comm.Recv(rbuf, 1, _TAG)
                t[i] = wtime() - t0
        elif rank == 1:
            for i in range(n):
                for _ in range(n_msgs):
                    comm.Recv(rbuf, 0, _TAG)
                comm.Send(sbuf, 0, _TAG)
        return t

    return kernel
