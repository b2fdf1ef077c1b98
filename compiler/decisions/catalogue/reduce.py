"""Reduce: every algorithm of Open MPI 5.0's coll/tuned (the ``reduce_algorithms[]`` enum of
ompi/mca/coll/tuned/coll_tuned_reduce_decision.c, v5.0.9) and of MPICH 4.x's selection
(``MPIR_CVAR_REDUCE_INTRA_ALGORITHM``, src/mpi/coll/coll_algorithms.txt, v4.3.2), with the schedule
of stdlib/coll/reduce.tlop that follows each.

What it does: lists them (:data:`ALGORITHMS`).  What it does not do: price, choose or write files.
"""

from __future__ import annotations

from . import LibraryAlgorithm, Part
from .nonblocking import nb as _nb


def _mpich_smp(P, m):
    # reduce_intra_smp.c, MPIR_Reduce_intra_smp with root 0 (the leader of node 0): a reduce to the
    # leader on every node but rank 0's, a reduce among the leaders to rank 0, then the reduce on
    # rank 0's node
    return (Part("reduce", "m", "other_nodes"), Part("reduce", "m", "node_roots"), Part("reduce", "m", "root_node"))

_OMPI = "ompi/mca/coll/base/coll_base_reduce.c"
_SEG = (0, 1024, 4096, 8192, 16384, 32768, 65536, 131072)


def _o(id, name, alg, fn, **kw):
    return LibraryAlgorithm("openmpi", "reduce", name, id, None if alg is None else f"coll/reduce:{alg}",
                            f"{_OMPI}: {fn}", **kw)


def _m(name, alg, path, fn, **kw):
    return LibraryAlgorithm("mpich", "reduce", name, f"MPIR_Reduce_intra_{name}",
                            None if alg is None else f"coll/reduce:{alg}",
                            f"src/mpi/coll/reduce/{path}: {fn}", **kw)


ALGORITHMS = [
    _o(1, "linear", "ompi_linear", "ompi_coll_base_reduce_intra_basic_linear"),
    _o(2, "chain", "ompi_chain", "ompi_coll_base_reduce_intra_chain",
       searched={"seg": _SEG, "k": (1, 2, 3, 4, 8)},
       note="k is coll_tuned_reduce_algorithm_chain_fanout (default 4); segments in lock-step "
            "stages; max_requests (synchronous sends) does not change the messages"),
    _o(3, "pipeline", "ompi_pipeline", "ompi_coll_base_reduce_intra_pipeline", searched={"seg": _SEG}),
    _o(4, "binary", "ompi_binary", "ompi_coll_base_reduce_intra_binary", searched={"seg": _SEG},
       note="tree of ompi_coll_base_topo_build_tree(2); a level sends when the deepest level's "
            "segment would (lock step)"),
    _o(5, "binomial", "binomial", "ompi_coll_base_reduce_intra_binomial", searched={"seg": _SEG},
       note="in-order binomial tree; the same messages as MPICH's binomial when seg = 0"),
    _o(6, "in-order_binary", "ompi_in_order_binary", "ompi_coll_base_reduce_intra_in_order_binary",
       searched={"seg": _SEG},
       note="tree of ompi_coll_base_topo_build_in_order_bintree rooted at P − 1 (unrolled to 20 "
            "levels, P < 2^20), then P − 1 sends the result to the root; segments in lock-step stages"),
    _o(7, "rabenseifner", "ompi_rabenseifner", "ompi_coll_base_reduce_intra_redscat_gather",
       constraint="commutative op",
       note="linear when count < 2^⌊log2 P⌋ or the op is not commutative; halving sizes are "
            "m/2^(s+1) (the library's ⌊·/2⌋ splits, equal when 2^⌊log2 P⌋ divides m)"),
    _m("binomial", "binomial", "reduce_intra_binomial.c", "MPIR_Reduce_intra_binomial", fixed={"seg": 0},
       note="same messages as Open MPI's binomial with seg = 0 (commutative op)"),
    _m("reduce_scatter_gather", "mpich_reduce_scatter_gather", "reduce_intra_reduce_scatter_gather.c",
       "MPIR_Reduce_intra_reduce_scatter_gather", constraint="count >= 2^⌊log2 P⌋, built-in op",
       note="halving sizes m/2^(s+1) (MPICH's cnts[] blocks, equal when 2^⌊log2 P⌋ divides m)"),
    _m("smp", None, "reduce_intra_smp.c", "MPIR_Reduce_intra_smp",
       status="composite: a reduce to the leader on every node but the root's (node_comm), one among "
              "the leaders (node_roots_comm), then one on the root's node — each what MPICH's "
              "selection picks for that sub-communicator",
       parts=_mpich_smp, candidate=False, constraint="commutative op (asserted); some node holds two ranks",
       note="not offered by tune: in a written selection file the sub-communicators' calls walk the "
            "file's tree, which tlop does not follow (it prices them with MPICH's default tree)"),
    _nb("reduce"),
]
