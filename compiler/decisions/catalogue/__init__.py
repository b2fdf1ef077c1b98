"""The libraries' algorithm catalogues: per collective, every algorithm of Open MPI 5.0's
``coll/tuned`` and MPICH 4.x's collective selection, and the stdlib schedule that follows it.

What it does: :class:`LibraryAlgorithm` describes one library algorithm — the library, its own
name and id (Open MPI's ``coll_tuned`` algorithm number, MPICH's ``MPIR_<Coll>_intra_<name>``
function), the stdlib schedule (``"coll/<collective>:<algorithm>"``, model-neutral: priced by
τ-Lop's rules or as a LogGP/pLogP dataflow program, as the profile says) with the arguments the
library fixes and the parameters it takes per call (segment size ``seg``, radix or fan-out ``k``,
with the values ``tune`` searches), the source file and function it follows, and its status
(a schedule, a composite of the library's own decisions —
:mod:`tlop.decisions.composite` — or why it cannot be one).  MPICH's ``nb`` algorithms and the
nonblocking ``MPIR_I…`` algorithms they reach are in ``nonblocking.py``.  One module per collective (``bcast.py``, …) lists that
collective's algorithms in :data:`ALGORITHMS`; :func:`catalogue` gathers them.  NCCL's algorithms
(library ``"nccl"``: GPU collectives, priced on a GPU profile) are in ``nccl.py`` for every
collective it has; :func:`catalogue` gives them when asked for ``library="nccl"``.

The message size ``m`` of every schedule is the library's per-rank buffer of the MPI call, in
bytes (count × datatype size): the whole buffer for bcast, reduce and allreduce; one rank's block
for allgather, gather, scatter and reduce_scatter_block; one pair's block for alltoall; none for
barrier.  What each library *compares* in its decisions is derived from it where the decisions
are (:mod:`tlop.decisions.library_size`).

What it does not do: price anything or choose (``tlop tune``), or write files.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Optional

__all__ = ["LibraryAlgorithm", "Part", "COLLECTIVES", "LIBRARIES", "ALL_LIBRARIES", "catalogue", "find"]

#: the collectives tlop decides for, in the order tables list them
COLLECTIVES = ("bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter",
               "reduce_scatter", "reduce_scatter_block", "barrier")
LIBRARIES = ("openmpi", "mpich")
#: every library with a catalogue: the MPI libraries (``tune`` and ``audit`` decide for them by
#: default) and NCCL (``--library nccl``, on a GPU profile)
ALL_LIBRARIES = LIBRARIES + ("nccl",)


@dataclass(frozen=True)
class Part:
    """One call a composite algorithm makes (see :mod:`tlop.decisions.composite`): the
    ``collective`` it calls, its message size in the catalogue's meaning for that collective
    (``"m"``: the outer m; ``"Pm"``: P·m; an int: that many bytes), the communicator it calls it
    on (``"comm"``: the same one; ``"node"``: every node's node_comm at once; ``"other_nodes"``:
    those of the nodes without rank 0; ``"root_node"``: rank 0's; ``"node_roots"``: the
    communicator of the node leaders), and ``algorithm``: the one it runs whatever the library's
    decision (its catalogue name), or None for the library's own decision there."""
    collective: str
    m: object = "m"
    over: str = "comm"
    algorithm: Optional[str] = None


@dataclass(frozen=True)
class LibraryAlgorithm:
    """One algorithm of one library for one collective."""
    library: str                    # "openmpi" | "mpich" | "nccl"
    collective: str                 # one of COLLECTIVES
    name: str                       # the library's own name: Open MPI "binomial", MPICH "binomial"
    id: object                      # Open MPI: coll_tuned algorithm number (int); MPICH: "MPIR_Bcast_intra_binomial"
    schedule: Optional[str]         # "coll/bcast:ompi_binomial", None when it cannot be a schedule
    source: str                     # "ompi/mca/coll/base/coll_base_bcast.c: ompi_coll_base_bcast_intra_binomial"
    status: str = "schedule"        # "schedule", "composite: <what>", or "not expressible: <reason>"
    fixed: dict = field(default_factory=dict)     # schedule arguments the library fixes, e.g. {"k": 2}
    searched: dict = field(default_factory=dict)  # parameter -> candidate values tune tries, e.g. {"seg": (1024, 8192)}
    constraint: str = ""            # when the library runs it at all, in words ("P a power of two", "commutative op")
    pow2_only: bool = False         # the library runs it only for P a power of two (falls back otherwise)
    mpich_params: tuple = ()        # MPICH JSON leaf parameters, "name=value" ("{k}", "{seg}" filled in)
    note: str = ""                  # where the schedule departs from the library, and why
    separate: tuple = ()            # searched parameters whose values are candidates of their own (NCCL's
                                    # protocol: ring/LL and ring/Simple compete as two algorithms do)
    # a composite (schedule None): (P, m) -> the Part calls it makes there, in order (None: the
    # library does not run it there); priced by tlop.decisions.composite
    parts: Optional[object] = field(default=None, compare=False)
    candidate: bool = True          # tune may name it in a file (False: priced as a default only)
    one_per_node: bool = False      # the library runs it only with one rank per node (NCCL's PAT):
                                    # not priced (inf) on a mapping that puts two ranks on a node

    @property
    def priceable(self) -> bool:
        """A schedule or a composite: something tlop prices."""
        return self.schedule is not None or self.parts is not None

    @property
    def key(self) -> str:
        return f"{self.library}:{self.collective}:{self.name}"


def catalogue(collective: Optional[str] = None, library: Optional[str] = None) -> list:
    """Every :class:`LibraryAlgorithm` (of ``collective`` and ``library`` when given), in the
    catalogue modules' order.  Without ``library``: the MPI libraries' (:data:`LIBRARIES`); NCCL's
    only with ``library="nccl"`` (its schedules are priced on GPU profiles only)."""
    out = []
    for coll in COLLECTIVES if collective is None else (collective,):
        try:
            mod = importlib.import_module(f"tlop.decisions.catalogue.{coll}")
        except ModuleNotFoundError as e:
            if e.name != f"tlop.decisions.catalogue.{coll}":
                raise
            continue
        out.extend(a for a in mod.ALGORITHMS if library is None or a.library == library)
        if library == "nccl":  # imported by name, as the per-collective modules are
            nccl = importlib.import_module("tlop.decisions.catalogue.nccl")
            out.extend(a for a in nccl.ALGORITHMS if a.collective == coll)
    return out


def find(library: str, collective: str, name: str) -> LibraryAlgorithm:
    """The algorithm ``name`` (or id) of ``library`` for ``collective``; KeyError if none.  For
    MPICH's nonblocking ``i<collective>`` (what its ``nb`` algorithms run), the ``MPIR_I…``
    function's entry of :mod:`tlop.decisions.catalogue.nonblocking`."""
    if library == "mpich" and collective.startswith("i") and collective[1:] in COLLECTIVES:
        # imported by name, as the per-collective modules are (they import this package)
        return importlib.import_module("tlop.decisions.catalogue.nonblocking").find(name)
    for a in catalogue(collective, library):
        if a.name == name or a.id == name or str(a.id) == str(name):
            return a
    raise KeyError(f"{library} has no {collective} algorithm {name!r}")
