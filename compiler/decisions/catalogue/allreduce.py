"""Allreduce: every algorithm of Open MPI 5.0's coll/tuned (the ``allreduce_algorithms[]`` enum of
ompi/mca/coll/tuned/coll_tuned_allreduce_decision.c, v5.0.9: six algorithms — main's seventh,
allgather_reduce, is not in 5.0) and of MPICH 4.x's selection (``MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM``,
src/mpi/coll/coll_algorithms.txt, v4.3.2), with the schedule of stdlib/coll/allreduce.tlop that
follows each.

What it does: lists them (:data:`ALGORITHMS`).  What it does not do: price, choose or write files.
"""

from __future__ import annotations

from . import LibraryAlgorithm

_OMPI = "ompi/mca/coll/base/coll_base_allreduce.c"


def _o(id, name, alg, fn, **kw):
    return LibraryAlgorithm("openmpi", "allreduce", name, id, None if alg is None else f"coll/allreduce:{alg}",
                            f"{_OMPI}: {fn}", **kw)


def _m(name, alg, path, fn, **kw):
    return LibraryAlgorithm("mpich", "allreduce", name, f"MPIR_Allreduce_intra_{name}",
                            None if alg is None else f"coll/allreduce:{alg}",
                            f"src/mpi/coll/allreduce/{path}: {fn}", **kw)


ALGORITHMS = [
    _o(1, "basic_linear", "ompi_basic_linear", "ompi_coll_base_allreduce_intra_basic_linear",
       note="linear reduce to 0 then linear bcast, as the library composes them"),
    _o(2, "nonoverlapping", None, "ompi_coll_base_allreduce_intra_nonoverlapping",
       status="not written: calls the communicator's own reduce and bcast (comm->c_coll), i.e. "
              "coll/tuned's reduce and bcast decisions (the fixed ones unless forced or ruled), so its "
              "messages are a composition of two other decisions at that (P, m); expressible as those "
              "decisions' if-chains over the reduce and bcast schedules, not written in this branch"),
    _o(3, "recursive_doubling", "recursive_doubling", "ompi_coll_base_allreduce_intra_recursivedoubling",
       note="same messages as MPICH's recursive_doubling"),
    _o(4, "ring", "ompi_ring", "ompi_coll_base_allreduce_intra_ring",
       note="recursive doubling when count < P"),
    _o(5, "segmented_ring", "ompi_segmented_ring", "ompi_coll_base_allreduce_intra_ring_segmented",
       searched={"seg": (0, 1024, 4096, 8192, 16384, 32768, 65536, 131072)},
       note="ring when seg = 0 or count < P·seg"),
    _o(6, "rabenseifner", "ompi_rabenseifner", "ompi_coll_base_allreduce_intra_redscat_allgather",
       constraint="commutative op",
       note="its fold differs from MPICH's (halves swapped, the even rank survives); for count < "
            "2^⌊log2 P⌋ (or a non-commutative op) the library runs nonoverlapping, which the "
            "schedule replaces by basic_linear's messages; halving sizes are m/2^(s+1) (the library's "
            "⌊·/2⌋ splits, equal when 2^⌊log2 P⌋ divides m)"),
    _m("recursive_doubling", "recursive_doubling", "allreduce_intra_recursive_doubling.c",
       "MPIR_Allreduce_intra_recursive_doubling", note="same messages as Open MPI's recursive_doubling"),
    _m("reduce_scatter_allgather", "mpich_reduce_scatter_allgather", "allreduce_intra_reduce_scatter_allgather.c",
       "MPIR_Allreduce_intra_reduce_scatter_allgather", constraint="count >= 2^⌊log2 P⌋, built-in op",
       note="halving sizes m/2^(s+1) (MPICH's cnts[] blocks, equal when 2^⌊log2 P⌋ divides m)"),
    _m("ring", "mpich_ring", "allreduce_intra_ring.c", "MPIR_Allreduce_intra_ring", constraint="commutative op",
       note="the allgather phase is MPIR_Allgatherv_intra_ring over the ring's blocks, one message per "
            "block (its pipelining of blocks above MPIR_CVAR_ALLGATHERV_PIPELINE_MSG_SIZE not written)"),
    _m("recursive_multiplying", "mpich_recursive_multiplying", "allreduce_intra_recursive_multiplying.c",
       "MPIR_Allreduce_intra_recursive_multiplying", searched={"k": (2, 3, 4, 8)}, mpich_params=("k={k}",),
       constraint="commutative op"),
    _m("tree", None, "allreduce_intra_tree.c", "MPIR_Allreduce_intra_tree",
       status="not written: pipelined knomial_1 tree reduce then bcast (chunk_size, buffer_per_child); "
              "expressible for the knomial/kary trees, not written in this branch (topology-aware "
              "tree types are not expressible: they need the machine's switch/group topology)"),
    _m("recexch", "mpich_recexch", "allreduce_intra_recexch.c", "MPIR_Allreduce_intra_recexch",
       searched={"k": (2, 3, 4, 8)}, mpich_params=("k={k}", "single_phase_recv=0"),
       note="neighbours of MPII_Recexchalgo_get_neighbors; single_phase_recv changes when receives "
            "are posted, not the messages"),
    _m("k_reduce_scatter_allgather", "mpich_k_reduce_scatter_allgather",
       "allreduce_intra_k_reduce_scatter_allgather.c", "MPIR_Allreduce_intra_k_reduce_scatter_allgather",
       searched={"k": (2, 3, 4, 8)}, mpich_params=("k={k}", "single_phase_recv=0"), constraint="commutative op",
       note="shares m/K^(ph+1) are means of the library's blocks (equal when the participant count divides m)"),
    _m("smp", None, "allreduce_intra_smp.c", "MPIR_Allreduce_intra_smp",
       status="not expressible: needs the node sub-communicators (node_comm, node_roots_comm) and "
              "runs the selection's own reduce/allreduce/bcast on each"),
    _m("nb", None, "allreduce_allcomm_nb.c", "MPIR_Allreduce_allcomm_nb",
       status="not expressible: runs MPI_Iallreduce and waits; its messages are those of the "
              "iallreduce algorithm the selection picks at run time"),
]
