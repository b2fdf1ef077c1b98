"""Barrier-free timing of a collective: ReproMPI's window-based start over synchronised clocks.

What it does: :func:`clock_offsets` estimates, on every rank, the offset of its ``MPI_Wtime`` from
rank 0's (rank 0 ping-pongs with each rank in turn and keeps the exchange with the smallest
round trip, Cristian's method, as SKaMPI and ReproMPI do); on one host the offsets are ≈ 0, on a
cluster they are the nodes' clock differences.  :func:`windowed` then times a kernel without a
barrier in front of each repetition: rank 0 sets a start time in the future, every rank waits
(spinning on its own clock, shifted by its offset, and polling MPI's progress engine) for the start of window *i* = start + *i*·w,
runs one call, and notes when it ended.  A sample is the latest end over the ranks minus the
window's start, both on rank 0's clock.  A window that a rank started late (more than
:data:`LATE_SLACK` after its start: it was still busy with the previous call, or was descheduled
while it waited) is invalid and dropped — counted, never used — and
a cell whose windows are hardly ever valid stops after 20 × ``max_n`` windows or 4 × the time cap
(reason ``invalid``: with more ranks than cores they cannot start together, and the caller
should use another method there); when more than a quarter of a batch is invalid and the batch's median call takes more than half
a window, the window doubles (late starts of ranks descheduled while they waited, a loaded
machine, do not grow it).  Repetitions go on in
batches until :func:`.stats.stop_reason` stops them (the median's CI, a sample cap, a time cap),
exactly as :func:`.engine.adaptive` does; every rank runs the same number of windows.

Why: a barrier before each repetition releases the ranks at different moments (the last to
leave the barrier starts late), which favours one direction of a message (issue 22 item 19); a
common start on synchronised clocks does not.

What it does not do: choose the kernel, store samples (the caller does), or correct clock drift
within one batch (a batch lasts milliseconds to a second; drift is microseconds per second at
worst, and the offsets are measured again for every cell).
"""

from __future__ import annotations

import os

import numpy as np

from tlop.runtime.measure.stats import Rule, stop_reason

__all__ = ["clock_offsets", "windowed", "PING_ROUNDS", "LATE_SLACK"]

#: ping-pongs per rank when measuring the clock offsets
PING_ROUNDS = 24
_TAG = 917


def clock_offsets(comm, wtime) -> float:
    """This rank's clock minus rank 0's clock (0.0 on rank 0), from the fastest of
    :data:`PING_ROUNDS` ping-pongs with rank 0."""
    rank, size = comm.Get_rank(), comm.Get_size()
    buf = np.zeros(1)
    mine = 0.0
    for r in range(1, size):
        if rank == 0:
            best = (np.inf, 0.0)
            for _ in range(PING_ROUNDS):
                t0 = wtime()
                comm.Send(buf[:0], dest=r, tag=_TAG)
                comm.Recv(buf, source=r, tag=_TAG)
                t1 = wtime()
                if t1 - t0 < best[0]:
                    best = (t1 - t0, float(buf[0]) - (t0 + t1) / 2.0)
            comm.send(best[1], dest=r, tag=_TAG + 1)
        elif rank == r:
            for _ in range(PING_ROUNDS):
                comm.Recv(buf[:0], source=0, tag=_TAG)
                buf[0] = wtime()
                comm.Send(buf, dest=0, tag=_TAG)
            mine = comm.recv(source=0, tag=_TAG + 1)
    return float(mine)


#: a rank that starts a window more than this after its start (descheduled while it waited, or
#: still busy with the previous call) makes the window invalid.  A late start that is accepted
#: lengthens the sample by as much, so the slack is small beside a small message's time (it was
#: 5 µs; a 1 KiB send takes 2–5 µs on one host)
LATE_SLACK = 1e-6


def _wait_until(wtime, t: float, polite: bool, poke) -> bool:
    """Wait until ``wtime() >= t``, polling the MPI library's progress engine meanwhile (a rank
    that left a collective early may still owe its peers progress: without it, their calls would
    end only when this rank next enters MPI); True when the wait ended more than
    :data:`LATE_SLACK` after ``t`` (a late start: already past ``t`` on arrival, or descheduled
    while waiting)."""
    while wtime() < t:
        poke()
        if polite:                  # more ranks than cores: give the core away while waiting
            os.sched_yield()
    return wtime() - t > LATE_SLACK


def windowed(comm, call, rule: Rule, wtime, polite: bool = False, first_window: float = 0.0) -> dict:
    """Time ``call()`` in windows on every rank of ``comm``.  Returns, on rank 0, ``{"samples":
    array of valid samples (seconds), "reason": why it stopped, "invalid": windows dropped,
    "windows": windows run, "window_s": the last window length, "offset_max_s": the largest
    clock offset}`` (the same keys with an empty array elsewhere)."""
    from mpi4py import MPI

    rank = comm.Get_rank()
    offset = clock_offsets(comm, wtime)
    poke = comm.Iprobe
    offsets = comm.gather(offset, root=0)
    for _ in range(max(rule.warmup, 1)):
        call()
    # the first window: a few times a call's duration (barrier-timed, the max over ranks)
    probe = []
    for _ in range(5):
        comm.Barrier()
        t0 = wtime()
        call()
        probe.append(wtime() - t0)
    probe_max = comm.allreduce(float(np.median(probe)), op=MPI.MAX)
    w = max(first_window, 4.0 * probe_max + 20e-6)
    samples: list = []
    invalid = windows = 0
    batch = max(1, min(rule.min_n, 10))
    start = wtime()
    while True:
        t_global = comm.bcast(wtime() + 2 * w + 50e-6 if rank == 0 else None, root=0)
        ends = np.empty(batch)
        late = np.zeros(batch)
        durations = np.zeros(batch)
        for i in range(batch):
            t_local = t_global + i * w + offset
            late[i] = _wait_until(wtime, t_local, polite, poke)
            began = wtime()
            call()
            end = wtime()
            durations[i] = end - began
            ends[i] = end - t_local
        out_ends = np.empty_like(ends) if rank == 0 else None
        out_late = np.empty_like(late) if rank == 0 else None
        out_dur = np.empty_like(durations) if rank == 0 else None
        comm.Reduce(ends, out_ends, op=MPI.MAX, root=0)
        comm.Reduce(late, out_late, op=MPI.MAX, root=0)
        comm.Reduce(durations, out_dur, op=MPI.MAX, root=0)
        if rank == 0:
            # a call that outlasts its window makes the next one late on some rank: that one is dropped
            ok = out_late == 0
            samples.extend(out_ends[ok].tolist())
            bad = int(batch - ok.sum())
            invalid += bad
            windows += batch
            elapsed = wtime() - start
            reason = stop_reason(samples, rule, elapsed)
            if reason is None and (windows >= 20 * max(rule.max_n, 1) or elapsed >= 4 * rule.time_cap):
                reason = "invalid"          # hardly any window valid: give up on this cell
            # a window too short for a typical call makes the next one late: grow it while the
            # batch's median call (the slowest rank's) takes more than half the window, but not
            # beyond 64 typical calls.  Late starts of ranks descheduled while they waited, and a
            # few calls descheduled midway (a loaded machine), are no reason to grow: longer
            # windows only spin longer, and a rank that spins through its time slice is
            # descheduled more often
            # "typical" is the fastest valid sample: descheduling only ever lengthens a sample, and
            # a median inflated by it raised the cap, which let windows grow, which made ranks spin
            # through their time slices and be descheduled more (one launch at load 10 on 2 cores
            # gave a 1 KiB send a median of milliseconds)
            typical = float(np.min(samples)) if samples else w
            grow = bad * 4 > batch and float(np.median(out_dur)) > w / 2 and w < max(64 * typical, 200e-6)
            n = len(samples)
            nxt = 0 if reason else max(1, min(max(batch, n // 2), max(rule.max_n - n, 1)))
            decision = (reason, nxt, grow)
        else:
            decision = None
        reason, batch, grow = comm.bcast(decision, root=0)
        if grow:
            w *= 2.0
        if reason:
            break
    if rank != 0:
        return {"samples": np.empty(0), "reason": reason}
    return {"samples": np.asarray(samples), "reason": reason, "invalid": invalid, "windows": windows,
            "window_s": w, "offset_max_s": float(max(abs(o) for o in offsets))}
