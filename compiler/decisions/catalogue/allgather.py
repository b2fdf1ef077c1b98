"""Allgather: every algorithm of Open MPI 5.0's coll/tuned (``allgather_algorithms[]`` in
ompi/mca/coll/tuned/coll_tuned_allgather_decision.c, v5.0.x) and of MPICH 4.x's selection
(``MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM``; src/mpi/coll/allgather, tag v4.3.2), with the
stdlib schedule (``stdlib/coll/allgather.tlop``) that follows it.  ``m`` is one rank's block.

What it does not do: price or choose (``tlop tune``); the schedules themselves are in the stdlib.
"""

from __future__ import annotations

from tlop.decisions.catalogue import LibraryAlgorithm as A
from tlop.decisions.catalogue.nonblocking import nb as _nb
from tlop.decisions.catalogue import Part


def _ompi_linear(P, m):
    # ompi_coll_base_allgather_intra_basic_linear: comm->c_coll->coll_gather of m bytes per rank to
    # 0, then comm->c_coll->coll_bcast of the P·m bytes from 0 (a contiguous type of P blocks when
    # P·count reaches INT_MAX: the same bytes)
    return (Part("gather", "m"), Part("bcast", "Pm"))

_O = "ompi/mca/coll/base/coll_base_allgather.c: "
_M = "src/mpi/coll/allgather/"

ALGORITHMS = [
    # ---- Open MPI 5.0 coll/tuned (ids as in allgather_algorithms[])
    A("openmpi", "allgather", "linear", 1, None,
      _O + "ompi_coll_base_allgather_intra_basic_linear",
      status="composite: the communicator's own gather of m bytes per rank to 0, then its bcast of "
             "P·m bytes (comm->c_coll: coll/tuned's gather and bcast decisions — the fixed ones, or "
             "the rules file's for those collectives when it has some)",
      parts=_ompi_linear),
    A("openmpi", "allgather", "bruck", 2, "coll/allgather:bruck",
      _O + "ompi_coll_base_allgather_intra_bruck",
      note="the same messages as MPICH's brucks; the final local rotation is not modelled"),
    A("openmpi", "allgather", "recursive_doubling", 3, "coll/allgather:ompi_recursive_doubling",
      _O + "ompi_coll_base_allgather_intra_recursivedoubling",
      constraint="P a power of two; otherwise the library runs bruck (the schedule does the same)"),
    A("openmpi", "allgather", "ring", 4, "coll/allgather:ring",
      _O + "ompi_coll_base_allgather_intra_ring"),
    A("openmpi", "allgather", "neighbor", 5, "coll/allgather:ompi_neighbor",
      _O + "ompi_coll_base_allgather_intra_neighborexchange",
      constraint="P even; otherwise the library runs ring (the schedule does the same)"),
    A("openmpi", "allgather", "two_proc", 6, "coll/allgather:ompi_two_proc",
      _O + "ompi_coll_base_allgather_intra_two_procs",
      constraint="P = 2 (the library returns MPI_ERR_UNSUPPORTED_OPERATION otherwise)"),
    A("openmpi", "allgather", "sparbit", 7, "coll/allgather:ompi_sparbit",
      _O + "ompi_coll_base_allgather_intra_sparbit",
      note="a rank's one-block messages of one step are all posted at once in the library; the "
           "schedule issues them one after another from that rank (a seq)"),
    # ---- MPICH 4.x (MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM values)
    A("mpich", "allgather", "brucks", "MPIR_Allgather_intra_brucks", "coll/allgather:bruck",
      _M + "allgather_intra_brucks.c: MPIR_Allgather_intra_brucks",
      note="the same messages as Open MPI's bruck"),
    A("mpich", "allgather", "k_brucks", "MPIR_Allgather_intra_k_brucks", "coll/allgather:mpich_k_brucks",
      _M + "allgather_intra_k_brucks.c: MPIR_Allgather_intra_k_brucks",
      searched={"k": (2, 3, 4, 8)}, mpich_params=("k={k}",),
      note="k = MPIR_CVAR_ALLGATHER_BRUCKS_KVAL (default 2) when forced by the CVAR"),
    A("mpich", "allgather", "recursive_doubling", "MPIR_Allgather_intra_recursive_doubling",
      "coll/allgather:recursive_doubling",
      _M + "allgather_intra_recursive_doubling.c: MPIR_Allgather_intra_recursive_doubling",
      constraint="P a power of two (asserted; MPICH's selection falls back for other P)", pow2_only=True,
      note="the same messages as Open MPI's recursive_doubling for P a power of two"),
    A("mpich", "allgather", "ring", "MPIR_Allgather_intra_ring", "coll/allgather:ring",
      _M + "allgather_intra_ring.c: MPIR_Allgather_intra_ring",
      note="the same messages as Open MPI's ring"),
    A("mpich", "allgather", "recexch_doubling", "MPIR_Allgather_intra_recexch_doubling",
      "coll/allgather:mpich_recexch_doubling",
      _M + "allgather_intra_recexch.c: MPIR_Allgather_intra_recexch (MPIR_ALLGATHER_RECEXCH_TYPE_DISTANCE_DOUBLING)",
      searched={"k": (2, 3, 4, 8)}, mpich_params=("k={k}", "single_phase_recv=0"),
      note="k = MPIR_CVAR_ALLGATHER_RECEXCH_KVAL (default 2) when forced by the CVAR; the library "
           "posts a phase's sends as soon as the previous phase's data arrived (single_phase_recv "
           "false), the schedule's phases are stages"),
    A("mpich", "allgather", "recexch_halving", "MPIR_Allgather_intra_recexch_halving",
      "coll/allgather:mpich_recexch_halving",
      _M + "allgather_intra_recexch.c: MPIR_Allgather_intra_recexch (MPIR_ALLGATHER_RECEXCH_TYPE_DISTANCE_HALVING)",
      searched={"k": (2, 3, 4, 8)}, mpich_params=("k={k}", "single_phase_recv=0"),
      note="k = MPIR_CVAR_ALLGATHER_RECEXCH_KVAL (default 2) when forced by the CVAR; sends the "
           "library posts early (single_phase_recv false) are stages in the schedule"),
    _nb("allgather"),
]
