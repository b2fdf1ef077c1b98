"""Barrier: every algorithm of Open MPI 5.0's coll/tuned (the ``barrier_algorithms[]`` enum of
ompi/mca/coll/tuned/coll_tuned_barrier_decision.c, v5.0.9) and of MPICH 4.x's selection
(``MPIR_CVAR_BARRIER_INTRA_ALGORITHM``, src/mpi/coll/coll_algorithms.txt, v4.3.2), with the schedule
of stdlib/coll/barrier.tlop that follows each.  The schedules take no m: the libraries send 0-byte
messages, which the schedules send as 1-byte tokens (τ-Lop prices 0 bytes as no cost at all).

What it does: lists them (:data:`ALGORITHMS`).  What it does not do: price, choose or write files.
"""

from __future__ import annotations

from . import LibraryAlgorithm, Part
from .nonblocking import nb as _nb


def _mpich_smp(P, m):
    # barrier_intra_smp.c, MPIR_Barrier_intra_smp: MPIR_Barrier on node_comm, MPIR_Barrier on
    # node_roots_comm, then a 1-byte MPIR_Bcast from node_comm rank 0
    return (Part("barrier", 0, "node"), Part("barrier", 0, "node_roots"), Part("bcast", 1, "node"))

_OMPI = "ompi/mca/coll/base/coll_base_barrier.c"


def _o(id, name, alg, fn, **kw):
    return LibraryAlgorithm("openmpi", "barrier", name, id, None if alg is None else f"coll/barrier:{alg}",
                            f"{_OMPI}: {fn}", **kw)


def _m(name, alg, path, fn, **kw):
    return LibraryAlgorithm("mpich", "barrier", name, f"MPIR_Barrier_intra_{name}",
                            None if alg is None else f"coll/barrier:{alg}",
                            f"src/mpi/coll/barrier/{path}: {fn}", **kw)


ALGORITHMS = [
    _o(1, "linear", "ompi_linear", "ompi_coll_base_barrier_intra_basic_linear"),
    _o(2, "double_ring", "ompi_double_ring", "ompi_coll_base_barrier_intra_doublering"),
    _o(3, "recursive_doubling", "ompi_recursive_doubling", "ompi_coll_base_barrier_intra_recursivedoubling"),
    _o(4, "bruck", "dissemination", "ompi_coll_base_barrier_intra_bruck", fixed={"k": 2},
       note="the same messages as MPICH's k_dissemination with k = 2"),
    _o(5, "two_proc", "ompi_two_proc", "ompi_coll_base_barrier_intra_two_procs",
       constraint="P = 2 (the library refuses other P)"),
    _o(6, "tree", "ompi_tree", "ompi_coll_base_barrier_intra_tree"),
    _m("k_dissemination", "dissemination", "barrier_intra_k_dissemination.c",
       "MPIR_Barrier_intra_k_dissemination", searched={"k": (2, 3, 4, 8)}, mpich_params=("k={k}",),
       note="k = 2 runs MPIR_Barrier_intra_dissemination (same messages); k is capped at P"),
    _m("recexch", "mpich_recexch", "barrier_intra_recexch.c", "MPIR_Barrier_intra_recexch",
       searched={"k": (2, 3, 4, 8)}, mpich_params=("k={k}", "single_phase_recv=0"),
       note="MPIR_Allreduce_intra_recexch on 0 elements: coll/allreduce mpich_recexch's messages as "
            "tokens, no combining"),
    _m("smp", None, "barrier_intra_smp.c", "MPIR_Barrier_intra_smp",
       status="composite: a barrier on every node (node_comm), one among the node leaders "
              "(node_roots_comm), then a 1-byte bcast on every node — each what MPICH's selection "
              "picks for that sub-communicator",
       parts=_mpich_smp, candidate=False, constraint="some node holds two ranks",
       note="MPICH's default for a parent communicator; not offered by tune: in a written selection "
            "file the sub-communicators' calls walk the file's tree, which tlop does not follow (it "
            "prices them with MPICH's default tree)"),
    _nb("barrier"),
]
