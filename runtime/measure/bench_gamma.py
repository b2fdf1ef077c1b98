"""γ(m): the local cost of one reduction operation on m bytes (libtaulop's ``gamma.txt``).

What it does: :func:`reduce_local` returns a timed kernel (``kernel(n) -> n per-iteration
times``, see :mod:`.engine`) in which group rank 0 combines two m-byte buffers of ``MPI_INT``
with ``MPI_Reduce_local`` and an operation of :data:`OPS` — what a process does at each step of
a reduction tree, and what libtaulop's ``gamma.txt`` tabulates (one column per operation; its
default column, SUM, on integers).  The other ranks of the group wait: γ is a processor's rate,
not a channel's, so it is measured once, in the shared-memory launch.

What it does not do: fit anything (the profile's ``gamma`` tables are the medians per size,
:mod:`.assemble`), or time datatypes other than ``MPI_INT``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["OPS", "reduce_local"]

#: the operations timed, by the suffix of their profile table (``gamma_sum`` …); ``gamma`` is SUM
OPS = ("sum", "max", "min", "prod")


def reduce_local(comm, m: int, wtime, op: str):
    """``MPI_Reduce_local(in, inout, m/4 ints, op)`` on group rank 0 (at least one int)."""
    from mpi4py import MPI

    rank = comm.Get_rank()
    count = max(1, int(m) // 4)
    a = np.arange(1, count + 1, dtype=np.int32)
    b = np.ones(count, dtype=np.int32)
    mpi_op = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "prod": MPI.PROD}[op]
    spec_a, spec_b = [a, count, MPI.INT], [b, count, MPI.INT]

    def kernel(n: int) -> np.ndarray:
        t = np.zeros(n)
        if rank == 0:
            for i in range(n):
                t0 = wtime()
                mpi_op.Reduce_local(spec_a, spec_b)
                t[i] = wtime() - t0
                if op == "prod":
                    b.fill(1)  # keep the products small (no overflow work in later iterations)
        return t

    return kernel
