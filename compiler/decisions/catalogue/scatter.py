"""Scatter (root 0): every algorithm of Open MPI 5.0's coll/tuned (``scatter_algorithms[]`` in
ompi/mca/coll/tuned/coll_tuned_scatter_decision.c, v5.0.x) and of MPICH 4.x's selection
(``MPIR_CVAR_SCATTER_INTRA_ALGORITHM``; src/mpi/coll/scatter, tag v4.3.2), with the stdlib
schedule (``stdlib/coll/scatter.tlop``) that follows it.  ``m`` is one rank's block.

What it does not do: price or choose (``tlop tune``); the schedules themselves are in the stdlib.
"""

from __future__ import annotations

from tlop.decisions.catalogue import LibraryAlgorithm as A
from tlop.decisions.catalogue.nonblocking import nb as _nb

_O = "ompi/mca/coll/base/coll_base_scatter.c: "

ALGORITHMS = [
    A("openmpi", "scatter", "basic_linear", 1, "coll/scatter:ompi_basic_linear",
      _O + "ompi_coll_base_scatter_intra_basic_linear"),
    A("openmpi", "scatter", "binomial", 2, "coll/scatter:binomial",
      _O + "ompi_coll_base_scatter_intra_binomial",
      note="in-order binomial tree, children farthest first; the same messages as MPICH's binomial"),
    A("openmpi", "scatter", "linear_nb", 3, "coll/scatter:ompi_linear_nb",
      _O + "ompi_coll_base_scatter_intra_linear_nb",
      fixed={"k": 0},
      note="k = coll_tuned_scatter_algorithm_max_requests (default 0: all sends non-blocking), an "
           "MCA parameter, not a rules-file field; for k > 1 the schedule's batches are stages, "
           "where the library's blocking send waits only for itself"),
    A("mpich", "scatter", "binomial", "MPIR_Scatter_intra_binomial", "coll/scatter:binomial",
      "src/mpi/coll/scatter/scatter_intra_binomial.c: MPIR_Scatter_intra_binomial",
      note="the same messages as Open MPI's binomial"),
    _nb("scatter"),
]
