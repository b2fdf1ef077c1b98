"""NCCL's algorithms per collective (github.com/NVIDIA/nccl, commit
5067397c2676d5aed50042fc39e5c8ee96eb0027): the ones ``src/graph/tuning.cc`` (``ncclTopoTuneModel``)
prices for allreduce, bcast, reduce, allgather and reduce_scatter, with the schedule of
``stdlib/nccl/collectives.tlop`` that follows each, or why there is none.

What it does: lists them (:data:`ALGORITHMS`).  Each priced algorithm is searched over NCCL's three
protocols (``proto``: 0 LL, 1 LL128, 2 Simple — ``NCCL_PROTO_*``, ``src/include/plugin/nccl_tuner.h``), each a
candidate of its own (``separate``): the table's runner-up may be the same algorithm with another
protocol.  The channel count is not searched: the profile measures a
GPU path, not NCCL's per-channel rate (stdlib/nccl/model.tlop), and the tuner CSV's rows carry
:data:`CHANNELS` — every channel the communicator has (see :mod:`tlop.decisions.write`).

Which algorithms tuning.cc considers per collective (l. 293-304): bcast and reduce ring only;
allgather and reduce_scatter ring, PAT, NVLS, CollNet Direct; allreduce every one but PAT.  PAT
(Simple only) runs only with one GPU per node: its entries are ``one_per_node`` (priced only on
such a mapping).  The
``name`` of each entry is the example tuner plugin's (``parseAlgorithm``, plugin.c).

What it does not do: price, choose or write files.
"""

from __future__ import annotations

from . import LibraryAlgorithm

__all__ = ["ALGORITHMS", "CHANNELS", "PROTOCOLS"]

#: NCCL's protocols by number (NCCL_PROTO_LL, NCCL_PROTO_LL128, NCCL_PROTO_SIMPLE) as the CSV names them
PROTOCOLS = ("ll", "ll128", "simple")
#: the channels every CSV row asks for: MAXCHANNELS (src/include/device.h).  NCCL caps what a plugin
#: returns at the communicator's own channel count (src/enqueue.cc: scheduleCollTasksToPlan,
#: nChannels[kind] = min(…, comm->nChannels)), so this is "all of the communicator's channels" —
#: the example plugin cannot keep NCCL's own count (it returns 1 for -1), and 1 would starve large
#: messages.  NCCL itself lowers the count for small messages (topoGetAlgoInfo's threshold loop);
#: a row of the plugin overrides that too.  One exception: ncclAllGatherV's scheduler
#: (src/scheduler/allgatherv_sched.cc, ``nChannels = tcoll.nMaxChannels``) does not cap it, so for
#: an application that calls ncclAllGatherV the rows must carry the communicator's own count
#: (``tlop tune --nccl-channels``).
CHANNELS = 64

_SRC = "src/graph/tuning.cc: ncclTopoTuneModel"
_PROTO = {"proto": (0, 1, 2)}
_COLLNET = ("not expressible: CollNet runs the reduction in the network switches (SHARP, through a "
            "CollNet plugin); the profile has no such hardware and its cost is the switch's")
_NVLS = ("not expressible: NVLink SHARP — multicast and reduction inside the NVSwitch (Hopper and "
         "later; nvlsEfficiency is 0 before Hopper, tuning.cc l. 139-144); the profile's GPU paths "
         "carry no switch reduction")
_PAT = dict(searched={"proto": (2,)}, one_per_node=True, constraint="one GPU per node, Simple",
            note="ncclPatEnable (tuning.cc l. 215-223): one GPU per node (nNodes == nRanks), compute "
                 "capability >= 6.0, host network devices; Simple only (l. 302-304).  Priced by NCCL's "
                 "formula (latency 8 + log2i(N)·14/3.5 + 2.8·P µs, bus bandwidth × 0.75, no algorithm-"
                 "bandwidth conversion); the steps of PatAGAlgorithm/PatRSAlgorithm are not modelled, as "
                 "NCCL's own model does not")


def _a(coll, name, schedule, fn, **kw):
    return LibraryAlgorithm("nccl", coll, name, name, None if schedule is None else f"nccl/collectives:{schedule}",
                            fn, separate=("proto",) if schedule else (), **kw)


ALGORITHMS = [
    _a("allreduce", "ring", "ring_allreduce", "src/device/all_reduce.h: runRing; " + _SRC, searched=_PROTO),
    _a("allreduce", "tree", "tree_allreduce", "src/device/all_reduce.h: runTreeSplit; " + _SRC, searched=_PROTO,
       note="NCCL's double binary tree across nodes, a chain inside each node; with NCCL's treeCorrectionFactor"),
    _a("allreduce", "collnet_direct", None, _SRC, status=_COLLNET),
    _a("allreduce", "collnet_chain", None, _SRC, status=_COLLNET),
    _a("allreduce", "nvls", None, _SRC, status=_NVLS),
    _a("allreduce", "nvls_tree", None, _SRC, status=_NVLS),
    _a("bcast", "ring", "ring_bcast", "src/device/broadcast.h: runRing; " + _SRC, searched=_PROTO),
    _a("reduce", "ring", "ring_reduce", "src/device/reduce.h: runRing; " + _SRC, searched=_PROTO),
    _a("allgather", "ring", "ring_allgather", "src/device/all_gather.h: runRing; " + _SRC, searched=_PROTO),
    _a("allgather", "pat", "pat_allgather", "src/device/all_gather.h: RunWorkColl<…, NCCL_ALGO_PAT, "
       "NCCL_PROTO_SIMPLE> (PatAGAlgorithm, src/include/collectives.h); " + _SRC, **_PAT),
    _a("allgather", "nvls", None, _SRC, status=_NVLS),
    _a("allgather", "collnet_direct", None, _SRC, status=_COLLNET),
    _a("reduce_scatter", "ring", "ring_reduce_scatter", "src/device/reduce_scatter.h: runRing; " + _SRC,
       searched=_PROTO),
    _a("reduce_scatter", "pat", "pat_reduce_scatter", "src/device/reduce_scatter.h: RunWorkColl<…, "
       "NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE> (PatRSAlgorithm, src/include/collectives.h); " + _SRC, **_PAT),
    _a("reduce_scatter", "nvls", None, _SRC, status=_NVLS),
    _a("reduce_scatter", "collnet_direct", None, _SRC, status=_COLLNET),
]
