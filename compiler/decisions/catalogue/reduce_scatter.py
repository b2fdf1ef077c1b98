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

_O = "ompi/mca/coll/base/coll_base_reduce_scatter.c: "
_M = "src/mpi/coll/reduce_scatter/"

ALGORITHMS = [
    A("openmpi", "reduce_scatter", "non-overlapping", 1, None,
      _O + "ompi_coll_base_reduce_scatter_intra_nonoverlapping",
      status="not expressible: an MPI_Reduce of P·m bytes to rank 0 then an MPI_Scatterv through the "
             "communicator's own coll_reduce/coll_scatterv (coll/tuned's run-time decisions for those "
             "collectives); no one schedule"),
    A("openmpi", "reduce_scatter", "recursive_halving", 2, "coll/reduce_scatter:recursive_halving",
      _O + "ompi_coll_base_reduce_scatter_intra_basic_recursivehalving",
      note="equal counts: the same messages as reduce_scatter_block's recursive halving (both libraries)"),
    A("openmpi", "reduce_scatter", "ring", 3, "coll/reduce_scatter:ompi_ring",
      _O + "ompi_coll_base_reduce_scatter_intra_ring"),
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
    A("mpich", "reduce_scatter", "nb", "MPIR_Reduce_scatter_allcomm_nb", None,
      _M + "reduce_scatter_allcomm_nb.c: MPIR_Reduce_scatter_allcomm_nb",
      status="not expressible: runs MPI_Ireduce_scatter and waits; the schedule is whatever MPICH's "
             "Ireduce_scatter selection picks, outside this catalogue"),
]
