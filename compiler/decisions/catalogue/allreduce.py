"""Allreduce: every algorithm of Open MPI 5.0's coll/tuned (the ``allreduce_algorithms[]`` enum of
ompi/mca/coll/tuned/coll_tuned_allreduce_decision.c, v5.0.9: six algorithms — main's seventh,
allgather_reduce, is not in 5.0) and of MPICH 4.x's selection (``MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM``,
src/mpi/coll/coll_algorithms.txt, v4.3.2), with the schedule of stdlib/coll/allreduce.tlop that
follows each.

What it does: lists them (:data:`ALGORITHMS`).  What it does not do: price, choose or write files.
"""

from __future__ import annotations

from . import LibraryAlgorithm, Part
from .nonblocking import nb as _nb

_CVARS = "MPICH v5.0.1 src/mpi/coll/cvars.txt"


def _ompi_nonoverlapping(P, m):
    # coll_base_allreduce.c: ompi_coll_base_allreduce_intra_nonoverlapping — comm->c_coll->coll_reduce
    # of count elements to 0, then comm->c_coll->coll_bcast of them from 0
    return (Part("reduce", "m"), Part("bcast", "m"))


def _mpich_smp(P, m):
    # allreduce_intra_smp.c: MPIR_Reduce to node_comm rank 0, MPIR_Allreduce among node_roots_comm,
    # MPIR_Bcast from node_comm rank 0
    return (Part("reduce", "m", "node"), Part("allreduce", "m", "node_roots"), Part("bcast", "m", "node"))

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
       status="composite: the communicator's own reduce of m bytes to 0 then its bcast of them "
              "(comm->c_coll: coll/tuned's reduce and bcast decisions at (P, m) — the fixed ones, or "
              "the rules file's for those collectives when it has some)",
       parts=_ompi_nonoverlapping),
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
    _m("tree", "mpich_tree_knomial_1", "allreduce_intra_tree.c", "MPIR_Allreduce_intra_tree",
       searched={"k": (2, 3, 4, 8), "seg": (0, 8192, 16384, 65536)},
       mpich_params=("tree_type=knomial_1", "k={k}", "chunk_size={seg}", "buffer_per_child=0"),
       note="tree_type knomial_1 (the CVAR default; tree of MPII_Treeutil_tree_knomial_1_init, "
            "unrolled to 21 steps); kary, knomial_2 and the topology-aware trees are not written "
            "(the latter need the machine's switch/group topology); buffer_per_child changes "
            "buffers, not messages"),
    _m("recexch", "mpich_recexch", "allreduce_intra_recexch.c", "MPIR_Allreduce_intra_recexch",
       searched={"k": (2, 3, 4, 8)}, mpich_params=("k={k}", "single_phase_recv=0"),
       note="neighbours of MPII_Recexchalgo_get_neighbors; single_phase_recv changes when receives "
            "are posted, not the messages"),
    _m("k_reduce_scatter_allgather", "mpich_k_reduce_scatter_allgather",
       "allreduce_intra_k_reduce_scatter_allgather.c", "MPIR_Allreduce_intra_k_reduce_scatter_allgather",
       searched={"k": (2, 3, 4, 8)}, mpich_params=("k={k}", "single_phase_recv=0"), constraint="commutative op",
       note="shares m/K^(ph+1) are means of the library's blocks (equal when the participant count divides m)"),
    _m("smp", None, "allreduce_intra_smp.c", "MPIR_Allreduce_intra_smp",
       status="composite: on every node a reduce to its leader (node_comm), an allreduce among the "
              "leaders (node_roots_comm), a bcast on every node — each what MPICH's selection picks "
              "for that sub-communicator",
       parts=_mpich_smp, candidate=False, constraint="some node holds two ranks",
       note="not offered by tune: in a written selection file the sub-communicators' calls walk the "
            "file's tree, which tlop does not follow (it prices them with MPICH's default tree)"),
    _nb("allreduce"),
]
