"""Open MPI 6.0's JSON rules for ``coll/tuned`` (``rule_file_version`` 3).

What it does: :func:`write` turns Open MPI rules into the JSON document Open MPI 6.0 reads from
the same ``coll_tuned_dynamic_rules_filename`` (``ompi_coll_tuned_read_rules_json``,
``ompi/mca/coll/tuned/coll_tuned_dynamic_file.c`` on the v6.0.x branch,
bb1c85d203cdb7162f0cd92f71f7298048cd9581; the format is documented in
``docs/tuning-apps/collectives/tuned.rst`` and its schema is
``docs/tuning-apps/tuned_dynamic_file_schema.json``, copied under ``tests/data/openmpi/``):
``{"rule_file_version": 3, "module": "tuned", "collectives": {name: [comm rule, …]}}``, a comm
rule ``{"comm_size_min", "comm_size_max", "comm_rank_distribution", "rules": [msg rule, …]}``, a
message rule ``{"msg_size_min", "msg_size_max", "alg", "faninout", "seg_size", "reqs"}``.

Lookup (``coll_tuned_dynamic_rules.c`` on v6.0.x, ``ompi_coll_tuned_get_com_rule_ptr`` and
``ompi_coll_tuned_get_target_method_params``): the *first* comm rule whose distribution holds and
whose ``[comm_size_min, comm_size_max]`` holds the communicator size, then the first message rule
whose ``[msg_size_min, msg_size_max]`` holds the compared size (the same sizes as the classic file,
:func:`tlop.decisions.library_size.compared_size` ``kind="rules"``); no match falls back to the
fixed decisions.  So no size-0 rule is needed; the writer makes each tuned P's rule cover ``P``
up to the next tuned P − 1 (the last up to ``"inf"``), as the classic file's nearest-smaller
lookup does, and each message rule cover its ``m_from`` (0 for the first) up to the next one − 1;
communicators smaller than the smallest tuned P keep the fixed decisions.

``comm_rank_distribution`` comes from ``mapping`` (a :class:`tlop.runtime.mapping.Mapping`) at the
tuned P: ``"single-node"`` when all P ranks share a node (Open MPI checks
``ompi_group_count_local_peers`` = size), ``"one-per-node"`` when every rank has a node of its own
(the communicator's disjoint flag), otherwise ``"any"``; without a mapping ``"any"``.  A rule whose
distribution does not hold for the communicator is skipped.

The schema and the reader disagree in two places, and the writer follows the reader (what Open
MPI loads): the reader names the collectives with ``mca_coll_base_colltype_to_str``
(``reduce_scatter``, ``reduce_scatter_block``) where the schema lists ``reducescatter`` and
``reducescatterblock``; and the reader takes a segment size ``seg_size``, which the schema's
message rule does not list (``additionalProperties: false``).  ``seg_size`` is written only when
non-zero.  Algorithms are written by number (the numbers are the same as 5.0's; one name changed:
allgather 2 is ``bruck-k-fanout`` in 6.0).  The format has no comments and the schema allows no
other keys, so the file names neither tool, mapping nor costs; the caller prints them.

What it does not do: write anything for the collectives without rules (they keep the defaults).
"""

from __future__ import annotations

import json

from tlop.decisions.files.openmpi_classic import FANINOUT, fan_in_out
from tlop.decisions.library_size import compared_size
from tlop.decisions.openmpi_defaults import NAMES as _NAMES5
from tlop.decisions.rules import table

__all__ = ["write", "distribution", "NAMES"]

#: the reader's collective names (coll_base_util.c colltype_translation_table, v6.0.x)
NAMES = {"allgather": "allgather", "allreduce": "allreduce", "alltoall": "alltoall", "barrier": "barrier",
         "bcast": "bcast", "gather": "gather", "reduce": "reduce", "reduce_scatter": "reduce_scatter",
         "reduce_scatter_block": "reduce_scatter_block", "scatter": "scatter"}


#: the algorithm numbers Open MPI 6.0 knows: 5.0's and the ones 6.0 added (v6.0.x
#: coll_tuned_allreduce_decision.c 7 allgather_reduce, coll_tuned_allgather_decision.c 8
#: direct-messaging, coll_tuned_reduce_decision.c 8 knomial)
_IDS = {c: set(n) | {0} for c, n in _NAMES5.items()}
_IDS["allreduce"].add(7)
_IDS["allgather"].add(8)
_IDS["reduce"].add(8)


def distribution(mapping, P: int) -> str:
    """The ``comm_rank_distribution`` that holds for ``P`` ranks placed by ``mapping``."""
    if mapping is None:
        return "any"
    nodes = mapping.nodes(P)
    if nodes == 1:
        return "single-node"
    if nodes == P:
        return "one-per-node"
    return "any"


#: 6.0 passes the file's faninout to these (coll_tuned_*_decision.c on v6.0.x): bcast and reduce
#: chains, the reduce k-nomial (8) and allgather's k-bruck (2)
FANINOUT6 = FANINOUT | {("reduce", 8), ("allgather", 2)}


def write(rules, mapping=None, knomial_radix: int = 4) -> str:
    """The JSON text of Open MPI 6.0 rules carrying ``rules`` (Open MPI algorithms);
    ``knomial_radix`` as in :func:`tlop.decisions.files.openmpi_classic.write`."""
    per = table(rules, "openmpi")
    if not per:
        raise ValueError("no rules: an Open MPI rules file needs at least one")
    collectives = {}
    for coll, by_p in per.items():
        if coll not in NAMES:
            raise ValueError(f"Open MPI's coll/tuned has no collective {coll!r}")
        Ps = list(by_p)
        comm_rules = []
        for j, P in enumerate(Ps):
            rs = by_p[P]
            msg_rules = []
            for i, r in enumerate(rs):
                lo = 0 if i == 0 else compared_size("openmpi", coll, P, r.m_from, kind="rules")
                hi = ("inf" if i + 1 == len(rs)
                      else compared_size("openmpi", coll, P, rs[i + 1].m_from, kind="rules") - 1)
                if r.algorithm is not None and int(r.algorithm.id) not in _IDS[coll]:
                    raise ValueError(f"Open MPI 6.0 has no {coll} algorithm {r.algorithm.id} ({r.algorithm.name}); "
                                     f"its reader drops a rule with an unknown algorithm")
                rule = {"msg_size_min": lo, "msg_size_max": hi,
                        "alg": 0 if r.algorithm is None else int(r.algorithm.id)}
                k = 0 if r.algorithm is None else fan_in_out(coll, r, FANINOUT6, knomial_radix)
                if k:
                    rule["faninout"] = int(k)
                if r.params.get("seg", 0):
                    rule["seg_size"] = int(r.params["seg"])
                if "reqs" in r.params:
                    rule["reqs"] = int(r.params["reqs"])
                msg_rules.append(rule)
            comm_rules.append({"comm_size_min": P, "comm_size_max": "inf" if j + 1 == len(Ps) else Ps[j + 1] - 1,
                               "comm_rank_distribution": distribution(mapping, P), "rules": msg_rules})
        collectives[NAMES[coll]] = comm_rules
    doc = {"rule_file_version": 3, "module": "tuned", "collectives": collectives}
    return json.dumps(doc, indent=2) + "\n"
