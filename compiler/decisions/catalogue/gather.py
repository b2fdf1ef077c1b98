"""Gather (root 0): every algorithm of Open MPI 5.0's coll/tuned (``gather_algorithms[]`` in
ompi/mca/coll/tuned/coll_tuned_gather_decision.c, v5.0.x) and of MPICH 4.x's selection
(``MPIR_CVAR_GATHER_INTRA_ALGORITHM``; src/mpi/coll/gather, tag v4.3.2), with the stdlib schedule
(``stdlib/coll/gather.tlop``) that follows it.  ``m`` is one rank's block.

What it does not do: price or choose (``tlop tune``); the schedules themselves are in the stdlib.
"""

from __future__ import annotations

from tlop.decisions.catalogue import LibraryAlgorithm as A
from tlop.decisions.catalogue.nonblocking import nb as _nb

_O = "ompi/mca/coll/base/coll_base_gather.c: "

ALGORITHMS = [
    A("openmpi", "gather", "basic_linear", 1, "coll/gather:ompi_basic_linear",
      _O + "ompi_coll_base_gather_intra_basic_linear"),
    A("openmpi", "gather", "binomial", 2, "coll/gather:binomial",
      _O + "ompi_coll_base_gather_intra_binomial",
      note="in-order binomial tree (ompi_coll_base_topo_build_in_order_bmtree); the same messages "
           "as MPICH's binomial"),
    A("openmpi", "gather", "linear_sync", 3, "coll/gather:ompi_linear_sync",
      _O + "ompi_coll_base_gather_intra_linear_sync",
      fixed={"seg": 0}, searched={"seg": (0, 1024, 4096, 8192, 16384, 32768, 65536, 131072)},
      note="seg = the first segment's size (the rules file's segsize, "
           "coll_tuned_gather_algorithm_segmentsize when forced; 0 = the whole block, then a "
           "zero-byte second message); the second segments are one final stage in the schedule, "
           "where the library overlaps them with the root's later rounds"),
    A("mpich", "gather", "binomial", "MPIR_Gather_intra_binomial", "coll/gather:binomial",
      "src/mpi/coll/gather/gather_intra_binomial.c: MPIR_Gather_intra_binomial",
      note="the same messages as Open MPI's binomial"),
    _nb("gather"),
]
