"""``tlop sweep --distributed``: a grid's chunks evaluated by the ranks of an MPI job
(``mpi4py.futures``), the output written by rank 0 exactly as a serial sweep writes it.

What it does: run under ``mpiexec -n N python -m mpi4py.futures -m tlop.cli sweep … --distributed``
(or ``srun``), rank 0 runs the command and :func:`distributed_chunks` hands the grid's chunks
(slices of at most :data:`tlop.cli.grid.CHUNK_POINTS` points, smaller for small grids so that every
worker gets some) to the other ranks through an :class:`mpi4py.futures.MPIPoolExecutor`, in order;
each worker rebuilds the command's grid and evaluator from the same arguments once
(:func:`evaluate_chunk` caches them per process) and evaluates its slice.  The values are the
serial ones: the same points (a chunk is a range of the grid's flat index), the same engine, the
same elementwise evaluation; the tests compare a 10⁴-point grid bit for bit.

What it does not do: start MPI (the user's ``mpiexec``/``srun`` does), or distribute ``best`` or
``validate``.
"""

from __future__ import annotations

import argparse
import sys

from tlop.runtime.diagnostics import TlopError

__all__ = ["distributed_chunks", "evaluate_chunk", "SPEC_FIELDS", "HINT"]

#: the arguments a worker needs to rebuild the grid and the evaluator
SPEC_FIELDS = ("file", "algorithm", "assignments", "profile", "bind", "out_of_grid", "reduce_op",
               "libtaulop_compat", "engine", "mapping", "max_points")

HINT = ("--distributed evaluates on the workers of an MPI job; start it as "
        "mpiexec -n N python -m mpi4py.futures -m tlop.cli sweep … --distributed")

_cache: dict = {}


def _rebuild(spec: dict):
    from tlop.cli.common import _assignments, _engine, _load, _profile
    from tlop.cli.cmd_sweep import _grid

    key = repr(sorted(spec.items()))
    if key not in _cache:
        args = argparse.Namespace(**spec)
        m = _load(args.file, args)
        h = m[args.algorithm]
        prof = _profile(args)
        ptypes = {p.name: p.type for p in h.params}
        grid = _grid(_assignments(args.assignments), ptypes, m.program, args.max_points)
        _, run = _engine(args, h, prof)
        _cache.clear()
        _cache[key] = (h, ptypes, grid, run)
    return _cache[key]


def evaluate_chunk(spec: dict, start: int, size: int):
    """The values of the grid's points ``start … start + size − 1`` (a worker's task)."""
    import numpy as np

    from tlop.cli.cmd_sweep import _evaluate_columns

    h, ptypes, grid, run = _rebuild(spec)
    flat = np.arange(start, min(grid.size, start + size), dtype=np.int64)
    index = np.unravel_index(flat, grid.shape) if grid.shape else ()
    columns = {k: grid.axes[k].take(i) for k, i in zip(grid.names, index)}
    return _evaluate_columns(run, h, columns, ptypes)


def _workers() -> int:
    from mpi4py import MPI

    return MPI.COMM_WORLD.Get_size() - 1


def distributed_chunks(args, grid):
    """A ``chunks(size=None)`` function for :func:`tlop.cli.cmd_sweep._sweep`: ``(columns, values)``
    of consecutive slices, the values computed by the MPI job's workers."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        raise TlopError("--distributed needs mpi4py; install it with pip install 'tlop[mpi]'") from None
    if _workers() < 1:
        raise TlopError(HINT)
    from mpi4py.futures import MPIPoolExecutor

    from tlop.cli.grid import CHUNK_POINTS

    spec = {k: getattr(args, k, None) for k in SPEC_FIELDS}
    n = _workers()

    def chunks(size=None):
        step = size or max(64, min(CHUNK_POINTS, -(-grid.size // (4 * n))))
        starts = list(range(0, grid.size, step))
        with MPIPoolExecutor() as pool:
            futures = [pool.submit(evaluate_chunk, spec, s, step) for s in starts]
            for (start, columns), fut in zip(grid.chunks(step), futures):
                yield columns, fut.result()

    return chunks


if __name__ == "__main__":  # pragma: no cover
    sys.exit(2)
