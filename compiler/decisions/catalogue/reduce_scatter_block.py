"""Reduce_scatter_block: every algorithm of Open MPI 5.0's coll/tuned
(``reduce_scatter_block_algorithms[]`` in
ompi/mca/coll/tuned/coll_tuned_reduce_scatter_block_decision.c, v5.0.x) and of MPICH 4.x's
selection (``MPIR_CVAR_REDUCE_SCATTER_BLOCK_INTRA_ALGORITHM``; src/mpi/coll/reduce_scatter_block,
tag v4.3.2), with the stdlib schedule (``stdlib/coll/reduce_scatter_block.tlop``) that follows it.
``m`` is one rank's block; the operation is taken commutative (MPI_SUM).

What it does not do: price or choose (``tlop tune``); the schedules themselves are in the stdlib.
"""

from __future__ import annotations

from tlop.decisions.catalogue import LibraryAlgorithm as A
from tlop.decisions.catalogue.nonblocking import nb as _nb
from tlop.decisions.catalogue import Part

_INT_MAX = 2 ** 31 - 1


def _ompi_basic_linear(P, m):
    # ompi_coll_base_reduce_scatter_block_basic_linear: nothing for count 0; for count = P·rcount
    # above INT_MAX, P reduces of one block each followed by a send (not priced: None); else
    # comm->c_coll->coll_reduce of P·m bytes to 0 then comm->c_coll->coll_scatter of m bytes each
    if m == 0:
        return ()
    if P * m > _INT_MAX:
        return None
    return (Part("reduce", "Pm"), Part("scatter", "m"))

_O = "ompi/mca/coll/base/coll_base_reduce_scatter_block.c: "
_M = "src/mpi/coll/reduce_scatter_block/"

ALGORITHMS = [
    A("openmpi", "reduce_scatter_block", "basic_linear", 1, None,
      _O + "ompi_coll_base_reduce_scatter_block_basic_linear",
      status="composite: the communicator's own reduce of P·m bytes to 0 then its scatter of m bytes "
             "to each rank (comm->c_coll: coll/tuned's reduce and scatter decisions — the fixed ones, "
             "or the rules file's for those collectives when it has some)",
      parts=_ompi_basic_linear,
      note="not priced where P·m exceeds INT_MAX (the library then runs P reduces of one block and P − 1 sends)"),
    A("openmpi", "reduce_scatter_block", "recursive_doubling", 2,
      "coll/reduce_scatter_block:ompi_recursive_doubling",
      _O + "ompi_coll_base_reduce_scatter_block_intra_recursivedoubling",
      note="the same algorithm as MPICH's, except that Open MPI's received-type count of a subtree "
           "root beyond P is not capped at P (rd_blocks cap = 0)"),
    A("openmpi", "reduce_scatter_block", "recursive_halving", 3,
      "coll/reduce_scatter_block:recursive_halving",
      _O + "ompi_coll_base_reduce_scatter_block_intra_recursivehalving",
      constraint="commutative operation (otherwise the library runs basic_linear)",
      note="the same messages as MPICH's recursive_halving"),
    A("openmpi", "reduce_scatter_block", "butterfly", 4, "coll/reduce_scatter_block:ompi_butterfly",
      _O + "ompi_coll_base_reduce_scatter_block_intra_butterfly"),
    A("mpich", "reduce_scatter_block", "noncommutative", "MPIR_Reduce_scatter_block_intra_noncommutative",
      "coll/reduce_scatter_block:mpich_noncommutative",
      _M + "reduce_scatter_block_intra_noncommutative.c: MPIR_Reduce_scatter_block_intra_noncommutative",
      constraint="P a power of two (asserted)", pow2_only=True,
      note="distance doubling with halving sizes (the messages of Open MPI's butterfly for P a "
           "power of two, not those of recursive_halving)"),
    A("mpich", "reduce_scatter_block", "recursive_doubling", "MPIR_Reduce_scatter_block_intra_recursive_doubling",
      "coll/reduce_scatter_block:mpich_recursive_doubling",
      _M + "reduce_scatter_block_intra_recursive_doubling.c: MPIR_Reduce_scatter_block_intra_recursive_doubling"),
    A("mpich", "reduce_scatter_block", "pairwise", "MPIR_Reduce_scatter_block_intra_pairwise",
      "coll/reduce_scatter_block:mpich_pairwise",
      _M + "reduce_scatter_block_intra_pairwise.c: MPIR_Reduce_scatter_block_intra_pairwise",
      constraint="commutative operation"),
    A("mpich", "reduce_scatter_block", "recursive_halving", "MPIR_Reduce_scatter_block_intra_recursive_halving",
      "coll/reduce_scatter_block:recursive_halving",
      _M + "reduce_scatter_block_intra_recursive_halving.c: MPIR_Reduce_scatter_block_intra_recursive_halving",
      constraint="commutative operation", note="the same messages as Open MPI's recursive_halving"),
    _nb("reduce_scatter_block"),
]
