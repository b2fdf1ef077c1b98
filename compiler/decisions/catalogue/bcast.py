"""Broadcast: every algorithm of Open MPI 5.0's coll/tuned (the ``bcast_algorithms[]`` enum of
ompi/mca/coll/tuned/coll_tuned_bcast_decision.c, v5.0.9) and of MPICH 4.x's selection
(``MPIR_CVAR_BCAST_INTRA_ALGORITHM``, src/mpi/coll/coll_algorithms.txt, v4.3.2), with the
schedule of stdlib/coll/bcast.tlop that follows each.

What it does: lists them (:data:`ALGORITHMS`).  What it does not do: price, choose or write files.
"""

from __future__ import annotations

from . import LibraryAlgorithm

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
       status="not expressible: needs the communicator's node sub-communicators (node_comm, "
              "node_roots_comm: local ranks and node leaders) and then runs whatever bcast the "
              "selection picks on each of them"),
    _m("nb", None, "bcast_allcomm_nb.c", "MPIR_Bcast_allcomm_nb",
       status="not expressible: runs MPI_Ibcast and waits, so its messages are those of the "
              "ibcast algorithm the selection picks at run time"),
]
