"""Reduce_scatter with equal counts: every algorithm of Open MPI 5.0's coll/tuned
(``reduce_scatter_algorithms[]`` in ompi/mca/coll/tuned/coll_tuned_reduce_scatter_decision.c,
v5.0.x) and of MPICH 4.x's selection (``MPIR_CVAR_REDUCE_SCATTER_INTRA_ALGORITHM``;
src/mpi/coll/reduce_scatter, tag v4.3.2), with the stdlib schedule (``stdlib/coll/reduce_scatter.tlop``,
which imports the reduce_scatter_block schedules that send the same messages) that follows it.
``m`` is ONE RANK'S BLOCK: every recvcounts[i] = m (the libraries take any counts; the schedules
cover equal counts only).  The operation is taken commutative (MPI_SUM).

What it does not do: price or choose (``tlop tune``); the schedules themselves are in the stdlib.
"""

from __future__ import annotations

from tlop.decisions.catalogue import LibraryAlgorithm as A
from tlop.decisions.catalogue.nonblocking import nb as _nb
from tlop.decisions.catalogue import Part


def _ompi_nonoverlapping(P, m):
    # ompi_coll_base_reduce_scatter_intra_nonoverlapping: comm->c_coll->coll_reduce of the total
    # count (P·m bytes) to 0, then comm->c_coll->coll_scatterv — coll/tuned sets no scatterv
    # (coll_tuned_module.c: coll_scatterv = NULL), so coll/basic's mca_coll_basic_scatterv_intra
    # (coll_basic_scatterv.c): the root's blocking sends to 1 … P − 1 in order, scatter
    # basic_linear's messages with equal counts
    return (Part("reduce", "Pm"), Part("scatter", "m", "comm", "basic_linear"))

_O = "ompi/mca/coll/base/coll_base_reduce_scatter.c: "
_M = "src/mpi/coll/reduce_scatter/"

ALGORITHMS = [
    A("openmpi", "reduce_scatter", "non-overlapping", 1, None,
      _O + "ompi_coll_base_reduce_scatter_intra_nonoverlapping",
      status="composite: the communicator's own reduce of P·m bytes to 0 (coll/tuned's reduce "
             "decision — the fixed one, or the rules file's for reduce when it has some), then "
             "coll/basic's linear scatterv of m bytes to each rank",
      parts=_ompi_nonoverlapping),
    A("openmpi", "reduce_scatter", "recursive_halving", 2, "coll/reduce_scatter:recursive_halving",
      _O + "ompi_coll_base_reduce_scatter_intra_basic_recursivehalving",
      constraint="commutative operation (the source's stated limitation; not checked when forced)",
      note="equal counts: the same messages as reduce_scatter_block's recursive halving (both libraries)"),
    A("openmpi", "reduce_scatter", "ring", 3, "coll/reduce_scatter:ompi_ring",
      _O + "ompi_coll_base_reduce_scatter_intra_ring",
      constraint="commutative operation (the source's stated limitation; not checked when forced)"),
    A("openmpi", "reduce_scatter", "butterfly", 4, "coll/reduce_scatter:ompi_butterfly_rs",
      _O + "ompi_coll_base_reduce_scatter_intra_butterfly",
      note="unlike reduce_scatter_block's butterfly, always ends with the mirror-permutation exchange"),
    A("mpich", "reduce_scatter", "noncommutative", "MPIR_Reduce_scatter_intra_noncommutative",
      "coll/reduce_scatter:mpich_noncommutative",
      _M + "reduce_scatter_intra_noncommutative.c: MPIR_Reduce_scatter_intra_noncommutative",
      constraint="P a power of two and equal counts (asserted)", pow2_only=True),
    A("mpich", "reduce_scatter", "pairwise", "MPIR_Reduce_scatter_intra_pairwise",
      "coll/reduce_scatter:mpich_pairwise",
      _M + "reduce_scatter_intra_pairwise.c: MPIR_Reduce_scatter_intra_pairwise",
      constraint="commutative operation"),
    A("mpich", "reduce_scatter", "recursive_doubling", "MPIR_Reduce_scatter_intra_recursive_doubling",
      "coll/reduce_scatter:mpich_recursive_doubling",
      _M + "reduce_scatter_intra_recursive_doubling.c: MPIR_Reduce_scatter_intra_recursive_doubling"),
    A("mpich", "reduce_scatter", "recursive_halving", "MPIR_Reduce_scatter_intra_recursive_halving",
      "coll/reduce_scatter:recursive_halving",
      _M + "reduce_scatter_intra_recursive_halving.c: MPIR_Reduce_scatter_intra_recursive_halving",
      constraint="commutative operation"),
    _nb("reduce_scatter"),
]
