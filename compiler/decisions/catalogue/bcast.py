"""Broadcast: every algorithm of Open MPI 5.0's coll/tuned (the ``bcast_algorithms[]`` enum of
ompi/mca/coll/tuned/coll_tuned_bcast_decision.c, v5.0.9) and of MPICH 4.x's selection
(``MPIR_CVAR_BCAST_INTRA_ALGORITHM``, src/mpi/coll/coll_algorithms.txt, v4.3.2), with the
schedule of stdlib/coll/bcast.tlop that follows each.

What it does: lists them (:data:`ALGORITHMS`).  What it does not do: price, choose or write files.
"""

from __future__ import annotations

from . import LibraryAlgorithm, Part
from .nonblocking import nb as _nb

#: MPICH's defaults of MPIR_CVAR_BCAST_SHORT_MSG_SIZE, _LONG_MSG_SIZE, _MIN_PROCS (src/mpi/coll/cvars.txt, v5.0.1)
_SHORT, _LONG, _MIN_PROCS = 12288, 524288, 8


def _mpich_smp(P, m):
    # bcast_intra_smp.c, MPIR_Bcast_intra_smp with root 0 (always its node's leader, so the send to
    # the root's node leader never happens): 0 bytes do nothing; short messages (or P < MIN_PROCS),
    # and medium ones on a power-of-two communicator, a bcast among the leaders then one on every
    # node; otherwise MPIR_Bcast_intra_scatter_ring_allgather on the whole communicator
    if m == 0:
        return ()
    if m < _SHORT or P < _MIN_PROCS or (m < _LONG and P & (P - 1) == 0):
        return (Part("bcast", "m", "node_roots"), Part("bcast", "m", "node"))
    return (Part("bcast", "m", "comm", "scatter_ring_allgather"),)

_OMPI = "ompi/mca/coll/base/coll_base_bcast.c"
_SEG = (0, 1024, 4096, 8192, 16384, 32768, 65536, 131072)
_FANOUT = (1, 2, 3, 4, 8)


def _o(id, name, alg, fn, **kw):
    return LibraryAlgorithm("openmpi", "bcast", name, id, None if alg is None else f"coll/bcast:{alg}",
                            f"{_OMPI}: {fn}", **kw)


def _m(name, alg, path, fn, **kw):
    return LibraryAlgorithm("mpich", "bcast", name, f"MPIR_Bcast_intra_{name}",
                            None if alg is None else f"coll/bcast:{alg}", f"src/mpi/coll/bcast/{path}: {fn}", **kw)


ALGORITHMS = [
    _o(1, "basic_linear", "ompi_basic_linear", "ompi_coll_base_bcast_intra_basic_linear"),
    _o(2, "chain", "ompi_chain", "ompi_coll_base_bcast_intra_chain",
       searched={"seg": _SEG, "k": _FANOUT},
       note="k is coll_tuned_bcast_algorithm_chain_fanout (default 4, the rules file's fan-in/out "
            "column); segments move in lock-step stages"),
    _o(3, "pipeline", "ompi_pipeline", "ompi_coll_base_bcast_intra_pipeline", searched={"seg": _SEG}),
    _o(4, "split_binary_tree", "ompi_split_binary_tree", "ompi_coll_base_bcast_intra_split_bintree",
       searched={"seg": _SEG},
       note="halves down the odd and even subtrees in lock-step stages, then pairwise swaps; the "
            "swap of an odd m is written with the larger half both ways"),
    _o(5, "binary_tree", "ompi_binary_tree", "ompi_coll_base_bcast_intra_bintree", searched={"seg": _SEG},
       note="tree of ompi_coll_base_topo_build_tree(2); segments in lock-step stages"),
    _o(6, "binomial", "ompi_binomial", "ompi_coll_base_bcast_intra_binomial", searched={"seg": _SEG},
       note="tree of ompi_coll_base_topo_build_bmtree (0 → 1, 2, 4 …), not MPICH's; the fixed "
            "decision calls it with segsize 0"),
    _o(7, "knomial", "ompi_knomial", "ompi_coll_base_bcast_intra_knomial",
       fixed={"k": 4}, searched={"seg": _SEG},
       note="radix is the MCA variable coll_tuned_bcast_algorithm_knomial_radix (default 4), not a "
            "rules-file column, so k is fixed at 4 for files"),
    _o(8, "scatter_allgather", "ompi_scatter_allgather", "ompi_coll_base_bcast_intra_scatter_allgather",
       note="basic_linear when count < P; the sendrecv sends each side's group (0 bytes included)"),
    _o(9, "scatter_allgather_ring", "ompi_scatter_allgather_ring",
       "ompi_coll_base_bcast_intra_scatter_allgather_ring",
       note="same messages as MPICH's scatter_ring_allgather; basic_linear when count < P"),
    _m("binomial", "mpich_binomial", "bcast_intra_binomial.c", "MPIR_Bcast_intra_binomial",
       note="MPICH's tree (0 → 2, 0 → 1, 2 → 3 on 4 ranks), not Open MPI's"),
    _m("scatter_recursive_doubling_allgather", "scatter_recursive_doubling_allgather",
       "bcast_intra_scatter_recursive_doubling_allgather.c",
       "MPIR_Bcast_intra_scatter_recursive_doubling_allgather",
       note="the default selection uses it for P a power of two; other P run the recursive-halving "
            "recovery steps, written too"),
    _m("scatter_ring_allgather", "scatter_ring_allgather", "bcast_intra_scatter_ring_allgather.c",
       "MPIR_Bcast_intra_scatter_ring_allgather"),
    _m("tree", "mpich_tree_kary", "bcast_intra_tree.c", "MPIR_Bcast_intra_tree",
       fixed={"seg": 0}, searched={"k": (2, 3, 4, 8)},
       mpich_params=("tree_type=kary", "k={k}", "is_non_blocking=1"),
       note="tree_type kary (the CVAR default); knomial_1/knomial_2 and topology-aware trees not written"),
    _m("pipelined_tree", "mpich_tree_kary", "bcast_intra_pipelined_tree.c", "MPIR_Bcast_intra_pipelined_tree",
       searched={"k": (2, 3, 4, 8), "seg": (4096, 8192, 16384, 32768, 65536)},
       mpich_params=("tree_type=kary", "k={k}", "is_non_blocking=1", "chunk_size={seg}", "recv_pre_posted=0"),
       note="tree_type kary; chunks in lock-step stages (the first chunk the short one)"),
    _m("smp", None, "bcast_intra_smp.c", "MPIR_Bcast_intra_smp",
       status="composite: a bcast among the node leaders (node_roots_comm) then one on every node "
              "(node_comm), each what MPICH's selection picks for that sub-communicator; "
              "scatter_ring_allgather on the whole communicator for m >= 12288 B and P >= 8 unless "
              "m < 524288 B and P is a power of two (the CVAR defaults)",
       parts=_mpich_smp, candidate=False, constraint="some node holds two ranks",
       note="not offered by tune: in a written selection file the sub-communicators' calls walk the "
            "file's tree, which tlop does not follow (it prices them with MPICH's default tree)"),
    _nb("bcast"),
]
