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

What it does not do: choose the kernels (the ``bench_*`` modules) or store results.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np

from tlop.runtime.measure.stats import Rule, stop_reason

__all__ = ["adaptive", "Watchdog", "busy_wait"]


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
