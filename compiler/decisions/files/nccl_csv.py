"""The CSV that NVIDIA's example NCCL tuner plugin reads.

What it does: :func:`write` turns NCCL rules into the configuration file of the example tuner
plugin (``plugins/tuner/example`` of github.com/NVIDIA/nccl, ``plugin.c`` and ``README.md`` at
commit 14bf4df7a32b8d2a96c090bc6f7a2bcdc1801662; loaded with ``NCCL_TUNER_PLUGIN=<the built
libnccl-tuner-example.so>`` and ``NCCL_TUNER_CONFIG_FILE=FILE``): one row per rule,
``collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks``.  A rule names
an NCCL algorithm (``Rule.algorithm`` a :class:`LibraryAlgorithm` of library ``"nccl"`` whose
``name`` is ``tree``, ``ring``, ``collnet_direct``, ``collnet_chain``, ``nvls``, ``nvls_tree`` or
``pat``) and carries ``params["protocol"]`` (``ll``, ``ll128``, ``simple``) and
``params["channels"]``.  The plugin reads lines of at most 255 characters and skips those that
begin with ``#`` (``plugin.c`` l. 195-199), so the file carries comments: the header lines and,
per row, the predicted cost.

The plugin's behaviour the writer has to respect (``pluginGetCollInfo``, ``plugin.c`` l. 353-457):

* It sets ``*nChannels = 1`` before looking at the rows, and a row with channels ``-1`` leaves it
  at 1 — although the README says −1 keeps NCCL's default.  NCCL keeps its own channel count only
  when the plugin leaves 0 there (``src/enqueue.cc``: ``nMaxChannels == 0 ? info->nMaxChannels :
  nMaxChannels``).  So no row of this plugin can keep NCCL's default, and a call that matches no
  row also runs on one channel.  The writer requires ``channels`` ≥ 1 on every rule and refuses
  ``Rule(algorithm=None)`` (keep the default): that cannot be said to this plugin.
* An unknown algorithm or protocol name is read as ``ring`` / ``simple`` silently
  (``parseAlgorithm``, ``parseProtocol``); the writer accepts only the names the plugin knows.
* The first row that matches (collective, ``min_bytes ≤ nBytes ≤ max_bytes``, nNodes, nRanks)
  wins; NCCL's ``nBytes`` is ``count × type size``, times nRanks for allgather and reducescatter
  (:func:`tlop.decisions.library_size.compared_size` with ``"nccl"``).  The writer writes each P's
  rules with ``nRanks = P`` and ``nNodes`` from ``mapping`` (−1 without one), the first from 0
  and the last to 2^64 − 1 (the field is read with ``strtoull`` into ``size_t``).  Communicator
  sizes without rows match nothing: NCCL's own algorithm choice on one channel.

What it does not do: model NCCL's algorithms (the caller prices them), or write the optional
numPipeOps and regBuff columns (rows match any).
"""

from __future__ import annotations

from tlop.decisions.library_size import compared_size
from tlop.decisions.rules import table

__all__ = ["write", "ALGORITHMS", "PROTOCOLS", "COLLECTIVES"]

ALGORITHMS = ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat")
PROTOCOLS = ("ll", "ll128", "simple")
#: tlop's collective -> the plugin's collective_type (parseCollType, plugin.c l. 59-66)
COLLECTIVES = {"bcast": "broadcast", "reduce": "reduce", "allgather": "allgather",
               "reduce_scatter": "reducescatter", "allreduce": "allreduce"}
_MAX = 2 ** 64 - 1


def _comment(text: str) -> str:
    line = "# " + " ".join(str(text).replace(",", ";").split())
    return line[:250]


def write(rules, header=(), mapping=None) -> str:
    """The text of the example NCCL tuner plugin's CSV carrying ``rules`` (NCCL algorithms)."""
    per = table(rules, "nccl")
    if not per:
        raise ValueError("no rules: the NCCL tuner file needs at least one")
    lines = [_comment(h) for h in header]
    lines.append(_comment("written by tlop (tlop.decisions.files.nccl_csv); columns: collective_type;min_bytes;"
                          "max_bytes;algorithm;protocol;channels;nNodes;nRanks"))
    lines.append(_comment("calls that match no row run NCCL's own choice on ONE channel (the example plugin "
                          "sets nChannels = 1 first)"))
    for coll, by_p in per.items():
        if coll not in COLLECTIVES:
            raise ValueError(f"the NCCL tuner plugin has no {coll!r}; it has {', '.join(COLLECTIVES)}")
        for P, rs in by_p.items():
            nodes = -1 if mapping is None else mapping.nodes(P)
            for i, r in enumerate(rs):
                if r.algorithm is None:
                    raise ValueError(f"{coll} P={P} m={r.m_from}: the example NCCL tuner plugin cannot keep "
                                     f"NCCL's default (it forces one channel); give an algorithm")
                algo, proto = r.algorithm.name, r.params.get("protocol")
                channels = r.params.get("channels")
                if algo not in ALGORITHMS:
                    raise ValueError(f"NCCL has no algorithm {algo!r} the plugin reads ({', '.join(ALGORITHMS)})")
                if proto not in PROTOCOLS:
                    raise ValueError(f"{coll} P={P} m={r.m_from}: protocol {proto!r} is not one of "
                                     f"{', '.join(PROTOCOLS)}")
                if not isinstance(channels, int) or channels < 1:
                    raise ValueError(f"{coll} P={P} m={r.m_from}: give channels >= 1 (the example plugin turns "
                                     f"-1 into one channel)")
                lo = 0 if i == 0 else compared_size("nccl", coll, P, r.m_from)
                hi = _MAX if i + 1 == len(rs) else compared_size("nccl", coll, P, rs[i + 1].m_from) - 1
                if r.cost is not None:
                    from tlop.runtime.units import format_time

                    lines.append(_comment(f"{coll} P={P} from m={r.m_from} B: {algo}/{proto} predicted "
                                          f"{format_time(r.cost)}"))
                lines.append(f"{COLLECTIVES[coll]},{lo},{hi},{algo},{proto},{channels},{nodes},{P}")
    return "\n".join(lines) + "\n"
