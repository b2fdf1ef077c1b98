"""Composite library algorithms: ones that call the library's own collectives, priced as the sum of
what the library runs for those calls.

Some algorithms of the libraries' catalogues are not one schedule but calls of other collectives
through the library's own entry points, so their messages are other decisions of the library:

* Open MPI 5.0 (``ompi/mca/coll/base``, v5.0.9) calls ``comm->c_coll->coll_<x>`` — allreduce
  ``nonoverlapping`` a reduce to 0 then a bcast, allgather ``linear`` a gather to 0 then a bcast of
  P·m bytes, reduce_scatter ``non-overlapping`` a reduce of P·m bytes then a scatterv,
  reduce_scatter_block ``basic_linear`` a reduce of P·m bytes then a scatter.  ``c_coll`` holds,
  per collective, the highest-priority component's function: coll/tuned's
  ``ompi_coll_tuned_<x>_intra_dec_fixed``, replaced by ``…_dec_dynamic`` when
  ``coll_tuned_use_dynamic_rules`` is set and a forced algorithm or the rules file has rules for
  that collective and communicator size (``coll_tuned_module.c``: ``tuned_module_enable``,
  ``COLL_TUNED_EXECUTE_IF_DYNAMIC``); ``…_dec_dynamic`` takes the forced algorithm, else the
  file's rule (``ompi_coll_tuned_get_com_rule_ptr``, ``ompi_coll_tuned_get_target_method_params``;
  algorithm 0 there goes back to the fixed decision), else the fixed decision
  (``coll_tuned_decision_dynamic.c``).  coll/tuned has no scatterv (``coll_scatterv = NULL``), so
  ``c_coll->coll_scatterv`` is coll/basic's ``mca_coll_basic_scatterv_intra``: the root's blocking
  sends to ranks 1 … P − 1 in order — with equal counts the messages of scatter ``basic_linear``.
* MPICH (``src/mpi/coll/*/…_intra_smp.c``, v5.0.1) runs ``smp`` algorithms over the node
  sub-communicators ``MPIR_Comm_create_subcomms`` builds (``src/mpi/comm/commutil.c``):
  ``node_comm`` (the ranks of one node, only where a node holds more than one rank) and
  ``node_roots_comm`` (each node's lowest rank), each call going through ``MPIR_<Coll>`` — MPICH's
  selection for that sub-communicator (not a parent communicator; node_comm on one node,
  node_roots_comm one rank per node).  MPICH builds them only when some node holds two ranks
  (``MPIR_Comm_commit``: ``num_external != local_size``); otherwise ``smp`` is not run.

What it does: :func:`price` prices one composite (:class:`tlop.decisions.catalogue.Part` calls,
from the algorithm's ``parts(P, m)``) at P for an array of m: every call is the library's decision
for it (:func:`decision`: Open MPI's fixed decision, or the rules of the Open MPI file ``tlop tune``
writes when it decides the called collective too — ``Pricer.openmpi_rules``; MPICH's default
selection tree for the communicator called), priced as that algorithm's schedule by the same
pricer (sub-communicators: a one-node mapping for node_comm, one rank per node for
node_roots_comm, with the profile and model of the caller); a call over node_comm costs its
slowest node (the nodes run at once); the calls follow one another, so the costs add up.  A
call the library makes with nothing to send (a size-1 sub-communicator) costs nothing.  Where
a call's decision is an algorithm tlop cannot price, the composite is not priced there (inf).

What it does not do: follow a written MPICH file inside ``smp`` (its sub-communicators walk the
file's tree; tlop prices them with MPICH's default tree, which is why ``tune`` does not offer
``smp`` as a choice), model the MCA forcing variables, or the INT_MAX count limits beyond saying
where a composite is not priced.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

__all__ = ["price", "decision", "openmpi_rule_decision", "sub_communicators"]


def _inner_m(part, P: int, m: int) -> int:
    if part.m == "m":
        return int(m)
    if part.m == "Pm":
        return int(P) * int(m)
    return int(part.m)


def sub_communicators(mapping, P: int, over: str) -> list:
    """``[(size, mapping text)]``: the communicators a call ``over`` runs on at P ranks placed by
    ``mapping`` (None: every rank on one node), one per distinct size — node_comm sizes of
    more than one rank (``"node"``, ``"other_nodes"``: not rank 0's node, ``"root_node"``: rank
    0's), the node leaders (``"node_roots"``, more than one node), or the communicator itself."""
    if over == "comm":
        return [(P, None)]
    if mapping is None:
        sizes = [P]
    else:
        nodes = np.asarray(mapping.node_of(np.arange(P), P))
        order = list(dict.fromkeys(int(x) for x in nodes))  # nodes in the order of their lowest rank
        sizes = [int((nodes == n).sum()) for n in order]
    if over == "node_roots":
        return [(len(sizes), "sequential(1)")] if len(sizes) > 1 else []
    if over == "root_node":
        sizes = sizes[:1]
    elif over == "other_nodes":
        sizes = sizes[1:]
    elif over != "node":
        raise ValueError(f"no communicator {over!r}")
    return [(n, f"sequential({n})") for n in sorted(set(sizes)) if n > 1]


def openmpi_rule_decision(rules, collective: str, P: int, m: int) -> Optional[tuple]:
    """What an Open MPI classic rules file carrying ``rules`` (:class:`tlop.decisions.rules.Rule`
    of ``collective``, as :func:`tlop.decisions.files.openmpi_classic.write` writes them) makes
    coll/tuned run at P for the model's m: ``(LibraryAlgorithm, params)``, or None where the file
    sends the call to the fixed decision (no rules for smaller communicators — the writer's
    size-1 entry with algorithm 0 — or a rule with algorithm 0).  The lookup is
    ``ompi_coll_tuned_get_com_rule_ptr`` (the last communicator size ≤ P) and
    ``ompi_coll_tuned_get_target_method_params`` (the last message size ≤ the compared size, the
    first rule written with size 0)."""
    from tlop.decisions.library_size import compared_size

    by_p: dict = {}
    for r in rules:
        if r.collective == collective:
            by_p.setdefault(r.P, []).append(r)
    below = [p for p in by_p if p <= P]
    if not below:
        return None
    Pr = max(below)
    rs = sorted(by_p[Pr], key=lambda r: r.m_from)
    size = compared_size("openmpi", collective, P, m, kind="rules")
    chosen = rs[0]
    for r in rs[1:]:
        if compared_size("openmpi", collective, Pr, r.m_from, kind="rules") <= size:
            chosen = r
        else:
            break
    if chosen.algorithm is None:
        return None
    return chosen.algorithm, dict(chosen.params)


def decision(pricer, library: str, collective: str, P: int, m: int, over: str) -> Optional[tuple]:
    """``(LibraryAlgorithm, params)`` the library runs for a call of ``collective`` on a
    communicator of P ranks (``over``: see :func:`sub_communicators`), None when tlop's catalogue
    does not list it or the library's tree has no leaf."""
    if library == "openmpi":
        from tlop.decisions.openmpi_defaults import decide

        rules = (getattr(pricer, "openmpi_rules", None) or {}).get(collective)
        if rules:
            hit = openmpi_rule_decision(rules, collective, P, m)
            if hit is not None:
                return hit
        d = decide(collective, P, m)
    elif library == "mpich":
        from tlop.decisions.mpich_defaults import decide

        try:
            if over == "comm":
                d = decide(collective, P, m, mapping=pricer.mapping)
            elif over == "node_roots":  # one rank per node, not a parent communicator
                d = decide(collective, P, m, parent_comm=False, nodes=P, node_consecutive=True)
            else:                       # one node, not a parent communicator
                d = decide(collective, P, m, parent_comm=False, nodes=1, node_consecutive=True)
        except ValueError:
            return None
    else:
        raise ValueError(f"no library {library!r}")
    try:
        return d.algorithm(), dict(d.params)
    except KeyError:
        return None


def _parent(pricer, P: int) -> bool:
    """Whether MPICH builds node sub-communicators at P: some node holds two ranks."""
    m = pricer.mapping
    return m is None or m.nodes(P) < P


def price(pricer, alg, P: int, ms) -> np.ndarray:
    """Costs (s) of the composite ``alg`` at P ranks for every m of ``ms`` (inf where it is not
    run or a call cannot be priced)."""
    from tlop.decisions.catalogue import find

    ms = np.asarray(ms, dtype=float)
    total = np.zeros(len(ms))
    # requests: (part index, sub size, sub mapping, inner algorithm key) -> [(j, inner m)]
    requests: dict = {}
    for j, m in enumerate(ms):
        parts = alg.parts(int(P), int(m))
        if parts is None:
            total[j] = math.inf
            continue
        for i, part in enumerate(parts):
            if part.over != "comm":
                if alg.library == "mpich" and not _parent(pricer, P):
                    total[j] = math.inf
                    break
            mi = _inner_m(part, P, m)
            for n, sub in sub_communicators(pricer.mapping, int(P), part.over):
                if n < 2:
                    continue  # a one-rank communicator: nothing is sent
                if part.algorithm is not None:
                    inner, params = find(alg.library, part.collective, part.algorithm), {}
                else:
                    hit = decision(pricer, alg.library, part.collective, n, mi, part.over)
                    if hit is None or not hit[0].priceable or (hit[0].pow2_only and n & (n - 1)):
                        total[j] = math.inf
                        continue
                    inner, params = hit
                key = (i, n, sub, inner.key, tuple(sorted(params.items())))
                requests.setdefault(key, (inner, params, []))[2].append((j, mi))
    worst: dict = {}  # (j, part index) -> the slowest sub-communicator's cost
    for (i, n, sub, _, _), (inner, params, jobs) in requests.items():
        p = pricer if sub is None else pricer.sub(sub)
        costs = p.price(inner, n, np.asarray([mi for _, mi in jobs], dtype=float), params)
        for (j, _), c in zip(jobs, costs):
            worst[(j, i)] = max(worst.get((j, i), 0.0), float(c))
    for (j, _), c in worst.items():
        total[j] += c
    return np.where(np.isfinite(total), total, np.inf)
