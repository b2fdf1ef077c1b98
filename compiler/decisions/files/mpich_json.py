"""MPICH's JSON collective selection, for many collectives, merged into MPICH's default tree.

What it does: :func:`write` turns MPICH rules into the selection file MPICH reads with
``MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=FILE``.  MPICH reads that file *instead of* its
compiled-in tree (``MPII_Coll_init``), so the file is MPICH's default tree (``base``; by default
the one in the ``mpich`` wheel's libmpi, :func:`tlop.decisions.mpich_defaults.default_tree`) with
the intra-communicator subtree of every collective that has rules replaced:

``{"collective=C": {"comm_type=intra": {"comm_size<P0": <default>, "comm_size<=P1-1": {size
nodes of P0}, …, "comm_size=any": {size nodes of the last P}}, "comm_type=inter": <default>}}``

How MPICH evaluates it is in :mod:`tlop.decisions.mpich_defaults` (``csel.c``): keys in order,
the first that holds.  So a communicator between two tuned sizes runs the smaller one's rules
(as Open MPI's files do), and one smaller than the smallest tuned P keeps MPICH's default
subtree.  Each P's message nodes are ``avg_msg_size<=X`` where csel defines an average size for
the collective (bcast, reduce, allreduce, alltoall) and ``total_msg_size<=X`` otherwise
(:func:`tlop.decisions.library_size.mpich_size_key`), X the next rule's compared size − 1, the
last ``…=any``.  A leaf is ``{"algorithm=MPIR_…": {"name=value": {}, …}}`` with the algorithm's
``mpich_params`` (:class:`LibraryAlgorithm`) filled from the rule's ``params`` (``{k}``,
``{seg}``, …): MPICH's container reads only the parameters written and leaves the others
unset, so the catalogue lists them all.  ``Rule(algorithm=None)`` puts MPICH's default subtree
for the collective under that size node; its ``comm_size<N`` keys are written ``comm_size<=N-1``
because below a message node MPICH's search tests ``comm_size<N`` as ``<=`` (``csel.c``
l. 1219-1224).

MPICH's parser treats every key as a test and aborts on one it does not know (``csel.c`` l. 536),
so the file carries no comments: the tool, mapping and costs are not in it.

What it does not do: change the other collectives or inter-communicators (MPICH's default
stays), or check that MPICH accepts an algorithm for the operation (commutative or not) — MPICH
falls back by itself when an algorithm's restriction fails (``MPIR_CVAR_COLLECTIVE_FALLBACK``).
"""

from __future__ import annotations

import copy
import json
from typing import Optional

from tlop.decisions.library_size import compared_size, mpich_size_key
from tlop.decisions.rules import table

__all__ = ["write", "leaf"]


def leaf(rule) -> dict:
    """The ``{"algorithm=MPIR_…": {parameter: {}, …}}`` leaf MPICH runs for ``rule``."""
    a = rule.algorithm
    fill = {k: v for k, v in rule.params.items()}
    fill.setdefault("P", rule.P)
    try:
        params = [p.format(**fill) for p in getattr(a, "mpich_params", ())]
    except KeyError as e:
        raise ValueError(f"the MPICH algorithm {a.id} takes parameter {e.args[0]!r}, which the rule for "
                         f"{rule.collective} P={rule.P} m={rule.m_from} does not give") from None
    return {f"algorithm={a.id}": {p: {} for p in params}}


def _strict(node):
    """A default subtree with ``comm_size<N`` written ``comm_size<=N-1`` (see the docstring)."""
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        kk = k.replace(" ", "")
        if kk.startswith("comm_size<") and not kk.startswith("comm_size<="):
            k = f"comm_size<={int(kk[len('comm_size<'):]) - 1}"
        out[k] = v if k.startswith(("algorithm=", "composition=")) else _strict(v)
    return out


def write(rules, base: Optional[dict] = None, known=None) -> str:
    """The JSON text of an MPICH selection file: ``base`` (MPICH's default tree) with the
    collectives of ``rules`` (MPICH algorithms) replaced.  Every algorithm must be one MPICH's
    parser knows — ``known``, by default :func:`tlop.decisions.mpich_defaults.known_algorithms`
    (read from the wheel's libmpi; not checked when there is none): MPICH aborts at start-up on
    any other (``csel_container.c`` l. 845-846, "unrecognized key")."""
    from tlop.decisions.mpich_defaults import known_algorithms

    per = table(rules, "mpich")
    if not per:
        raise ValueError("no rules: an MPICH selection file needs at least one")
    known = known_algorithms() if known is None else frozenset(known)
    for by_p in per.values():
        for rs in by_p.values():
            for r in rs:
                if r.algorithm is not None and known and r.algorithm.id not in known:
                    raise ValueError(f"MPICH has no algorithm {r.algorithm.id!r} (its selection parser aborts on "
                                     f"unknown names)")
    if base is None:
        from tlop.decisions.mpich_defaults import default_tree

        base = default_tree()
    whole = copy.deepcopy(base)
    for coll, by_p in per.items():
        default = base.get(f"collective={coll}", {})
        default_intra = default.get("comm_type=intra")
        if default_intra is None:
            raise ValueError(f"MPICH's default tree has no intra-communicator {coll}; cannot keep its default")
        size_key = mpich_size_key(coll)
        tree: dict = {}
        Ps = list(by_p)
        if Ps[0] > 1:
            tree[f"comm_size<{Ps[0]}"] = copy.deepcopy(default_intra)
        for j, P in enumerate(Ps):
            rs = by_p[P]
            node: dict = {}
            for i, r in enumerate(rs):
                sub = leaf(r) if r.algorithm is not None else _strict(copy.deepcopy(default_intra))
                if i + 1 < len(rs):
                    upto = compared_size("mpich", coll, P, rs[i + 1].m_from, kind="rules") - 1
                    node[f"{size_key}<={upto}"] = sub
                else:
                    node[f"{size_key}=any"] = sub
            tree["comm_size=any" if j + 1 == len(Ps) else f"comm_size<={Ps[j + 1] - 1}"] = node
        mine = {"comm_type=intra": tree}
        if "comm_type=inter" in default:
            mine["comm_type=inter"] = default["comm_type=inter"]
        whole[f"collective={coll}"] = mine
    return json.dumps(whole, indent=1) + "\n"
