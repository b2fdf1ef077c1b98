"""The message size each library compares in its decisions, from the model's ``m``.

What it does: :func:`compared_size` turns the model's ``m`` (the per-rank buffer of the MPI call
in bytes, as :mod:`tlop.decisions.catalogue` defines it: the whole buffer for bcast, reduce and
allreduce; one rank's block for allgather, gather, scatter, reduce_scatter and
reduce_scatter_block; one pair's block for alltoall; nothing for barrier) into the number the
library compares with its thresholds.  The libraries do not agree, and Open MPI does not even
agree with itself:

Open MPI 5.0 (tag v5.0.10, commit of ``git -C ompi rev-parse v5.0.10``; unchanged since v5.0.0)

* ``kind="fixed"`` — the built-in decisions, ``ompi/mca/coll/tuned/coll_tuned_decision_fixed.c``:
  every function compares ``total_dsize = dsize * count`` of its own call: allreduce (l. 66-67),
  bcast (l. 521-522) and reduce (l. 676-677) the whole buffer; alltoall ``dsize * scount`` — one
  pair's block (l. 239-244); allgather ``dsize * scount`` — one block (l. 1102-1107);
  reduce_scatter_block ``dsize * rcount`` — one block (l. 985-986); gather and scatter one block
  (the root's ``rcount``/``scount``, the others' ``scount``/``rcount``, l. 1396-1403 and
  l. 1484-1490); reduce_scatter the *sum* of ``rcounts`` — the whole vector, m·P (l. 838-842);
  barrier no size.
* ``kind="rules"`` — a dynamic rules file (classic, and 6.0's JSON, which keeps the same sizes),
  ``ompi/mca/coll/tuned/coll_tuned_decision_dynamic.c``: allreduce, bcast, reduce ``dsize *
  count`` (l. 79-80, 277-278, 331-332); alltoall ``dsize * comsize * scount`` — m·P (l. 134-136);
  allgather m·P (l. 498-500); reduce_scatter the sum of ``rcounts`` — m·P (l. 385-388);
  reduce_scatter_block ``dsize * rcount * size`` — m·P (l. 441-442); gather and scatter
  ``sdtype * scount * comsize`` — m·P (l. 616-618, 666-668; for scatter every rank computes it
  from its *send* arguments, which MPI lets non-roots leave empty: a non-root that passes no send
  buffer looks up size 0, so all ranks must pass the same send signature); barrier looks up
  size 0 (l. 233-234).

MPICH 4.x/5.0 (``src/mpi/coll/src/csel.c``, tag v5.0.1; the wheel is 5.0.2 and csel.c is the same
on the 5.0.x branch head) — its selection tree has three kinds of size node, and which one a
collective's tree uses is in the tree (:mod:`tlop.decisions.mpich_defaults`):

* ``avg_msg_size`` (``get_avg_msgsize``, l. 864-916): ``type_size * count`` for allreduce, bcast
  and reduce (m); ``sendtype size * sendcount`` for alltoall (m, one pair); undefined (an assert)
  for the others.
* ``total_msg_size`` (``get_total_msgsize``, l. 976-1173): allreduce, bcast, reduce, alltoall,
  allgather, reduce_scatter_block ``type_size * count * comm_size`` (m·P); reduce_scatter the
  sum of ``recvcounts`` (m·P); gather and scatter ``count * comm_size`` *without the type size*
  (l. 1040-1057 overwrite ``total_bytes``): m·P / ``dtype_size``.
* ``count`` (``get_count``, l. 918-974): the element count — m / ``dtype_size`` (allgather and
  reduce_scatter_block: one block; reduce_scatter the whole vector).

NCCL (``src/include/enqueue.h`` ``ncclFuncMaxSendRecvCount``): the tuner plugin sees
``nBytes = elementSize * count``, times nRanks for allgather and reducescatter.

What it does not do: choose algorithms or read trees (the ``*_defaults`` modules do).
"""

from __future__ import annotations

from tlop.decisions.catalogue import COLLECTIVES

__all__ = ["compared_size", "mpich_sizes", "OPENMPI_FIXED", "OPENMPI_RULES", "MPICH_TOTAL"]

#: Open MPI's fixed decisions: the factor of P in the compared size (1: m, P: m·P, 0: no size)
OPENMPI_FIXED = {"bcast": 1, "reduce": 1, "allreduce": 1, "allgather": 1, "alltoall": 1, "gather": 1,
                 "scatter": 1, "reduce_scatter": "P", "reduce_scatter_block": 1, "barrier": 0}
#: Open MPI's dynamic rules (classic file and 6.0 JSON)
OPENMPI_RULES = {"bcast": 1, "reduce": 1, "allreduce": 1, "allgather": "P", "alltoall": "P", "gather": "P",
                 "scatter": "P", "reduce_scatter": "P", "reduce_scatter_block": "P", "barrier": 0}
#: MPICH's total_msg_size (every collective has one: m·P)
MPICH_TOTAL = {c: "P" for c in COLLECTIVES if c != "barrier"}
_MPICH_AVG = ("bcast", "reduce", "allreduce", "alltoall")
_NCCL = {"bcast": 1, "reduce": 1, "allreduce": 1, "allgather": "P", "reduce_scatter": "P"}


def _scaled(factor, P: int, m: int) -> int:
    if factor == 0:
        return 0
    return int(m) * int(P) if factor == "P" else int(m)


def mpich_sizes(collective: str, P: int, m: int, dtype_size: int = 1) -> dict:
    """What MPICH's csel computes for a call of ``collective`` on P ranks with the model's m:
    ``{"avg_msg_size": …, "total_msg_size": …, "count": …}`` (a key is missing where csel.c
    does not define it for that collective — the tree then never asks)."""
    if collective.startswith("i") and collective[1:] in COLLECTIVES:
        # the nonblocking call: csel.c computes the same sizes for MPIR_CSEL_COLL_TYPE__I<COLL>
        # (get_avg_msgsize, get_count, get_total_msgsize), except that ireduce_scatter_block's
        # total is recvcount · P without the type size and get_count has no IBCAST case
        out = mpich_sizes(collective[1:], P, m, dtype_size)
        if collective == "ireduce_scatter_block":
            out["total_msg_size"] = (int(m) // max(int(dtype_size), 1)) * int(P)
        if collective == "ibcast":
            out.pop("count", None)
        return out
    _check(collective)
    m, P, d = int(m), int(P), max(int(dtype_size), 1)
    out = {}
    if collective == "barrier":
        return out
    if collective in _MPICH_AVG:
        out["avg_msg_size"] = m
    if collective in ("gather", "scatter"):
        out["total_msg_size"] = (m // d) * P   # csel.c l. 1040-1057: count * comm_size, no type size
    else:
        out["total_msg_size"] = m * P
    if collective in ("bcast", "allreduce", "reduce", "allgather", "reduce_scatter_block"):
        out["count"] = m // d
    elif collective == "reduce_scatter":
        out["count"] = (m // d) * P
    return out


def _check(collective: str) -> None:
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}; the collectives are {', '.join(COLLECTIVES)}")


def compared_size(library: str, collective: str, P: int, m: int, kind: str = "rules",
                  dtype_size: int = 1) -> int:
    """The message size ``library`` compares for the model's ``m`` on ``P`` ranks.

    ``library``: ``"openmpi"`` (``kind="rules"``: a dynamic rules file, classic or JSON;
    ``kind="fixed"``: the built-in fixed decisions), ``"mpich"`` (``kind``: ``"total"``,
    ``"avg"`` or ``"rules"`` — the size MPICH's file writer uses for that collective: ``avg`` where
    csel defines it, else ``total``), ``"nccl"`` (the tuner plugin's nBytes)."""
    _check(collective)
    if library == "openmpi":
        if kind not in ("rules", "fixed"):
            raise ValueError(f"Open MPI compares sizes in its rules files ('rules') or fixed decisions ('fixed'), not {kind!r}")
        table = OPENMPI_RULES if kind == "rules" else OPENMPI_FIXED
        return _scaled(table[collective], P, m)
    if library == "mpich":
        sizes = mpich_sizes(collective, P, m, dtype_size)
        if kind == "rules":
            kind = "avg" if "avg_msg_size" in sizes else "total"
        key = {"avg": "avg_msg_size", "total": "total_msg_size", "count": "count"}.get(kind)
        if key is None:
            raise ValueError(f"MPICH compares 'avg', 'total' or 'count' sizes, not {kind!r}")
        if key not in sizes:
            raise ValueError(f"MPICH's csel defines no {key} for {collective}")
        return sizes[key]
    if library == "nccl":
        if collective not in _NCCL:
            raise ValueError(f"NCCL's tuner plugin has no {collective}")
        return _scaled(_NCCL[collective], P, m)
    raise ValueError(f"unknown library {library!r} (openmpi, mpich, nccl)")


def mpich_size_key(collective: str) -> str:
    """The size node the MPICH file writer uses for ``collective``: ``avg_msg_size`` where csel
    defines it (bcast, reduce, allreduce, alltoall), else ``total_msg_size``."""
    return "avg_msg_size" if collective in _MPICH_AVG else "total_msg_size"
