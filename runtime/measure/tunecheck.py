"""What every rank of a ``tlop tune-check`` launch runs: the MPI library's own collective, timed.

What it does: ``mpiexec -n P python -m tlop.runtime.measure.tunecheck JOB.json`` times, for each
cell of the job (a message size m), the library's collective (:func:`operation`: ``MPI_Bcast``,
``MPI_Allreduce``, … through mpi4py on numpy buffers, root 0) with whatever selection the
launch's environment gives the library — its default, or a tuning file it loaded at
``MPI_Init`` — and one call is checked for the right result first.  Timing (``timing`` in the
job): ``batch`` (the default) — a sample is the time of a short batch of k back-to-back calls
over k, no barrier between the calls (:func:`batched_kernel`; k is chosen so that a batch lasts
about :data:`BATCH_TARGET_S`, between 4 and 64 calls; one barrier starts each batch), the
maximum over ranks, repeated adaptively by :func:`.engine.adaptive`; ``window`` — ReproMPI's
window start on synchronised clocks (:mod:`.window`), one call per sample.  Rank 0 appends a ``run`` record (library, hosts, each
rank's CPU affinity, the selection variables, the load) and one ``point`` record per cell, with
every valid sample, to the samples file as each cell ends (:class:`.store.SampleStore`,
fsync'ed: an interrupted launch keeps every finished cell), skips the cells already there
(resume), and reports progress as ``@@tlop`` events for :func:`.launch.run_ranks`.

Message sizes (``m``, bytes): the buffer of a broadcast; each rank's vector of an allreduce,
reduce (float64, MPI_SUM; m a multiple of 8); the block each rank contributes or receives in
allgather, gather, scatter and reduce_scatter_block, and sends to each rank in all-to-all.

What it does not do: decide what to run or set the environment (:mod:`tlop.cli.tune_check`),
or find out which algorithm ran (:mod:`.witness`).
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import sys

import numpy as np

__all__ = ["operation", "COLLECTIVES", "main", "JOB_VERSION", "cell_key", "REDUCING", "batched_kernel",
           "BATCH_TARGET_S", "TIMINGS"]

#: how long a batch of back-to-back calls should last (``batch`` timing)
BATCH_TARGET_S = 200e-6
#: the timing methods a job may ask for
TIMINGS = ("batch", "window")

JOB_VERSION = 1
#: the collectives tune-check runs
COLLECTIVES = ("bcast", "allreduce", "reduce", "allgather", "alltoall", "gather", "scatter",
               "reduce_scatter_block")
#: those whose m is a vector of float64 (m must be a multiple of 8)
REDUCING = ("allreduce", "reduce", "reduce_scatter_block")
#: environment variables that change what the library selects (recorded in the run record)
_SELECTION_PREFIXES = ("MPIR_CVAR_", "OMPI_MCA_", "PRTE_MCA_", "UCX_", "FI_", "I_MPI_", "SLURM_CPU_BIND")


def cell_key(config: str, collective: str, P: int, m: int, rnd: int) -> str:
    """The sample key of one cell of one round (the form :func:`.store.record_problem` checks)."""
    params = {"P": P, "collective": collective, "config": config, "m": m, "round": rnd}
    return "/".join([config, "tune-check"] + [f"{k}={v}" for k, v in sorted(params.items())])


def operation(comm, collective: str, m: int):
    """``(call, check)``: ``call()`` runs the collective once on m bytes; ``check()`` runs it once
    and returns an error text, or "" when the result is right."""
    from mpi4py import MPI

    rank, P = comm.Get_rank(), comm.Get_size()
    if collective in REDUCING:
        n = m // 8
        if collective == "reduce_scatter_block":
            send = np.ones(n * P)
            recv = np.zeros(max(n, 1))
            call = lambda: comm.Reduce_scatter_block([send, n * P, MPI.DOUBLE], [recv, n, MPI.DOUBLE], op=MPI.SUM)  # noqa: E731
        else:
            send = np.ones(max(n, 1))
            recv = np.zeros(max(n, 1))
            if collective == "allreduce":
                call = lambda: comm.Allreduce([send, n, MPI.DOUBLE], [recv, n, MPI.DOUBLE], op=MPI.SUM)  # noqa: E731
            else:
                call = lambda: comm.Reduce([send, n, MPI.DOUBLE], [recv, n, MPI.DOUBLE], op=MPI.SUM, root=0)  # noqa: E731

        def check() -> str:
            recv[:] = 0
            call()
            if collective == "reduce" and rank != 0:
                return ""
            return "" if n == 0 or (recv[:n] == P).all() else f"rank {rank}: the sum is not {P}"
        return call, check
    B = MPI.BYTE
    if collective == "bcast":
        buf = np.full(max(m, 1), 7 if rank == 0 else 0, dtype=np.uint8)
        call = lambda: comm.Bcast([buf, m, B], root=0)  # noqa: E731

        def check() -> str:
            call()
            return "" if (buf[:m] == 7).all() else f"rank {rank}: the broadcast did not arrive"
        return call, check
    mine = np.full(max(m, 1), rank & 0xFF, dtype=np.uint8)
    whole = np.empty(max(m * P, 1), dtype=np.uint8)
    for r in range(P):
        whole[r * m:(r + 1) * m] = (rank * P + r) & 0xFF     # block for rank r (all-to-all)
    got = np.zeros(max(m * P, 1), dtype=np.uint8)
    calls = {
        "allgather": lambda: comm.Allgather([mine, m, B], [got, m, B]),
        "alltoall": lambda: comm.Alltoall([whole, m, B], [got, m, B]),
        "gather": lambda: comm.Gather([mine, m, B], [got, m, B], root=0),
        "scatter": lambda: comm.Scatter([whole, m, B], [got, m, B], root=0),
    }
    call = calls[collective]

    def check() -> str:
        got[:] = 0
        call()
        blocks = got[:m * P].reshape(P, m) if m else None
        if m == 0:
            return ""
        if collective in ("allgather", "gather"):
            if collective == "gather" and rank != 0:
                return ""
            ok = all((blocks[r] == (r & 0xFF)).all() for r in range(P))
        elif collective == "alltoall":
            ok = all((blocks[r] == ((r * P + rank) & 0xFF)).all() for r in range(P))
        else:   # scatter: rank r gets the root's block r
            ok = (got[:m] == rank & 0xFF).all()
        return "" if ok else f"rank {rank}: wrong data after {collective}"
    return call, check


def batched_kernel(comm, call, wtime):
    """``(kernel, k)``: ``kernel(n)`` returns n samples, each the time of k back-to-back calls
    over k (one barrier before each batch, none between its calls); k from a probe of the call,
    agreed by all ranks."""
    from mpi4py import MPI

    for _ in range(3):
        call()
    comm.Barrier()
    t0 = wtime()
    for _ in range(4):
        call()
    one = comm.allreduce((wtime() - t0) / 4, op=MPI.MAX)
    k = int(min(64, max(4, round(BATCH_TARGET_S / max(one, 1e-9)))))

    def kernel(n: int) -> np.ndarray:
        t = np.empty(n)
        for i in range(n):
            comm.Barrier()
            start = wtime()
            for _ in range(k):
                call()
            t[i] = (wtime() - start) / k
        return t
    return kernel, k


def _emit(**ev) -> None:
    from tlop.runtime.measure.worker import EVENT_PREFIX

    sys.stdout.write(EVENT_PREFIX + json.dumps(ev) + "\n")
    sys.stdout.flush()


def _run_record(MPI, comm, job: dict) -> dict:
    try:
        affinity = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = []
    affinities = comm.gather(affinity, root=0)
    hosts = comm.gather(MPI.Get_processor_name(), root=0)
    try:
        load = list(os.getloadavg())
    except OSError:
        load = []
    lib = MPI.Get_library_version().strip()
    return {"kind": "run", "role": "tune-check", "config": job["config"], "round": job["round"],
            "collective": job["collective"], "np": comm.Get_size(),
            "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "host": socket.gethostname(), "hosts_by_rank": hosts, "cpu_affinity_by_rank": affinities,
            "cpus": os.cpu_count(), "load": load,
            "mpi": {"library": lib.splitlines()[0] if lib else "unknown", "library_version_full": lib},
            "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith(_SELECTION_PREFIXES)}}


def main(argv=None) -> int:
    """One rank of a tune-check launch: ``python -m tlop.runtime.measure.tunecheck JOB.json``."""
    from mpi4py import MPI

    from tlop.runtime.measure.engine import Watchdog, adaptive
    from tlop.runtime.measure.stats import summarize
    from tlop.runtime.measure.store import compact
    from tlop.runtime.measure.window import windowed
    from tlop.runtime.measure.worker import start_job

    argv = sys.argv[1:] if argv is None else argv
    job, comm, rank, rule, store, done = start_job(argv, JOB_VERSION, "tunecheck")
    record = _run_record(MPI, comm, job)
    todo = [c for c in job["cells"] if c["key"] not in done]
    if rank == 0:
        store.append(record)
        _emit(event="plan", todo=len(todo), total=len(job["cells"]))
    dog = Watchdog(float(job.get("timeout", 120.0)), rank)
    library = MPI.Get_library_version().strip().splitlines()[0][:120]
    try:
        for i, cell in enumerate(todo, 1):
            if rank == 0:
                _emit(event="start", i=i, todo=len(todo), label=cell["label"], key=cell["key"])
            dog.arm(cell["label"])
            call, check = operation(comm, job["collective"], int(cell["m"]))
            problems = [p for p in comm.gather(check(), root=0) or [] if p]
            if rank == 0 and problems:
                sys.stderr.write(f"tunecheck: {cell['label']}: the library's result is wrong: "
                                 f"{'; '.join(problems[:4])}\n")
                sys.stderr.flush()
                comm.Abort(5)
            if job.get("timing", "batch") == "window":
                got = windowed(comm, call, rule, MPI.Wtime, polite=bool(job.get("polite")))
                timing = {"method": "window", "invalid": got.get("invalid"), "windows": got.get("windows"),
                          "window_s": got.get("window_s"), "clock_offset_max_s": got.get("offset_max_s")}
            else:
                kernel, k = batched_kernel(comm, call, MPI.Wtime)
                samples, reason = adaptive(comm, kernel, rule, True, MPI.Wtime)
                got = {"samples": samples, "reason": reason}
                timing = {"method": "batch", "calls_per_sample": k}
            dog.disarm()
            if rank == 0:
                stats = summarize(got["samples"], rule.cl)
                store.append({"kind": "point", "key": cell["key"], "bench": "tune-check",
                              "channel": job["config"], "params": cell["params"], "stop": got["reason"],
                              "stats": {k: v for k, v in stats.items() if not isinstance(v, float) or np.isfinite(v)},
                              "unit": "s", "samples": compact(got["samples"]),
                              "timing": timing,
                              "mpi_size": comm.Get_size(), "library": library})
                _emit(event="done", key=cell["key"], label=cell["label"], median=stats["median"])
    finally:
        if store is not None:
            store.close()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
