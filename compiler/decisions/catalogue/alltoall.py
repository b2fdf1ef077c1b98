"""All-to-all: every algorithm of Open MPI 5.0's coll/tuned (``alltoall_algorithms[]`` in
ompi/mca/coll/tuned/coll_tuned_alltoall_decision.c, v5.0.x) and of MPICH 4.x's selection
(``MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM``; src/mpi/coll/alltoall, tag v4.3.2), with the stdlib
schedule (``stdlib/coll/alltoall.tlop``) that follows it.  ``m`` is one pair's block; the
schedules are for a separate send buffer (Open MPI runs its in-place algorithm for MPI_IN_PLACE
whatever is forced; MPICH's pairwise_sendrecv_replace is its in-place one).

What it does not do: price or choose (``tlop tune``); the schedules themselves are in the stdlib.
"""

from __future__ import annotations

from tlop.decisions.catalogue import LibraryAlgorithm as A
from tlop.decisions.catalogue.nonblocking import nb as _nb

_O = "ompi/mca/coll/base/coll_base_alltoall.c: "
_M = "src/mpi/coll/alltoall/"

ALGORITHMS = [
    # ---- Open MPI 5.0 coll/tuned (ids as in alltoall_algorithms[])
    A("openmpi", "alltoall", "linear", 1, "coll/alltoall:ompi_linear",
      _O + "ompi_coll_base_alltoall_intra_basic_linear"),
    A("openmpi", "alltoall", "pairwise", 2, "coll/alltoall:ompi_pairwise",
      _O + "ompi_coll_base_alltoall_intra_pairwise",
      note="the library's step P is the rank's own block, a local copy: P − 1 stages of messages"),
    A("openmpi", "alltoall", "modified_bruck", 3, "coll/alltoall:bruck",
      _O + "ompi_coll_base_alltoall_intra_bruck",
      note="the same messages as MPICH's brucks; local rotations not modelled"),
    A("openmpi", "alltoall", "linear_sync", 4, "coll/alltoall:ompi_linear_sync",
      _O + "ompi_coll_base_alltoall_intra_linear_sync",
      fixed={"k": 0}, searched={"k": (0, 1, 2, 4, 8, 16)},
      note="k = max_requests (coll_tuned_alltoall_algorithm_max_requests, default 0 = all; a rules "
           "file of version ≥ 2 may give it per rule as an optional fifth column). The schedule "
           "runs rounds of k requests where the library keeps a sliding window of k"),
    A("openmpi", "alltoall", "two_proc", 5, "coll/alltoall:ompi_two_proc",
      _O + "ompi_coll_base_alltoall_intra_two_procs",
      constraint="P = 2 (the library returns MPI_ERR_UNSUPPORTED_OPERATION otherwise)"),
    # ---- MPICH 4.x (MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM values)
    A("mpich", "alltoall", "brucks", "MPIR_Alltoall_intra_brucks", "coll/alltoall:bruck",
      _M + "alltoall_intra_brucks.c: MPIR_Alltoall_intra_brucks",
      constraint="not MPI_IN_PLACE", note="the same messages as Open MPI's modified_bruck"),
    A("mpich", "alltoall", "k_brucks", "MPIR_Alltoall_intra_k_brucks", "coll/alltoall:mpich_k_brucks",
      _M + "alltoall_intra_k_brucks.c: MPIR_Alltoall_intra_k_brucks",
      searched={"k": (2, 3, 4, 8)}, mpich_params=("k={k}",), constraint="not MPI_IN_PLACE",
      note="k = MPIR_CVAR_ALLTOALL_BRUCKS_KVAL (default 2) when forced by the CVAR"),
    A("mpich", "alltoall", "pairwise", "MPIR_Alltoall_intra_pairwise", "coll/alltoall:mpich_pairwise",
      _M + "alltoall_intra_pairwise.c: MPIR_Alltoall_intra_pairwise", constraint="not MPI_IN_PLACE"),
    A("mpich", "alltoall", "pairwise_sendrecv_replace", "MPIR_Alltoall_intra_pairwise_sendrecv_replace",
      "coll/alltoall:mpich_pairwise_sendrecv_replace",
      _M + "alltoall_intra_pairwise_sendrecv_replace.c: MPIR_Alltoall_intra_pairwise_sendrecv_replace",
      constraint="MPI_IN_PLACE only",
      note="one stage per pair in the library's order; the library overlaps disjoint pairs when "
           "both ranks are ready, the schedule does not (an upper bound)"),
    A("mpich", "alltoall", "scattered", "MPIR_Alltoall_intra_scattered", "coll/alltoall:mpich_scattered",
      _M + "alltoall_intra_scattered.c: MPIR_Alltoall_intra_scattered",
      fixed={"k": 32}, constraint="not MPI_IN_PLACE",
      note="k = MPIR_CVAR_ALLTOALL_THROTTLE (default 32, 0 = P), a CVAR, not a JSON parameter"),
    _nb("alltoall"),
]
