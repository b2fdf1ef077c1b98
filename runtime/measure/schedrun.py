"""Run a τ-Lop schedule for real with mpi4py, and time it as ``tlop measure`` times benchmarks.

What it does: :func:`schedule_kernel` turns an execution plan (:mod:`tlop.apps.plan`, as
JSON) into a timed kernel on an MPI communicator of P ranks.  Each rank executes its own part
(:func:`tlop.apps.plan.rank_program`): stage after stage and phase after phase it starts its
non-blocking sends and receives of the phase at once, waits for them, then combines the bytes of
its reductions for real (``numpy.add`` over the received bytes as float64, into an accumulator).
Every buffer is allocated and touched before timing; each rank's receives of one phase land in
distinct parts of one buffer.  Before timing, one checked run verifies that every message came
from the rank the plan names (each rank fills its sends with its own byte) — a plan whose
sends and receives do not pair fails there, not inside the timings.

Timing (``timing`` in the job): ``window`` (the default, except where a node runs more ranks
than it has CPUs: ``barrier`` then, :func:`_timing_of`) — ReproMPI's window-based start on
synchronised clocks (:mod:`.window`): every rank starts the run at the same moment of rank 0's
clock, and a sample is the latest end over the ranks minus that moment, so neither direction of
a message is favoured (a barrier releases its ranks at different moments: with ``barrier``, one
send of 1 KiB took 1.95 µs from rank 0 to 1 and 3.1 µs from 1 to 0, issue 22 item 19);
``barrier`` — the earlier method, each repetition started after ``MPI_Barrier``, the sample the
maximum over ranks of each rank's own time.  Either way warm-up runs are discarded (the rule's
``warmup``), repetitions go on until the median's confidence interval is tight, a sample cap or
a time cap (:func:`.stats.stop_reason`), every sample is kept, and each record says its method
(``timing``).  Rank 0 first appends a ``run`` record: the ranks' hosts and CPU affinity, the
binding the launcher was asked for, the load average and the timing method.

:func:`main` is what each rank of ``mpiexec -n P python -m tlop.runtime.measure.schedrun JOB``
runs: the job (JSON) lists cells (a key, a label and a plan); rank 0 skips the keys already in
the samples file (resume), appends a record per cell (fsync'ed: an interruption loses at most
the cell in flight) and reports progress as ``@@tlop`` events for :func:`.launch.run_ranks`.
A cell may carry a ``paired`` cell: the MPI library's own collective with the same algorithm
(forced by the launch's environment), timed over the same moments as the schedule
(:func:`.engine.adaptive_pair`, alternating short batches, barrier-started: the window method
times one kernel at a time), each stored as a record of its own.

What it does not do: make plans (the compiler does, :mod:`tlop.apps.plan`), predict, or
import the compiler (a rank needs numpy and mpi4py only, besides this package's runtime).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys

import numpy as np

__all__ = ["schedule_kernel", "main", "JOB_VERSION", "TAG", "TIMINGS"]

JOB_VERSION = 1
#: the tag of every message of an executed schedule
TAG = 4242


def _program(plan: dict, rank: int) -> list:
    """The rank's phases (as :func:`tlop.apps.plan.rank_program`, on the JSON plan)."""
    out = []
    for st in plan["stages"]:
        for ph in st:
            sends = [(int(d), int(n)) for s, d, n in ph["sends"] if s == rank]
            recvs = [(int(s), int(n)) for s, d, n in ph["sends"] if d == rank]
            reduces = [int(n) for r, n in ph["reduces"] if r == rank]
            if sends or recvs or reduces:
                out.append((sends, recvs, reduces))
    return out


def schedule_kernel(comm, plan: dict, wtime):
    """``(kernel, check)``: ``kernel(n)`` runs the schedule ``n`` times, each after a barrier,
    and returns this rank's times; ``check()`` runs it once and returns a list of problems
    (empty when every message came from the rank the plan names)."""
    from mpi4py import MPI

    rank, size = comm.Get_rank(), comm.Get_size()
    if int(plan["P"]) != size:
        raise ValueError(f"the plan is for P = {plan['P']} ranks, the communicator has {size}")
    prog = _program(plan, rank)
    B = MPI.BYTE
    big_send = max([n for s, _, _ in prog for _, n in s] + [1])
    arena_size = max([sum(max(n, 1) for _, n in r) for _, r, _ in prog] + [1])
    big_reduce = max([n for _, _, red in prog for n in red] + [8])
    sendbuf = np.full(big_send, (rank + 1) & 0xFF, dtype=np.uint8)
    arena = np.zeros(arena_size, dtype=np.uint8)
    acc = np.zeros(max(big_reduce // 8, 1), dtype=np.float64)
    operand = np.ones(max(big_reduce // 8, 1), dtype=np.float64)  # stands in before anything arrives
    steps = []
    last = operand
    for sends, recvs, reduces in prog:
        ss = [([sendbuf, n, B], d) for d, n in sends]
        rs, views, off = [], [], 0
        for s, n in recvs:
            rs.append(([arena[off:off + max(n, 1)], n, B], s))
            views.append((s, off, n))
            off += max(n, 1)
        if views:  # a reduction combines what its rank received last (this phase or before)
            s, o, cnt = views[-1]
            last = np.zeros(max(cnt // 8, 1)) if cnt < 8 else arena[o:o + (cnt // 8) * 8].view(np.float64)
        red = []
        for n in reduces:
            k = min(n // 8, len(last), len(acc))
            red.append((acc[:k], last[:k]))
        steps.append((ss, rs, red, views))

    def run_once(verify: bool):
        problems = []
        for ss, rs, red, views in steps:
            reqs = [comm.Irecv(buf, source=s, tag=TAG) for buf, s in rs]
            reqs += [comm.Isend(buf, dest=d, tag=TAG) for buf, d in ss]
            MPI.Request.Waitall(reqs)
            for a, b in red:
                np.add(a, b, out=a)
            if verify:
                for s, o, n in views:
                    if n and not (arena[o] == arena[o + n - 1] == ((s + 1) & 0xFF)):
                        problems.append(f"rank {rank}: a message of {n} B expected from rank {s} "
                                        f"carries rank {int(arena[o]) - 1}'s data")
                    arena[o:o + max(n, 1)] = 0
        return problems

    def kernel(n: int) -> np.ndarray:
        t = np.empty(n)
        for i in range(n):
            comm.Barrier()
            t0 = wtime()
            run_once(False)
            t[i] = wtime() - t0
        return t

    def check() -> list:
        comm.Barrier()
        mine = run_once(True)
        acc[:] = 0.0
        return mine

    kernel.once = lambda: run_once(False)   # one untimed run (the window method times it)
    return kernel, check


def _library_kernel(comm, cell: dict):
    """The timed kernel of the MPI library's own collective of a ``library`` cell."""
    from mpi4py import MPI

    from tlop.runtime.measure.bench_coll import collective

    return collective(comm, cell["library"]["collective"], "mpi", int(cell["library"]["m"]), MPI.Wtime)


#: the timing methods a job may ask for
TIMINGS = ("window", "barrier")


def _timing_of(MPI, comm, job: dict) -> str:
    """The job's timing method; a job that names none gets ``window``, unless the ranks on some
    node outnumber its CPUs: then ``barrier`` (a window needs every rank running at its start; with
    3 ranks on 2 CPUs hardly any window is valid and a cell gets no sample).  Every rank agrees."""
    if "timing" in job:
        return job["timing"]
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        crowded = node.Get_size() > (os.cpu_count() or 1)
    finally:
        node.Free()
    return "barrier" if comm.allreduce(crowded, op=MPI.LOR) else "window"


def _run_record(MPI, comm, job: dict) -> dict:
    """Where this launch's ranks ran (hosts, CPU affinity, the binding asked of the launcher), the
    load at its start and its timing method."""
    import datetime
    import socket

    from tlop.runtime.measure.binding import BINDING_ENV

    try:
        affinity = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = []
    affinities = comm.gather(affinity, root=0)
    hosts = comm.gather(MPI.Get_processor_name(), root=0)
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    per_node: dict = {}
    for h in hosts or []:
        per_node[h] = per_node.get(h, 0) + 1
    return {"kind": "run", "role": "validate", "np": comm.Get_size(),
            "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "host": socket.gethostname(), "load": load, "timing": job.get("timing", "window"),
            "placement": {"hosts_by_rank": hosts, "ranks_per_node": per_node, "cpu_affinity_by_rank": affinities,
                          "binding": os.environ.get(BINDING_ENV) or "as the job's own launcher placed the ranks",
                          "cpus": os.cpu_count()}}


def _emit(**ev) -> None:
    from tlop.runtime.measure.worker import EVENT_PREFIX

    sys.stdout.write(EVENT_PREFIX + json.dumps(ev) + "\n")
    sys.stdout.flush()


def main(argv=None) -> int:
    """One rank of a schedule-run job: ``python -m tlop.runtime.measure.schedrun JOB.json``."""
    from mpi4py import MPI

    from tlop.runtime.measure.engine import Watchdog, adaptive, adaptive_pair
    from tlop.runtime.measure.stats import summarize
    from tlop.runtime.measure.store import compact
    from tlop.runtime.measure.window import windowed
    from tlop.runtime.measure.worker import start_job

    argv = sys.argv[1:] if argv is None else argv
    job, comm, rank, rule, store, done = start_job(argv, JOB_VERSION, "schedrun")
    todo = [c for c in job["cells"] if c["key"] not in done or c.get("paired", {}).get("key", c["key"]) not in done]
    job = {**job, "timing": _timing_of(MPI, comm, job)}
    record = _run_record(MPI, comm, job)
    if rank == 0:
        if todo:
            store.append(record)
        _emit(event="plan", todo=len(todo), total=len(job["cells"]))
    dog = Watchdog(float(job.get("timeout", 120.0)), rank)
    timing = job.get("timing", "window")
    if timing not in TIMINGS:
        raise SystemExit(f"schedrun: unknown timing {timing!r}")
    try:
        for i, cell in enumerate(todo, 1):
            if rank == 0:
                _emit(event="start", i=i, todo=len(todo), label=cell["label"], key=cell["key"])
            dog.arm(cell["label"])
            if "library" in cell:  # the MPI library's own collective (its algorithm forced by the launch)
                kernel, check = _library_kernel(comm, cell), list
            else:
                kernel, check = schedule_kernel(comm, cell["plan"], MPI.Wtime)
            problems = comm.gather(check(), root=0)
            if rank == 0 and any(problems):
                flat = [p for ps in problems for p in ps]
                sys.stderr.write(f"schedrun: {cell['label']}: the run does not deliver what the plan says: "
                                 f"{'; '.join(flat[:5])}\n")
                comm.Abort(5)
            method = {"method": timing}
            if "paired" in cell:
                pair_rule = dataclasses.replace(rule, time_cap=2 * rule.time_cap)  # each gets the cell's cap
                measured = zip((cell, cell["paired"]), adaptive_pair(comm, kernel, _library_kernel(comm, cell["paired"]),
                                                                    pair_rule, True, MPI.Wtime))
                method = {"method": "barrier", "why": "paired with the library's collective (alternating batches)"}
            elif timing == "window":
                got = windowed(comm, kernel.once, rule, MPI.Wtime, polite=bool(job.get("polite")))
                measured = [(cell, (got["samples"], got["reason"]))]
                method.update({k: got.get(k) for k in ("invalid", "windows", "window_s")})
                method["clock_offset_max_s"] = got.get("offset_max_s")
            else:
                measured = [(cell, adaptive(comm, kernel, rule, True, MPI.Wtime))]
            dog.disarm()
            if rank == 0:
                for c, (samples, reason) in measured:
                    if c["key"] in done:
                        continue
                    stats = summarize(samples, rule.cl)
                    store.append({"kind": "point", "key": c["key"], "bench": "schedule",
                                  "channel": c.get("channel", cell.get("channel", "")), "params": c["params"],
                                  "stop": reason,
                                  "stats": {k: v for k, v in stats.items()
                                            if not isinstance(v, float) or np.isfinite(v)},
                                  "unit": "s", "samples": compact(samples), "timing": method,
                                  "warmup": rule.warmup,
                                  "predicted": c["plan"]["predicted"] if "plan" in c else c.get("predicted"),
                                  "mpi_size": comm.Get_size(),
                                  "library": MPI.Get_library_version().strip().splitlines()[0][:120]})
                    _emit(event="done", key=c["key"], label=c["label"], median=stats["median"])
    finally:
        if store is not None:
            store.close()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
