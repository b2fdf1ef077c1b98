"""Message buffers for the benchmarks: allocated and touched before any timing.

What it does: :func:`message` returns an mpi4py buffer spec ``[array, count, MPI.BYTE]`` over a
freshly allocated numpy array whose pages have all been written (so no first-touch page fault
lands inside a timed iteration).  Send and receive buffers are always separate allocations.

What it does not do: pin memory or allocate on a GPU (:mod:`.bench_cuda`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["message"]


def message(m: int, fill: int = 1):
    """A touched buffer spec of ``m`` bytes (a 1-byte array backs a 0-byte message)."""
    from mpi4py import MPI

    arr = np.empty(max(int(m), 1), dtype=np.uint8)
    arr.fill(fill & 0xFF)
    return [arr, int(m), MPI.BYTE]
