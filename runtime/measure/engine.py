"""The adaptive repetition loop over an MPI communicator, and the per-point watchdog.

What it does: :func:`adaptive` runs a timed kernel in batches on every rank of a group
communicator.  A kernel is ``kernel(n) -> array of n per-iteration times`` measured on the
calling rank; warm-up iterations are run first and discarded.  After each batch the samples
are brought to the group's rank 0 — either its own times (a ping-pong timed at the initiator)
or, for collective-like kernels, the maximum over ranks of each iteration
(``MPI_Reduce(MAX)``) — which applies :func:`tlop.runtime.measure.stats.stop_reason` and
broadcasts the decision and the next batch size, so every rank runs exactly the same number of
iterations.  :class:`Watchdog` ends a rank that spends longer than a timeout on one point, with
a message naming the benchmark and the point, so a hung rank never hangs the run.


:func:`adaptive_pair` times two kernels over the same moments: it alternates short batches of
each (at most :data:`PAIR_BATCH` iterations), so a change of the machine's load during the point
reaches both sample sets alike, and stops when the rule stops both (each judged on its own
samples; both sets have the same size).  ``tlop validate --library`` uses it for a schedule and
the library's collective running the same algorithm.

What it does not do: choose the kernels (the ``bench_*`` modules) or store results.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np

from tlop.runtime.measure.stats import Rule, stop_reason

__all__ = ["adaptive", "adaptive_pair", "Watchdog", "busy_wait", "PAIR_BATCH"]

#: the longest batch of one kernel before the other's turn in :func:`adaptive_pair`
PAIR_BATCH = 16


def busy_wait(wtime, seconds: float) -> None:
    """Spin for ``seconds`` on the MPI clock (a sleep would yield the core and add jitter)."""
    end = wtime() + seconds
    while wtime() < end:
        pass


def adaptive(comm, kernel, rule: Rule, reduce_max: bool, wtime) -> tuple[np.ndarray, str]:
    """Run ``kernel`` adaptively on group ``comm``; returns (samples, stop reason) on the
    group's rank 0 and (empty array, reason) elsewhere."""
    from mpi4py import MPI

    rank = comm.Get_rank()
    if rule.warmup:
        kernel(rule.warmup)
    samples: list = []
    batch = max(1, min(rule.min_n, 10))
    start = wtime()
    while True:
        local = np.ascontiguousarray(kernel(batch), dtype=np.float64)
        if reduce_max and comm.Get_size() > 1:
            out = np.empty_like(local) if rank == 0 else None
            comm.Reduce(local, out, op=MPI.MAX, root=0)
        else:
            out = local
        if rank == 0:
            samples.extend(out.tolist())
            reason = stop_reason(samples, rule, wtime() - start)
            n = len(samples)
            nxt = 0 if reason else max(1, min(max(batch, n // 2), rule.max_n - n))
            decision = (reason, nxt)
        else:
            decision = None
        reason, batch = comm.bcast(decision, root=0)
        if reason:
            return (np.asarray(samples), reason) if rank == 0 else (np.empty(0), reason)


def _gathered(comm, kernel, batch: int, reduce_max: bool):
    """One batch of ``kernel`` on every rank: the per-iteration maxima over ranks on rank 0."""
    from mpi4py import MPI

    local = np.ascontiguousarray(kernel(batch), dtype=np.float64)
    if reduce_max and comm.Get_size() > 1:
        out = np.empty_like(local) if comm.Get_rank() == 0 else None
        comm.Reduce(local, out, op=MPI.MAX, root=0)
        return out
    return local


def adaptive_pair(comm, kernel_a, kernel_b, rule: Rule, reduce_max: bool, wtime) -> tuple:
    """Run two kernels in alternating batches until ``rule`` stops both; returns
    ``((samples_a, reason_a), (samples_b, reason_b))`` on the group's rank 0 (empty arrays
    elsewhere).  The time cap is the pair's: each kernel gets about half of it."""
    rank = comm.Get_rank()
    if rule.warmup:
        kernel_a(rule.warmup)
        kernel_b(rule.warmup)
    got: tuple = ([], [])
    batch = max(1, min(rule.min_n, 10, PAIR_BATCH))
    start = wtime()
    while True:
        outs = [_gathered(comm, k, batch, reduce_max) for k in (kernel_a, kernel_b)]
        if rank == 0:
            for g, out in zip(got, outs):
                g.extend(out.tolist())
            reasons = [stop_reason(g, rule, wtime() - start) for g in got]
            n = len(got[0])
            done = all(reasons)
            nxt = 0 if done else max(1, min(max(batch, n // 2), PAIR_BATCH, rule.max_n - n))
            decision = (reasons if done else None, nxt)
        else:
            decision = None
        reasons, batch = comm.bcast(decision, root=0)
        if reasons:
            if rank == 0:
                return tuple((np.asarray(g), r) for g, r in zip(got, reasons))
            return tuple((np.empty(0), r) for r in reasons)


class Watchdog:
    """Ends this process (exit status 3) if a point runs longer than ``timeout`` seconds.

    ``arm(label)`` starts the clock for a point, ``disarm()`` stops it.  On expiry the message
    names the point and the rank; ``os._exit`` is used because the main thread is stuck inside
    MPI, and the launcher (mpiexec, srun) then takes the other ranks down."""

    def __init__(self, timeout: float, rank: int):
        self.timeout = timeout
        self.rank = rank
        self._timer = None

    def arm(self, label: str) -> None:
        self.disarm()
        if self.timeout and self.timeout > 0:
            self._timer = threading.Timer(self.timeout, self._expire, args=(label,))
            self._timer.daemon = True
            self._timer.start()

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self, label: str) -> None:
        sys.stderr.write(f"tlop measure: rank {self.rank}: {label} did not finish within "
                         f"{self.timeout:g} s; giving up (a rank hung or died)\n")
        sys.stderr.flush()
        time.sleep(0.2)
        os._exit(3)
