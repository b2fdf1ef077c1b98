"""MPICH's nonblocking collectives as its ``nb`` algorithms run them: the ``MPIR_I<coll>_intra_sched_*``
algorithms MPICH's default selection reaches, each tied to the blocking catalogue entry whose
schedule sends the same messages, and the ``nb`` composite itself.

``MPIR_<Coll>_allcomm_nb`` (src/mpi/coll/<coll>/<coll>_allcomm_nb.c, MPICH v5.0.1) calls
``MPIR_I<coll>`` and waits on its request.  ``MPIR_I<coll>_impl`` (generated from
maint/gen_coll.py: ``dump_sched_impl``) with ``MPIR_CVAR_I<COLL>_INTRA_ALGORITHM=auto`` runs
``MPIR_I<coll>_allcomm_sched_auto`` (``dump_allcomm_sched_auto``): ``MPIR_Csel_search`` on the
same compiled-in tree as the blocking calls, in its ``collective=i<coll>`` subtree
(maint/tuning/coll/mpir/generic.json), which :func:`tlop.decisions.mpich_defaults.decide` walks.
The ``sched_smp`` algorithms call the hand-written ``MPIR_I<coll>_intra_sched_auto`` of
src/mpi/coll/mpir_coll_sched_auto.c on the node sub-communicators; for a non-parent
communicator those pick what the tree's non-parent branch picks (ibcast: binomial below
MPIR_CVAR_BCAST_SHORT_MSG_SIZE = 12288 B or under MPIR_CVAR_BCAST_MIN_PROCS = 8 ranks, then
scatter_recursive_doubling_allgather below 524288 B on a power of two, else
scatter_ring_allgather; ireduce: binomial up to MPIR_CVAR_REDUCE_SHORT_MSG_SIZE = 2048 B or
count < 2^⌊log2 P⌋, else reduce_scatter_gather), so they are priced with that branch.

Each ``sched`` algorithm listed here sends, message for message (source, destination, bytes),
what the blocking algorithm named beside it sends (both functions cited), checked against MPICH's
transport trace with the nonblocking algorithm forced (tests/test_catalogue_nb.py: P = 3, or 4
where MPICH runs it on a power of two only, and P = 5, 6 for two; while writing this, every one
at P = 5 and 6, or 8, with m = 3, 1000 or 7, 4099 B: all equal except ireduce's
reduce_scatter_gather and iallreduce's reduce_scatter_allgather where 2^⌊log2 P⌋ does not divide m —
their blocks are not the blocking ones', and the shared schedule's halves are exact for neither).  The exceptions have schedules of their own: ibcast's two scatter-allgather
algorithms, whose scatter (``MPII_Iscatter_for_bcast_sched``) sends more than the blocking one
(stdlib/coll/bcast.tlop ``mpich_ibinomial_scatter``).  What differs is when: a schedule posts
every send and receive of a step at once and waits (``MPIR_SCHED_BARRIER``) where the blocking
function calls ``MPIC_Send``/``MPIC_Sendrecv`` in turn; the stdlib schedule's stages are the
blocking function's.

What it does: :func:`find` gives the :class:`LibraryAlgorithm` of one ``MPIR_I…`` function (or
KeyError), with the blocking entry's schedule and parameters; :func:`nb` the ``nb`` catalogue
entry of a collective, a composite of one call of ``i<coll>`` on the same communicator (MPICH's
selection for it, :mod:`tlop.decisions.composite`).  What it does not do: the ``tsp_*``
algorithms (no default tree reaches them), intercommunicators, MPI_IN_PLACE (``ialltoall``'s
``sched_inplace``), or the non-commutative branches' sched algorithms beyond those listed.
"""

from __future__ import annotations

from . import LibraryAlgorithm, Part

__all__ = ["SCHED", "find", "nb"]

_SRC = "src/mpi/coll"


def _smp_bcast(P, m):
    # ibcast_intra_sched_smp.c, MPIR_Ibcast_intra_sched_smp with root 0 (its node's leader, so no
    # send to the root's node leader): MPIR_Ibcast_intra_sched_auto on node_roots_comm, then on
    # node_comm (every node, the root's included)
    return (Part("ibcast", "m", "node_roots"), Part("ibcast", "m", "node"))


def _smp_reduce(P, m):
    # ireduce_intra_sched_smp.c, MPIR_Ireduce_intra_sched_smp with root 0 (commutative op): a reduce
    # to the leader on every node but the root's, one among the leaders, then one on the root's node
    return (Part("ireduce", "m", "other_nodes"), Part("ireduce", "m", "node_roots"), Part("ireduce", "m", "root_node"))


#: ``MPIR_I…`` function -> (blocking collective, blocking catalogue name, parameters, the sched
#: function's file, the blocking function's file: function) — the same messages; or a schedule of
#: its own ("coll/<collective>:<name>") where the messages differ; or, for the sched_smp ones,
#: (collective, None, parts, file, what it does)
SCHED = {
    "MPIR_Ibarrier_intra_sched_recursive_doubling": (
        "barrier", "k_dissemination", {"k": 2}, "ibarrier/ibarrier_intra_sched_recursive_doubling.c",
        "barrier/barrier_intra_k_dissemination.c: MPIR_Barrier_intra_dissemination (k = 2): step mask = 1, 2, 4 … "
        "< P, a 0-byte send to rank + mask and a receive from rank − mask"),
    "MPIR_Ibcast_intra_sched_binomial": (
        "bcast", "binomial", {}, "ibcast/ibcast_intra_sched_binomial.c",
        "bcast/bcast_intra_binomial.c: MPIR_Bcast_intra_binomial: receive from rank − mask at the lowest set bit, "
        "then send to rank + mask for the lower masks, largest first"),
    # not the blocking ones' messages: MPII_Iscatter_for_bcast_sched (ibcast_utils.c) sends more
    # than MPII_Scatter_for_bcast from ranks other than the root (see the schedules)
    "MPIR_Ibcast_intra_sched_scatter_recursive_doubling_allgather": (
        "bcast", "coll/bcast:mpich_isched_scatter_recursive_doubling_allgather", {},
        "ibcast/ibcast_intra_sched_scatter_recursive_doubling_allgather.c",
        "ibcast/ibcast_utils.c: MPII_Iscatter_for_bcast_sched, then the recursive doubling of "
        "bcast/bcast_intra_scatter_recursive_doubling_allgather.c: MPIR_Bcast_intra_scatter_recursive_doubling_allgather"),
    "MPIR_Ibcast_intra_sched_scatter_ring_allgather": (
        "bcast", "coll/bcast:mpich_isched_scatter_ring_allgather", {},
        "ibcast/ibcast_intra_sched_scatter_ring_allgather.c",
        "ibcast/ibcast_utils.c: MPII_Iscatter_for_bcast_sched, then the ring of "
        "bcast/bcast_intra_scatter_ring_allgather.c: MPIR_Bcast_intra_scatter_ring_allgather"),
    "MPIR_Ibcast_intra_sched_smp": (
        "bcast", None, _smp_bcast, "ibcast/ibcast_intra_sched_smp.c",
        "an ibcast among the node leaders (node_roots_comm), then one on every node (node_comm), each "
        "MPIR_Ibcast_intra_sched_auto (mpir_coll_sched_auto.c)"),
    "MPIR_Ireduce_intra_sched_binomial": (
        "reduce", "binomial", {}, "ireduce/ireduce_intra_sched_binomial.c",
        "reduce/reduce_intra_binomial.c: MPIR_Reduce_intra_binomial (commutative op): receive from rank + mask "
        "while the bit is clear, then send to rank − mask"),
    "MPIR_Ireduce_intra_sched_reduce_scatter_gather": (
        "reduce", "reduce_scatter_gather", {}, "ireduce/ireduce_intra_sched_reduce_scatter_gather.c",
        "reduce/reduce_intra_reduce_scatter_gather.c: MPIR_Reduce_intra_reduce_scatter_gather: the fold of the "
        "ranks beyond 2^⌊log2 P⌋, recursive halving, then the binomial gather to the root — when P' = "
        "2^⌊log2 P⌋ divides the count, the schedule's own condition; otherwise the sched version's blocks are "
        "⌊count/P'⌋ with the last one the rest (cnts[]) and the blocking one's differ, both priced as halves"),
    "MPIR_Ireduce_intra_sched_smp": (
        "reduce", None, _smp_reduce, "ireduce/ireduce_intra_sched_smp.c",
        "an ireduce to the leader on every node but the root's, one among the leaders, then one on the "
        "root's node, each MPIR_Ireduce_intra_sched_auto (mpir_coll_sched_auto.c)"),
    "MPIR_Iallreduce_intra_sched_recursive_doubling": (
        "allreduce", "recursive_doubling", {}, "iallreduce/iallreduce_intra_sched_recursive_doubling.c",
        "allreduce/allreduce_intra_recursive_doubling.c: MPIR_Allreduce_intra_recursive_doubling: the fold of "
        "the ranks beyond 2^⌊log2 P⌋, exchanges with rank xor mask, the unfold"),
    "MPIR_Iallreduce_intra_sched_reduce_scatter_allgather": (
        "allreduce", "reduce_scatter_allgather", {}, "iallreduce/iallreduce_intra_sched_reduce_scatter_allgather.c",
        "allreduce/allreduce_intra_reduce_scatter_allgather.c: MPIR_Allreduce_intra_reduce_scatter_allgather: "
        "the fold, recursive halving, recursive doubling, the unfold — when P' = 2^⌊log2 P⌋ divides the count, "
        "the schedule's own condition; otherwise the sched version's blocks are ⌊count/P'⌋ with the last one "
        "the rest (cnts[]) and the blocking one's differ, both priced as halves"),
    "MPIR_Iallgather_intra_sched_recursive_doubling": (
        "allgather", "recursive_doubling", {}, "iallgather/iallgather_intra_sched_recursive_doubling.c",
        "allgather/allgather_intra_recursive_doubling.c: MPIR_Allgather_intra_recursive_doubling"),
    "MPIR_Iallgather_intra_sched_ring": (
        "allgather", "ring", {}, "iallgather/iallgather_intra_sched_ring.c",
        "allgather/allgather_intra_ring.c: MPIR_Allgather_intra_ring"),
    "MPIR_Iallgather_intra_sched_brucks": (
        "allgather", "brucks", {}, "iallgather/iallgather_intra_sched_brucks.c",
        "allgather/allgather_intra_brucks.c: MPIR_Allgather_intra_brucks"),
    "MPIR_Ialltoall_intra_sched_permuted_sendrecv": (
        "alltoall", "scattered", {}, "ialltoall/ialltoall_intra_sched_permuted_sendrecv.c",
        "alltoall/alltoall_intra_scattered.c: MPIR_Alltoall_intra_scattered: blocks of "
        "MPIR_CVAR_ALLTOALL_THROTTLE (default 32) receives from rank + i and sends to rank − i"),
    "MPIR_Ialltoall_intra_sched_pairwise": (
        "alltoall", "pairwise", {}, "ialltoall/ialltoall_intra_sched_pairwise.c",
        "alltoall/alltoall_intra_pairwise.c: MPIR_Alltoall_intra_pairwise"),
    "MPIR_Ialltoall_intra_sched_brucks": (
        "alltoall", "brucks", {}, "ialltoall/ialltoall_intra_sched_brucks.c",
        "alltoall/alltoall_intra_brucks.c: MPIR_Alltoall_intra_brucks"),
    "MPIR_Ireduce_scatter_intra_sched_recursive_halving": (
        "reduce_scatter", "recursive_halving", {}, "ireduce_scatter/ireduce_scatter_intra_sched_recursive_halving.c",
        "reduce_scatter/reduce_scatter_intra_recursive_halving.c: MPIR_Reduce_scatter_intra_recursive_halving"),
    "MPIR_Ireduce_scatter_intra_sched_pairwise": (
        "reduce_scatter", "pairwise", {}, "ireduce_scatter/ireduce_scatter_intra_sched_pairwise.c",
        "reduce_scatter/reduce_scatter_intra_pairwise.c: MPIR_Reduce_scatter_intra_pairwise"),
    "MPIR_Ireduce_scatter_block_intra_sched_recursive_halving": (
        "reduce_scatter_block", "recursive_halving", {},
        "ireduce_scatter_block/ireduce_scatter_block_intra_sched_recursive_halving.c",
        "reduce_scatter_block/reduce_scatter_block_intra_recursive_halving.c: "
        "MPIR_Reduce_scatter_block_intra_recursive_halving"),
    "MPIR_Ireduce_scatter_block_intra_sched_pairwise": (
        "reduce_scatter_block", "pairwise", {}, "ireduce_scatter_block/ireduce_scatter_block_intra_sched_pairwise.c",
        "reduce_scatter_block/reduce_scatter_block_intra_pairwise.c: MPIR_Reduce_scatter_block_intra_pairwise"),
    "MPIR_Igather_intra_sched_binomial": (
        "gather", "binomial", {}, "igather/igather_intra_sched_binomial.c",
        "gather/gather_intra_binomial.c: MPIR_Gather_intra_binomial"),
    "MPIR_Iscatter_intra_sched_binomial": (
        "scatter", "binomial", {}, "iscatter/iscatter_intra_sched_binomial.c",
        "scatter/scatter_intra_binomial.c: MPIR_Scatter_intra_binomial"),
}


def find(name: str) -> LibraryAlgorithm:
    """The :class:`LibraryAlgorithm` of the ``MPIR_I…`` function ``name`` (its collective is
    ``i<coll>``; never a candidate of ``tune``); KeyError when it is not listed."""
    from . import find as find_blocking

    if name not in SCHED:
        raise KeyError(f"mpich has no schedule for the nonblocking algorithm {name!r}")
    coll, blocking, what, path, cites = SCHED[name]
    short = name.split("_intra_", 1)[1]
    fn = name
    if blocking is None:
        return LibraryAlgorithm("mpich", "i" + coll, short, name, None, f"{_SRC}/{path}: {fn}",
                                status=f"composite: {cites}", parts=what, candidate=False)
    if blocking.startswith("coll/"):  # a schedule of its own
        return LibraryAlgorithm("mpich", "i" + coll, short, name, blocking,
                                f"{_SRC}/{path}: {fn}; {_SRC}/{cites}", fixed=dict(what),
                                pow2_only=short.endswith("recursive_doubling_allgather"), candidate=False)
    b = find_blocking("mpich", coll, blocking)
    return LibraryAlgorithm("mpich", "i" + coll, short, name, b.schedule,
                            f"{_SRC}/{path}: {fn}; the same messages as {_SRC}/{cites}",
                            fixed={**b.fixed, **what}, pow2_only=b.pow2_only, constraint=b.constraint,
                            candidate=False)


def _nb_parts(coll):
    def parts(P, m):
        # MPIR_<Coll>_allcomm_nb: MPIR_I<coll> on the same communicator, then MPIC_Wait
        return (Part("i" + coll, "m", "comm"),)
    return parts


def nb(collective: str) -> LibraryAlgorithm:
    """MPICH's ``nb`` algorithm of ``collective``: a composite of one ``MPI_I<collective>`` call,
    priced as the sched algorithm MPICH's default tree reaches there."""
    Coll = collective.capitalize()
    return LibraryAlgorithm(
        "mpich", collective, "nb", f"MPIR_{Coll}_allcomm_nb", None,
        f"{_SRC}/{collective}/{collective}_allcomm_nb.c: MPIR_{Coll}_allcomm_nb",
        status=(f"composite: MPI_I{collective} then a wait; its messages are those of the "
                f"MPIR_I{collective}_intra_sched_* algorithm MPICH's default tree picks (collective=i{collective}), "
                f"each priced as a schedule of stdlib/coll (a blocking algorithm's where the messages are the same)"),
        parts=_nb_parts(collective), candidate=False,
        note=(f"priced with MPICH's default i{collective} subtree, which a selection file tlop writes keeps "
              f"(it changes the blocking collectives only) and sched_smp's hand-written sched_auto calls do not "
              f"read; not offered by tune (yet): offering it would change every MPICH decision table, where "
              f"it mostly ties with the blocking algorithm whose messages it sends"))
